import * as assert from 'node:assert/strict';
import type { Ran } from '../unit/cli/bin';
import { assertRan, runQuick, type QuickRun } from './quickRun';
import { READERS } from '../../bench/formats/loops';
import { ceilingOf } from '../../bench/formats/index';

describe('bench:formats: the parallel read’s ceiling from the CPU measured', () => {
  it('is bound by the cores when one thread already keeps more than one busy, and by the main thread when it does most of the work', () => {
    // One thread: 1.0 s of main-thread CPU per pass and 1.4 s in all (zlib's pool): 1.4 cores.
    // Parallel: 1.6 s in all per pass, 0.25 s on the main thread: 2 cores give 2 × 1.0 / 1.6.
    const cores = ceilingOf(2, { plumber: [1.4, 1.5, 1.4], parallel: [1.6, 1.6, 1.7] }, { plumber: [1.0, 1.1, 1.0], parallel: [0.25, 0.3, 0.25] });
    assert.equal(cores.oneThreadCores, 1.4);
    assert.equal(cores.parallelMainShare, 0.25 / 1.6);
    assert.equal(cores.parallelCeiling, 1.25);
    // The main thread does 0.8 s of the parallel read's 1.2 s: it allows 1.0 / 0.8, below 4 cores' 4 × 1.0 / 1.2.
    const main = ceilingOf(4, { plumber: [1.2], parallel: [1.2] }, { plumber: [1.0], parallel: [0.8] });
    assert.equal(main.parallelCeiling, 1.25);
  });

  it('is not given where the main thread’s CPU was not measured', () => {
    assert.deepEqual(ceilingOf(2, { plumber: [1], parallel: [1] }, { plumber: [], parallel: [] }), { oneThreadCores: null, parallelMainShare: null, parallelCeiling: null });
  });
});

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
      // Every thread's CPU includes the main thread's: one thread keeps at least one core's worth busy.
      const one = l['oneThreadCores'];
      assert.ok(typeof one === 'number' && one >= 0.99, `${String(l['reader'])}.oneThreadCores is ${String(one)}`);
      const share = l['parallelMainShare'];
      assert.ok(typeof share === 'number' && share > 0 && share <= 1.01, `${String(l['reader'])}.parallelMainShare is ${String(share)}`);
      const ceiling = l['parallelCeiling'];
      assert.ok(typeof ceiling === 'number' && ceiling > 0, `${String(l['reader'])}.parallelCeiling is ${String(ceiling)}`);
    }
  });

  it('prints the goals and leaves bench/RESULTS.md alone (a quick run measures something else)', () => {
    assert.match(result.stderr, /Goals: \d+ of \d+ met\./);
    assert.ok(quick.resultsUnchanged(), 'bench/RESULTS.md changed');
  });
});
