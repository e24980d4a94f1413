import * as assert from 'node:assert/strict';
import type { Ran } from '../unit/cli/bin';
import { assertRan, runQuick, type QuickRun } from './quickRun';

// `npm run test:bench`, not part of `npm test`: profiles the synthetic shuffle pipeline, projects
// three configurations and runs each in a runner process of its own.
describe('bench:memory with quick budgets', function () {
  // The limit only stops a hang; nothing here depends on how fast the machine is.
  this.timeout(10 * 60_000);
  let result: Ran;
  let lines: Record<string, unknown>[];
  let quick: QuickRun<Record<string, unknown>>;

  before(async () => {
    quick = await runQuick<Record<string, unknown>>('memory', ['--quick', '--no-epoch']);
    ({ result, lines } = quick);
  });

  it('prints the issue-52 line for each of the three configurations, with positive projected and measured peaks, each the median of its rounds', () => {
    assertRan(result);
    const configs = lines.filter((l) => l['summary'] === undefined);
    assert.deepEqual(
      configs.map((l) => l['config']),
      ['as written', 'plan', 'cache after makeRecord'],
    );
    for (const l of configs) {
      assert.equal(l['bench'], 'memory');
      assert.equal(l['pipeline'], 'shuffle');
      assert.ok((l['projectedPeakMB'] as number) > 0 && (l['measuredPeakMB'] as number) > 0, JSON.stringify(l));
      // Both figures are medians of the rounds, inside the range each prints.
      for (const [figure, range] of [
        ['projectedPeakMB', 'projectedRangeMB'],
        ['measuredPeakMB', 'measuredRangeMB'],
      ] as const) {
        const [lo, hi] = l[range] as [number, number];
        assert.ok(lo <= (l[figure] as number) && (l[figure] as number) <= hi, JSON.stringify(l));
      }
    }
  });

  it('keeps the plan within a budget below its unbounded peak, and says so in its summary line', () => {
    const summary = lines.find((l) => l['summary'] === true);
    assert.equal(summary?.['budgetKept'], true, JSON.stringify(summary));
  });

  it('leaves bench/RESULTS.md alone on a quick run', () => {
    assert.ok(quick.resultsUnchanged(), 'bench/RESULTS.md changed');
  });
});
