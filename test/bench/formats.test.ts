import * as assert from 'node:assert/strict';
import { ROOT, run, type Ran } from '../unit/cli/bin';
import { readFileSync } from 'node:fs';
import { RESULTS_FILE } from '../../bench/results';
import { READERS } from '../../bench/formats/loops';

/** Runs bench:formats with quick budgets and one round; resolves with its exit code and output. */
function runQuickBench(): Promise<Ran> {
  return run(process.execPath, ['--import', 'tsx', 'bench/formats/index.ts', '--quick', '--json', '--rounds', '1'], ROOT);
}

// `npm run test:bench`, not part of `npm test`: every reader reads generated shards as plumber-data
// does on one thread, by hand, and with the planned shards at once, each in a process of its own.
describe('bench:formats with quick budgets', function () {
  // The limit only stops a hang; nothing here depends on how fast the machine is.
  this.timeout(10 * 60_000);
  let result: Awaited<ReturnType<typeof runQuickBench>>;
  let lines: Array<Record<string, unknown>>;
  let resultsBefore: string;

  before(async () => {
    resultsBefore = readFileSync(RESULTS_FILE, 'utf8');
    result = await runQuickBench();
    lines = result.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  });

  it('reads every reader’s shards in every configuration without an error', () => {
    assert.equal(result.code, 0, `the benchmark failed:\n${result.stderr.slice(-4000)}`);
    assert.deepEqual(
      lines.map((l) => l['reader']),
      READERS.map((r) => r.name),
    );
  });

  it('prints the line of issue 51 for each reader: positive rates and whether it is CPU-bound', () => {
    for (const l of lines) {
      assert.equal(l['bench'], 'formats');
      for (const figure of ['mbPerSec', 'rowsPerSec', 'handMbPerSec', 'parallelMbPerSec']) {
        const v = l[figure];
        assert.ok(typeof v === 'number' && Number.isFinite(v) && v > 0, `${String(l['reader'])}.${figure} is ${String(v)}`);
      }
      assert.equal(typeof l['cpuBound'], 'boolean');
    }
  });

  it('prints the goals and leaves bench/RESULTS.md alone (a quick run measures something else)', () => {
    assert.match(result.stderr, /Goals: \d+ of \d+ met\./);
    assert.equal(readFileSync(RESULTS_FILE, 'utf8'), resultsBefore);
  });
});
