/**
 * Time: the wall budget of a diagnosis, how long each run measures and warms up, and whether one
 * more run fits in what is left. Verification's runs are short and alternate, so every run's
 * length is a trade between the spread it measures and the person waiting for it.
 */
import type { Overrides, Profile } from '../../shared/profile';
import type { ModelOptions } from '../../shared/analysis';
import { DEFAULT_SETTINGS } from '../../shared/settings';
import { runCurve, type Curve } from '../paired';
import { pooledRate } from '../stats';
import { alignedStart, expectedRate, safePredict, type Config } from './config';
import type { DiagnoseInput, PassRun } from './input';

/**
 * Default wall seconds of a whole diagnosis (profile, plan, verification): what a person waits for
 * in the editor or at a terminal. Verification fills what the passes leave of it.
 */
export const DEFAULT_BUDGET_SECONDS = DEFAULT_SETTINGS.plan.budgetSeconds;
/**
 * Seconds each verification run measures (after its warm-up), at most: verification alternates
 * several runs, and its spread comes from the window slices of each run, so short runs keep
 * profile + plan + verification near 15 s while each still holds several slices. The CLI and the
 * language server both cap their `verify` runs at it, so they verify alike.
 */
export const VERIFY_RUN_SECONDS = 1;
/**
 * Longest a verification run measures, seconds: a pipeline slower than VERIFY_MIN_ELEMENTS in this
 * time is compared on fewer root elements — but the runner slices a batching pipeline's window by
 * the elements its batches take, so a few batches still give a dozen slices.
 */
export const VERIFY_MAX_RUN_SECONDS = 3;
/**
 * Root elements a verification run aims to measure: enough for its window to be cut into several
 * slices of a few elements each, so a slow pipeline (a batch a second) is not measured on one
 * element or none — a window shorter than an element measures 0/s and hides any gain.
 */
export const VERIFY_MIN_ELEMENTS = 16;

/**
 * Seconds verification may take for its two A/B pairs, whatever the passes left of the whole
 * budget, when the first pair's runs found different cores free (or free cores cannot be read): a
 * pair under a drifting load decides nothing, and the second pair, run the other way round, is
 * what cancels the drift. On a steady machine an undecided first pair gets a second only within
 * the budget: it would only narrow the interval, and the wait is the user's.
 */
export const PAIR_FLOOR_SECONDS = 10;

/** Seconds a verification run of a configuration expected to run at `rate` should measure. */
export function verifyRunSeconds(rate: number | undefined): number {
  if (rate === undefined || !Number.isFinite(rate) || rate <= 0) return VERIFY_MAX_RUN_SECONDS;
  return Math.min(VERIFY_MAX_RUN_SECONDS, Math.max(VERIFY_RUN_SECONDS, VERIFY_MIN_ELEMENTS / rate));
}

/**
 * Seconds a run at `rate` whose window starts at element `from` takes to cover what another run's
 * window `covered` reached, and never less than a verification run's window: runs are compared on
 * the elements both covered (../paired.ts), so a run that stops short of them compares fewer, and
 * one that goes on past them measures elements the other never ran. Undefined when nothing is left
 * to cover or the rate is unknown.
 */
export function secondsToCover(covered: Curve, from: number, rate: number | undefined): number | undefined {
  const elements = covered.n.at(-1)! - Math.max(from, covered.n[0]!);
  if (!(elements > 0) || !rate || !(rate > 0)) return undefined;
  return Math.max(verifyRunSeconds(rate), elements / rate);
}

/**
 * Root elements a run with these overrides warms up on, at least: as many per thread as the run
 * as written warmed its main thread on. A fn moved to p worker threads runs a p-th of its calls on
 * each, so its JIT and its own caches (a tokenizer's merge cache) warm p times slower in elements.
 * A window taken earlier measures the threads' start-up and prices the move too high. Undefined
 * when no fn moves off the main thread.
 */
export function warmupElementsFor(first: Profile, overrides: Overrides): number | undefined {
  let threads = 1;
  for (const op of first.ops) {
    const o = overrides[op.id];
    if (op.placement === 'worker' || o?.placement !== 'worker') continue;
    threads = Math.max(threads, typeof o.parallelism === 'number' ? o.parallelism : first.machine.cores);
  }
  const warmed = first.error ? 0 : first.run.warmupElements;
  return threads > 1 && warmed > 0 ? threads * warmed : undefined;
}

/**
 * Root elements a later pass warms up on: `warmupElementsFor`'s, but the warm-up beyond the first
 * run's own only as far as the budget leaves time for it after a run as long as the first, at the
 * rate the first measured (a pool just started runs no faster). `spareSeconds` is what is left of
 * the budget less the first run's wall time. A slow pipeline would otherwise warm its threads on
 * p times its first run's elements for longer than the budget has, and the passes alone would
 * overrun it before verification began. The runner still holds the window back while the rate
 * rises (its `RampDetector`), and a plan measured cold is measured slower, never faster.
 */
export function passWarmupElements(first: Profile, overrides: Overrides, spareSeconds: number): number | undefined {
  const asked = warmupElementsFor(first, overrides);
  if (asked === undefined) return undefined;
  const warmed = first.run.warmupElements;
  const rate = first.run.seconds > 0 ? first.run.elements / first.run.seconds : 0;
  return Math.min(asked, warmed + Math.floor(Math.max(0, spareSeconds) * rate));
}

/**
 * Seconds a later pass's run measures when the run as written never settled in its window (its
 * rate varies along the data: it ran out its budget): what covering the elements the run as
 * written measured beyond this run's warm-up takes at the rate the model predicts for it
 * (`secondsToCover`) — the stretch on which verification compares the two; the rest of a longer
 * window is time verification lacks. Undefined (the pass's usual window) when the run as written
 * settled, or no such stretch is left.
 */
export function replanSeconds(first: Profile, overrides: Overrides, warmupElements: number | undefined, options: ModelOptions): number | undefined {
  if (first.error || first.run.endReason !== 'budget') return undefined;
  const curve = runCurve(first);
  return curve && secondsToCover(curve, warmupElements ?? 0, safePredict(first, overrides, options)?.rate);
}

/**
 * Verification's share of the time: what it may spend, what it spent, and the window each of its
 * runs measures. It judges what a run takes by the slowest verification run so far, or before any
 * by the passes' runs and the window a run as written measures (`asWritten`, the yardstick).
 */
export class VerifyBudget {
  /** When verification started, on `clock`. */
  readonly started: number;
  /** Wall seconds the optional runs may take: what the passes left of the whole budget, or `verifyBudgetSeconds`. */
  readonly seconds: number;
  /**
   * Wall seconds the second A/B pair may take after a first pair under a drifting load: at least
   * PAIR_FLOOR_SECONDS even when the passes left less of the whole budget — but not when they left
   * none: the floor tops up a short verification, it does not lengthen a diagnosis whose passes
   * already took the whole wait.
   */
  readonly pairSeconds: number;
  /** A cancelled verification has room for nothing. */
  cancelled = false;
  /** The longest a verification run took, wall seconds (0 before any). */
  private slowest = 0;
  /** The most a verification run took besides its measured window (start-up, warm-up, teardown). */
  private overheadSeen = 0;
  /**
   * What a verification run takes besides its window before one has run: the passes' start-up,
   * warm-up and teardown (a run's wall time less its measured window; the shortest, as the first
   * pass's also priced moves). Infinite when no pass run is known.
   */
  private readonly fixedSeconds: number;

  constructor(
    input: Pick<DiagnoseInput, 'budgetSeconds' | 'verifyBudgetSeconds'>,
    private readonly clock: () => number,
    began: number,
    passRuns: readonly PassRun[],
    private readonly first: Profile,
    private readonly asWritten: Config,
  ) {
    this.started = clock();
    this.seconds = input.verifyBudgetSeconds ?? Math.max(0, (input.budgetSeconds ?? DEFAULT_BUDGET_SECONDS) - (this.started - began));
    this.pairSeconds = input.verifyBudgetSeconds ?? (this.seconds > 0 ? Math.max(this.seconds, PAIR_FLOOR_SECONDS) : 0);
    this.fixedSeconds = Math.min(...passRuns.map((r) => Math.max(0, r.seconds - (r.profile.run.seconds ?? 0))));
  }

  /** Seconds since verification started. */
  elapsed(): number {
    return this.clock() - this.started;
  }

  /** Room for `k` more runs within `within` seconds of verification, and `extra` seconds besides. */
  room(k: number, within = this.seconds, extra = 0): boolean {
    return !this.cancelled && this.elapsed() + k * (this.slowest > 0 ? this.slowest : this.firstRunGuess()) + extra <= within;
  }

  /** Notes a verification run that started at `t0` and measured a window of `window` seconds (undefined: it failed). */
  ran(t0: number, window: number | undefined): void {
    this.slowest = Math.max(this.slowest, this.clock() - t0);
    if (window !== undefined) this.overheadSeen = Math.max(this.overheadSeen, this.clock() - t0 - window);
  }

  /**
   * Seconds a run of `c` measures: its usual window at the rate it is expected to run at, or after
   * a run of `partner` (a run as written beside the plan's) as long as `alignedWindowSeconds` says.
   */
  windowSeconds(c: Config, partner?: Config): number {
    return partner ? this.alignedWindowSeconds(partner) : verifyRunSeconds(expectedRate(c, this.first));
  }

  /**
   * Seconds a run as written aligned to `partner`'s last run warms up beyond its first run's
   * warm-up (the elements before partner's window, at as written's rate): what `room` cannot see
   * from the runs so far.
   */
  alignedWarmupSeconds(partner: Config): number {
    const extra = alignedStart(this.asWritten, partner) - this.first.run.warmupElements;
    const rate = pooledRate(this.asWritten.slices).rate;
    return extra > 0 && rate > 0 ? extra / rate : 0;
  }

  /**
   * Seconds a run as written after `partner`'s measures: long enough to cover the elements
   * partner's last window covered (`secondsToCover`, at as written's rate), as far as the budget
   * leaves room after the run's start-up and warm-up (not the floor a second pair may take: that
   * is for deciding at all, not for deciding more narrowly); never shorter than its usual window,
   * nor longer than VERIFY_MAX_RUN_SECONDS. A faster plan covers more elements in its window than
   * as written does in the same time, and a speed-up measured on the few elements as written
   * reached, where elements differ several times in cost, has a wide spread.
   */
  private alignedWindowSeconds(partner: Config): number {
    const rate = expectedRate(this.asWritten, this.first);
    const usual = verifyRunSeconds(rate);
    const curve = partner.curves.at(-1)?.curve;
    const wanted = curve && secondsToCover(curve, curve.n[0]!, rate);
    if (!wanted) return usual;
    // Start-up and teardown as the slowest verification run so far had them, or the passes' when
    // longer: a busy machine starts some runs slower than others.
    const overhead = Math.max(this.overheadSeen, this.fixedOrZero());
    const left = this.seconds - this.elapsed() - overhead - this.alignedWarmupSeconds(partner);
    return Math.max(usual, Math.min(wanted, left, VERIFY_MAX_RUN_SECONDS));
  }

  /** What the first verification run will take, judging by the passes' runs and as written's window. */
  private firstRunGuess(): number {
    return this.fixedOrZero() + verifyRunSeconds(expectedRate(this.asWritten, this.first));
  }

  private fixedOrZero(): number {
    return Number.isFinite(this.fixedSeconds) ? this.fixedSeconds : 0;
  }
}
