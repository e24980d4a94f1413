import * as assert from 'node:assert/strict';
import type { Ran } from '../unit/cli/bin';
import { assertRan, runQuick, type QuickRun } from './quickRun';
import { EXAMPLES } from '../../bench/dialects/examples';

interface Line {
  bench: string;
  pipeline: string;
  [figure: string]: unknown;
}

// `npm run test:bench`, not part of `npm test`: every dialect example is diagnosed, then run as
// written, hand-tuned and with Plumber's plan, each in a process of its own.
describe('bench:dialects with quick budgets', function () {
  // The limit only stops a hang; nothing here depends on how fast the machine is.
  this.timeout(20 * 60_000);
  let result: Ran;
  let lines: Line[];
  let quick: QuickRun<Line>;

  before(async () => {
    quick = await runQuick<Line>('dialects', ['--quick', '--rounds', '1']);
    ({ result, lines } = quick);
  });

  it('runs every example and its hand-tuned variant without an error', () => {
    assertRan(result);
    assert.deepEqual(
      lines.filter((l) => l.bench === 'dialects').map((l) => l.pipeline),
      EXAMPLES.map((e) => e.name),
    );
  });

  it('prints the line of issue 49 for each: positive rates, what was kept, the bottleneck line or null', () => {
    for (const l of lines.filter((x) => x.bench === 'dialects')) {
      for (const figure of ['asWritten', 'plumber', 'hand', 'profileSeconds', 'markedLine']) {
        const v = l[figure];
        assert.ok(typeof v === 'number' && Number.isFinite(v) && v > 0, `${l.pipeline}.${figure} is ${String(v)}`);
      }
      assert.ok(['knobs', 'convert', 'none'].includes(String(l.kept)), `${l.pipeline}.kept is ${String(l.kept)}`);
      assert.ok(l.bottleneckLine === null || (typeof l.bottleneckLine === 'number' && l.bottleneckLine > 0), `${l.pipeline}.bottleneckLine is ${String(l.bottleneckLine)}`);
      // A figure that stands for something else (no diagnosis, a plan not applied) says why.
      if (l.bottleneckLine === null) assert.ok(typeof l.note === 'string' && l.note.length > 0, `${l.pipeline} names no bottleneck and gives no reason`);
    }
  });

  it('measures the tracing cost on one heavy stage, or says why it could not', () => {
    const [t] = lines.filter((l) => l.bench === 'dialects-tracing');
    assert.ok(t, 'no tracing line');
    // Both sides measure the same elements: the runner's whole run of a pipeline that ended in its warm-up, or a window after it.
    assert.ok(['the first pass, from its first element', 'a window after warm-up', 'either, as each round’s traced run was'].includes(String(t.measuredOver)), String(t.measuredOver));
    assert.ok(typeof t.bare === 'number' && t.bare > 0);
    assert.ok(typeof t.overhead === 'number' || (typeof t.note === 'string' && t.note.length > 0));
  });

  it('prints the goals and leaves bench/RESULTS.md alone (a quick run measures something else)', () => {
    assert.match(result.stderr, /Goals: \d+ of \d+ met\./);
    assert.ok(quick.resultsUnchanged(), 'bench/RESULTS.md changed');
  });
});
