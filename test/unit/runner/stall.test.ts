/**
 * A run that sees no element says why, from what its operators did meanwhile: a shuffle filling
 * its buffer is named with the rate it fills at and the start limit that would see it through;
 * with nothing working, the pipeline is waiting on something.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { noElementMessage } from '../../../src/runner/stall';
import { runProfile } from '../../../src/runner/spawn';
import type { OpProfile } from '../../../src/shared/profile';

const PIPELINES = path.resolve(__dirname, '../../fixtures/pipelines');

function op(id: string, kind: OpProfile['kind'], inputs: string[], produced: number, extra: Partial<OpProfile> = {}): OpProfile {
  return { id, kind, inputs, placement: 'main', knobs: {}, random: false, counters: { produced } as OpProfile['counters'], ...extra };
}

describe('runner: a run that sees no element', function () {
  this.timeout(60_000);

  it('names a filter that dropped every element, and calls a pipeline with nothing working stuck', () => {
    const dropped = noElementMessage('p', [op('1:1', 'range', [], 5000), op('1:9', 'filter', ['1:1'], 0, { fnName: 'keep' })], 10);
    assert.match(dropped, /^The pipeline "p" produced no element in 10\.0 s\. It is not stuck: range handed 5,000 elements on to filter\(keep\) \(500 el\/s\), which dropped every one of them/);
    const waiting = noElementMessage('p', [op('1:1', 'range', [], 0), op('1:9', 'map', ['1:1'], 0, { fnName: 'fetch' })], 10);
    assert.match(waiting, /it may be waiting on something that never happens/);
  });

  for (const [name, why] of [
    ['awaiting', 'its fn awaits between elements'],
    ['busy', 'its fn never awaits: the library must let the event loop turn for the start limit to fire'],
  ] as const) {
    it(`names the shuffle that holds the elements and the start limit it needs (${why})`, async () => {
      const p = await runProfile({ file: path.join(PIPELINES, 'slow-fill.ts'), exportName: name, seconds: 0.5, startSeconds: 1.5, warmupSeconds: 0.2, probes: false, timeoutSeconds: 25 });
      assert.equal(p.error?.kind, 'timeout', JSON.stringify(p.error));
      // The runner's own verdict, not the time limit's kill: it stopped at its start limit.
      assert.match(
        p.error.message,
        new RegExp(
          `^The pipeline "${name}" produced no element in 1\\.5 s\\. It is not stuck: map\\((fetchOne|heavy)\\) handed [\\d,]+ elements on to shuffle\\((400|20000)\\) \\([\\d.,]+ el/s\\), and a shuffle hands on nothing until its buffer holds [\\d,]+: at that rate it fills in ≈ \\d+ s\\. Profile it with time for the fill \\(\`--start \\d+\``,
        ),
        p.error.message,
      );
    });
  }
});
