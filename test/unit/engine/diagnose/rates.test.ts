/**
 * The pooled rates verification compares (src/engine/stats.ts), as diagnose reads them.
 */
import * as assert from 'node:assert/strict';
import { pooledRate, reliablyFaster } from '../../../../src/engine/stats';
import type { WindowSlice } from '../../../../src/shared/profile';

describe('diagnose: rates with a spread', () => {
  /** Slices of one second each holding these counts. */
  const perSecond = (...counts: number[]): WindowSlice[] => counts.map((elements) => ({ elements, seconds: 1 }));

  it('pools slices of equal length into the mean rate with a Student-t interval', () => {
    const r = pooledRate(perSecond(9, 10, 11));
    assert.equal(r.rate, 10);
    assert.equal(r.windows, 3);
    // s = 1, t(2) = 4.303: 4.303 / √3.
    assert.ok(Math.abs(r.halfWidth - 4.303 / Math.sqrt(3)) < 1e-9);
  });

  it('pools slices of one element each by elements over time, without the heavy tail of 1 ÷ Δt', () => {
    // A batch-a-second pipeline measured as one batch per slice: arrivals 0.5, 1.5, 0.9, 1.1 s apart.
    // The mean of per-slice rates (2, 0.67, 1.11, 0.91 → 1.17/s) overstates the 1/s that arrived;
    // elements over time is exactly 1/s.
    const r = pooledRate([0.5, 1.5, 0.9, 1.1].map((seconds) => ({ elements: 1, seconds })));
    assert.ok(Math.abs(r.rate - 1) < 1e-12);
    // Regular arrivals measure tight: perfectly regular ones have no spread at all.
    const regular = pooledRate([1, 1, 1, 1].map((seconds) => ({ elements: 1, seconds })));
    assert.equal(regular.halfWidth, 0);
    assert.ok(r.halfWidth > 0);
  });

  it('weighs a long slice more than a short one', () => {
    // 10 elements in 10 s and 1 element in 0.1 s: 11 in 10.1 s, not the mean of 1/s and 10/s.
    const r = pooledRate([
      { elements: 10, seconds: 10 },
      { elements: 1, seconds: 0.1 },
    ]);
    assert.ok(Math.abs(r.rate - 11 / 10.1) < 1e-12);
  });

  it('gives a single unsliced run the counting error of its elements, so a drained finite source can still show a 100× gain', () => {
    // A fast plan drained a finite source in one short window: 25 elements in a quarter second.
    const plan = pooledRate([{ elements: 25, seconds: 0.25 }]);
    assert.ok(Math.abs(plan.halfWidth - (1.96 * 100) / 5) < 1e-9);
    const asWritten = pooledRate(perSecond(0.8, 0.9, 0.85));
    assert.ok(reliablyFaster(plan, asWritten));
    // With too few elements a single window clears nothing.
    assert.equal(pooledRate([{ elements: 3, seconds: 0.03 }]).halfWidth, 100);
    assert.ok(!reliablyFaster(pooledRate([{ elements: 3, seconds: 0.03 }]), asWritten));
  });

  it('does not call a 2% difference a gain even when the spread is tiny', () => {
    assert.equal(reliablyFaster({ rate: 10.2, halfWidth: 0.01, windows: 10 }, { rate: 10, halfWidth: 0.01, windows: 10 }), false);
    assert.equal(reliablyFaster({ rate: 10.4, halfWidth: 0.01, windows: 10 }, { rate: 10, halfWidth: 0.01, windows: 10 }), true);
    assert.equal(reliablyFaster({ rate: 12, halfWidth: 1.5, windows: 10 }, { rate: 10, halfWidth: 1, windows: 10 }), false);
  });
});
