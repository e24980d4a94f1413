/**
 * A configuration verification measures (a set of the plan's changes, or one on top of the kept
 * ones) and what is read off it without running anything: its key, its name, the rate it is
 * expected to run at, what the verdict reports of it.
 */
import type { ModelOptions, PlanChange, VerifiedConfig } from '../../shared/analysis';
import { changeKey } from '../../shared/analysis';
import type { Overrides, Profile, ProfileError, WindowSlice } from '../../shared/profile';
import { changeTitle, predict } from '../../model';
import type { PairableRun } from '../paired';
import { pooledRate, runSlices } from '../stats';
import { formatNumber, terminalRate } from '../../shared/words';

export interface Config {
  key: string;
  changes: PlanChange[];
  overrides: Overrides;
  predictedRate?: number;
  /** The window slices its runs measured. */
  slices: WindowSlice[];
  /** The cores each of its runs found free (`run.availableCores`), where measured. */
  freeCores: number[];
  /** Each of its runs' seconds to its first element (`run.firstElementSeconds`), where measured. */
  firstBatch: number[];
  /** Its sliced runs' curves, for comparisons on the same elements (../paired.ts). */
  curves: PairableRun[];
  runs: number;
  error?: ProfileError;
  /** Its latest run that measured. */
  last?: Profile;
}

/** A configuration not measured yet. */
export function unmeasured(key: string, changes: PlanChange[], overrides: Overrides, predictedRate?: number): Config {
  return { key, changes, overrides, predictedRate, slices: [], freeCores: [], firstBatch: [], curves: [], runs: 0 };
}

export function keyOf(changes: PlanChange[]): string {
  return changes.map(changeKey).sort().join(' ');
}

/** What a person calls a change, without the operator id noise: "parallelism of map(fetch)". */
export function shortName(c: PlanChange, profile: Profile): string {
  try {
    return changeTitle(c, profile);
  } catch {
    return changeKey(c);
  }
}

/** Overrides as a canonical string: the same knobs in any key order compare equal. */
export function canonical(o: Overrides): string {
  const sorted = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>)
            .filter(([, x]) => x !== undefined)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, x]) => [k, sorted(x)]),
        )
      : v;
  return JSON.stringify(sorted(o));
}

/** A configuration's pooled rate and spread, as a reason says it: "963/s ± 48.2". */
export function fmtMeasured(c: Config): string {
  const m = pooledRate(c.slices);
  return `${terminalRate(m.rate)} ± ${formatNumber(m.halfWidth)}`;
}

/** The rate a configuration is expected to run at: what it measured so far, else its prediction, else as written's (the first run's). */
export function expectedRate(c: Config, first: Profile): number | undefined {
  const measured = c.slices.length > 0 ? pooledRate(c.slices).rate : undefined;
  if (measured !== undefined && measured > 0) return measured;
  if (c.predictedRate !== undefined && c.predictedRate > 0) return c.predictedRate;
  const firstSlices = runSlices(first);
  return firstSlices.length > 0 ? pooledRate(firstSlices).rate : undefined;
}

/**
 * Root elements a run of `c` warms up on so that its window starts where the last run of
 * `partner` started its own (0: no need). A run as written that follows a run which warmed up
 * longer (p worker threads warm on p times the elements) would otherwise measure earlier elements
 * than its pair partner and share too few with it to be compared on the same ones. Only when that
 * start lies within what `c`'s first run reached: further would hold its warm-up longer than a
 * whole window (a cached plan's window can start thousands of elements in).
 */
export function alignedStart(c: Config, partner: Config | undefined): number {
  const start = partner?.curves.at(-1)?.curve.n[0];
  const reached = c.curves[0]?.curve;
  if (start === undefined || !reached || start <= reached.n[0]! || start > reached.n.at(-1)!) return 0;
  return start;
}

export function predictedOf(c: PlanChange): number {
  const p = (c as { predictedRate?: unknown }).predictedRate;
  return typeof p === 'number' && Number.isFinite(p) ? p : 0;
}

export function configOut(c: Config): VerifiedConfig {
  const out: VerifiedConfig = { changes: c.changes.map(changeKey), measured: pooledRate(c.slices) };
  const counts = c.changes.filter((x) => x.kind === 'parallelism' || x.kind === 'cycleLength');
  if (counts.length > 0) out.values = Object.fromEntries(counts.map((x) => [changeKey(x), x.to]));
  if (c.predictedRate !== undefined) out.predictedRate = c.predictedRate;
  return out;
}

export function safePredict(profile: Profile, overrides: Overrides, options: ModelOptions): ReturnType<typeof predict> | undefined {
  try {
    return predict(profile, overrides, options);
  } catch {
    return undefined;
  }
}
