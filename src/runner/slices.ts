/**
 * A measured window cut into slices: consecutive stretches of its elements with their seconds,
 * for the spread of repeated windows and for comparing two runs on the elements they shared.
 */
import type { WindowSlice } from '../shared/profile';

/** Most slices `windowSlices` reports: adjacent estimate intervals merge beyond this. */
const MAX_SLICES = 12;
/**
 * Most slices `windowCurve` reports: the window's points as finely as they were taken (a 3 s
 * profile window holds about 40), for comparing two runs element by element (engine/paired.ts),
 * which needs more stretches of the elements two runs shared than `windowSlices` holds.
 */
export const MAX_CURVE_SLICES = 48;

/** A point of the measured window: seconds, root elements so far, fine count so far. */
export interface WindowPoint {
  t: number;
  elements: number;
  fine: number;
}

/** Fine events per root element below which the fine count is no finer than the root's own. */
const FINER = 2;

/**
 * The share of one more root element a window holds when it ended between two: the fine events
 * since the last root element over the fine events per root element in the window (0 ≤ x < 1).
 * 0 when the window holds no whole root element or the fine count is no finer than the root's.
 */
export function partialOf(elements: number, fineAtStart: number, fineAtLast: number, fineAtEnd: number): number {
  if (elements < 1) return 0;
  const perElement = (fineAtLast - fineAtStart) / elements;
  if (!(perElement >= FINER)) return 0;
  return Math.min(1 - 1e-6, Math.max(0, (fineAtEnd - fineAtLast) / perElement));
}

/**
 * Consecutive, non-overlapping slices of the window from its points (the first is its start) and
 * its end. When the fine count grew at least FINER times as fast as the root's elements, slices
 * count fine events scaled to root elements (so their sum is still the window's elements);
 * otherwise root elements. Points after the end are dropped; adjacent slices merge so there are at
 * most `max`, evenly in time. Undefined below 2.
 */
export function slices(points: readonly WindowPoint[], end: WindowPoint, max = MAX_SLICES): WindowSlice[] | undefined {
  const start = points[0];
  if (!start || !(end.t > start.t)) return undefined;
  const inside = [...points.filter((p) => p.t > start.t && p.t < end.t), end].sort((a, b) => a.t - b.t);
  const fineTotal = end.fine - start.fine;
  const rootTotal = end.elements - start.elements;
  const useFine = rootTotal > 0 && fineTotal >= FINER * rootTotal;
  const count = (p: WindowPoint): number => (useFine ? ((p.fine - start.fine) * rootTotal) / fineTotal : p.elements - start.elements);
  const seconds = end.t - start.t;
  const m = Math.min(max, inside.length);
  const out: WindowSlice[] = [];
  let prev: WindowPoint = start;
  let next = 0;
  for (let k = 1; k <= m; k++) {
    // The last point at or before the k-th m-th of the window closes slice k (the end closes the last).
    const until = start.t + (k * seconds) / m;
    let close: WindowPoint | undefined;
    while (next < inside.length && (inside[next]!.t <= until + 1e-12 || k === m)) close = inside[next++];
    // A slice in which nothing arrived is not closed: its time goes to the next (a timer point
    // a millisecond after the window opened made a slice of 0 elements in 1 ms).
    if (!close || close.t <= prev.t || (k < m && count(close) === count(prev))) continue;
    out.push({ elements: count(close) - count(prev), seconds: close.t - prev.t });
    prev = close;
  }
  // Nothing after the last arrival: the tail's time belongs to the slice before it.
  const tail = out.at(-1);
  if (out.length >= 2 && tail && tail.elements === 0) {
    out.pop();
    out[out.length - 1]!.seconds += tail.seconds;
  }
  return out.length >= 2 ? out : undefined;
}
