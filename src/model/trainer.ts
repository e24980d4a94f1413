/**
 * The trainer in the loop: is a training loop input-bound, by how much, and the cheapest plan that
 * feeds it. Pure: reads a training profile (`profile.trainer`, see src/runner/train.ts) and asks
 * the pipeline model (`./pipeline`) what each candidate configuration would deliver.
 *
 * The loop's time splits into waits for input and steps. The runner gives the pipeline's share of
 * the main thread's CPU in `run` and the loop's totals in `trainer`; the trainer's own share is
 * the difference. From that:
 * - the trainer's own time per step is its step time less the pipeline's main-thread work that
 *   ran inside the steps (async completions, worker dispatch in the trainer's awaits, a prefetch's
 *   map run between an element's hand-over and the loop's resuming); its rate when never starved
 *   is one over that;
 * - the input-bound fraction is the rest of the loop's time: its waits and that pipeline work in
 *   the steps, over the whole. (The waits alone read a pipeline sharing the main thread low: its
 *   prefetch runs part of the input's work after an element is handed over, before the loop
 *   resumes, and a step's clock cannot tell it from the trainer's.) It assumes what the pipeline
 *   ran inside a step held the trainer up, as it does when the step holds the main thread or
 *   awaits only briefly (a pure-JS backend); a trainer awaiting long I/O of its own would read
 *   slightly more input-bound than it is, by the pipeline work that fit in those awaits;
 * - a configuration delivers, per step, at most: one over the trainer's own step time; the share
 *   of a core the main thread gets over its work per step (the trainer's main-thread CPU plus the
 *   pipeline's, which share the one thread); the pipeline's own bound with its other resources; and the cores free
 *   over all the CPU a step costs (trainer and pipeline, every thread).
 * The plan is the cheapest candidate (fewest worker threads, then smallest prefetch buffers) that
 * reaches within `TARGET_TOLERANCE` of the best candidate's rate: so a trainer-bound loop keeps its
 * configuration, or gives worker threads back, and an input-bound one gets what feeds it, no more.
 */
import type { ModelOptions, Plan, PlanChange, TrainerVerdict } from '../shared/analysis';
import type { Overrides, Profile } from '../shared/profile';
import { formatRatio, formatSteps } from '../shared/words';
import { MODEL_CONSTANTS } from './constants';
import { coresFor, coresGot } from './cores';
import { can } from './knobs';
import { measure } from './measure';
import { taskGroup } from './tasks';
import { planPipeline as pipelinePlan, predictPipeline as predict } from './pipeline';

/** A candidate within this fraction of the best rate counts as reaching it (measurement noise). */
export const TARGET_TOLERANCE = 0.03;
/** Below this input-bound fraction a loop is not input-bound: nothing to gain worth a change. */
export const INPUT_BOUND_MIN = 0.05;

/** The loop's figures per step, derived from a training profile. */
export interface TrainerFigures {
  steps: number;
  /** Steps per second as measured. */
  measuredRate: number;
  /** The share of the loop's time that is its input's: its waits, and the pipeline's work inside its steps. */
  inputBound: number;
  /** The trainer's own wall seconds per step (its step less the pipeline's work inside it). */
  ownSeconds: number;
  /** The trainer's main-thread CPU seconds per step. */
  ownMainCpu: number;
  /** The trainer's CPU on other threads per step (a native backend's threads); 0 for the pure-JS CPU backend. */
  ownOtherCpu: number;
  /** The pipeline's main-thread seconds per step, as it ran. */
  pipelineMain: number;
}

/** The per-step figures of a training profile; undefined for a pipeline profile or an empty window. */
export function trainerFigures(profile: Profile): TrainerFigures | undefined {
  const t = profile.trainer;
  if (!t || t.steps <= 0 || t.seconds <= 0) return undefined;
  const run = profile.run;
  // The runner left the pipeline's main-thread CPU in `run` (src/runner/train.ts, pipelineShare).
  const pipelineMain = Math.max(0, run.mainThreadCpuSeconds);
  const ownMain = Math.max(0, t.waitMainCpuSeconds + t.stepMainCpuSeconds - pipelineMain);
  const ownWall = Math.max(ownMain, t.stepSeconds - Math.max(0, t.pipelineStepSeconds));
  let workerCpu = 0;
  for (const op of profile.ops) workerCpu += op.counters.workerCpuSeconds;
  const ownOther = Math.max(0, run.processCpuSeconds - pipelineMain - workerCpu - libuvCpuGuess(profile));
  return {
    steps: t.steps,
    measuredRate: t.steps / t.seconds,
    // By wall clocks only: the main thread's CPU clock is read per wait and step, and on Linux it
    // advances at the scheduler's ticks, too coarse to split steps of a millisecond or two.
    inputBound: Math.min(1, (t.waitSeconds + Math.min(t.stepSeconds, Math.max(0, t.pipelineStepSeconds))) / t.seconds),
    ownSeconds: ownWall / t.steps,
    ownMainCpu: ownMain / t.steps,
    ownOtherCpu: ownOther / t.steps,
    pipelineMain: pipelineMain / t.steps,
  };
}

/**
 * The runner's process CPU for the pipeline counts its libuv work (file reads, zlib) too, which no
 * counter times; it is small next to a trainer's and is left to the pipeline: nothing to subtract.
 */
function libuvCpuGuess(_profile: Profile): number {
  return 0;
}

/** What one configuration of the pipeline gives the loop. */
export interface TrainerCandidate {
  /** The overrides on top of the profile's knobs ({} for the configuration as it ran). */
  overrides: Overrides;
  /** Predicted steps per second. */
  rate: number;
  /** Worker threads the pipeline runs. */
  workers: number;
  /** Elements held in prefetch buffers. */
  buffered: number;
  /** Plan changes, when the candidate came from the pipeline planner or gives threads back. */
  changes: PlanChange[];
  /** What binds the loop under it. */
  limit: 'trainer' | 'main-thread' | 'pipeline' | 'cpu';
}

/** Steps per second the loop gets with the pipeline under `overrides` (on top of the profile's own). */
export function trainerRate(profile: Profile, overrides: Overrides, options: ModelOptions = {}, f = trainerFigures(profile)): { rate: number; limit: TrainerCandidate['limit'] } {
  if (!f) return { rate: 0, limit: 'pipeline' };
  const alone: Profile = { ...profile, trainer: undefined };
  // Whole cores for the pipeline's CPU bound, so its CPU per element reads back exactly.
  const whole = Math.max(1, coresFor(profile, options).cores);
  const p = predict(alone, overrides, { ...options, cores: whole, targetRate: undefined });
  const mainBound = p.bounds.find((b) => b.resource === 'main-thread' && b.opId === undefined);
  const pipelineMain = mainBound && mainBound.rate > 0 ? 1 / mainBound.rate : 0;
  const cpuBound = p.bounds.find((b) => b.resource === 'cpu' && b.opId === undefined);
  const pipelineCpu = cpuBound && cpuBound.rate > 0 ? whole / cpuBound.rate : pipelineMain;
  // The loop's busy threads: the trainer's main thread, and the pipeline's workers as far as they
  // are kept busy feeding the trainer at its unstarved rate (an idle pool thread takes no core).
  // They get the cores `coresOf` says between them, so each gets at most its share of a core.
  const workerCpu = Math.max(0, pipelineCpu - pipelineMain);
  const pool = costOf(profile, overrides).workers;
  const threads = 1 + Math.min(pool, workerCpu / Math.max(f.ownSeconds, 1e-9));
  const cores = coresOf(profile, options, threads);
  const perThread = Math.min(1, cores / threads);
  const otherBounds = p.bounds.filter((b) => b.resource !== 'main-thread' && b.resource !== 'cpu').map((b) => b.rate);
  const exposed = workerCpu * uncoveredShare(alone, overrides);
  // The trainer's step is its main-thread CPU, run at the share of a core the thread got, plus
  // time off the CPU (awaits of its own); the share it gets depends on how many threads compete.
  const measuredShare = Math.min(1, Math.max(0.05, profile.run.mainThreadShare ?? 1));
  const ownOffCpu = Math.max(0, f.ownSeconds - f.ownMainCpu / measuredShare);
  const share = Math.max(0.05, perThread);
  // While a step runs, the pool's threads work through the tasks they hold at its start, all at
  // once: with more runnable threads than cores, the trainer's thread gets a fair share of them
  // until each pool thread is through its part, and its step stretches by what it lost. (The
  // average share above spreads the pool's work over the whole step, which reads no contention.)
  const burstCores = coresOf(profile, options, 1 + pool);
  const burst = pool > 0 ? Math.min((workerCpu - exposed) / pool, f.ownMainCpu) : 0;
  const stretch = burst > 0 && pool + 1 > burstCores ? burst * ((pool + 1) / burstCores - 1) : 0;
  const trainerCpu = Math.max(f.ownMainCpu / share, f.ownMainCpu + stretch);
  const limits: Array<[number, TrainerCandidate['limit']]> = [
    [1 / Math.max(ownOffCpu + trainerCpu, 1e-9), 'trainer'],
    // The main thread runs the trainer's CPU and the pipeline's one after the other.
    [share / Math.max(f.ownMainCpu + pipelineMain, 1e-9), 'main-thread'],
    [Math.min(Infinity, ...otherBounds), 'pipeline'],
    // The worker work a step's blocked main thread leaves undone is done while the loop waits,
    // by the pool's threads (as many cores as they get), after the step and the main thread's work.
    ...(exposed > 0 ? [[1 / Math.max(ownOffCpu + (f.ownMainCpu + pipelineMain) / share + exposed / Math.max(share, Math.min(pool, cores)), 1e-9), 'pipeline'] as [number, TrainerCandidate['limit']]] : []),
    [cores / Math.max(f.ownMainCpu + f.ownOtherCpu + pipelineCpu, 1e-9), 'cpu'],
  ];
  let best = limits[0];
  for (const l of limits) if (l[0] < best[0]) best = l;
  return { rate: best[0], limit: best[1] };
}

/**
 * Tasks a worker thread holds (src/data/internal/ops/worker-map.ts, piscina's
 * `concurrentTasksPerWorker`: one running, one waiting beside it). The map keeps a third task per
 * thread in the pool's queue, but that queue lives on the main thread: a step holding it posts
 * nothing more. A library rule, not a tuning constant.
 */
export const WORKER_TASKS_PER_THREAD = 2;

/**
 * The share of the pipeline's worker-thread work per step that cannot overlap the trainer's step.
 * A training step holds the main thread (the pure-JS backend computes there), so while it runs no
 * task is posted and no result is taken: the pool works only on the tasks already posted when the
 * step began, WORKER_TASKS_PER_THREAD per thread of the elements per task the library settles on
 * (`taskGroup`, from the fn's measured cost). What a root element needs beyond that (a batch of 64
 * elements against 2 tasks of 16) is made while the loop waits. The largest share over the
 * pipeline's worker ops (they run one after the other for the same root element); 0 without any.
 */
export function uncoveredShare(alone: Profile, overrides: Overrides): number {
  let worst = 0;
  let m: ReturnType<typeof measure> | undefined;
  for (const op of alone.ops) {
    const o = overrides[op.id];
    if ((o?.placement ?? op.placement) !== 'worker') continue;
    const threads = typeof o?.parallelism === 'number' ? o.parallelism : (op.knobs.resolvedParallelism ?? 1);
    m ??= measure(alone);
    const om = m.ops.get(op.id);
    if (!om || !(om.visitRatio > 0)) continue;
    // A run with the op in worker threads measured its tasks; else the size the library would pick.
    const group = op.placement === 'worker' && (op.counters.workerTasks ?? 0) > 0 ? op.counters.calls / (op.counters.workerTasks ?? 1) : taskGroup(om, alone.machine);
    const posted = WORKER_TASKS_PER_THREAD * Math.max(1, threads) * Math.max(1, group);
    worst = Math.max(worst, Math.max(0, 1 - posted / om.visitRatio));
  }
  return worst;
}

/**
 * The cores `threads` busy threads of the loop get (its main thread and the pipeline's workers): a
 * fair share beside other work when the run measured contention (src/model/cores.ts), so another
 * thread wins a larger share of a busy machine; else the cores free (or asked for).
 */
function coresOf(profile: Profile, options: ModelOptions, threads: number): number {
  const c = coresFor(profile, options);
  if (c.contention) return coresGot(c.contention, threads);
  const free = options.cores !== undefined && options.cores > 0 ? c.cores : (c.available ?? c.cores);
  return Math.min(free, threads);
}

/** Worker threads and prefetch slots the pipeline uses with `overrides` applied to the knobs it ran with. */
function costOf(profile: Profile, overrides: Overrides): { workers: number; buffered: number } {
  let workers = 0;
  let buffered = 0;
  for (const op of profile.ops) {
    const o = overrides[op.id];
    const placement = o?.placement ?? op.placement;
    const parallelism = typeof o?.parallelism === 'number' ? o.parallelism : (op.knobs.resolvedParallelism ?? 1);
    if (placement === 'worker') workers += parallelism;
    if (op.kind === 'prefetch' && !op.overridden) buffered += o?.prefetch ?? op.knobs.bufferSize ?? 0;
    else if (o?.prefetch !== undefined) buffered += o.prefetch;
  }
  return { workers, buffered };
}

/**
 * The same configuration with fewer threads in one worker op's pool, for each op and each smaller
 * pool: what reaches the trainer's rate with fewer threads leaves cores to the trainer. A pool the
 * profile already ran with becomes a parallelism change giving threads back.
 */
function fewerThreads(profile: Profile, overrides: Overrides, changes: PlanChange[]): Array<{ overrides: Overrides; changes: PlanChange[] }> {
  const out: Array<{ overrides: Overrides; changes: PlanChange[] }> = [];
  for (const op of profile.ops) {
    const o = overrides[op.id];
    const placement = o?.placement ?? op.placement;
    const now = typeof o?.parallelism === 'number' ? o.parallelism : (op.knobs.resolvedParallelism ?? 1);
    if (placement !== 'worker' || now <= 1 || !can(op, 'parallelism')) continue;
    for (let k = 1; k < now; k++) {
      const fewer: Overrides = { ...overrides, [op.id]: { ...o, parallelism: k } };
      const own = changes.find((c) => c.opId === op.id && c.kind === 'placement' && c.to === 'worker');
      const next = own
        ? changes.map((c) => (c === own && c.kind === 'placement' ? { ...c, parallelism: k, reason: c.reason.replace(/in \d+ worker threads?/, `in ${k} worker thread${k === 1 ? '' : 's'}`) } : c))
        : [
            ...changes.filter((c) => c.opId !== op.id || c.kind !== 'parallelism'),
            {
              kind: 'parallelism' as const,
              opId: op.id,
              from: op.knobs.parallelism,
              to: k,
              reason: `The trainer, not the input, holds the loop back: ${k} worker thread${k === 1 ? '' : 's'} instead of ${now} feed it as fast, and the trainer gets the CPU the other ${now - k === 1 ? 'one' : now - k} would take.`,
            },
          ];
      out.push({ overrides: fewer, changes: next });
    }
  }
  return out;
}

/**
 * Every main-thread map/filter with a sync, exported fn whose elements cross threads unchanged
 * moved to worker threads (`threads` per pool), on top of the profile's own overrides.
 */
function offMainThread(profile: Profile, threads: number): { overrides: Overrides; changes: PlanChange[] } {
  const overrides: Overrides = { ...profile.run.overrides };
  const changes: PlanChange[] = [];
  const seconds = profile.trainer?.seconds ?? profile.run.seconds;
  for (const op of profile.ops) {
    // Only where the op's own library runs fns in worker threads (a dialect's ops do not: that is
    // the conversion's to propose, ./convert.ts).
    if (!can(op, 'placement')) continue;
    if ((op.kind !== 'map' && op.kind !== 'filter') || op.placement !== 'main' || op.fnAsync || op.counters.asyncCalls > 0 || !op.fnModule || op.moveBlocked) continue;
    // A fn too cheap for a worker task (the planner's own threshold) stays where it is.
    if (op.counters.calls === 0 || op.counters.selfSeconds / op.counters.calls < MODEL_CONSTANTS.minWorkerTaskSeconds) continue;
    overrides[op.id] = { ...overrides[op.id], placement: 'worker', parallelism: threads, module: op.fnModule.file, exportName: op.fnModule.exportName };
    const share = seconds > 0 ? op.counters.selfSeconds / seconds : 0;
    changes.push({
      kind: 'placement',
      opId: op.id,
      to: 'worker',
      parallelism: threads,
      reason: `${op.fnName ?? op.kind} runs on the main thread the trainer needs (${Math.round(share * 100)}% of the loop's time); in ${threads} worker thread${threads === 1 ? '' : 's'} it runs beside the trainer's steps (while a step holds the main thread, each thread works only through the ${WORKER_TASKS_PER_THREAD} tasks it holds, so a pool may outnumber the cores).`,
    });
  }
  return { overrides, changes };
}

/**
 * Every candidate the loop could run with: as it ran, the pipeline planner's plan for each number
 * of cores from one to the machine's (stopping at the trainer's unstarved rate), and each of these
 * with fewer threads in a worker op's pool.
 */
export function trainerCandidates(profile: Profile, options: ModelOptions = {}): TrainerCandidate[] {
  const f = trainerFigures(profile);
  if (!f) return [];
  const alone: Profile = { ...profile, trainer: undefined };
  // The planner stops adding threads once the pipeline would feed the trainer at its unstarved rate.
  const target = 1 / Math.max(f.ownSeconds, 1e-9);
  const make = (overrides: Overrides, changes: PlanChange[]): TrainerCandidate => {
    const r = trainerRate(profile, overrides, options, f);
    return { overrides, changes, rate: r.rate, limit: r.limit, ...costOf(profile, overrides) };
  };
  const out: TrainerCandidate[] = [make({ ...profile.run.overrides }, [])];
  const seen = new Set<string>([JSON.stringify(out[0].overrides)]);
  const machine = Math.max(1, profile.machine.cores);
  for (let k = 1; k <= machine; k++) {
    const p = pipelinePlan(alone, { ...options, cores: k, maxWorkers: k, targetRate: target });
    const key = JSON.stringify(p.overrides);
    if (p.changes.length === 0 || seen.has(key)) continue;
    seen.add(key);
    out.push(make(p.overrides, p.changes));
  }
  // The trainer's own lever: the main thread it shares. Every exported sync fn the pipeline runs
  // there moves to a pool (trimmed below), whether or not the pipeline alone would gain from it:
  // the trainer gains the main-thread time. The pool may hold the model's whole worker budget,
  // twice the cores: while a step holds the main thread, a pool works only on the tasks its threads
  // already hold, so threads beyond the cores can still shorten the loop's wait (uncoveredShare),
  // and `trainerRate` charges each busy thread its share of the cores.
  const off = offMainThread(profile, Math.max(1, options.maxWorkers ?? 2 * machine));
  if (off.changes.length > 0 && !seen.has(JSON.stringify(off.overrides))) {
    seen.add(JSON.stringify(off.overrides));
    out.push(make(off.overrides, off.changes));
  }
  for (const c of [...out]) {
    for (const g of fewerThreads(profile, c.overrides, c.changes)) {
      const key = JSON.stringify(g.overrides);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(make(g.overrides, g.changes));
    }
  }
  return out;
}

/** The cheapest candidate within `TARGET_TOLERANCE` of the best rate: fewest workers, then smallest buffers, then fewest changes. */
export function cheapest(candidates: TrainerCandidate[]): TrainerCandidate | undefined {
  if (candidates.length === 0) return undefined;
  const best = Math.max(...candidates.map((c) => c.rate));
  const enough = candidates.filter((c) => c.rate >= best * (1 - TARGET_TOLERANCE));
  enough.sort((a, b) => a.workers - b.workers || a.buffered - b.buffered || a.changes.length - b.changes.length || b.rate - a.rate);
  return enough[0];
}

const pct = (x: number): string => `${Math.round(x * 100)}%`;

/** "1 worker thread feeds it as fast as 4", "the main thread alone feeds it as fast as 2 worker threads". */
function fewerWords(fewer: number, was: number): string {
  const threads = (k: number): string => `${k} worker thread${k === 1 ? '' : 's'}`;
  return fewer === 0 ? `the main thread alone feeds it as fast as ${threads(was)}` : `${threads(fewer)} feed${fewer === 1 ? 's' : ''} it as fast as ${was}`;
}
/** Steps per second in words: 3 significant figures at most. */
const steps = formatSteps;

/** The verdict on a training profile: how input-bound the loop is, its unstarved rate, and the plan's target and prediction. */
export function trainerVerdict(profile: Profile, options: ModelOptions = {}): TrainerVerdict | undefined {
  const f = trainerFigures(profile);
  if (!f) return undefined;
  const candidates = trainerCandidates(profile, options);
  const asWritten = candidates[0];
  const chosen = cheapest(candidates) ?? asWritten;
  const unstarved = 1 / Math.max(f.ownSeconds, 1e-9);
  const best = Math.max(...candidates.map((c) => c.rate));
  // Feeding the trainer can gain at most its waits (and the pipeline's work inside its steps): a
  // prediction beyond that is the model's error on the configuration as it ran, not a gain.
  const ceiling = unstarved / Math.max(f.measuredRate, 1e-9);
  const gain = asWritten.rate > 0 ? Math.min(chosen.rate / asWritten.rate, ceiling) : 1;
  // Threads are spent for a gain the planner would propose (`minGain`), and given back when the
  // loop stays as fast without them.
  const fewer = chosen.workers < asWritten.workers && chosen.rate >= asWritten.rate * (1 - TARGET_TOLERANCE);
  const change = chosen !== asWritten && (gain > 1 + MODEL_CONSTANTS.minGain || fewer);
  const inputBound = f.inputBound >= INPUT_BOUND_MIN;
  const waited = `the trainer waited ${pct(f.inputBound)} of its time for input (${steps(f.measuredRate)}; never starved it would take ${steps(unstarved)})`;
  let summary: string;
  const cores = Number(coresOf(profile, options, 1 + asWritten.workers).toFixed(1));
  if (!change)
    summary = `${inputBound ? waited : `not input-bound: ${waited}`}; no change needed${inputBound && best < unstarved * (1 - TARGET_TOLERANCE) ? ` — no configuration of the pipeline is predicted to feed it faster with the ${cores} core${cores === 1 ? '' : 's'} it gets here` : ''}.`;
  else if (fewer && gain <= 1 + MODEL_CONSTANTS.minGain)
    summary = `${inputBound ? waited : `not input-bound: ${waited}`}; ${fewerWords(chosen.workers, asWritten.workers)}: give ${asWritten.workers - chosen.workers} back to the trainer (predicted ${steps(chosen.rate)}).`;
  else summary = `${waited}; the plan feeds it ${steps(chosen.rate)} (${formatRatio(gain)}) with ${chosen.workers} worker thread${chosen.workers === 1 ? '' : 's'}.`;
  return {
    steps: f.steps,
    stepsPerSec: f.measuredRate,
    inputBound: f.inputBound,
    unstarvedStepsPerSec: unstarved,
    trainerSecondsPerStep: f.ownSeconds,
    trainerMainCpuPerStep: f.ownMainCpu,
    pipelineMainPerStep: f.pipelineMain,
    targetStepsPerSec: Math.min(unstarved, best),
    predictedStepsPerSec: change ? chosen.rate : asWritten.rate,
    asWrittenPredictedStepsPerSec: asWritten.rate,
    workers: change ? chosen.workers : asWritten.workers,
    limit: change ? chosen.limit : asWritten.limit,
    changed: change,
    summary,
  };
}

/**
 * The verdict on the loop once verification has said what of the plan stays: the plan's changes
 * that measured a gain (`kept`, as `overrides` on the configuration the profile ran with), or none,
 * in which case the loop stays as it ran and `why` says what verification measured ("the plan
 * measured 1.2× ± 0.2, not beyond the noise"). The verdict the model made before verification
 * promised a plan that may no longer be the one shown. `priced`: a later run and the overrides that
 * give the same configuration from it, to price the kept changes from instead of `profile`.
 */
export function keptTrainerVerdict(
  profile: Profile,
  verdict: TrainerVerdict,
  overrides: Overrides,
  kept: readonly PlanChange[],
  why: string,
  options: ModelOptions = {},
  measured?: string,
  priced?: { profile: Profile; overrides: Overrides },
): TrainerVerdict {
  const waited = `the trainer waited ${pct(verdict.inputBound)} of its time for input (${steps(verdict.stepsPerSec)}; never starved it would take ${steps(verdict.unstarvedStepsPerSec)})`;
  if (kept.length === 0) {
    const asRan = trainerRate(profile, { ...profile.run.overrides }, options);
    return {
      ...verdict,
      predictedStepsPerSec: verdict.asWrittenPredictedStepsPerSec,
      workers: costOf(profile, { ...profile.run.overrides }).workers,
      limit: asRan.limit,
      changed: false,
      summary: `${waited}; ${why}, so no change.`,
    };
  }
  const r = priced ? trainerRate(priced.profile, priced.overrides, options) : trainerRate(profile, overrides, options);
  const workers = costOf(profile, overrides).workers;
  const gain = verdict.asWrittenPredictedStepsPerSec > 0 ? r.rate / verdict.asWrittenPredictedStepsPerSec : 1;
  return {
    ...verdict,
    predictedStepsPerSec: r.rate,
    workers,
    limit: r.limit,
    changed: true,
    // What verification measured, when it did, is the figure; the model's stays beside it.
    summary: measured
      ? `${waited}; with ${workers} worker thread${workers === 1 ? '' : 's'} the plan measured ${measured} its steps per second as written (the model predicted ${steps(r.rate)}, ${formatRatio(gain)}).`
      : `${waited}; the plan feeds it ${steps(r.rate)} (${formatRatio(gain)}) with ${workers} worker thread${workers === 1 ? '' : 's'}.`,
  };
}

/**
 * The plan for a training profile: the cheapest candidate's changes, with the loop's predicted
 * steps per second as the plan's predicted rate (root elements per second: one element per step).
 */
export function trainerPlan(profile: Profile, options: ModelOptions = {}): Plan | undefined {
  const f = trainerFigures(profile);
  if (!f) return undefined;
  const alone: Profile = { ...profile, trainer: undefined };
  const base = pipelinePlan(alone, { ...options, targetRate: undefined });
  const candidates = trainerCandidates(profile, options);
  const verdict = trainerVerdict(profile, options);
  const chosen = cheapest(candidates) ?? candidates[0];
  const keep = verdict?.changed ? chosen : candidates[0];
  const changes = keep.changes.map((c) => ({ ...c, predictedRate: trainerRate(profile, overridesOf(profile, keep, c), options, f).rate }));
  return {
    ...base,
    changes,
    currentRate: f.measuredRate,
    predictedRate: keep.rate,
    predictedBound: keep.rate,
    overrides: keep.overrides,
    notes: [...(base.notes ?? []).filter((n) => !/proposes none/.test(n)), ...(verdict ? [verdict.summary] : [])],
    ...(verdict ? { trainer: verdict } : {}),
  };
}

/** The overrides of one change of a candidate alone, on top of the profile's own. */
function overridesOf(profile: Profile, c: TrainerCandidate, change: PlanChange): Overrides {
  if (c.changes.length === 1) return c.overrides;
  const o: Overrides = { ...profile.run.overrides };
  const mine = c.overrides[change.opId];
  if (mine) o[change.opId] = mine;
  return o;
}
