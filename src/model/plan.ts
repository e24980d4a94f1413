/**
 * The plan: which knobs to change, why, and the rate the model predicts afterwards.
 *
 * Search: for each cache option (none, or the best cache that fits) and each number of CPU-heavy
 * sync maps moved to worker threads (the heaviest first) or worker-placed fn moved back to the
 * main thread, run the greedy allocator and keep the configuration with the highest bound; a
 * cache must gain `minGain`, each extra move `minMoveGain`.
 * The whole plan must gain `minGain` over the current bound, or it proposes no rate changes (this
 * keeps a re-plan of an already planned run quiet). Then a hedge gives non-binding ops headroom and
 * small concurrency changes to non-binding ops are dropped as noise. Finally every change whose
 * removal does not lower the predicted rate is dropped, each change gets its own predicted rate,
 * and a plan whose predicted rate is not `minGain` above the measured one proposes nothing.
 */
import type { Plan, PlanChange } from '../shared/analysis';
import type { KnobOverride, Overrides } from '../shared/profile';
import { allocate, hedge, type Limits } from './allocate';
import { bottleneckOf } from './analyze';
import { withinBudget } from './budget';
import { chooseCache, type CacheCandidate } from './cache';
import { changesBetween } from './changes';
import { absoluteCachePath, diskReadOf } from './diskCache';
import { shardNotes } from './dataflow';
import { applyOverrides, cloneConfig, configFromProfile, type Config } from './config';
import { MODEL_CONSTANTS as C } from './constants';
import { describeOp, formatRootRate } from './describe';
import { coreBudget, type CoreBudget } from './cores';
import { evaluate } from './evaluate';
import { flowChanges } from './flow';
import type { Evaluation } from './evaluation';
import { can, isFnOp } from './knobs';
import type { Measured, OpMeasure } from './measured';
import { projectMemory } from './memory';
import { cloneSide } from './move';
import { taskCosts, taskGroup } from './tasks';

/** Options with their defaults filled in. */
export interface Resolved extends Limits {
  memoryBudgetBytes: number;
  /** Measured free cores (fractional), and the sentence about the cores planned for (src/model/cores.ts). */
  coresAvailable?: number;
  coresNote?: string;
  /** Op ids known to be random from outside the profile (`ModelOptions.randomOps`). */
  randomOps: ReadonlySet<string>;
  /** Op ids whose source pins their order (`ModelOptions.orderPinned`): never `deterministic: false`. */
  orderPinned: ReadonlySet<string>;
  /** The flow levers (fuse, deterministic: flow.ts) are on: off with `ModelOptions.reshape: false`, the plan of knobs alone. */
  flow: boolean;
  /** Where a disk cache goes (`ModelOptions.cacheDir`). */
  cacheDir?: string;
  /**
   * The cores the profiled run itself had, when the plan is for another machine
   * (`ModelOptions.cores`): the run's efficiency is its measured rate against the bound on these.
   */
  runBudget?: CoreBudget;
}

/** The measured efficiency of the run (measured rate ÷ bound), clamped: the factor between a bound and a predicted rate. */
export function efficiency(m: Measured, currentBound: number): number {
  if (!Number.isFinite(currentBound) || currentBound <= 0 || m.measuredRate <= 0) return 1;
  return Math.min(C.efficiencyMax, Math.max(C.efficiencyMin, m.measuredRate / currentBound));
}

/**
 * The efficiency a prediction carries: the run's measured efficiency when the work that binds
 * stays the same (the same operator dominates the binding resource, or the same resource binds
 * when no operator is named), 1 otherwise. The measured shortfall belongs to the work that bound
 * the profiled run: once a cache or a move takes that work away, the new bottleneck (say, serving
 * cached elements at ≈ 1 µs each plus the ops below the cache) was never the limit in the window,
 * so the run says nothing about how efficiently it runs.
 */
export function efficiencyFor(m: Measured, current: Evaluation, next: Evaluation, ranBound = current.bound): number {
  const e = efficiency(m, ranBound);
  const a = bottleneckOf(m, current);
  const b = bottleneckOf(m, next);
  const same = a.opId !== undefined || b.opId !== undefined ? a.opId === b.opId : a.resource === b.resource;
  return same ? e : 1;
}

function best(m: Measured, candidates: Config[], lim: Limits, minGain: number): { cfg: Config; ev: Evaluation } {
  let chosen = candidates[0];
  let chosenEv = evaluate(m, chosen, coreBudget(lim));
  for (const cfg of candidates.slice(1)) {
    const ev = evaluate(m, cfg, coreBudget(lim));
    if (ev.bound > chosenEv.bound * (1 + minGain)) {
      chosen = cfg;
      chosenEv = ev;
    }
  }
  return { cfg: chosen, ev: chosenEv };
}

/**
 * Sync fns the run had in worker threads that could run on the main thread instead: a worker
 * pool costs the main thread its dispatch and its side of every clone, which the run measured;
 * for a cheap fn on large elements that is more than the fn itself.
 */
function workerPlaced(m: Measured): OpMeasure[] {
  return m.order.map((id) => m.ops.get(id)).filter((om): om is OpMeasure => om !== undefined && om.op.placement === 'worker' && isFnOp(om.op) && om.op.fnAsync !== true && om.callsPerRoot > 0 && can(om.op, 'placement'));
}

/**
 * The least a call must cost on the main thread for a move to be worth pricing. With the move's
 * costs measured on real elements, what a call leaves on the main thread in a worker (its
 * bookkeeping, its share of a task's dispatch in tasks as plumber-data sizes them, its side of
 * the clones): a fn that costs less cannot free the main thread, and above it the model decides
 * by the gain. Without a measurement, `minWorkerTaskSeconds`:
 * the clones are then priced from bytes alone, which misses the cost of objects.
 */
function moveFloor(m: Measured, om: OpMeasure): number {
  if (!om.move) return C.minWorkerTaskSeconds;
  const { dispatch } = taskCosts(m.profile.machine);
  return C.bookkeepingSecondsPerElement + dispatch / taskGroup(om, m.profile.machine) + cloneSide(om.move);
}

/**
 * Moves of 0, 1, 2… of the heaviest movable sync maps, each allocated, and each worker-placed sync
 * fn back on the main thread, one at a time; the best by bound.
 */
function searchMoves(m: Measured, start: Config, lim: Limits): Config {
  const movable = m.order
    .map((id) => m.ops.get(id))
    .filter((om) => om !== undefined && om.movable && om.callsPerRoot > 0 && om.selfPerRoot / om.callsPerRoot >= moveFloor(m, om))
    .sort((a, b) => (b?.selfPerRoot ?? 0) - (a?.selfPerRoot ?? 0))
    .slice(0, 4);
  const options: Config[] = [allocate(m, start, lim)];
  const moved = cloneConfig(start);
  for (const om of movable) {
    if (!om || lim.workerBudget < 1 || lim.maxWorkers < 1) break;
    moved[om.op.id] = { ...moved[om.op.id], placement: 'worker', concurrency: 1 };
    options.push(allocate(m, moved, lim));
  }
  for (const om of workerPlaced(m)) {
    if (start[om.op.id]?.placement !== 'worker') continue;
    const back = cloneConfig(start);
    back[om.op.id] = { ...back[om.op.id], placement: 'main', concurrency: 1 };
    options.push(allocate(m, back, lim));
  }
  return best(m, options, lim, C.minMoveGain).cfg;
}

/** Drop concurrency changes of ops that do not bind when they are within `hysteresis` of today's value. */
function quiet(m: Measured, base: Config, cfg: Config, lim: Limits): Config {
  const out = cloneConfig(cfg);
  const bound = evaluate(m, out, coreBudget(lim)).bound;
  for (const id of m.order) {
    const from = base[id];
    const to = out[id];
    if (!from || !to || from.placement !== to.placement || from.concurrency === to.concurrency || from.concurrency < 2) continue;
    if (Math.abs(to.concurrency - from.concurrency) > C.hysteresis * from.concurrency) continue;
    const trial = cloneConfig(out);
    trial[id].concurrency = from.concurrency;
    if (evaluate(m, trial, coreBudget(lim)).bound >= bound * (1 - 1e-3)) out[id].concurrency = from.concurrency;
  }
  return out;
}

/**
 * Calls in flight of an awaiting op whose latency grows with them, lowered to the fewest that keep
 * the bound within the gain a plan must make (times the hedge), where more mostly wait: a first
 * pass cannot see the queue of a service with a few slots, and the second pass, which measured it,
 * asks for fewer (on the fitted line, which errs low for such a service: see latency.ts
 * `latencyAt`).
 */
function trimQueued(m: Measured, cfg: Config, lim: Limits): { cfg: Config; lowered: Set<string> } {
  const out = cloneConfig(cfg);
  const lowered = new Set<string>();
  for (const id of m.order) {
    const om = m.ops.get(id);
    const c = out[id];
    if (!om || !c || om.latencySlope <= 0 || !om.isAsync || !om.tunable || c.placement !== 'main' || c.concurrency < 2) continue;
    const cur = c.concurrency;
    const full = evaluate(m, out, coreBudget(lim)).bound;
    const boundAt = (k: number) => {
      c.concurrency = k;
      const b = evaluate(m, out, coreBudget(lim)).bound;
      c.concurrency = cur;
      return b;
    };
    // The bound only grows with calls in flight: the fewest that keep it, but for less than a
    // plan must gain to be proposed.
    let lo = 1;
    let hi = cur;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (boundAt(mid) >= full * (1 - C.minGain)) hi = mid;
      else lo = mid + 1;
    }
    c.concurrency = Math.min(cur, Math.ceil(lo * C.hedgeFactor));
    if (c.concurrency < cur) lowered.add(id);
  }
  return { cfg: out, lowered };
}

/**
 * The configuration as it ran, on the cores planned for (`current`), and the bound the measured
 * efficiency is taken against: on the cores the run itself had. Planning for a target machine with
 * more cores than were free here, a run on fewer cores measures below the target's bound; taken
 * against that bound it would read as a low efficiency, and every prediction for the target would
 * carry it.
 */
export function asRan(m: Measured, base: Config, r: Resolved): { current: Evaluation; ranBound: number; baseline: number } {
  const current = evaluate(m, base, coreBudget(r));
  if (r.runBudget === undefined) return { current, ranBound: current.bound, baseline: m.measuredRate };
  const ranBound = evaluate(m, base, r.runBudget).bound;
  // The configuration as it ran, on the target: what a change there must beat.
  return { current, ranBound, baseline: current.bound * efficiencyFor(m, current, current, ranBound) };
}

/**
 * The configuration to plan: the best of the moves searched with and without the cache chosen,
 * then hedged, quieted and trimmed; none of it unless it gains `minGain` over the run as it was.
 * `trims`: calls in flight an earlier pass set, lowered below what the run had to where more
 * mostly wait: no gain of their own, so exempt from the gain rules, but only for knobs a run was
 * given, not the source's.
 */
function chooseConfig(m: Measured, base: Config, current: Evaluation, cacheCandidates: CacheCandidate[], r: Resolved): { chosen: Config; caches: CacheCandidate[]; trims: Set<string> } {
  const withoutCache = searchMoves(m, base, r);
  let chosen = withoutCache;
  let caches: CacheCandidate[] = [];
  if (cacheCandidates.length > 0) {
    const cachedStart = cloneConfig(base);
    for (const c of cacheCandidates) Object.assign(cachedStart[c.opId], { cacheAfter: true }, c.path !== undefined ? { cacheDisk: diskReadOf(m.ops.get(c.opId)!) } : {});
    const withCache = searchMoves(m, cachedStart, r);
    const picked = best(m, [withoutCache, withCache], r, C.minGain);
    if (picked.cfg === withCache) {
      chosen = withCache;
      caches = cacheCandidates;
    }
  }
  const noGain = evaluate(m, chosen, coreBudget(r)).bound < current.bound * (1 + C.minGain);
  if (noGain) caches = [];
  const trimmed = trimQueued(m, noGain ? base : quiet(m, base, hedge(m, chosen, r), r), r);
  chosen = trimmed.cfg;
  const trims = new Set([...trimmed.lowered].filter((id) => chosen[id]!.concurrency < base[id]!.concurrency && m.profile.run.overrides?.[id]?.parallelism !== undefined));
  return { chosen, caches, trims };
}

/**
 * Each change must carry its weight, and the whole must be a predicted gain: drop, in order,
 * every change whose removal does not lower the prediction (it is noise the verification would
 * only spend time on), then propose nothing unless what is left beats the pipeline as it ran
 * (its measured rate; for a target machine, its prediction there) by `minGain`, and say so in
 * `notes`.
 */
function keptChanges(
  m: Measured,
  r: Resolved,
  changes: PlanChange[],
  trims: Set<string>,
  rateOf: (subset: PlanChange[]) => { rate: number; ev: Evaluation },
  baseline: number,
  notes: string[],
): { kept: PlanChange[]; keptRate: { rate: number; ev: Evaluation } } {
  let kept = changes;
  let keptRate = rateOf(kept);
  const isTrim = (c: PlanChange) => c.kind === 'parallelism' && trims.has(c.opId);
  for (const ch of changes) {
    const without = kept.filter((c) => c !== ch);
    // The last change is judged by the gain check below, which says why it goes.
    if (without.length === 0 || isTrim(ch)) continue;
    const rate = rateOf(without);
    if (rate.rate >= keptRate.rate * (1 - 1e-9)) {
      kept = without;
      keptRate = rateOf(kept);
    }
  }
  if (kept.some((c) => !isTrim(c)) && !(keptRate.rate > baseline * (1 + C.minGain))) {
    const against = r.runBudget === undefined ? `the measured ${formatRootRate(m, m.measuredRate)}` : `the ${formatRootRate(m, baseline)} it predicts there for the pipeline as it ran`;
    notes.push(
      `With ${kept.length === 1 ? 'its change' : `its ${kept.length} changes`} the model predicts ${formatRootRate(m, keptRate.rate)}, not ${Math.round(C.minGain * 100)}% above ${against}, so the plan proposes none: on ${r.cores} core${r.cores === 1 ? '' : 's'} it expects no gain.`,
    );
    // A lowered count of calls that only queued stays: it is no change to the rate.
    kept = kept.filter(isTrim);
    keptRate = rateOf(kept);
  }
  return { kept, keptRate };
}

/** The plan note for a cache refused at a random op: where the plan caches instead, if anywhere. */
function randomRefusalNote(m: Measured, refusal: string, kept: PlanChange[]): string {
  const above = kept
    .filter((c) => c.kind === 'cache')
    .map((c) => m.ops.get(c.opId))
    .filter((om) => om !== undefined);
  const where = above.map((om) => `after ${describeOp(om.op)}`);
  const listed = where.length <= 1 ? where.join('') : `${where.slice(0, -1).join(', ')} and ${where[where.length - 1]}`;
  return `${refusal}, so the plan ${above.length > 0 ? `caches ${listed}, above it` : 'proposes no cache'}.`;
}

/** The plan for a measured profile. */
export function planMeasured(m: Measured, r: Resolved): Plan {
  const base = configFromProfile(m);
  const { current, ranBound, baseline } = asRan(m, base, r);
  const cacheChoice = chooseCache(m, r.memoryBudgetBytes, r.randomOps, r.cacheDir);
  const notes: string[] = [...cacheChoice.notes, ...shardNotes(m)];
  const { chosen, caches, trims } = chooseConfig(m, base, current, cacheChoice.candidates, r);
  const planned = evaluate(m, chosen, coreBudget(r));
  const changes = changesBetween({ m, base, chosen, current, planned }, caches, r.memoryBudgetBytes);
  const rateOf = (subset: PlanChange[]) => predictChanges(m, base, current, subset, coreBudget(r), ranBound);
  const chosenKept = keptChanges(m, r, changes, trims, rateOf, baseline, notes);
  // The memory budget bounds the plan's projected peak (src/model/budget.ts).
  const budgeted = withinBudget(m, base, chosenKept.kept, r.memoryBudgetBytes, (subset) => toOverrides(m, subset), notes);
  // Fuse and deterministic go on top of the knob plan, each for its predicted gain (flow.ts).
  const flow = r.flow
    ? flowChanges(
        m,
        budgeted,
        (chs) => applyOverrides(m, base, toOverrides(m, chs)),
        (chs) => rateOf(chs).rate,
        r.orderPinned,
      )
    : { changes: budgeted, added: [], notes: [] };
  notes.push(...flow.notes);
  const kept = flow.changes;
  const keptRate = flow.added.length === 0 && budgeted === chosenKept.kept ? chosenKept.keptRate : rateOf(kept);
  if (cacheChoice.randomRefusal) notes.push(randomRefusalNote(m, cacheChoice.randomRefusal, kept));
  // A flow change alone is priced on the plan's other changes when it needs them (maps moved to workers together).
  const withEffects = kept.map((ch) => ({ ...ch, predictedRate: flow.added.includes(ch) && rateOf([ch]).rate <= m.measuredRate ? rateOf([...kept.filter((c) => !flow.added.includes(c)), ch]).rate : rateOf([ch]).rate }));
  const final = kept.length > 0 ? keptRate.ev : current;
  const memory = projectMemory(m, kept.length > 0 ? applyOverrides(m, base, toOverrides(m, kept)) : base, base, r.memoryBudgetBytes);
  return {
    ...(memory ? { memory } : {}),
    changes: withEffects,
    currentRate: m.measuredRate,
    predictedRate: kept.length > 0 ? keptRate.rate : baseline,
    predictedBound: final.bound,
    predictedBottleneck: bottleneckOf(m, final, kept.length > 0 ? applyOverrides(m, base, toOverrides(m, kept)) : undefined),
    overrides: toOverrides(m, kept),
    notes: notes.length > 0 ? notes : undefined,
    cores: r.cores,
    coresAvailable: r.coresAvailable,
    coresNote: r.coresNote,
  };
}

/**
 * The predicted rate with `changes` applied on top of the profile's configuration: exactly what
 * `predict(profile, toOverrides(changes))` says, so a plan, each of its changes and any subset a
 * verification tries are priced the same way.
 */
function predictChanges(m: Measured, base: Config, current: Evaluation, changes: PlanChange[], cores: CoreBudget, ranBound: number): { rate: number; ev: Evaluation } {
  const ev = evaluate(m, applyOverrides(m, base, toOverrides(m, changes)), cores);
  return { rate: ev.bound * efficiencyFor(m, current, ev, ranBound), ev };
}

/** The profile's own overrides plus this plan's changes, keyed by op id: what the runner takes. */
export function toOverrides(m: Measured, changes: PlanChange[]): Overrides {
  const out: Overrides = {};
  for (const [id, o] of Object.entries(m.profile.run.overrides ?? {})) out[id] = { ...o };
  const at = (id: string): KnobOverride => (out[id] ??= {});
  for (const ch of changes) {
    const om = m.ops.get(ch.opId);
    switch (ch.kind) {
      case 'parallelism':
        at(ch.opId).parallelism = ch.to;
        break;
      case 'placement': {
        const o = at(ch.opId);
        if (ch.to === 'main') {
          // Back to the main thread: the pool's knobs go with it.
          o.placement = 'main';
          o.parallelism = 1;
          delete o.module;
          delete o.exportName;
          break;
        }
        o.placement = 'worker';
        o.parallelism = ch.parallelism;
        if (om?.op.fnModule) {
          o.module = om.op.fnModule.file;
          o.exportName = om.op.fnModule.exportName;
        }
        break;
      }
      case 'prefetch': {
        // A prefetch an earlier override inserted has no call site of its own: resize it through
        // the override on the op it follows.
        const input = om?.op.inputs[0];
        const target = ch.existing && om?.op.overridden && input && out[input]?.prefetch !== undefined ? input : ch.opId;
        at(target).prefetch = ch.size;
        break;
      }
      case 'cache':
        at(ch.opId).cache = ch.path !== undefined ? absoluteCachePath(m.profile.pipeline.file, ch.path) : 'memory';
        break;
      case 'cycleLength':
        at(ch.opId).cycleLength = ch.to;
        break;
      case 'deterministic':
        at(ch.opId).deterministic = false;
        break;
      case 'fuse':
        at(ch.opId).fuse = true;
        break;
      case 'reorder':
      case 'convert':
        // No override runs a conversion: the engine rewrites the chain, and its `then` is keyed by
        // the operators the rewrite replaces.
        break;
    }
  }
  return out;
}
