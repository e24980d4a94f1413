import * as assert from 'node:assert/strict';
import { partialOf, slices, type WindowPoint } from '../../../src/runner/slices';
import { pooledRate } from '../../../src/engine/stats';

/** A batch-of-32 pipeline: one batch every `every` seconds, its images taken evenly in between, read every `tick` seconds. */
function batches(count: number, every: number, tick: number): { points: WindowPoint[]; end: WindowPoint } {
  const points: WindowPoint[] = [{ t: 0, elements: 0, fine: 0 }];
  const seconds = count * every;
  for (let t = tick; t < seconds - 1e-9; t += tick) points.push({ t, elements: Math.floor(t / every + 1e-9), fine: Math.floor((32 * t) / every + 1e-9) });
  return { points, end: { t: seconds, elements: count, fine: 32 * count } };
}

describe('window slices', () => {
  it('slices a batch-a-second window by the images its batches took, so six batches give a dozen slices', () => {
    const { points, end } = batches(6, 1, 0.1);
    const s = slices(points, end)!;
    assert.equal(s.length, 12);
    // Scaled to root elements, the slices still add up to the window's six batches and six seconds.
    assert.ok(Math.abs(s.reduce((a, x) => a + x.elements, 0) - 6) < 1e-9);
    assert.ok(Math.abs(s.reduce((a, x) => a + x.seconds, 0) - 6) < 1e-9);
    // Steady images measure a steady rate: a tight interval from six batches.
    const r = pooledRate(s);
    assert.ok(Math.abs(r.rate - 1) < 0.05, `rate ${r.rate}`);
    assert.ok(r.halfWidth < 0.1, `± ${r.halfWidth}`);
  });

  it('counts root elements when the fine count is no finer than them (a pipeline that does not batch)', () => {
    const points: WindowPoint[] = [0, 1, 2, 3, 4].map((t) => ({ t, elements: 10 * t, fine: 10 * t }));
    const s = slices(points, { t: 5, elements: 53, fine: 50 })!;
    assert.deepEqual(
      s.map((x) => x.elements),
      [10, 10, 10, 10, 13],
    );
  });

  it('gives the time of a slice in which nothing arrived to the next one, and a tail with nothing to the one before', () => {
    // A timer point a millisecond after the window opened, then arrivals, then none at the end.
    const points: WindowPoint[] = [
      { t: 0, elements: 0, fine: 0 },
      { t: 0.001, elements: 0, fine: 0 },
      { t: 1, elements: 10, fine: 10 },
      { t: 2, elements: 20, fine: 20 },
    ];
    const s = slices(points, { t: 3, elements: 20, fine: 20 })!;
    assert.deepEqual(
      s.map((x) => x.elements),
      [10, 10],
    );
    assert.ok(Math.abs(s[0]!.seconds - 1) < 1e-12 && Math.abs(s[1]!.seconds - 2) < 1e-12, JSON.stringify(s));
  });

  it('drops points read after the window ended', () => {
    const points: WindowPoint[] = [
      { t: 0, elements: 0, fine: 0 },
      { t: 1, elements: 1, fine: 32 },
      { t: 2.5, elements: 2, fine: 90 },
    ];
    const s = slices(points, { t: 2, elements: 2, fine: 64 })!;
    assert.equal(s.length, 2);
    assert.ok(Math.abs(s[1]!.seconds - 1) < 1e-12);
  });

  it('merges many points into at most twelve slices spread evenly over the window', () => {
    const { points, end } = batches(10, 1, 0.01);
    const s = slices(points, end)!;
    assert.equal(s.length, 12);
    for (const x of s) assert.ok(Math.abs(x.seconds - 10 / 12) < 0.02, `slice of ${x.seconds} s`);
  });

  it('cuts the same window finer on request (the curve runs are compared on), adding up to the same elements and seconds', () => {
    const { points, end } = batches(10, 1, 0.01);
    const coarse = slices(points, end)!;
    const fine = slices(points, end, 48)!;
    assert.equal(fine.length, 48);
    for (const s of [coarse, fine]) {
      assert.ok(Math.abs(s.reduce((a, x) => a + x.elements, 0) - 10) < 1e-9);
      assert.ok(Math.abs(s.reduce((a, x) => a + x.seconds, 0) - 10) < 1e-9);
    }
    // No finer than the points taken: 20 points give 20 slices, whatever was asked.
    const sparse = batches(10, 1, 0.5);
    assert.equal(slices(sparse.points, sparse.end, 48)!.length, 20);
  });

  it('gives no slices to a window with one point', () => {
    assert.equal(slices([{ t: 0, elements: 0, fine: 0 }], { t: 1, elements: 5, fine: 5 }), undefined);
  });

  it('counts the batch in progress when the budget ends a window between two batches', () => {
    // Five batches of 32 in 5 s, then 20 images of the sixth by the window's end at 5.625 s: the
    // window ran at one batch a second, and every operator's counters include those 20 images.
    const partial = partialOf(5, 0, 160, 180);
    assert.ok(Math.abs(partial - 20 / 32) < 1e-9, `partial ${partial}`);
    const { points } = batches(6, 1, 0.1);
    const end: WindowPoint = { t: 5.625, elements: 5 + partial, fine: 180 };
    const s = slices(points, end)!;
    const r = pooledRate(s);
    assert.ok(Math.abs(r.rate - 1) < 0.02, `rate ${r.rate}: the whole batches alone give ${(5 / 5.625).toFixed(3)}`);
    assert.ok(Math.abs(s.reduce((a, x) => a + x.elements, 0) - 5.625) < 1e-9);
  });

  it('counts no partial element when the fine count is no finer than the root, or no whole element was measured', () => {
    assert.equal(partialOf(5, 0, 5, 6), 0);
    assert.equal(partialOf(0, 0, 0, 20), 0);
    // A count past a whole element (a root that took more than it emits) stays below one.
    assert.ok(partialOf(2, 0, 64, 200) < 1);
  });
});
