/**
 * The one diagnose routine the CLI, the language server and the benchmarks share (DESIGN.md
 * "Verify, never lose"): profile the pipeline as written, plan, re-profile with the plan and plan
 * again (./passes.ts), then VERIFY — measure as written and the plan in alternating runs (A B B A:
 * the passes' own runs are the first A B when the last pass ran exactly the final plan), pool each
 * side's window slices into a rate ± Student-t interval, and keep only a configuration that
 * measured reliably faster (intervals apart and ≥ MIN_RELATIVE_GAIN). When the plan is not a reliable gain, the
 * change that hurts is looked for (leave-one-out, each change alone, the union of the changes that
 * did not lose alone) within a time budget, and the best measured configuration that is a reliable
 * gain is kept; otherwise the plan keeps no change and says so. When the plan is a gain, each of
 * its changes is left out in turn while the budget lasts, and a part of the plan that measured
 * reliably faster than the whole replaces it: a large gain must not carry a change that loses. So
 * does a part that is itself a gain and that the whole did not beat beyond the spread: the change
 * it leaves out was not measured to help, and is not recommended. Last, while the budget lasts,
 * the configuration kept is measured with its free levers (calls in flight, inner datasets
 * pulled at once) doubled, and that replaces it when reliably faster.
 *
 * Everything here is deterministic given what `run` returns (and the clock, for the budget), so the
 * decision logic is tested with scripted runs; the runner itself is a child process elsewhere.
 */
import type { Analysis, MeasuredRate, ModelOptions, Plan, PlanChange, Verification, VerifiedConfig } from '../../shared/analysis';
import { changeKey } from '../../shared/analysis';
import type { Overrides, Profile, ProfileError, WindowSlice } from '../../shared/profile';
import { DEFAULT_SETTINGS } from '../../shared/settings';
import { analyze, changeTitle, describeOp, eventLoopMove, keptTrainerVerdict, overridesFor, overridesReverting, predict, rootUnitOf, widenFreeLevers } from '../../model';
import { compareSides, runCurve, sideFaster, sideSlower, unpairable, type Curve, type PairableRun } from '../paired';
import { formatSpeedup, MIN_RELATIVE_GAIN, pooledRate, runSlices } from '../stats';
import { planInPasses, withoutUnpromising } from '../passes';

export { probesFor } from '../passes';
import { cacheAfterRandom, userCachesAfterRandom } from '../randomness';

export { staticRandomOps } from '../randomness';

export type RunPurpose = 'profile' | 'replan' | 'verify';

/** One step of a diagnosis, for progress reports: which phase, what it does, and which run (1-based) it is about. */
export interface DiagnoseStep {
  phase: 'profile' | 'replan' | 'verify';
  message: string;
  run: number;
}

/** How long a run should measure, when diagnose decides it (verification runs, and later passes after an unsettled first run). */
export interface RunBudget {
  /**
   * Seconds of measured window after warm-up: a verification run's, or a later pass's when shorter
   * than the pass's usual window (see `replanSeconds`).
   */
  seconds?: number;
  /** Root elements the run should warm up on at least (see `warmupElementsFor`). */
  warmupElements?: number;
}

/**
 * Root elements a run with these overrides warms up on, at least: as many per thread as the run
 * as written warmed its main thread on. A fn moved to p worker threads runs a p-th of its calls on
 * each, so its JIT and its own caches warm p times slower in elements (a tokenizer's merge cache:
 * the text example's tokenize in two worker threads measured 1.1–1.3× as written on the first
 * hundred batches after a 0.5 s warm-up and 1.5–2.3× on the next ones, on the same shuffled emails).
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
 * the budget less the first run's wall time. A slow pipeline beside a busy thread (the images
 * example, a batch a second: its first run took 7.5 s of the 15) otherwise warmed two threads up
 * on twice its batches for 6 s, and the passes alone overran the budget before verification
 * began. The runner still holds the window back while the rate rises (its `RampDetector`), and a
 * plan measured cold is measured slower, never faster.
 */
function passWarmupElements(first: Profile, overrides: Overrides, spareSeconds: number): number | undefined {
  const asked = warmupElementsFor(first, overrides);
  if (asked === undefined) return undefined;
  const warmed = first.run.warmupElements;
  const rate = first.run.seconds > 0 ? first.run.elements / first.run.seconds : 0;
  return Math.min(asked, warmed + Math.floor(Math.max(0, spareSeconds) * rate));
}

export interface DiagnoseInput {
  /**
   * Runs the pipeline once with these overrides (complete: user overrides + changes) and returns
   * its profile. For verification runs `budget` says how long to measure: long enough for the
   * configuration's expected rate to fill the window with elements (see `verifyRunSeconds`).
   */
  run(overrides: Overrides, purpose: RunPurpose, budget?: RunBudget): Promise<Profile>;
  userOverrides?: Overrides;
  /** Model options (cores, memory budget, `randomOps`…), the same for every pass and prediction. */
  options?: ModelOptions;
  /** Profile runs before verification: plan, re-trace with the plan, plan again (default 2). */
  passes?: number;
  /** Measure the plan against the pipeline as written before keeping any change (default true). */
  verify?: boolean;
  /**
   * Wall seconds the whole diagnosis aims for (default DEFAULT_BUDGET_SECONDS): the passes run as
   * asked, and verification takes what they leave. The first A/B pair always runs, so a plan is
   * never kept unmeasured; after a first pair under a drifting load the second may take
   * PAIR_FLOOR_SECONDS whatever is left, unless the passes left nothing; further runs start only
   * when they fit.
   */
  budgetSeconds?: number;
  /** Wall budget for the verification runs alone, seconds: replaces what `budgetSeconds` leaves them. */
  verifyBudgetSeconds?: number;
  signal?: AbortSignal;
  onStep?(step: DiagnoseStep): void;
  /** Seconds on a monotonic clock (default `performance.now() / 1000`): only the time budget reads it; tests script it. */
  clock?(): number;
}

export interface Diagnosis {
  /** The profile as written (with user overrides). */
  first: Profile;
  /** The analysis of `first`. */
  analysis: Analysis;
  /** The final plan: `plan.verification` is set when verified, and `plan.changes` then holds only what verification kept. */
  plan: Plan;
  /** The profile the final plan came from. */
  last: Profile;
  /** Every run in order. */
  profiles: Profile[];
  /** When the first run failed (then `plan` has no changes). */
  error?: ProfileError;
}

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
 * the elements its batches take (32 images a batch), so three batches still give a dozen slices.
 */
export const VERIFY_MAX_RUN_SECONDS = 3;
/**
 * Root elements a verification run aims to measure: enough for its window to be cut into several
 * slices of a few elements each, so a slow pipeline (a batch a second) is not measured on one
 * element or none — a 1 s window of a 0.8/s pipeline measured 0/s and hid a 50× plan.
 */
export const VERIFY_MIN_ELEMENTS = 16;

/** Seconds a verification run of a configuration expected to run at `rate` should measure. */
export function verifyRunSeconds(rate: number | undefined): number {
  if (rate === undefined || !Number.isFinite(rate) || rate <= 0) return VERIFY_MAX_RUN_SECONDS;
  return Math.min(VERIFY_MAX_RUN_SECONDS, Math.max(VERIFY_RUN_SECONDS, VERIFY_MIN_ELEMENTS / rate));
}

/**
 * Seconds a run at `rate` whose window starts at element `from` takes to cover what another run's
 * window `covered` reached, and never less than a verification run's window: runs are compared on
 * the elements both covered (./paired.ts), so a run that stops short of them compares fewer, and
 * one that goes on past them measures elements the other never ran. Undefined when nothing is left
 * to cover or the rate is unknown.
 */
function secondsToCover(covered: Curve, from: number, rate: number | undefined): number | undefined {
  const elements = covered.n.at(-1)! - Math.max(from, covered.n[0]!);
  if (!(elements > 0) || !rate || !(rate > 0)) return undefined;
  return Math.max(verifyRunSeconds(rate), elements / rate);
}

function fmtRate(r: number): string {
  return r >= 100 ? `${Math.round(r).toLocaleString('en-US')}/s` : `${r.toPrecision(3)}/s`;
}

// ---------------------------------------------------------------------------------------------
// Verification.

interface Config {
  key: string;
  changes: PlanChange[];
  overrides: Overrides;
  predictedRate?: number;
  /** The window slices its runs measured. */
  slices: WindowSlice[];
  /** The cores each of its runs found free (`run.availableCores`), where measured. */
  freeCores: number[];
  /** Its sliced runs' curves, for comparisons on the same elements (./paired.ts). */
  curves: PairableRun[];
  runs: number;
  error?: ProfileError;
  /** Its latest run that measured. */
  last?: Profile;
}

function keyOf(changes: PlanChange[]): string {
  return changes.map(changeKey).sort().join(' ');
}

/** What a person calls a change, without the operator id noise: "parallelism of map(fetch)". */
function shortName(c: PlanChange, profile: Profile): string {
  try {
    return changeTitle(c, profile);
  } catch {
    return changeKey(c);
  }
}

interface VerifyContext {
  input: DiagnoseInput;
  first: Profile;
  plan: Plan;
  options: ModelOptions;
  profiles: Profile[];
  clock: () => number;
  /** The runs the passes took, with the overrides each was given. */
  passRuns: PassRun[];
  /** When the diagnosis started, on `clock`. */
  began: number;
  /** The last pass's run (`first` after one pass) and the history its plan was made with. */
  last: Profile;
  history: Profile[];
}

interface PassRun {
  overrides: Overrides;
  profile: Profile;
  /** Wall seconds the run took, start-up and teardown included. */
  seconds: number;
}

/** Overrides as a canonical string: the same knobs in any key order compare equal. */
function canonical(o: Overrides): string {
  const sorted = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).sort(([a], [b]) => a.localeCompare(b)).map(([k, x]) => [k, sorted(x)])) : v;
  return JSON.stringify(sorted(o));
}

/**
 * A part of a plan that gained is measured without one change only when the model puts it above
 * this share of the plan's measured rate: below it the part cannot be the faster one, and its run
 * (slow, as the pipeline without the change is) would only cost the user time.
 */
const LEAVE_OUT_FLOOR = 0.5;

/**
 * Seconds verification may take for its two A/B pairs, whatever the passes left of the whole
 * budget, when the first pair's runs found different cores free (or free cores cannot be read): a
 * pair under a drifting load decides nothing, and the second pair, run the other way round, is
 * what cancels the drift. On a steady machine an undecided first pair gets a second only within
 * the budget: it would only narrow the interval, and the wait is the user's (a three-change images
 * plan took 23 s with the floor).
 */
const PAIR_FLOOR_SECONDS = 10;

/** Plans with more changes than this are not searched for the part a pass ran (2^n subsets). */
const MATCH_MAX_CHANGES = 6;

/** Slices each side needs before one pair of runs can settle the comparison. */
const SETTLE_MIN_SLICES = 4;
/** The most the free cores of the two runs of a pair may differ, as a share of the machine, for it to settle the comparison. */
const SETTLE_CORES_DRIFT = 0.1;

/**
 * One pair of runs (as written, the plan) settles the comparison, so the second pair of the ABBA
 * design can be skipped: both sides measured a spread (enough slices) and the pair already
 * decides, whatever a change of load between the two runs (the drift the second pair, run the
 * other way round, would otherwise cancel) could have done. On runs that found the same cores free
 * the pair decides when the plan is reliably faster, or reliably slower, or no faster than
 * MIN_RELATIVE_GAIN even at its point estimate. A second pair narrows the interval by about √2 and
 * cannot turn a plan that did not even measure a gain on a steady machine into one; it would only
 * add two runs to the wait (digits at load 1 measured 0.96× after one pair and spent 7.6 s more to
 * say so). When the two runs found different cores free, the drift can explain at most their ratio
 * (a pipeline that took every free core runs that much faster or slower; one that used fewer,
 * less): the pair still decides when the plan's speed-up, its interval and the drift against it
 * taken together, is a gain (a plan that measured 3× ± 0.5 is one whether 1.6 or 1.9 cores were
 * free; the second pair only made a slow pipeline's diagnosis 10 s longer), a loss, or no gain
 * even with the drift for it. Without a measure of free cores (off Linux) nothing settles early.
 */
function settledAfterOnePair(asWritten: Config, planned: Config, cores: number): boolean {
  if (planned.runs !== 1 || planned.error) return false;
  if (asWritten.slices.length < SETTLE_MIN_SLICES || planned.slices.length < SETTLE_MIN_SLICES) return false;
  const free = firstPairFreeCores(asWritten, planned);
  if (free === undefined) return false;
  if (firstPairAlignable(asWritten, planned)) return false;
  if (steadyFirstPair(asWritten, planned, cores)) {
    return sideFaster(planned, asWritten) || sideFaster(asWritten, planned) || compareSides(planned, asWritten).speedup < 1 + MIN_RELATIVE_GAIN;
  }
  // Above 1 the load eased for the plan; below 1 it grew.
  const drift = free.planned / free.asWritten;
  const { speedup, halfWidth } = compareSides(planned, asWritten);
  const against = Math.max(1, drift);
  const forIt = Math.max(1, 1 / drift);
  return speedup - halfWidth > (1 + MIN_RELATIVE_GAIN) * against || (speedup + halfWidth) * forIt < 1 || speedup * forIt < 1 + MIN_RELATIVE_GAIN;
}

/**
 * The first pair's two runs measured different stretches of the data (too few shared elements to
 * be compared on the same ones), and a run as written can be made to measure the plan's: the plan's
 * window started within what as written's window reached. The plan's run warms up longer when it
 * moves a fn to worker threads (`warmupElementsFor`), so its window can start past the middle of as
 * written's: the text example's plan then pooled 2.2× ± 0.8 over emails as written had not run,
 * where the same elements showed 1.0–1.3×. Such a pair settles nothing; the second, with as written aligned
 * (`alignedStart`), compares the same elements. A plan whose window started beyond as written's
 * (a cache at 3,000/s) has only its pooled rates, whichever pair.
 */
function firstPairAlignable(asWritten: Config, planned: Config): boolean {
  return unpairable(planned, asWritten) && alignedStart(asWritten, planned) > 0;
}

/**
 * Root elements a run of `c` warms up on so that its window starts where the last run of
 * `partner` started its own (0: no need). A run as written that follows a run which warmed up
 * longer (p worker threads warm on p times the elements) would otherwise measure earlier elements
 * than its pair partner and share too few with it to be compared on the same ones. Only when that
 * start lies within what `c`'s first run reached: further would hold its warm-up longer than a
 * whole window (a cached plan at 3,000/s starts thousands of elements in).
 */
function alignedStart(c: Config, partner: Config | undefined): number {
  const start = partner?.curves.at(-1)?.curve.n[0];
  const reached = c.curves[0]?.curve;
  if (start === undefined || !reached || start <= reached.n[0]! || start > reached.n.at(-1)!) return 0;
  return start;
}

/**
 * The cores the first pair's two runs found free: the run as written beside the plan's first is
 * the last one as written (the passes' part of the plan may have run in between). Undefined when
 * either could not read them.
 */
function firstPairFreeCores(asWritten: Config, planned: Config): { asWritten: number; planned: number } | undefined {
  const a = asWritten.freeCores.at(-1);
  const [b] = planned.freeCores;
  return a !== undefined && b !== undefined && a > 0 && b > 0 ? { asWritten: a, planned: b } : undefined;
}

/** The first pair's two runs found the same cores free (within SETTLE_CORES_DRIFT of the machine); false when either could not read them. */
function steadyFirstPair(asWritten: Config, planned: Config, cores: number): boolean {
  const free = firstPairFreeCores(asWritten, planned);
  return free !== undefined && Math.abs(free.asWritten - free.planned) <= SETTLE_CORES_DRIFT * cores;
}

async function verifyPlan(ctx: VerifyContext): Promise<Plan> {
  const { input, first, plan, options, profiles, clock, passRuns } = ctx;
  const started = clock();
  const budget = input.verifyBudgetSeconds ?? Math.max(0, (input.budgetSeconds ?? DEFAULT_BUDGET_SECONDS) - (started - ctx.began));
  // After a first pair under a drifting load, the second A/B pair decides whether the plan is a
  // gain: it may take the floor even when the passes left less of the whole budget — but not
  // when they left none: the floor tops up a short verification, it does not lengthen a diagnosis
  // whose passes already took the whole wait (images beside a busy thread: passes of 16.5 s, then
  // 8.7 s for one run as written that warmed up to the plan's elements at a batch a second).
  const pairBudget = input.verifyBudgetSeconds ?? (budget > 0 ? Math.max(budget, PAIR_FLOOR_SECONDS) : 0);
  const all = plan.changes;
  const configs = new Map<string, Config>();
  const order: Config[] = [];
  const configOf = (changes: PlanChange[]): Config => {
    const key = keyOf(changes);
    let c = configs.get(key);
    if (!c) {
      const overrides = overridesFor(first, changes, options);
      let predictedRate: number | undefined;
      if (changes.length === all.length) predictedRate = plan.predictedRate;
      else if (changes.length > 0) predictedRate = safePredict(first, overrides, options)?.rate;
      c = { key, changes, overrides, predictedRate, slices: [], freeCores: [], curves: [], runs: 0 };
      configs.set(key, c);
    }
    return c;
  };
  const asWritten = configOf([]);
  const planned = configOf(all);
  /** The configuration of the plan's changes that these overrides run, if any (a plan has a handful of changes). */
  const configRunning = (overrides: Overrides): Config | undefined => {
    const wanted = canonical(overrides);
    if (canonical(planned.overrides) === wanted) return planned;
    if (all.length > MATCH_MAX_CHANGES) return undefined;
    for (let mask = 1; mask < (1 << all.length) - 1; mask++) {
      const changes = all.filter((_, i) => mask & (1 << i));
      if (canonical(overridesFor(first, changes, options)) === wanted) return configOf(changes);
    }
    return undefined;
  };
  let recorded = 0;
  const record = (c: Config, p: Profile): void => {
    c.runs++;
    c.last = p;
    const curve = runCurve(p);
    if (curve) c.curves.push({ curve, seq: recorded });
    recorded++;
    c.slices.push(...runSlices(p));
    if (p.run.availableCores !== undefined) c.freeCores.push(p.run.availableCores);
  };
  // The passes already measured as written and, in each later pass, a part of the plan or all of
  // it (the first pass's plan, before a later pass added to it): those runs are measured
  // configurations, so verification does not run them again and a part the passes measured
  // beside as written can be kept when the whole cannot be shown.
  record(asWritten, first);
  order.push(asWritten);
  /**
   * Parts of the plan measured beside it: run by a pass (the first pass's plan, before a later
   * pass added to it; a cache run alone first) or left out in phase 3 below.
   */
  const measuredParts = new Set<Config>();
  for (const r of passRuns) {
    if (r.profile === first || r.profile.error) continue;
    const c = configRunning(r.overrides);
    if (!c || c === asWritten) continue;
    record(c, r.profile);
    if (!order.includes(c)) order.push(c);
    if (c !== planned) measuredParts.add(c);
  }
  let slowest = 0;
  let cancelled = false;
  const total = (): number => profiles.length + 1;
  /** The most a verification run took besides its measured window (start-up, warm-up, teardown). */
  let overheadSeen = 0;
  /**
   * Measures one run of `c`. After a run of `partner` (a run as written beside the plan's), its
   * window starts where partner's did (`alignedStart`) and lasts as long as the budget allows it
   * to cover partner's elements (`alignedWindowSeconds`).
   */
  const measure = async (c: Config, what: string, partner?: Config): Promise<boolean> => {
    if (input.signal?.aborted) {
      cancelled = true;
      return false;
    }
    input.onStep?.({ phase: 'verify', message: `verifying: ${what}`, run: total() });
    const seconds = partner ? alignedWindowSeconds(partner) : verifyRunSeconds(expectedRate(c));
    const t0 = clock();
    const warmupElements = Math.max(warmupElementsFor(first, c.overrides) ?? 0, alignedStart(c, partner)) || undefined;
    const p = await input.run(c.overrides, 'verify', { seconds, ...(warmupElements ? { warmupElements } : {}) });
    slowest = Math.max(slowest, clock() - t0);
    if (!p.error) overheadSeen = Math.max(overheadSeen, clock() - t0 - p.run.seconds);
    profiles.push(p);
    if (!order.includes(c)) order.push(c);
    if (p.error) {
      c.runs++;
      if (p.error.kind === 'cancelled') cancelled = true;
      c.error ??= p.error;
      return false;
    }
    record(c, p);
    return true;
  };
  /** The rate a configuration is expected to run at: what it measured so far, else its prediction, else as written's. */
  const expectedRate = (c: Config): number | undefined => {
    const measured = c.slices.length > 0 ? pooledRate(c.slices).rate : undefined;
    if (measured !== undefined && measured > 0) return measured;
    if (c.predictedRate !== undefined && c.predictedRate > 0) return c.predictedRate;
    const firstSlices = runSlices(first);
    return firstSlices.length > 0 ? pooledRate(firstSlices).rate : undefined;
  };
  /**
   * What a verification run takes before one has run: the passes' start-up, warm-up and teardown
   * (a run's wall time less its measured window; the shortest, as the first pass's also priced
   * moves) and the window a run as written measures, the longest of the configurations.
   */
  const fixedSeconds = Math.min(...passRuns.map((r) => Math.max(0, r.seconds - (r.profile.run.seconds ?? 0))));
  const firstRunGuess = (): number => (Number.isFinite(fixedSeconds) ? fixedSeconds : 0) + verifyRunSeconds(expectedRate(asWritten));
  /**
   * Room for `k` more runs, judging by the slowest verification run so far (or, before any, by the
   * passes' runs), and `extra` seconds besides.
   */
  const room = (k: number, within = budget, extra = 0): boolean => !cancelled && clock() - started + k * (slowest > 0 ? slowest : firstRunGuess()) + extra <= within;
  const finish = (v: Omit<Verification, 'asWritten' | 'tried' | 'seconds'>, keep: PlanChange[]): Plan => {
    const verification: Verification = {
      ...v,
      asWritten: pooledRate(asWritten.slices),
      tried: order.map((c) => configOut(c)),
      seconds: clock() - started,
    };
    return planKeeping({ first, last: ctx.last, history: ctx.history }, plan, keep, options, verification);
  };
  const errorOut = (message: string): Plan => {
    const a = pooledRate(asWritten.slices);
    return finish({ verdict: 'error', kept: { changes: [], measured: a }, speedup: 1, speedupHalfWidth: 0, dropped: all.map((change) => ({ change, why: message })), summary: message }, []);
  };

  /**
   * Seconds a run as written aligned to `partner`'s last run warms up beyond its first run's
   * warm-up (the emails before partner's window, at as written's rate): what `room` cannot see
   * from the runs so far.
   */
  const alignedWarmupSeconds = (partner: Config = planned): number => {
    const extra = alignedStart(asWritten, partner) - first.run.warmupElements;
    const rate = pooledRate(asWritten.slices).rate;
    return extra > 0 && rate > 0 ? extra / rate : 0;
  };
  /**
   * Seconds a run as written after `partner`'s measures: long enough to cover the elements
   * partner's last window covered (`secondsToCover`, at as written's rate), as far as the budget
   * leaves room after the run's start-up and warm-up (not the floor a second pair may take: that
   * is for deciding at all, not for deciding more narrowly); never shorter than its usual window,
   * nor longer than VERIFY_MAX_RUN_SECONDS. A faster plan covers more elements in its window than
   * as written does in the same time: the text example's plan covered 1,200 batches in its 2.3 s,
   * as written 280 of them in its 1 s, and the speed-up on 280 batches of emails that differ
   * several times in cost measured 1.8× ± 0.8.
   */
  const alignedWindowSeconds = (partner: Config): number => {
    const rate = expectedRate(asWritten);
    const usual = verifyRunSeconds(rate);
    const curve = partner.curves.at(-1)?.curve;
    const wanted = curve && secondsToCover(curve, curve.n[0]!, rate);
    if (!wanted) return usual;
    // Start-up and teardown as the slowest verification run so far had them, or the passes' when
    // longer: a busy machine starts some runs slower than others.
    const overhead = Math.max(overheadSeen, Number.isFinite(fixedSeconds) ? fixedSeconds : 0);
    const left = budget - (clock() - started) - overhead - alignedWarmupSeconds(partner);
    return Math.max(usual, Math.min(wanted, left, VERIFY_MAX_RUN_SECONDS));
  };
  const A = (): MeasuredRate => pooledRate(asWritten.slices);
  const M = (c: Config): MeasuredRate => pooledRate(c.slices);
  // Phase 1: as written and the whole plan, alternating, so a change of load hits both.
  const name = (c: Config): string => {
    if (c === asWritten) return 'as written';
    if (c === planned) return 'the plan';
    if (c.changes.length === 1) return shortName(c.changes[0]!, first);
    const missing = all.filter((x) => !c.changes.includes(x));
    return missing.length === 1 ? `the plan without ${shortName(missing[0]!, first)}` : `${c.changes.length} of the plan's changes`;
  };
  /** Measures as written after a run of `partner`, its window on the elements partner's covered (see `alignedStart`). */
  const measureAsWritten = async (partner: Config): Promise<Plan | undefined> => {
    if (await measure(asWritten, `${name(asWritten)} (${asWritten.runs + 1})`, partner)) return undefined;
    return errorOut(cancelled ? 'verification was cancelled' : `verification failed: the pipeline as written failed to run: ${asWritten.error?.message ?? 'no profile'}`);
  };
  // The first pair is the first pass's run as written and the plan's first run (a pass's, when
  // the last pass ran exactly the plan): the runs between them change nothing of as written, and
  // a drift of load shows in the cores each found free (see settledAfterOnePair). The second pair
  // runs B A, so a load that drifts during the runs weighs on both sides alike (an ABBA design).
  for (let pair = planned.runs; pair < 2; pair++) {
    if (pair > 0 && settledAfterOnePair(asWritten, planned, first.machine.cores)) break;
    // A pair on a steady machine that compared the same elements gets the second within the
    // budget; one under a drifting load, or on different stretches of the data, within the floor.
    const comparable = steadyFirstPair(asWritten, planned, first.machine.cores) && !firstPairAlignable(asWritten, planned);
    const within = comparable ? budget : pairBudget;
    if (pair > 0 && !room(2, within)) {
      // No room for the second pair, but for one run as written: on the plan's elements (its
      // warm-up aligned to the plan's run), it makes the first pair an A B A design, which cancels
      // a steady drift of load as the second pair would, and gives the plan's run a partner that
      // ran the same elements (the first run as written started earlier: the text example's
      // profile runs shared 340 of their batches, six stretches, and measured 1.6× ± 0.7).
      if (room(1, within, alignedWarmupSeconds())) {
        const failed = await measureAsWritten(planned);
        if (failed) return failed;
      }
      break;
    }
    await measure(planned, `${name(planned)} (${planned.runs + 1})`);
    if (cancelled) return errorOut('verification was cancelled');
    if (pair > 0) {
      const failed = await measureAsWritten(planned);
      if (failed) return failed;
    }
    if (planned.error) break;
  }

  // Phase 2: the whole plan is not a reliable gain: find the change that hurts.
  if (!(sideFaster(planned, asWritten) && !planned.error) && all.length >= 2) {
    const candidates: PlanChange[][] = [];
    if (all.length >= 3) for (const c of all) candidates.push(all.filter((x) => x !== c));
    const byPromise = [...all].sort((a, b) => predictedOf(b) - predictedOf(a));
    for (const c of byPromise) candidates.push([c]);
    /** Measures a part of the plan and as written after it; the plan to return when as written failed. */
    const tryConfig = async (changes: PlanChange[]): Promise<Plan | undefined> => {
      const c = configOf(changes);
      if (c.runs > 0 || !room(2)) return undefined;
      await measure(c, name(c));
      if (cancelled) return errorOut('verification was cancelled');
      return measureAsWritten(c);
    };
    for (const changes of candidates) {
      const failed = await tryConfig(changes);
      if (failed) return failed;
    }
    // The changes that did not lose alone may add up: measure them together once.
    const union = all.filter((c) => {
      const alone = configs.get(keyOf([c]));
      return alone && alone.runs > 0 && !alone.error && !sideSlower(alone, asWritten);
    });
    if (union.length >= 2) {
      const failed = await tryConfig(union);
      if (failed) return failed;
    }
  }

  // Phase 3: the plan is a gain, but that says nothing of each change in it: a large gain (a
  // cache that saves 300 ms an element) hides a change that loses beside it (a worker move whose
  // cloning costs more than the fn once the cache serves). Measure the plan without each change,
  // the least promising first, while there is room; one run each, compared with the plan itself.
  if (sideFaster(planned, asWritten) && !planned.error && all.length >= 2) {
    const leastPromising = [...all].sort((a, b) => predictedOf(a) - predictedOf(b));
    for (const change of leastPromising) {
      const c = configOf(all.filter((x) => x !== change));
      if (c.runs > 0 || !room(1)) continue;
      // Without the change that carries the gain (a cache worth 300×) the rest cannot beat the
      // plan: a part the model puts at half the plan's measured rate or less is not measured.
      if (c.predictedRate !== undefined && c.predictedRate <= LEAVE_OUT_FLOOR * M(planned).rate) continue;
      await measure(c, name(c));
      if (cancelled) return errorOut('verification was cancelled');
      measuredParts.add(c);
    }
  }

  // Decide on everything measured: the fastest configuration that is a reliable gain and holds no
  // change that measured slower (or failed) alone.
  const a = A();
  const lostAlone = new Map<string, string>();
  for (const c of all) {
    const alone = configs.get(keyOf([c]));
    if (!alone || alone.runs === 0 || all.length === 1) continue;
    if (alone.error) lostAlone.set(changeKey(c), `its run failed alone: ${alone.error.message}`);
    else if (sideSlower(alone, asWritten)) lostAlone.set(changeKey(c), `measured ${formatSpeedup(compareSides(alone, asWritten).speedup)} alone`);
  }
  const eligible = (c: Config): boolean =>
    c !== asWritten && !c.error && c.slices.length > 0 && !c.changes.some((x) => lostAlone.has(changeKey(x))) && sideFaster(c, asWritten);
  let best: Config | undefined;
  for (const c of order) {
    if (!eligible(c)) continue;
    if (!best || compareSides(c, asWritten).speedup > compareSides(best, asWritten).speedup) best = c;
  }
  // A part of the plan (left out in phase 3, or run by a pass) replaces a plan that is itself a
  // gain only when it measured reliably faster than it: the plan is the model's best guess.
  if (best && best !== planned && eligible(planned) && !sideFaster(best, planned)) best = planned;
  // But a change is recommended only when it was measured to help: a part of the plan that is
  // itself a gain, and that the plan did not beat beyond the spread, says the changes it leaves
  // out were not (a trivial fn moved to worker threads beside the parallelism that carried the
  // gain: the user would start threads for nothing). That part is kept instead; of several, the
  // fastest. A part a pass ran counts as one left out here: the synthetic records pipeline's
  // second pass ran its cache alone, at 1,053 batches/s in the benchmark's rounds, then planned a
  // random dropout into worker threads beside it, and the plan measured 966/s.
  if (best === planned) {
    let leaner: Config | undefined;
    for (const c of measuredParts) {
      if (!eligible(c) || sideFaster(planned, c)) continue;
      if (!leaner || compareSides(c, asWritten).speedup > compareSides(leaner, asWritten).speedup) leaner = c;
    }
    if (leaner) best = leaner;
  }
  // Phase 4: the kept configuration's free levers (calls in flight, inner datasets pulled at
  // once; src/model/headroom.ts) are sized just above the next bound, from mean waits and the CPU
  // an element cost at the rate the run measured. Near that bound waits run longer than their
  // mean, and the CPU an element costs falls as more are in flight (more records per wake-up of
  // the event loop, more elements per worker task), which no run at the planned count shows: the
  // same changes with those levers doubled run once, and replace it only when reliably faster.
  if (best && room(1)) {
    // From the last pass's run and the runs before it: an op whose latency grew with its calls in
    // flight across them (a throttled disk) has no free lever.
    const wider = widenFreeLevers(ctx.last, best.changes, { ...options, history: ctx.history });
    if (wider) {
      const was = best;
      const raised = wider.filter((c) => !was.changes.includes(c));
      // No prediction of its own: the model priced the levers at the plan's counts (the final plan's
      // figure is priced from the last pass's run, see planKeeping).
      const w: Config = { key: `${was.key} widened`, changes: wider, overrides: overridesFor(first, wider, options), slices: [], freeCores: [], curves: [], runs: 0 };
      await measure(w, `${name(was)}, doubling what it keeps in flight (${raised.map((c) => shortName(c, first)).join(', ')})`);
      if (cancelled) return errorOut('verification was cancelled');
      if (!w.error && sideFaster(w, was)) {
        const measured = (c: Config, to: number): string => `${fmtRate(M(c).rate)} ± ${fmtRate(M(c).halfWidth).replace('/s', '')} with ${to}`;
        w.changes = wider.map((c) => {
          if (!raised.includes(c) || (c.kind !== 'parallelism' && c.kind !== 'cycleLength')) return c;
          const planned = was.changes.find((x) => changeKey(x) === changeKey(c));
          const from = planned && (planned.kind === 'parallelism' || planned.kind === 'cycleLength') ? planned.to : undefined;
          if (from === undefined) return c;
          return { ...c, reason: `${c.reason} The plan sized it at ${from}; verification measured ${measured(w, c.to)} against ${measured(was, from)}${was.predictedRate !== undefined ? ` (predicted ${fmtRate(was.predictedRate)})` : ''}: near the next bound waits run longer than their mean, and more in flight lowers the CPU an element costs.` };
        });
        best = w;
      }
    }
  }
  /**
   * One run of the kept changes `was` with `extra` on top (a change the model does not price):
   * the configuration and what it measured over `was` ("measured 963/s ± 48.2 with it against
   * 775/s ± 11.5 without (1.2× ± 0.1)") when reliably faster, else undefined. Not run when a run
   * already measured that configuration (the plan itself, whose move the decision above dropped
   * as not measured to help): the decision saw it.
   */
  const tryOnTop = async (was: Config, extra: PlanChange): Promise<{ kept: Config; measured: string } | 'cancelled' | undefined> => {
    const changes = [...was.changes, extra];
    const overrides = overridesFor(first, changes, options);
    if ([...configs.values(), ...order].some((c) => c.runs > 0 && canonical(c.overrides) === canonical(overrides))) return undefined;
    const w: Config = { key: `${was.key} ${changeKey(extra)}`, changes, overrides, slices: [], freeCores: [], curves: [], runs: 0 };
    await measure(w, `${configs.get(was.key) === was ? name(was) : 'the kept changes'}, with ${shortName(extra, first)}`);
    if (cancelled) return 'cancelled';
    if (w.error || !sideFaster(w, was)) return undefined;
    const gain = compareSides(w, was);
    const measured = `measured ${fmtRate(M(w).rate)} ± ${fmtRate(M(w).halfWidth).replace('/s', '')} with it against ${fmtRate(M(was).rate)} ± ${fmtRate(M(was).halfWidth).replace('/s', '')} without (${formatSpeedup(gain.speedup, gain.halfWidth)})`;
    return { kept: w, measured };
  };
  // Phase 5: a fn on the main thread beside waits that bind there (model eventLoopMove): the
  // model takes the waits as measured, and part of each was the event loop busy with the fn. One
  // run of the kept changes with the fn in worker threads; kept only when reliably faster.
  const loopMove = best?.last && room(1) ? eventLoopMove(best.last, options) : undefined;
  if (best && loopMove && !best.changes.some((c) => c.opId === loopMove.opId && c.kind === 'placement')) {
    const r = await tryOnTop(best, loopMove);
    if (r === 'cancelled') return errorOut('verification was cancelled');
    if (r) {
      loopMove.reason = `${loopMove.reason} Verification ${r.measured}.`;
      best = r.kept;
    }
  }
  // Phase 6: a prefetch at the end, which the model does not price (on one thread it overlaps
  // nothing the model sees) and which a consumer can still feel: the audio example's cached
  // pipeline ran 2× faster in a plain `for await` beside one busy thread with `.prefetch(1)` or
  // more at its end, on the same CPU. One run of the kept changes with it; kept only when
  // reliably faster than without. The plan's estimate stays the model's (its reason says what
  // verification measured the prefetch add).
  const atEnd = best && room(1) ? prefetchAtEnd(first, best.changes, input.userOverrides) : undefined;
  if (best && atEnd) {
    const r = await tryOnTop(best, atEnd);
    if (r === 'cancelled') return errorOut('verification was cancelled');
    if (r) {
      const unit = rootUnitOf(first);
      atEnd.reason = `A prefetch at the end lets the pipeline prepare its next ${atEnd.size === 1 ? unit.one : `${atEnd.size} ${unit.many}`} while the loop that consumes it works. The model does not price it; verification ${r.measured}.`;
      best = r.kept;
    }
  }
  const keptKeys = new Set((best?.changes ?? []).map(changeKey));
  const dropped = all.filter((c) => !keptKeys.has(changeKey(c))).map((change) => ({ change, why: whyDropped(change) }));
  function whyDropped(change: PlanChange): string {
    const k = changeKey(change);
    const lost = lostAlone.get(k);
    if (lost) return lost;
    // The plan without it beat the plan: that is why it went, whatever it measured alone.
    const without = configs.get(keyOf(all.filter((x) => changeKey(x) !== k)));
    if (without && without.runs > 0 && !without.error && all.length > 1 && sideFaster(without, planned)) {
      return `the plan measured ${formatSpeedup(compareSides(planned, asWritten).speedup)} with it and ${formatSpeedup(compareSides(without, asWritten).speedup)} without`;
    }
    const alone = configs.get(keyOf([change]));
    if (alone && alone.runs > 0 && all.length > 1) return `measured ${formatSpeedup(compareSides(alone, asWritten).speedup)} alone`;
    if (without && without.runs > 0 && !without.error && all.length > 1) {
      const measured = `the plan measured ${formatSpeedup(compareSides(planned, asWritten).speedup)} with it and ${formatSpeedup(compareSides(without, asWritten).speedup)} without`;
      return sideFaster(planned, without) ? measured : `not measured to help: ${measured}`;
    }
    if (planned.error) return `the plan's run failed: ${planned.error.message}`;
    if (best) return 'not measured alone within the time budget; the kept changes measured faster without it';
    return `the plan measured ${formatSpeedup(compareSides(planned, asWritten).speedup)}`;
  }
  if (best) {
    const s = compareSides(best, asWritten);
    return finish({ verdict: 'gain', kept: configOut(best), speedup: s.speedup, speedupHalfWidth: s.halfWidth, dropped, summary: `verified ${formatSpeedup(s.speedup, s.halfWidth)}` }, best.changes);
  }
  if (planned.error) {
    // The plan itself did not run (a worker could not load the fn, an override the library
    // refused), and no part of it measured a gain: nothing is kept, and the reason is the failure.
    return finish({ verdict: 'error', kept: { changes: [], measured: a }, speedup: 1, speedupHalfWidth: 0, dropped, summary: `verification failed: the plan's run failed: ${planned.error.message}` }, []);
  }
  const s = compareSides(planned, asWritten);
  const parts = [
    `the plan measured ${fmtRate(M(planned).rate)} ± ${fmtRate(M(planned).halfWidth).replace('/s', '')} against ${fmtRate(a.rate)} ± ${fmtRate(a.halfWidth).replace('/s', '')} as written (${formatSpeedup(s.speedup, s.halfWidth)}${s.paired ? ' on the elements both ran' : ''})`,
  ];
  const others = order.filter((c) => c !== asWritten && c !== planned && c.runs > 0);
  if (others.length > 0) {
    parts.push(others.map((c) => `${name(c)}: ${c.error ? 'failed' : formatSpeedup(compareSides(c, asWritten).speedup)}`).join(', '));
  }
  return finish({ verdict: 'no-gain', kept: { changes: [], measured: a }, speedup: 1, speedupHalfWidth: 0, dropped, summary: `no reliable gain on this machine right now: ${parts.join('; ')}` }, []);
}

/** Elements a prefetch the plan adds at the end of a pipeline holds: one being consumed, one ready. */
const PREFETCH_AT_END = 2;

/**
 * The change that puts a prefetch at the end of the pipeline, when it has none: not when its last
 * operator is a prefetch, the user's overrides already give it one, or the kept changes do.
 */
function prefetchAtEnd(first: Profile, changes: PlanChange[], user: Overrides | undefined): Extract<PlanChange, { kind: 'prefetch' }> | undefined {
  const rootId = first.pipeline.rootId;
  const root = first.ops.find((o) => o.id === rootId);
  if (!root || root.kind === 'prefetch' || user?.[rootId]?.prefetch !== undefined) return undefined;
  if (changes.some((c) => c.kind === 'prefetch' && c.opId === rootId)) return undefined;
  return { kind: 'prefetch', opId: rootId, existing: false, size: PREFETCH_AT_END, reason: 'A prefetch at the end lets the pipeline prepare its next elements while the loop that consumes it works.' };
}

function predictedOf(c: PlanChange): number {
  const p = (c as { predictedRate?: unknown }).predictedRate;
  return typeof p === 'number' && Number.isFinite(p) ? p : 0;
}

function configOut(c: Config): VerifiedConfig {
  const out: VerifiedConfig = { changes: c.changes.map(changeKey), measured: pooledRate(c.slices) };
  const counts = c.changes.filter((x) => x.kind === 'parallelism' || x.kind === 'cycleLength');
  if (counts.length > 0) out.values = Object.fromEntries(counts.map((x) => [changeKey(x), x.to]));
  if (c.predictedRate !== undefined) out.predictedRate = c.predictedRate;
  return out;
}

function safePredict(profile: Profile, overrides: Overrides, options: ModelOptions): ReturnType<typeof predict> | undefined {
  try {
    return predict(profile, overrides, options);
  } catch {
    return undefined;
  }
}

/**
 * The plan reduced to `keep` (a subset of its changes), with the model's prediction for that
 * subset. It is priced from the last pass's run, which ran most of the plan, with the knobs of
 * the changes left out turned back (`overridesReverting`): the sharded benchmark's interleave
 * alone, kept after its worker move measured no gain, was predicted at 258/s from the run as
 * written (an inner dataset's latency measured at two in flight) where it ran at 546/s. From the
 * run as written only when a knob that run had cannot be turned back (a cache it inserted).
 */
function planKeeping(runs: { first: Profile; last: Profile; history: Profile[] }, plan: Plan, keep: PlanChange[], options: ModelOptions, verification?: Verification): Plan {
  return withTrainerAsKept(runs.first, planKept(runs, plan, keep, options, verification), options, verification);
}

/**
 * A training loop's verdict as verification left the plan: about the loop as written (the first
 * run), and what the changes kept do for it. The model's verdict came from the last planning pass
 * (a loop already running the first plan) and promised the plan before verification measured it:
 * a script whose worker move verification dropped read "the plan feeds it 170 steps/s (1.65×) with
 * 1 worker thread" under "No reliable gain on this machine right now". The verdict sentence in the
 * plan's notes is replaced with the new one.
 */
function withTrainerAsKept(first: Profile, plan: Plan, options: ModelOptions, verification?: Verification): Plan {
  const asWritten = first.trainer ? analyze(first, options).trainer : undefined;
  if (!asWritten) return plan;
  const why = verification && verification.verdict !== 'gain' ? verification.summary : "the plan's changes did not hold up once the pipeline ran with them";
  const trainer = keptTrainerVerdict(first, asWritten, plan.overrides, plan.changes, why, options);
  const old = plan.trainer?.summary;
  const notes = (plan.notes ?? []).filter((n) => n !== old && n !== asWritten.summary);
  return { ...plan, trainer, notes: [...notes, trainer.summary] };
}

function planKept(runs: { first: Profile; last: Profile; history: Profile[] }, plan: Plan, keep: PlanChange[], options: ModelOptions, verification?: Verification): Plan {
  const { first, last } = runs;
  // The whole plan, as the model made it (a widened lever is a change of its own: priced below).
  if (keep.length === plan.changes.length && keep.every((c, i) => c === plan.changes[i])) return { ...plan, verification };
  const overrides = overridesFor(first, keep, options);
  if (keep.length === 0) {
    // Keeping the pipeline as written, the best estimate of its rate is what every run of it
    // measured (verification's pooled windows), not its first run alone: beside other work one
    // run of a pipeline can measure a third above or below the next.
    const pooled = verification?.asWritten.rate;
    const rate = pooled !== undefined && Number.isFinite(pooled) && pooled > 0 ? pooled : plan.currentRate;
    return { ...plan, changes: [], overrides, currentRate: rate, predictedRate: rate, predictedBound: analyzeBound(first, options), predictedBottleneck: analyze(first, options).bottleneck, verification };
  }
  const fromLast = last !== first ? overridesReverting(last, first, keep, options) : undefined;
  const p = (fromLast && safePredict(last, fromLast, { ...options, history: runs.history })) ?? safePredict(first, overrides, options);
  return { ...plan, changes: keep, overrides, predictedRate: p?.rate ?? plan.predictedRate, predictedBound: p?.bound ?? plan.predictedBound, predictedBottleneck: p?.bottleneck ?? plan.predictedBottleneck, verification };
}

function analyzeBound(profile: Profile, options: ModelOptions): number {
  return analyze(profile, options).bound;
}

/**
 * Seconds a later pass's run measures when the run as written never settled in its window (its
 * rate varies along the data: it ran out its budget): what covering the elements the run as
 * written measured beyond this run's warm-up takes at the rate the model predicts for it
 * (`secondsToCover`) — the stretch on which verification compares the two; the rest of a longer
 * window is time verification lacks. Undefined (the pass's usual window) when the run as written
 * settled, or no such stretch is left. The text example's plan measured 2.4 s, of which about 1 s
 * covered the batches its run as written had reached (up to 952), and its verification then had
 * no room for a run in one diagnosis of five.
 */
function replanSeconds(first: Profile, overrides: Overrides, warmupElements: number | undefined, options: ModelOptions): number | undefined {
  if (first.error || first.run.endReason !== 'budget') return undefined;
  const curve = runCurve(first);
  return curve && secondsToCover(curve, warmupElements ?? 0, safePredict(first, overrides, options)?.rate);
}

// ---------------------------------------------------------------------------------------------
// The routine.

/**
 * Profile → plan → re-plan → verify → keep the best measured. Never rejects for a failed run: a
 * failed first run comes back as `error` with an empty plan; a failed verification run as
 * `plan.verification.verdict === 'error'` with no changes kept.
 */
export async function diagnose(input: DiagnoseInput): Promise<Diagnosis> {
  const user = input.userOverrides ?? {};
  const options: ModelOptions = { ...(input.options ?? {}) };
  const clock = input.clock ?? ((): number => performance.now() / 1000);
  const profiles: Profile[] = [];
  const passRuns: PassRun[] = [];
  const passes = Math.max(1, Math.floor(input.passes ?? 2));
  const began = clock();
  let asWritten: Profile | undefined;
  const planned = await planInPasses(
    async (overrides, pass) => {
      const purpose: RunPurpose = pass === 1 ? 'profile' : 'replan';
      input.onStep?.({ phase: purpose, message: pass === 1 ? 'profiling as written' : `re-profiling with the plan applied (pass ${pass} of ${passes})`, run: profiles.length + 1 });
      const t0 = clock();
      const spare = (input.budgetSeconds ?? DEFAULT_BUDGET_SECONDS) - (t0 - began) - (passRuns[0]?.seconds ?? 0);
      const warmupElements = asWritten && passWarmupElements(asWritten, overrides, spare);
      const seconds = asWritten && replanSeconds(asWritten, overrides, warmupElements, options);
      const budget: RunBudget = { ...(warmupElements ? { warmupElements } : {}), ...(seconds ? { seconds } : {}) };
      const p = await input.run(overrides, purpose, Object.keys(budget).length > 0 ? budget : undefined);
      asWritten ??= p;
      profiles.push(p);
      passRuns.push({ overrides, profile: p, seconds: clock() - t0 });
      return p;
    },
    passes,
    options,
    user,
    // Never a cache at or after a random op, whatever the model proposes: the static randomness
    // (options.randomOps) and what the runner saw in this run.
    (c, profile) => {
      if (c.kind !== 'cache') return undefined;
      const random = cacheAfterRandom(c.opId, profile, options.randomOps ?? []);
      if (!random) return undefined;
      return `A cache after ${describeOp(profile.ops.find((o) => o.id === c.opId) ?? random)} is left out: ${describeOp(random)} is random, and a cache would replay its first epoch's draws every epoch.`;
    },
  );
  // Unmeasured, a plan the last pass predicted no faster than as written is not offered; measured,
  // verification decides.
  const checked = input.verify === false ? withoutUnpromising(planned, options, user) : planned;
  const { first, analysis, last, history } = checked;
  let plan = checked.plan;
  const frozen = userCachesAfterRandom(first, options.randomOps ?? []);
  if (frozen.length > 0) plan = { ...plan, notes: [...(plan.notes ?? []), ...frozen] };
  // The final overrides are this engine's own translation of the (source-relative) changes, so a
  // verified subset and the whole plan run the same way.
  if (plan.changes.length > 0) plan = { ...plan, overrides: overridesFor(first, plan.changes, options) };
  if (first.error) {
    return { first, analysis, plan: { ...plan, changes: [], overrides: { ...user } }, last: first, profiles, error: first.error };
  }
  // A plan of no change still gets the one move the model cannot price (see eventLoopMove), for
  // verification to measure: its estimate stays as written's.
  if (input.verify !== false && plan.changes.length === 0) {
    const move = eventLoopMove(first, options);
    if (move) plan = { ...plan, changes: [move], overrides: overridesFor(first, [move], options) };
  }
  if (input.verify === false || plan.changes.length === 0) return { first, analysis, plan, last, profiles };
  const verified = await verifyPlan({ input, first, plan, options, profiles, clock, passRuns, began, last, history });
  return { first, analysis, plan: verified, last, profiles };
}
