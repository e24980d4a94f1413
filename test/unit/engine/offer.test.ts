/**
 * The offer rule every surface applies (src/engine/offer.ts): an unverified plan offers its
 * changes when it predicts a gain a person can read, a verified one only what verification kept,
 * and nothing after no gain, an error, or (unverified) a prediction that reads "1.0×".
 */
import * as assert from 'node:assert/strict';
import { offeredChanges, offeredPlan, predictsGain } from '../../../src/engine/offer';
import { changeKey, type Plan, type PlanChange, type Verification } from '../../../src/shared/analysis';

const parallelism: PlanChange = { kind: 'parallelism', opId: '3:4', from: 1, to: 2, reason: 'two cores are idle' };
const prefetch: PlanChange = { kind: 'prefetch', opId: '5:4', existing: false, size: 4, reason: 'the consumer waits' };

function planOf(changes: PlanChange[], predictedRate: number, verification?: Verification): Plan {
  return {
    changes,
    currentRate: 100,
    predictedRate,
    predictedBound: predictedRate,
    predictedBottleneck: { resource: 'cpu', reason: 'all cores busy' },
    overrides: {},
    ...(verification ? { verification } : {}),
  };
}

function verified(verdict: Verification['verdict'], kept: PlanChange[], dropped: PlanChange[] = []): Verification {
  const asWritten = { rate: 100, halfWidth: 2, windows: 8 };
  return {
    verdict,
    asWritten,
    kept: { changes: kept.map(changeKey), measured: { rate: verdict === 'gain' ? 160 : 100, halfWidth: 3, windows: 8 } },
    tried: [],
    speedup: verdict === 'gain' ? 1.6 : 1,
    speedupHalfWidth: 0.05,
    dropped: dropped.map((change) => ({ change, why: 'measured 0.97× alone' })),
    summary: verdict === 'gain' ? 'verified 1.6× ± 0.1' : 'no reliable gain on this machine right now',
    seconds: 3,
  };
}

describe('The offer rule', () => {
  const convert: PlanChange = { kind: 'convert', opId: '9:4', from: 'tfjs-data', opIds: ['3:4', '5:4', '9:4'], then: [parallelism], reason: 'tfjs-data cannot run map(decode) in worker threads', predictedRate: 300 };

  it('offers no conversion from an unverified plan, however much it predicts, and prices what is left by its own changes', () => {
    assert.deepEqual(offeredChanges(planOf([convert], 300)), []);
    const knobs = { ...prefetch, predictedRate: 130 };
    assert.deepEqual(offeredChanges(planOf([knobs, convert], 300)), [knobs]);
    assert.equal(offeredPlan(planOf([knobs, convert], 300)).predictedRate, 130);
    // The knob change alone reads as no gain: the conversion's prediction does not carry it.
    assert.deepEqual(offeredChanges(planOf([{ ...prefetch, predictedRate: 102 }, convert], 300)), []);
  });

  it('offers a conversion verification measured and kept', () => {
    assert.deepEqual(offeredChanges(planOf([convert], 300, verified('gain', [convert]))), [convert]);
    assert.deepEqual(offeredChanges(planOf([prefetch, convert], 300, verified('gain', [prefetch], [convert]))), [prefetch]);
  });

  it('reads a gain as a person reads the figure: 1.06× shows as 1.1×, 1.04× as 1.0×', () => {
    assert.equal(predictsGain(106, 100), true);
    assert.equal(predictsGain(104, 100), false);
    assert.equal(predictsGain(undefined, 100), false);
    assert.equal(predictsGain(200, 0), false);
    assert.equal(predictsGain(Number.POSITIVE_INFINITY, 100), false);
  });

  it('offers every change of an unverified plan that predicts a gain', () => {
    assert.deepEqual(offeredChanges(planOf([parallelism, prefetch], 180)), [parallelism, prefetch]);
  });

  it('offers nothing from an unverified plan whose prediction reads as no gain', () => {
    assert.deepEqual(offeredChanges(planOf([parallelism], 102)), []);
  });

  it('offers what verification measured to help even when the model priced it at no gain (a prefetch at the end)', () => {
    assert.deepEqual(offeredChanges(planOf([prefetch], 100, verified('gain', [prefetch]))), [prefetch]);
  });

  it('offers only what verification kept, never a change it dropped', () => {
    assert.deepEqual(offeredChanges(planOf([parallelism], 180, verified('gain', [parallelism], [prefetch]))), [parallelism]);
    // A plan that broke Plan.verification's contract (a dropped change left in `changes`) still offers no loser.
    assert.deepEqual(offeredChanges(planOf([parallelism, prefetch], 180, verified('gain', [parallelism, prefetch], [prefetch]))), [parallelism]);
  });

  it('offers nothing after no gain or a failed verification', () => {
    assert.deepEqual(offeredChanges(planOf([parallelism], 180, verified('no-gain', []))), []);
    assert.deepEqual(offeredChanges(planOf([parallelism], 180, verified('error', []))), []);
  });

  it('narrows a plan to what it offers, and leaves a plan that offers all of it as it came', () => {
    const gain = planOf([parallelism, prefetch], 180);
    assert.equal(offeredPlan(gain), gain);
    const none = offeredPlan(planOf([parallelism], 102));
    assert.deepEqual(none.changes, []);
    assert.equal(none.predictedRate, 102);
  });
});
