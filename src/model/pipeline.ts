/**
 * The pipeline alone: its plan and its predicted rate under any overrides, for a profile whose
 * training loop (if any) is not the question. `./index.ts` answers for a training profile through
 * ./trainer.ts, which asks these for the pipeline that feeds the loop.
 */
import type { Bottleneck, Bound, ModelOptions, Plan, TimeProjection } from '../shared/analysis';
import type { Measured } from './measured';
import type { Overrides, Profile } from '../shared/profile';
import { bottleneckOf, emptyAnalysis } from './analyze';
import { clusterCapacities } from './cluster';
import { applyOverrides, configFromProfile } from './config';
import { MODEL_CONSTANTS } from './constants';
import { coreBudget, coresFor } from './cores';
import { evaluate } from './evaluate';
import { measure } from './measure';
import { projectTime } from './epochs';
import { defaultMemoryBudget } from './memory';
import { asRan, efficiencyFor, planMeasured, toOverrides, type Resolved } from './plan';

/** The model's prediction for one knob configuration. */
export interface Prediction {
  rate: number;
  bound: number;
  bottleneck: Bottleneck;
  bounds: Bound[];
}

/** The options with their defaults filled in from the profile: cores, limits and budgets to plan with. */
export function resolve(profile: Profile, options: ModelOptions = {}): Resolved {
  const { cores, available, note, contention } = coresFor(profile, options);
  // Planning for a target machine: the cores the run had here are what its efficiency is measured on.
  const ran = options.cores !== undefined && options.cores > 0 ? coreBudget(coresFor(profile, { ...options, cores: undefined })) : undefined;
  return {
    ...(ran !== undefined ? { runBudget: ran } : {}),
    cores,
    ...(contention ? { contention } : {}),
    coresAvailable: available,
    coresNote: note,
    randomOps: new Set(options.randomOps ?? []),
    orderPinned: new Set(options.orderPinned ?? []),
    flow: options.reshape !== false,
    ...(options.cacheDir !== undefined ? { cacheDir: options.cacheDir } : {}),
    maxWorkers: Math.max(1, options.maxWorkers ?? cores),
    workerBudget: 2 * cores,
    maxConcurrency: Math.max(1, options.maxConcurrency ?? MODEL_CONSTANTS.defaultMaxConcurrency),
    memoryBudgetBytes: options.memoryBudgetBytes ?? defaultMemoryBudget({ profile }, MODEL_CONSTANTS.defaultMemoryBudgetFraction),
    ...(options.targetRate !== undefined ? { targetRate: options.targetRate } : {}),
  };
}

/**
 * The knob changes that raise the bound the most (parallelism, worker placement, prefetch, cache),
 * the predicted rate after them, and the same changes as runner overrides. The overrides include
 * those the profile already ran with, so a second pass (plan, run with `overrides`, plan again)
 * keeps the first pass's changes; a plan of an already planned run proposes nothing big.
 */
export function planPipeline(profile: Profile, options?: ModelOptions): Plan {
  const r = resolve(profile, options);
  const m = measure(profile, options?.history);
  if (m.rootElements <= 0) {
    const a = emptyAnalysis(m, r.cores);
    return {
      changes: [],
      currentRate: 0,
      predictedRate: 0,
      predictedBound: 0,
      predictedBottleneck: a.bottleneck,
      overrides: { ...profile.run.overrides },
      cores: r.cores,
      coresAvailable: r.coresAvailable,
      coresNote: r.coresNote,
    };
  }
  const planned = withTime(m, r, planMeasured(m, r));
  // Stages on a cluster: how many workers like those measured the target (or the rest of the pipeline) needs.
  const measuredCfg = configFromProfile(m);
  const capacity = clusterCapacities(m, measuredCfg, evaluate(m, measuredCfg, coreBudget(r)), r.targetRate);
  return capacity.length > 0 ? { ...planned, capacity, notes: [...(planned.notes ?? []), ...capacity.map((c) => c.summary)] } : planned;
}

/**
 * The model's prediction for any knob configuration, given as runner overrides on top of the
 * knobs the profile ran with: the bound, its binding resource, and the predicted rate (the bound
 * times the run's measured efficiency, clamped to [efficiencyMin, efficiencyMax], when the same
 * work stays binding; see `efficiencyFor`). `loopRate`, for a training profile, gives the loop's
 * steps per second under the same overrides, which is then the rate (one element per step).
 */
export function predictPipeline(profile: Profile, overrides: Overrides, options?: ModelOptions, loopRate?: () => number): Prediction {
  const r = resolve(profile, options);
  const m = measure(profile, options?.history);
  if (m.rootElements <= 0) {
    const a = emptyAnalysis(m, r.cores);
    return { rate: 0, bound: 0, bottleneck: a.bottleneck, bounds: [] };
  }
  const base = configFromProfile(m);
  const { current, ranBound } = asRan(m, base, r);
  const cfg = applyOverrides(m, base, overrides);
  const ev = evaluate(m, cfg, coreBudget(r));
  const rate = loopRate ? loopRate() : ev.bound * efficiencyFor(m, current, ev, ranBound);
  return { rate, bound: ev.bound, bottleneck: bottleneckOf(m, ev, cfg), bounds: ev.bounds };
}

/** The plan with its time to the first batch and per epoch (./epochs.ts), for the configuration with its changes. */
function withTime(m: Measured, r: Resolved, planned: Plan): Plan {
  const base = configFromProfile(m);
  const { current, ranBound } = asRan(m, base, r);
  const cfg = applyOverrides(m, base, toOverrides(m, planned.changes));
  return { ...planned, time: projectTime(m, cfg, base, { cores: coreBudget(r), efficiencyOf: (ev) => efficiencyFor(m, current, ev, ranBound) }) };
}

/** Time to the first batch and per epoch for the profile's configuration with `overrides` on top (./epochs.ts). */
export function timeFor(profile: Profile, overrides: Overrides, options?: ModelOptions): TimeProjection | undefined {
  const r = resolve(profile, options);
  const m = measure(profile, options?.history);
  if (m.rootElements <= 0 || profile.trainer) return undefined;
  const base = configFromProfile(m);
  const { current, ranBound } = asRan(m, base, r);
  return projectTime(m, applyOverrides(m, base, overrides), base, { cores: coreBudget(r), efficiencyOf: (ev) => efficiencyFor(m, current, ev, ranBound) });
}
