/**
 * Plumber's performance model: pure, deterministic functions from a profile to an analysis (the
 * bounds and the bottleneck) and a plan (knob changes and the predicted rate). No I/O.
 *
 * See README "How the model works" and the assumptions in measure.ts, demands.ts, evaluate.ts
 * and constants.ts. Nothing inside the model imports this file: it is the model's front door.
 */
import type { Analysis, MemoryProjection, ModelOptions, Plan, PlanChange } from '../shared/analysis';
import type { Overrides, Profile } from '../shared/profile';
import { formatSteps } from '../shared/words';
import { bottleneckOf, emptyAnalysis, opAnalyses } from './analyze';
import { clusterCapacities } from './cluster';
import { applyOverrides, configFromProfile } from './config';
import { MODEL_CONSTANTS } from './constants';
import { coreBudget } from './cores';
import { dialectOf, liftLevers, withConversion } from './convert';
import { describeOp, formatRootRate, formatSeconds, rootUnitOf } from './describe';
import { evaluate } from './evaluate';
import { downstream } from './graph';
import { measure } from './measure';
import type { Measured, OpMeasure } from './measured';
import { memoryAsRan, projectMemory } from './memory';
import { planPipeline, predictPipeline, resolve, timeFor, type Prediction } from './pipeline';
import { asRan, planMeasured, toOverrides } from './plan';
import { trainerPlan, trainerRate, trainerVerdict } from './trainer';
import { candidateOf, reshapedRun, withReorder } from './reshape';
import { fuseInsteadOf } from './fuse';
import { withShuffleFirst } from './shuffleFirst';

export { candidateOf, reorderCandidates, shuffleCandidates, reshapedProfile, reorderReason, keptShare, type ReorderCandidate, type ReorderChange } from './reshape';

export { changeTitle, describeOp, formatBytes, formatRate, formatSeconds, listWords, rootUnitOf } from './describe';
export { MODEL_CONSTANTS } from './constants';
export { coresFor, wholeCores } from './cores';
export { planTarget } from './target';
export { timeFor } from './pipeline';
export { widenFreeLevers } from './headroom';
export { can, leverOf } from './knobs';
export { keptTrainerVerdict } from './trainer';

/**
 * What holds the pipeline back as it ran: every bound (main thread, all cores, each operator,
 * awaiting ops, disk, libuv), the binding one as the bottleneck with a sentence a person can act
 * on, and per-operator visit ratios, rates and CPU shares.
 */
export function analyze(profile: Profile, options?: ModelOptions): Analysis {
  const r = resolve(profile, options);
  const m = measure(profile, options?.history);
  const coresInfo = { coresAvailable: r.coresAvailable, coresNote: r.coresNote };
  if (m.rootElements <= 0) return { ...emptyAnalysis(m, r.cores), ...coresInfo };
  const cfg = configFromProfile(m);
  const ev = evaluate(m, cfg, coreBudget(r));
  const capacity = clusterCapacities(m, cfg, ev, options?.targetRate);
  const bottleneck = bottleneckOf(m, ev);
  const trainer = profile.trainer ? trainerVerdict(profile, options) : undefined;
  const unexplained = profile.trainer || r.runBudget !== undefined ? undefined : unexplainedWords(m, ev.bound);
  const time = timeFor(profile, {}, options);
  return {
    ...(trainer ? { trainer } : {}),
    ...(unexplained ? { unexplained } : {}),
    ...coresInfo,
    measuredRate: m.measuredRate,
    bound: ev.bound,
    bottleneck,
    bounds: ev.bounds,
    ops: opAnalyses(m, cfg, ev, bottleneck),
    cores: r.cores,
    ...memoryAsRan(m, cfg, r.memoryBudgetBytes),
    ...(capacity.length > 0 ? { capacity } : {}),
    ...(time ? { time } : {}),
  };
}

/**
 * The sentence for a run that measured below `unexplainedShare` of the bound its operators'
 * measured work and waits allow on the cores it had (a training loop sets its own pace, and a
 * bound for another machine is not this run's): what took the rest is not in the profile.
 */
function unexplainedWords(m: Measured, bound: number): string | undefined {
  const measured = m.measuredRate;
  if (!(measured > 0) || !(bound > 0) || !Number.isFinite(bound) || measured >= MODEL_CONSTANTS.unexplainedShare * bound) return undefined;
  const share = Math.round((measured / bound) * 100);
  return `The run measured ${formatRootRate(m, measured)}, ${share}% of the ${formatRootRate(m, bound)} its operators' measured work and waits allow: ${100 - share}% of its time went to something the profile does not attribute to an operator (work or waits outside plumber-data's operators, such as timers or callbacks the module starts on the same thread; or cores other programs took in bursts), so the bottleneck named is the model's best guess, not what holds the pipeline back.`;
}

/**
 * The knob changes that raise the bound the most (parallelism, worker placement, prefetch, cache),
 * the predicted rate after them, and the same changes as runner overrides. The overrides include
 * those the profile already ran with, so a second pass (plan, run with `overrides`, plan again)
 * keeps the first pass's changes; a plan of an already planned run proposes nothing big. A
 * training profile's plan targets the trainer's rate (trainer.ts).
 */
export function plan(profile: Profile, options?: ModelOptions): Plan {
  const own = planOwn(profile, options);
  // A reorder plans the reshaped pipeline with the same options, less the history of runs shaped as written.
  const reshapeOptions = { ...options, history: undefined };
  if (dialectOf(profile) === undefined) {
    const pricing = { planOf: (p: Profile) => planOwn(p, reshapeOptions), ranOf: (p: Profile) => predict(p, p.run.overrides, reshapeOptions), timeOf: (p: Profile, o: Overrides) => timeFor(p, o, reshapeOptions) };
    // One reorder per plan: one that raises the rate, else a shuffle moved ahead for its first batch.
    const reordered = withReorder(profile, options, own, pricing.planOf, pricing.ranOf);
    return reordered !== own ? reordered : withShuffleFirst(profile, options, own, pricing);
  }
  // A dialect's pipeline is also planned as plumber-data, in the same unit (a training loop's steps
  // per second, else root elements): the conversion, when only that helps (./convert.ts).
  const unitRate = profile.trainer ? formatSteps : (rate: number) => formatRootRate({ unit: rootUnitOf(profile) }, rate);
  return withConversion(profile, own, planOwn(liftLevers(profile), options), unitRate);
}

/** The plan with each operator's own levers: the trainer's for a training profile, else the pipeline's. */
function planOwn(profile: Profile, options?: ModelOptions): Plan {
  return (profile.trainer ? trainerPlan(profile, options) : undefined) ?? planPipeline(profile, options);
}

/**
 * The plan if the move probe is right about fns it measured cheaper in a worker than on the main
 * thread, or undefined when it moves no fn that `planned` (the model's plan of the same profile
 * and options) leaves where it is. The model prices a move at no less than the fn's main-thread
 * CPU (constants.ts `workerCpuRatioMin`: a probe's fresh isolate usually runs a fn cheaper than a
 * pipeline's workers do), yet sometimes the pipeline's workers run it far cheaper too (a fn
 * reading objects can run faster on the fresh clones a worker gets), and where no core is free
 * for a worker the plan then never moves it, so nothing ever measures the gain. The passes run this plan as their trial (src/engine/passes.ts): the run
 * with the move measures what the fn costs in the pipeline's own workers, and the next plan
 * prices the move from that.
 */
/**
 * The profile as the pipeline would run with the reorder among `changes` (its efficiency kept),
 * or `profile` when there is none: what a plan with a reorder is priced and judged on.
 */
export function reshapedFor(profile: Profile, changes: readonly PlanChange[], options?: ModelOptions): Profile {
  const reorder = changes.find((c) => c.kind === 'reorder');
  const candidate = reorder && candidateOf(profile, reorder);
  const reshapeOptions = { ...options, history: undefined };
  return (candidate && reshapedRun(profile, candidate, (p) => predict(p, p.run.overrides, reshapeOptions))) ?? profile;
}

export function trialPlan(profile: Profile, options: ModelOptions | undefined, planned: Plan): Plan | undefined {
  if (profile.trainer) return undefined;
  const m = measure(profile, options?.history);
  if (m.rootElements <= 0) return undefined;
  let trusted = false;
  for (const om of m.ops.values()) {
    if (om.move?.probeRatio === undefined) continue;
    om.move = { ...om.move, workerCpuRatio: om.move.probeRatio };
    trusted = true;
  }
  if (!trusted) return undefined;
  const trial = planMeasured(m, resolve(profile, options));
  const moved = new Set(planned.changes.filter((c) => c.kind === 'placement' && c.to === 'worker').map((c) => c.opId));
  return trial.changes.some((c) => c.kind === 'placement' && c.to === 'worker' && !moved.has(c.opId)) ? trial : undefined;
}

/** The kept `changes` with the worker maps that ran adjacent fused instead of moved (fuse.ts `fuseInsteadOf`), or undefined. */
export function fuseAlternative(run: Profile, changes: PlanChange[], options?: ModelOptions): PlanChange[] | undefined {
  if (run.trainer) return undefined;
  const m = measure(run, options?.history);
  if (m.rootElements <= 0) return undefined;
  return fuseInsteadOf(m, configFromProfile(m), changes);
}

/**
 * A move to worker threads that the model cannot price, for verification to measure (see
 * `eventLoopBusy` in ./constants.ts). A wait that finishes on the main thread (a timer, a read,
 * a request) is measured until its callback runs, and while a fn runs there the callback waits
 * for it: the busier the event loop, the longer every wait it serves. The model takes each run's
 * waits as they were measured, so a pipeline bound by such waits, with its main thread busy with
 * a fn that could move, predicts no gain from the move, least of all where no core is free for a
 * worker; and the move shortens the waits. Returns the heaviest movable sync fn of such a run
 * (`run` ran the configuration to extend, with its overrides), in as many worker threads as the
 * plan's cores; undefined when waits on the main thread do not bind, the thread was seldom busy,
 * or no fn it runs can move. The CPU clock must be the thread's own (not wall time).
 */
export function eventLoopMove(run: Profile, options?: ModelOptions): Extract<PlanChange, { kind: 'placement' }> | undefined {
  if (run.trainer || run.machine.cpuClock === 'wall' || !(run.run.seconds > 0)) return undefined;
  const m = measure(run, options?.history);
  if (m.rootElements <= 0 || !(m.measuredRate > 0)) return undefined;
  const r = resolve(run, options);
  const { current } = asRan(m, configFromProfile(m), r);
  const binding = current.binding;
  const waiter = binding.opId !== undefined ? m.ops.get(binding.opId) : undefined;
  if ((binding.resource !== 'latency' && binding.resource !== 'sequential-op') || !waiter || waiter.op.placement !== 'main' || !(waiter.latency > 0)) return undefined;
  const share = Math.min(1, Math.max(0.05, run.run.mainThreadShare ?? 1));
  const busy = run.run.mainThreadCpuSeconds / (run.run.seconds * share);
  if (!(busy >= MODEL_CONSTANTS.eventLoopBusy)) return undefined;
  const mainPerRoot = run.run.mainThreadCpuSeconds / m.rootElements;
  let heaviest: OpMeasure | undefined;
  for (const om of m.ops.values()) {
    if (om.op.placement !== 'main' || !om.movable || om.isAsync || om.selfPerRoot < MODEL_CONSTANTS.eventLoopFnShare * mainPerRoot) continue;
    if (!heaviest || om.selfPerRoot > heaviest.selfPerRoot) heaviest = om;
  }
  if (!heaviest) return undefined;
  const threads = r.cores;
  return {
    kind: 'placement',
    opId: heaviest.op.id,
    to: 'worker',
    parallelism: threads,
    reason: `${describeOp(heaviest.op)} keeps the main thread busy ${formatSeconds(heaviest.selfPerRoot)} per ${m.unit.one}, ${Math.round((heaviest.selfPerRoot / mainPerRoot) * 100)}% of its work, on the event loop that also serves what binds: ${describeOp(waiter.op)} waits ${formatSeconds(waiter.latency)} a call, measured until its callback ran, while the thread was busy ${Math.round(busy * 100)}% of the time. The model does not price how much of that wait is the loop's; in ${threads} worker thread${threads === 1 ? '' : 's'} the fn leaves the loop to the waits.`,
  };
}

/**
 * The model's prediction for any knob configuration, given as runner overrides on top of the
 * knobs the profile ran with: the bound, its binding resource, and the predicted rate (the bound
 * times the run's measured efficiency, clamped to [efficiencyMin, efficiencyMax], when the same
 * work stays binding; see `efficiencyFor`). A training profile's rate is the loop's steps per
 * second (trainer.ts), one element per step.
 */
export function predict(profile: Profile, overrides: Overrides, options?: ModelOptions): Prediction {
  return predictPipeline(profile, overrides, options, profile.trainer ? () => trainerRate(profile, overrides, options).rate : undefined);
}

/**
 * The runner overrides that apply exactly `changes` (any subset of a plan's changes) on top of the
 * overrides the profile already ran with: what a verification run of that subset takes. Keyed by
 * op id, like `plan.overrides` (which is `overridesFor(profile, plan.changes)`).
 */
export function overridesFor(profile: Profile, changes: PlanChange[], options?: ModelOptions): Overrides {
  return toOverrides(measure(profile, options?.history), changes);
}

/**
 * The overrides that run `first`'s configuration with exactly `changes` applied, said on top of
 * the knobs `later` ran with (a later run of the same pipeline with other overrides): what
 * `predict(later, …)` needs to price a part of a plan from the run that measured the plan. A knob
 * `later` ran with that `changes` leave out is turned back to what `first` measured (its
 * parallelism, placement, cycle length, prefetch buffer). Undefined when one cannot be: a cache
 * or a prefetch the later run inserted exists only in that run, and the work a cache served was
 * not measured there.
 */
export function overridesReverting(later: Profile, first: Profile, changes: PlanChange[], options?: ModelOptions): Overrides | undefined {
  const target = overridesFor(first, changes, options);
  const asWritten = configFromProfile(measure(first, options?.history));
  const out: Overrides = {};
  for (const [id, o] of Object.entries(target)) out[id] = { ...o };
  for (const [id, ran] of Object.entries(later.run.overrides ?? {})) {
    const t = target[id] ?? {};
    const was = asWritten[id];
    if (!was) return undefined;
    const o = (out[id] ??= {});
    if (ran.cache !== undefined && ran.cache !== t.cache) return undefined;
    if (ran.prefetch !== undefined && ran.prefetch !== t.prefetch) {
      // Only a prefetch the source has can be resized back; one the run inserted cannot be removed from its profile.
      if (was.bufferSize === undefined || first.ops.find((op) => op.id === id)?.kind !== 'prefetch') return undefined;
      o.prefetch = was.bufferSize;
    }
    if (ran.placement !== undefined && t.placement === undefined && ran.placement !== was.placement) {
      if (was.placement !== 'main' && was.placement !== 'worker') return undefined;
      o.placement = was.placement;
      if (t.parallelism === undefined) o.parallelism = was.concurrency;
      if (was.placement === 'main') {
        delete o.module;
        delete o.exportName;
      }
    }
    if (ran.parallelism !== undefined && t.parallelism === undefined) o.parallelism = was.concurrency;
    if (ran.cycleLength !== undefined && t.cycleLength === undefined && was.cycleLength !== undefined) o.cycleLength = was.cycleLength;
    if (Object.keys(o).length === 0) delete out[id];
  }
  return out;
}

/** The operators downstream of `id` in the profile's graph (its consumers, theirs, to the root). */
export function downstreamOf(profile: Profile, id: string): string[] {
  return downstream(measure(profile), id);
}

/**
 * The projected peak memory of any configuration (runner overrides on top of the profile's knobs):
 * a what-if. The expected peak, or with `fill: 'full'` the upper bound, every buffer full (what the
 * budget and the heap-limit lint check). Undefined when the profile did not measure what the
 * projection needs.
 */
export function projectPeakMemory(profile: Profile, overrides: Overrides, options?: ModelOptions, fill?: 'full'): MemoryProjection | undefined {
  const r = resolve(profile, options);
  const m = measure(profile, options?.history);
  const ran = configFromProfile(m);
  return projectMemory(m, applyOverrides(m, ran, overrides), ran, r.memoryBudgetBytes, fill);
}
