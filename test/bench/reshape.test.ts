import * as assert from 'node:assert/strict';
import type { Ran } from '../unit/cli/bin';
import { assertRan, runQuick, type QuickRun } from './quickRun';
import { pipelineModules } from '../../bench/reshape/index';

// `npm run test:bench`, not part of `npm test`: the pipeline is diagnosed twice (knobs only, and with
// reshapes) and each configuration measured through the real runner.
describe('bench:reshape with smoke budgets', function () {
  // The limit only stops a hang; nothing here depends on how fast the machine is.
  this.timeout(10 * 60_000);
  let result: Ran;
  let lines: Record<string, unknown>[];
  let quick: QuickRun<Record<string, unknown>>;

  before(async () => {
    quick = await runQuick<Record<string, unknown>>('reshape', ['--smoke', '--only', 'filter-after-map']);
    ({ result, lines } = quick);
  });

  it('picks up every pipeline module in bench/reshape/pipelines', () => {
    const names = pipelineModules().map((p) => p.name);
    assert.ok(names.includes('filter-after-map') && names.includes('random-above-expensive'), names.join(', '));
  });

  it('prints the line of issue 54: three positive rates, whether the output stayed the same, what was kept', () => {
    assertRan(result);
    assert.equal(lines.length, 1);
    const l = lines[0]!;
    assert.equal(l['bench'], 'reshape');
    assert.equal(l['pipeline'], 'filter-after-map');
    for (const figure of ['asWritten', 'knobsOnly', 'plumber']) {
      const v = l[figure];
      assert.ok(typeof v === 'number' && Number.isFinite(v) && v > 0, `${figure} is ${String(v)}`);
    }
    // The filter reads only the label: the reorder is proven equivalent on the sample and offered.
    assert.equal(l['equivalent'], true);
    assert.ok(
      (l['checked'] as string[]).some((k) => k.startsWith('reorder:')),
      `the reorder was compared on the sample: ${JSON.stringify(l['checked'])}`,
    );
    assert.ok(Array.isArray(l['kept']) && (l['kept'] as string[]).some((k) => k.startsWith('reorder:')), JSON.stringify(l['kept']));
    assert.ok(!(l['knobsKept'] as string[]).some((k) => k.startsWith('reorder:')), 'knobs only never reorders');
  });

  it('prints the goals and leaves bench/RESULTS.md alone (a smoke run measures something else)', () => {
    assert.match(result.stderr, /Goals: \d+ of \d+ met\./);
    assert.ok(quick.resultsUnchanged(), 'bench/RESULTS.md changed');
  });
});
