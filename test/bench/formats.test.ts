import * as assert from 'node:assert/strict';
import type { Ran } from '../unit/cli/bin';
import { assertRan, runQuick, type QuickRun } from './quickRun';
import { READERS } from '../../bench/formats/loops';

// `npm run test:bench`, not part of `npm test`: every reader reads generated shards as plumber-data
// does on one thread, by hand, and with the planned shards at once, each in a process of its own.
describe('bench:formats with quick budgets', function () {
  // The limit only stops a hang; nothing here depends on how fast the machine is.
  this.timeout(10 * 60_000);
  let result: Ran;
  let lines: Record<string, unknown>[];
  let quick: QuickRun<Record<string, unknown>>;

  before(async () => {
    quick = await runQuick<Record<string, unknown>>('formats', ['--quick', '--rounds', '1']);
    ({ result, lines } = quick);
  });

  it('reads every reader’s shards in every configuration without an error', () => {
    assertRan(result);
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
      const cpu = l['parallelCpu'];
      assert.ok(typeof cpu === 'number' && Number.isFinite(cpu) && cpu > 0, `${String(l['reader'])}.parallelCpu is ${String(cpu)}`);
    }
  });

  it('prints the goals and leaves bench/RESULTS.md alone (a quick run measures something else)', () => {
    assert.match(result.stderr, /Goals: \d+ of \d+ met\./);
    assert.ok(quick.resultsUnchanged(), 'bench/RESULTS.md changed');
  });
});
