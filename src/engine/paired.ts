/**
 * Comparing two configurations on the same elements. Every run of a pipeline starts from its
 * first element and, unless the order is random, reads the same elements in the same order: run
 * A and run B both spend their windows on elements 200…900 of the same corpus. When those
 * elements differ in cost (short emails and long ones, a vocabulary the tokenizer has cached and
 * one it has not), a run's slices differ by what they held, not by chance, several times over in
 * one window. Pooled as if they were repeated measurements of one rate, that spread can hide a
 * 2× gain. Timed on the same stretches of
 * elements, the differences of content fall on both sides and cancel; what is left is the noise
 * the comparison must clear.
 *
 * A run's curve is where it stood at each slice boundary (root elements since the pipeline
 * started, seconds since its window started). Two runs are paired over the elements both
 * windows covered; that stretch is cut into sub-ranges, and each sub-range gives the seconds each
 * run spent on it. The speed-up is Σ base seconds ÷ Σ config seconds with the ratio estimator's
 * Student-t interval, as for pooled rates (./stats.ts `pooledRate`). `compareSides` chooses, for
 * two configurations, between this and their pooled rates; verification and the passes judge by it.
 */
import type { Profile, WindowSlice } from '../shared/profile';
import { formatSpeedup, measuredSlower, MIN_RELATIVE_GAIN, pooledRate, reliablyFaster, runSlices, speedupOf, t975, wholeLifeWithCache } from './stats';

/** Root elements since the pipeline's start (n) and seconds since the window's start (t), at the window's start and each slice's end. */
export interface Curve {
  n: number[];
  t: number[];
}

/** A run of a configuration: its curve and its place among the runs of one diagnosis. */
export interface PairableRun {
  curve: Curve;
  /** Order of the run in the diagnosis (0 for the first). */
  seq: number;
}

/** A speed-up with the half-width of its 95% interval. */
export interface Speedup {
  speedup: number;
  halfWidth: number;
}

/** The speed-up of one configuration over another on the elements both ran. */
export interface PairedSpeedup extends Speedup {
  /** Sub-ranges pooled. */
  ranges: number;
  /**
   * The same without the one sub-range where the configuration gained most; undefined below
   * PAIRED_MIN_RANGES + 1 sub-ranges. Where one stretch of the data is far faster with it (a huge
   * email tokenised in worker threads while the main thread goes on), that stretch alone can widen
   * the interval below 1 though every other stretch is faster: leaving it out only lowers the
   * estimate, so a gain that clears the bar without it is a gain (see `sideFaster`).
   */
  withoutBest?: Speedup;
}

/** Σ base ÷ Σ x over paired sub-range times, with the ratio estimator's Student-t half-width. */
function ratioEstimate(xs: readonly number[], bs: readonly number[]): Speedup {
  const m = xs.length;
  const sx = xs.reduce((s, v) => s + v, 0);
  const sb = bs.reduce((s, v) => s + v, 0);
  const speedup = sb / sx;
  const s2 = xs.reduce((s, v, k) => s + (bs[k]! - speedup * v) ** 2, 0) / (m - 1);
  return { speedup, halfWidth: (t975(m - 1) * Math.sqrt(s2 / m)) / (sx / m) };
}

/** Fewest sub-ranges a paired comparison needs (as `SETTLE_MIN_SLICES` for pooled slices). */
export const PAIRED_MIN_RANGES = 4;
/**
 * The shared stretch must hold at least this share of the shorter window's elements: a pair that
 * shares a sliver (a fast plan's warm-up ran past what as written measured) says little about
 * either, and the comparison falls back to pooled rates.
 */
export const PAIRED_MIN_OVERLAP = 0.5;
/** Most sub-ranges one pair of runs contributes. */
const MAX_RANGES_PER_PAIR = 12;

/**
 * The curve of a run from its warm-up and its window's finest slices (`windowCurve`, else
 * `windowSlices`); undefined when the window was not sliced,
 * or when it measured a cache's fill and replay from start to end: compared stretch by stretch,
 * the fill's stretches would say 1× and the replay's 50× (see stats.ts `wholeLifeWithCache`).
 */
export function runCurve(profile: Profile): Curve | undefined {
  if (wholeLifeWithCache(profile)) return undefined;
  const slices = profile.run.windowCurve ?? profile.run.windowSlices;
  if (!slices || slices.length < 2) return undefined;
  const n = [profile.run.warmupElements];
  const t = [0];
  for (const s of slices) {
    if (!(Number.isFinite(s.elements) && s.elements >= 0 && Number.isFinite(s.seconds) && s.seconds > 0)) return undefined;
    n.push(n.at(-1)! + s.elements);
    t.push(t.at(-1)! + s.seconds);
  }
  return n.at(-1)! > n[0]! ? { n, t } : undefined;
}

/** Seconds the run had spent when it reached element position `x` (linear between its points). */
function timeAt(c: Curve, x: number): number {
  const { n, t } = c;
  if (x <= n[0]!) return t[0]!;
  for (let i = 1; i < n.length; i++) {
    if (n[i]! >= x) {
      const dn = n[i]! - n[i - 1]!;
      return dn > 0 ? t[i - 1]! + ((x - n[i - 1]!) / dn) * (t[i]! - t[i - 1]!) : t[i]!;
    }
  }
  return t.at(-1)!;
}

/** Points of the curve strictly inside (lo, hi). */
function pointsInside(c: Curve, lo: number, hi: number): number {
  return c.n.filter((x) => x > lo && x < hi).length;
}

/** Root elements the windows of two runs both covered (0 when they share none). */
function shared(a: Curve, b: Curve): number {
  return Math.max(0, Math.min(a.n.at(-1)!, b.n.at(-1)!) - Math.max(a.n[0]!, b.n[0]!));
}

/**
 * Pairs each run of `x` with the run of `base` nearest to it in the diagnosis (each base run used
 * once): in an A B B A design, the runs that ran side by side. Of two as near (A B A: a run as
 * written on each side of the plan's), the one whose window shared more elements with it, then
 * the earlier: the run after the plan's is there to measure the plan's elements (its warm-up
 * aligned to the plan's), where the run before measured earlier ones.
 */
export function pairRuns(x: readonly PairableRun[], base: readonly PairableRun[]): Array<[PairableRun, PairableRun]> {
  const free = [...base].sort((a, b) => a.seq - b.seq);
  const out: Array<[PairableRun, PairableRun]> = [];
  for (const r of [...x].sort((a, b) => a.seq - b.seq)) {
    let best = -1;
    for (let i = 0; i < free.length; i++) {
      const d = Math.abs(free[i]!.seq - r.seq);
      const bestD = best < 0 ? Infinity : Math.abs(free[best]!.seq - r.seq);
      if (d < bestD || (d === bestD && shared(free[i]!.curve, r.curve) > shared(free[best]!.curve, r.curve))) best = i;
    }
    if (best < 0) break;
    out.push([r, free[best]!]);
    free.splice(best, 1);
  }
  return out;
}

/**
 * The speed-up of `x` over `base` on the elements their paired runs both covered, or undefined
 * when the runs do not share enough (fewer than PAIRED_MIN_RANGES sub-ranges in all, or no pair
 * sharing PAIRED_MIN_OVERLAP of its shorter window).
 */
export function pairedSpeedup(x: readonly PairableRun[], base: readonly PairableRun[]): PairedSpeedup | undefined {
  const xs: number[] = [];
  const bs: number[] = [];
  for (const [a, b] of pairRuns(x, base)) {
    const lo = Math.max(a.curve.n[0]!, b.curve.n[0]!);
    const hi = Math.min(a.curve.n.at(-1)!, b.curve.n.at(-1)!);
    const shorter = Math.min(a.curve.n.at(-1)! - a.curve.n[0]!, b.curve.n.at(-1)! - b.curve.n[0]!);
    if (!(hi > lo) || hi - lo < PAIRED_MIN_OVERLAP * shorter) continue;
    // As many sub-ranges as the sparser run has points in the stretch (plus one), so each holds
    // about one of its slices: finer cuts would only interpolate.
    const m = Math.min(MAX_RANGES_PER_PAIR, Math.max(1, Math.min(pointsInside(a.curve, lo, hi), pointsInside(b.curve, lo, hi)) + 1));
    for (let k = 0; k < m; k++) {
      const n0 = lo + ((hi - lo) * k) / m;
      const n1 = lo + ((hi - lo) * (k + 1)) / m;
      const ta = timeAt(a.curve, n1) - timeAt(a.curve, n0);
      const tb = timeAt(b.curve, n1) - timeAt(b.curve, n0);
      if (!(ta > 0 && tb > 0)) continue;
      xs.push(ta);
      bs.push(tb);
    }
  }
  const m = xs.length;
  if (m < PAIRED_MIN_RANGES) return undefined;
  const all = ratioEstimate(xs, bs);
  if (m < PAIRED_MIN_RANGES + 1) return { ...all, ranges: m };
  let best = 0;
  for (let k = 1; k < m; k++) if (bs[k]! / xs[k]! > bs[best]! / xs[best]!) best = k;
  const rest = (v: number[]): number[] => v.filter((_, k) => k !== best);
  return { ...all, ranges: m, withoutBest: ratioEstimate(rest(xs), rest(bs)) };
}

/** What runs of one configuration measured: their window slices (pooled) and their curves (paired). */
export interface MeasuredSide {
  slices: readonly WindowSlice[];
  curves: readonly PairableRun[];
}

/** One run as a side of a comparison; `seq` is its place among the runs compared. */
export function sideOf(profile: Profile, seq: number): MeasuredSide {
  const curve = runCurve(profile);
  return { slices: runSlices(profile), curves: curve ? [{ curve, seq }] : [] };
}

/**
 * x against base: on the same elements when their runs covered enough of the same ones (the
 * differences of content between stretches of the data then cancel), else their pooled rates.
 * When both can be had, the more precise one (the narrower interval for its speed-up): pairing
 * pays where stretches of the data differ in cost, but a slow pipeline's few batches give few
 * ranges, each timed across an interpolated batch, and a t-quantile of few degrees of freedom, so
 * its paired interval can be wider than pooled rates that do not even overlap. The choice looks
 * only at the spreads, never at which verdict it gives.
 */
export function compareSides(x: MeasuredSide, base: MeasuredSide): Speedup & { paired: boolean; withoutBest?: Speedup } {
  const pooled = speedupOf(pooledRate(x.slices), pooledRate(base.slices));
  const p = pairedSpeedup(x.curves, base.curves);
  if (!p) return { ...pooled, paired: false };
  const relative = (s: Speedup): number => (s.speedup > 0 ? s.halfWidth / s.speedup : Infinity);
  return relative(p) <= relative(pooled) ? { speedup: p.speedup, halfWidth: p.halfWidth, paired: true, ...(p.withoutBest ? { withoutBest: p.withoutBest } : {}) } : { ...pooled, paired: false };
}

/**
 * What a measured rate pair and its speed-up need beside them when the speed-up was paired: the
 * rates are pooled over each run's window, the speed-up only over the elements both ran, so the
 * two can point different ways.
 */
export function bothRan(s: { paired: boolean }): string {
  return s.paired ? ' on the elements both ran' : '';
}

/**
 * Both sides ran with curves, yet no pair of their runs shared enough elements to be compared on
 * them: their pooled rates were measured on different stretches of the data.
 */
export function unpairable(x: MeasuredSide, base: MeasuredSide): boolean {
  return x.curves.length > 0 && base.curves.length > 0 && pairedSpeedup(x.curves, base.curves) === undefined;
}

/** A speed-up beyond its spread and by at least MIN_RELATIVE_GAIN. */
function clears(s: Speedup): boolean {
  return s.speedup - s.halfWidth > 1 && s.speedup >= 1 + MIN_RELATIVE_GAIN;
}

/**
 * x faster than base beyond the spread, and by at least MIN_RELATIVE_GAIN (see `compareSides`):
 * on the elements both ran, with every stretch or without the one where x gained most
 * (`PairedSpeedup.withoutBest`).
 */
export function sideFaster(x: MeasuredSide, base: MeasuredSide): boolean {
  if (x.slices.length === 0 || base.slices.length === 0) return false;
  const j = compareSides(x, base);
  return j.paired ? clears(j) || (j.withoutBest !== undefined && clears(j.withoutBest)) : reliablyFaster(pooledRate(x.slices), pooledRate(base.slices));
}

/**
 * x faster than base only without the stretch where it gained most: the speed-up without it
 * (lower, and narrower), for the words beside the whole figure; undefined otherwise.
 */
export function gainWithoutBest(x: MeasuredSide, base: MeasuredSide): Speedup | undefined {
  const j = compareSides(x, base);
  return j.paired && !clears(j) && j.withoutBest !== undefined && clears(j.withoutBest) ? j.withoutBest : undefined;
}

/** " (1.6× ± 0.3 without the stretch of the data where it gained most)" when that is what makes x a gain (`gainWithoutBest`), else "". */
export function withoutBestWords(x: MeasuredSide, base: MeasuredSide): string {
  const w = gainWithoutBest(x, base);
  return w ? ` (${formatSpeedup(w.speedup, w.halfWidth)} without the stretch of the data where it gained most)` : '';
}

/** x slower than base by at least MIN_RELATIVE_GAIN, or beyond the spread (see `compareSides`). */
export function sideSlower(x: MeasuredSide, base: MeasuredSide): boolean {
  const j = compareSides(x, base);
  return j.paired ? j.speedup <= 1 - MIN_RELATIVE_GAIN || j.speedup + j.halfWidth < 1 : measuredSlower(pooledRate(x.slices), pooledRate(base.slices));
}
