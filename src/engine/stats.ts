/**
 * Measured rates with a spread: the statistics verification and the passes judge runs by.
 */
import type { MeasuredRate } from '../shared/analysis';
import type { Profile, WindowSlice } from '../shared/profile';

/** How a speed-up is written lives with the other words (src/shared/words.ts); verification's callers import it from here too. */
export { formatSpeedup } from '../shared/words';

/** Two-sided 95% quantiles of Student's t for 1…30 degrees of freedom. */
const T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];

export function t975(df: number): number {
  if (df < 1) return Number.POSITIVE_INFINITY;
  // Beyond the table, 1.96 + 2.4/df is within 0.005 of the exact quantile.
  return df <= T975.length ? T975[df - 1]! : 1.96 + 2.4 / df;
}

/**
 * The smallest measured speed-up that counts as a gain, besides being beyond the spread: below 3%
 * a person would not notice it, and a run-to-run drift of that size is common on a shared machine.
 */
export const MIN_RELATIVE_GAIN = 0.03;

/**
 * A run of a finite pipeline with a cache, which ran to the pipeline's end (a cache under
 * repeat(n): its first pass computing, the rest replaying). Its window is not its rate. A window
 * from the first element holds two regimes by design, not repeated measurements of one rate: the
 * fill's slices and the replay's differ by the whole of the cache's saving, so as a spread they
 * would hide any gain. A window after a warm-up that waited for the fill holds only the replay,
 * which overstates the gain of the whole run. What the user gets is the whole run's rate from its
 * first element to its end, so the run counts as one measurement of it (`wholeLife`).
 */
export function wholeLifeWithCache(profile: Profile): boolean {
  const r = profile.run;
  return r.endReason === 'exhausted' && (r.warmupElements <= 1 || r.firstElementSeconds !== undefined) && profile.ops.some((o) => o.kind === 'cache');
}

/** The run from its first element to its end as one slice: its warm-up after the first element and its window. */
function wholeLife(profile: Profile): WindowSlice {
  const r = profile.run;
  if (r.warmupElements <= 1 || r.firstElementSeconds === undefined) return { elements: r.elements, seconds: r.seconds };
  return { elements: r.warmupElements - 1 + r.elements, seconds: Math.max(0, r.warmupSeconds - r.firstElementSeconds) + r.seconds };
}

/**
 * The slices one run contributes: its measured window's slices, or its whole window when it was
 * not sliced, or its whole life when it ran a finite pipeline with a cache to its end (see
 * `wholeLifeWithCache`).
 */
export function runSlices(profile: Profile): WindowSlice[] {
  if (wholeLifeWithCache(profile)) {
    const life = wholeLife(profile);
    return life.seconds > 0 ? [life] : [];
  }
  const slices = profile.run.windowSlices?.filter((s) => Number.isFinite(s.elements) && s.elements >= 0 && Number.isFinite(s.seconds) && s.seconds > 0) ?? [];
  if (slices.length >= 2) return slices;
  return profile.run.seconds > 0 ? [{ elements: profile.run.elements, seconds: profile.run.seconds }] : [];
}

/**
 * Pools window slices (of one or more runs) into a rate with a 95% Student-t interval. The rate is
 * all elements ÷ all seconds; its spread is the ratio estimator's, from how far each slice's count
 * lies from what the pooled rate predicts for its length: s² = Σ(nₖ − R·tₖ)² ÷ (m−1), half-width
 * t(m−1)·√(s²/m) ÷ t̄. Unlike a mean of per-slice rates this has no heavy tail when a slow
 * pipeline's slices hold an element or two each (1 ÷ Δt of a short gap is huge), and it weighs a
 * long slice more than a short one. Slices of different runs pooled together carry the run-to-run
 * differences (a load change, a worker pool's start) into s. A single slice (a run too short to
 * slice: a finite source that a fast plan drains in a moment) says nothing about the spread beyond
 * the counting error of its elements: ±1.96·rate/√elements, as for any count of arrivals; with
 * fewer than 4 elements the half-width is the rate itself (an interval no comparison can clear).
 */
export function pooledRate(slices: readonly WindowSlice[]): MeasuredRate {
  const m = slices.length;
  if (m === 0) return { rate: 0, halfWidth: 0, windows: 0 };
  const elements = slices.reduce((a, s) => a + s.elements, 0);
  const seconds = slices.reduce((a, s) => a + s.seconds, 0);
  const rate = seconds > 0 ? elements / seconds : 0;
  if (m === 1) return { rate, halfWidth: elements >= 4 ? Math.min(rate, (1.96 * rate) / Math.sqrt(elements)) : rate, windows: 1 };
  const s2 = slices.reduce((a, s) => a + (s.elements - rate * s.seconds) ** 2, 0) / (m - 1);
  const meanSeconds = seconds / m;
  return { rate, halfWidth: (t975(m - 1) * Math.sqrt(s2 / m)) / meanSeconds, windows: m };
}

/** Faster beyond the spread: the intervals do not overlap, and by at least MIN_RELATIVE_GAIN. */
export function reliablyFaster(x: MeasuredRate, base: MeasuredRate): boolean {
  return x.windows > 0 && base.windows > 0 && x.rate - x.halfWidth > base.rate + base.halfWidth && x.rate >= base.rate * (1 + MIN_RELATIVE_GAIN);
}

/** Measured slower: below by at least MIN_RELATIVE_GAIN, or beyond the spread. */
export function measuredSlower(x: MeasuredRate, base: MeasuredRate): boolean {
  return x.rate <= base.rate * (1 - MIN_RELATIVE_GAIN) || x.rate + x.halfWidth < base.rate - base.halfWidth;
}

/** x ÷ base with the half-width of the ratio by first-order error propagation. */
export function speedupOf(x: MeasuredRate, base: MeasuredRate): { speedup: number; halfWidth: number } {
  if (!(base.rate > 0)) return { speedup: 0, halfWidth: 0 };
  const speedup = x.rate / base.rate;
  const rel = Math.hypot(x.rate > 0 ? x.halfWidth / x.rate : 0, base.halfWidth / base.rate);
  return { speedup, halfWidth: speedup * rel };
}
