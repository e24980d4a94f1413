/**
 * The keep/drop decision for a reorder priced by its first batch (src/engine/diagnose/firstBatch.ts
 * and decide.ts), on configurations built by hand: the first batch measured faster beyond the
 * spread and the rate not slower beyond it.
 */
import * as assert from 'node:assert/strict';
import { chooseKept, verdictOf, type Measurements } from '../../../../src/engine/diagnose/decide';
import { keyOf, unmeasured, type Config } from '../../../../src/engine/diagnose/config';
import { settledAfterOnePair } from '../../../../src/engine/diagnose/settle';
import type { PlanChange } from '../../../../src/shared/analysis';

const move: PlanChange = {
  kind: 'reorder',
  opId: 'shuffle',
  before: 'decode',
  reason: 'the shuffle buffer of 1,000 fills behind map(decode): ≈ 4 s; moved before it, the first batch comes in ≈ 0.1 s (predicted)',
  firstBatchSeconds: 0.1,
};
const decode: PlanChange = { kind: 'parallelism', opId: 'decode', from: 1, to: 2, reason: 'More calls in flight.' };

/** `changes` measured at `rate` in five windows spread ±1% a run, over runs whose first batches took `first` seconds. */
function at(changes: PlanChange[], rate: number, first: number[]): Config {
  const c = unmeasured(keyOf(changes), changes, {});
  c.runs = first.length;
  c.slices = first.flatMap(() => [-2, -1, 0, 1, 2].map((k) => ({ elements: rate * (1 + k * 0.01), seconds: 1 })));
  c.firstBatch = [...first];
  c.freeCores = first.map(() => 2);
  return c;
}

function measurements(asWritten: Config, planned: Config, all: PlanChange[], others: Config[] = [], parts: Config[] = []): Measurements {
  const order = [asWritten, planned, ...others];
  return { all, asWritten, planned, configs: new Map(order.map((c) => [c.key, c])), order, measuredParts: new Set(parts), name: (c) => (c === asWritten ? 'as written' : 'the plan') };
}

describe('diagnose: a reorder judged by its first batch', () => {
  it('is kept when its first batch measured faster beyond the spread and its rate the same, and the verdict says both', () => {
    const m = measurements(at([], 100, [4.1, 4.3]), at([move], 101, [0.2, 0.3]), [move]);
    const kept = chooseKept(m);
    assert.equal(kept, m.planned);
    const v = verdictOf(m, kept);
    assert.equal(v.verification.verdict, 'gain');
    assert.match(v.verification.summary, /^verified .*; the first batch in ≈ 250 ms \(200 ms–300 ms over 2 runs\) against ≈ 4\.2 s \(4\.1 s–4\.3 s over 2 runs\) as written, measured$/);
  });

  it('is not kept when the first batches overlap, when one run each is all there is, or when the rate measured slower', () => {
    const overlap = measurements(at([], 100, [4.1, 1.0]), at([move], 100, [0.2, 3.0]), [move]);
    assert.equal(chooseKept(overlap), undefined, 'overlap');
    assert.match(verdictOf(overlap, undefined).verification.dropped[0]!.why, /; the first batch in ≈ 1\.6 s \(200 ms–3 s over 2 runs\) against ≈ 2\.55 s \(1 s–4\.1 s over 2 runs\) as written, measured$/);
    assert.equal(chooseKept(measurements(at([], 100, [4.1]), at([move], 100, [0.2]), [move])), undefined, 'one run a side');
    assert.equal(chooseKept(measurements(at([], 100, [4.1, 4.3]), at([move], 80, [0.2, 0.3]), [move])), undefined, 'slower rate');
  });

  it('with one run a side, is kept beside a knob whose rate measured faster when its first batch was no slower, never when it was', () => {
    const kept = measurements(at([], 100, [5.5]), at([move, decode], 180, [0.26]), [move, decode]);
    assert.equal(chooseKept(kept), kept.planned);
    assert.match(verdictOf(kept, kept.planned).verification.summary, /^verified 1\.80× .*; the first batch in ≈ 260 ms \(one run\) against ≈ 5\.5 s \(one run\) as written, measured$/);
    assert.equal(chooseKept(measurements(at([], 100, [5.5]), at([move, decode], 180, [6]), [move, decode])), undefined, 'slower first batch');
    assert.equal(chooseKept(measurements(at([], 100, [5.5]), at([move], 100, [0.26]), [move])), undefined, 'one run a side, no rate gain');
  });

  it('a part without the move that measured the same rate does not drop the move whose first batch it did not match', () => {
    const knobs = at([decode], 150, [2.1, 2.2]);
    const m = measurements(at([], 100, [4.1, 4.3]), at([move, decode], 150, [0.2, 0.3]), [move, decode], [knobs], [knobs]);
    assert.equal(chooseKept(m), m.planned);
  });

  it('one pair of runs never settles a move judged by its first batch', () => {
    const asWritten = at([], 100, [4.1]);
    asWritten.slices = asWritten.slices.concat(asWritten.slices);
    assert.equal(settledAfterOnePair(asWritten, at([move], 100, [0.2]), 2), false);
    assert.equal(settledAfterOnePair(asWritten, at([decode], 100, [0.2]), 2), true, 'a knob with no gain settles');
  });
});
