import * as assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, run, type Ran } from '../unit/cli/bin';
import { RESULTS_FILE } from '../../bench/results';

const CACHE_DIR = join(ROOT, 'bench', 'epoch', '.cache', 'plumber');

/** Runs bench:epoch with small pipelines and one round; resolves with its exit code and output. */
function runQuickBench(): Promise<Ran> {
  return run(process.execPath, ['--import', 'tsx', 'bench/epoch/index.ts', '--quick', '--json', '--rounds', '1'], ROOT);
}

// `npm run test:bench`, not part of `npm test`: each pipeline is profiled by the runner, planned,
// and measured in a process of its own with the plan's overrides.
describe('bench:epoch with small pipelines', function () {
  // The limit only stops a hang; nothing here depends on how fast the machine is.
  this.timeout(10 * 60_000);
  let result: Ran;
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

  it('prints the line of issue 52 for each pipeline: predicted and measured first batch and epochs', () => {
    assert.equal(result.code, 0, `the benchmark failed:\n${result.stderr.slice(-4000)}`);
    assert.deepEqual(
      lines.map((l) => l['pipeline']),
      ['shuffleFill', 'memoryCache', 'diskCache'],
    );
    for (const l of lines) {
      assert.equal(l['bench'], 'epoch');
      for (const figure of ['predictedFirstBatchSeconds', 'measuredFirstBatchSeconds']) {
        const v = l[figure];
        assert.ok(typeof v === 'number' && Number.isFinite(v) && v > 0, `${String(l['pipeline'])}.${figure} is ${String(v)}`);
      }
      const measured = l['measuredEpochSeconds'] as number[];
      const predicted = l['predictedEpochSeconds'] as number[];
      // shuffleFill is iterated twice; the others hold three passes of a repeat.
      assert.equal(measured.length, l['pipeline'] === 'shuffleFill' ? 2 : 3, `${String(l['pipeline'])}: ${JSON.stringify(measured)}`);
      assert.equal(predicted.length, measured.length);
      for (const x of [...measured, ...predicted]) assert.ok(Number.isFinite(x) && x >= 0, `${String(l['pipeline'])}: ${JSON.stringify(l)}`);
    }
  });

  it('leaves no disk cache behind, prints the goals, and leaves bench/RESULTS.md alone (a quick run measures something else)', () => {
    const left = existsSync(CACHE_DIR) ? readdirSync(CACHE_DIR).filter((f) => f.endsWith('.plumbercache')) : [];
    assert.deepEqual(left, []);
    assert.match(result.stderr, /Goals: \d+ of \d+ met/);
    assert.equal(readFileSync(RESULTS_FILE, 'utf8'), resultsBefore);
  });
});
