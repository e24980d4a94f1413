import * as assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, type Ran } from '../unit/cli/bin';
import { assertRan, runQuick, type QuickRun } from './quickRun';

const CACHE_DIR = join(ROOT, 'bench', 'epoch', '.cache', 'plumber');

// `npm run test:bench`, not part of `npm test`: each pipeline is profiled by the runner, planned,
// and measured in a process of its own with the plan's overrides.
describe('bench:epoch with small pipelines', function () {
  // The limit only stops a hang; nothing here depends on how fast the machine is.
  this.timeout(10 * 60_000);
  let result: Ran;
  let lines: Record<string, unknown>[];
  let quick: QuickRun<Record<string, unknown>>;

  before(async () => {
    quick = await runQuick<Record<string, unknown>>('epoch', ['--quick', '--rounds', '1']);
    ({ result, lines } = quick);
  });

  it('prints the line of issue 52 for each pipeline: predicted and measured first batch and epochs', () => {
    assertRan(result);
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
    assert.ok(quick.resultsUnchanged(), 'bench/RESULTS.md changed');
  });
});
