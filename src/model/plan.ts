/**
 * The plan: which knobs to change, why, and the rate the model predicts afterwards.
 *
 * Search: for each cache option (none, or the best cache that fits) and each number of CPU-heavy
 * sync maps moved to worker threads (the heaviest first), run the greedy allocator and keep the
 * configuration with the highest bound; a cache must gain `minGain`, each extra move `minMoveGain`.
 * The whole plan must gain `minGain` over the current bound, or it proposes no rate changes (this
 * keeps a re-plan of an already planned run quiet). Then a hedge gives non-binding ops headroom,
 * small concurrency changes to non-binding ops are dropped as noise, and a prefetch at the end of
 * the pipeline is sized to cover the slowest op's latency.
 */
import type { Bound, Plan, PlanChange } from '../shared/analysis';
import type { KnobOverride, Overrides } from '../shared/profile';
import { allocate, hedge, type Limits } from './allocate';
import { bottleneckOf } from './analyze';
import { chooseCache, type CacheCandidate } from './cache';
import { cloneConfig, configFromProfile, type Config } from './config';
import { MODEL_CONSTANTS as C } from './constants';
import { describeOp, formatBytes, formatRate, formatSeconds } from './describe';
import { evaluate, type Evaluation } from './evaluate';
import { latencyAt, type Measured } from './measure';

type PrefetchChange = Extract<PlanChange, { kind: 'prefetch' }>;

/** Options with their defaults filled in. */
export interface Resolved extends Limits {
  memoryBudgetBytes: number;
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
export function efficiencyFor(m: Measured, current: Evaluation, next: Evaluation): number {
  const e = efficiency(m, current.bound);
  const a = bottleneckOf(m, current);
  const b = bottleneckOf(m, next);
  const same = a.opId !== undefined || b.opId !== undefined ? a.opId === b.opId : a.resource === b.resource;
  return same ? e : 1;
}

function best(m: Measured, candidates: Config[], lim: Limits, minGain: number): { cfg: Config; ev: Evaluation } {
  let chosen = candidates[0];
  let chosenEv = evaluate(m, chosen, lim.cores);
  for (const cfg of candidates.slice(1)) {
    const ev = evaluate(m, cfg, lim.cores);
    if (ev.bound > chosenEv.bound * (1 + minGain)) {
      chosen = cfg;
      chosenEv = ev;
    }
  }
  return { cfg: chosen, ev: chosenEv };
}

/** Moves of 0, 1, 2… of the heaviest movable sync maps, each allocated; the best by bound. */
function searchMoves(m: Measured, start: Config, lim: Limits): Config {
  const movable = m.order
    .map((id) => m.ops.get(id))
    .filter((om) => om !== undefined && om.movable && om.callsPerRoot > 0 && om.selfPerRoot / om.callsPerRoot >= C.minWorkerTaskSeconds)
    .sort((a, b) => (b?.selfPerRoot ?? 0) - (a?.selfPerRoot ?? 0))
    .slice(0, 4);
  const options: Config[] = [allocate(m, start, lim)];
  const moved = cloneConfig(start);
  for (const om of movable) {
    if (!om || lim.workerBudget < 1 || lim.maxWorkers < 1) break;
    moved[om.op.id] = { ...moved[om.op.id], placement: 'worker', concurrency: 1 };
    options.push(allocate(m, moved, lim));
  }
  return best(m, options, lim, C.minMoveGain).cfg;
}

/** Drop concurrency changes of ops that do not bind when they are within `hysteresis` of today's value. */
function quiet(m: Measured, base: Config, cfg: Config, lim: Limits): Config {
  const out = cloneConfig(cfg);
  const bound = evaluate(m, out, lim.cores).bound;
  for (const id of m.order) {
    const from = base[id];
    const to = out[id];
    if (!from || !to || from.placement !== to.placement || from.concurrency === to.concurrency || from.concurrency < 2) continue;
    if (Math.abs(to.concurrency - from.concurrency) > C.hysteresis * from.concurrency) continue;
    const trial = cloneConfig(out);
    trial[id].concurrency = from.concurrency;
    if (evaluate(m, trial, lim.cores).bound >= bound * (1 - 1e-3)) out[id].concurrency = from.concurrency;
  }
  return out;
}

/**
 * The longest time one root element spends in a single op: its main-thread time, plus its calls'
 * latency or worker time spread over the calls it runs at once. A prefetch at the end must hold
 * what the pipeline delivers in that time.
 */
function slowestLatency(m: Measured, cfg: Config, ev: Evaluation): { id?: string; seconds: number } {
  let id: string | undefined;
  let seconds = 0;
  for (const [opId, e] of ev.eff) {
    const om = m.ops.get(opId);
    const k = Math.max(1, cfg[opId]?.concurrency ?? 1);
    if (!om) continue;
    const waves = (calls: number) => Math.max(1, calls / k);
    let t = e.main - e.overhead;
    if (e.async > 0) t += latencyAt(om, k) * waves(e.async);
    if (e.worker > 0) t += (e.worker / Math.max(e.factor * om.callsPerRoot, 1)) * waves(e.factor * om.callsPerRoot);
    if (t > seconds) {
      seconds = t;
      id = opId;
    }
  }
  return { id, seconds };
}

function opBoundDetail(ev: Evaluation, id: string): Bound | undefined {
  return ev.bounds.find((b) => b.opId === id && b.resource !== 'sequential-op') ?? ev.bounds.find((b) => b.opId === id);
}

/** The plan for a measured profile. */
export function planMeasured(m: Measured, r: Resolved): Plan {
  const base = configFromProfile(m);
  const current = evaluate(m, base, r.cores);
  const notes: string[] = [];

  const cacheChoice = chooseCache(m, r.memoryBudgetBytes);
  notes.push(...cacheChoice.notes);
  const withoutCache = searchMoves(m, base, r);
  let chosen = withoutCache;
  let cache: CacheCandidate | undefined;
  if (cacheChoice.candidate) {
    const cachedStart = cloneConfig(base);
    cachedStart[cacheChoice.candidate.opId].cacheAfter = true;
    const withCache = searchMoves(m, cachedStart, r);
    const picked = best(m, [withoutCache, withCache], r, C.minGain);
    if (picked.cfg === withCache) {
      chosen = withCache;
      cache = cacheChoice.candidate;
    }
  }
  if (evaluate(m, chosen, r.cores).bound < current.bound * (1 + C.minGain)) {
    chosen = cloneConfig(base);
    cache = undefined;
  } else {
    chosen = quiet(m, base, hedge(m, chosen, r), r);
  }

  const changes: PlanChange[] = [];
  const planned = evaluate(m, chosen, r.cores);
  for (const id of m.order) {
    const om = m.ops.get(id);
    const from = base[id];
    const to = chosen[id];
    if (!om || !from || !to) continue;
    const name = describeOp(om.op);
    const before = opBoundDetail(current, id);
    const after = planned.opBound.get(id) ?? Infinity;
    const afterText = Number.isFinite(after) ? `at most ${formatRate(after)}` : 'no longer a limit';
    if (from.placement === 'main' && to.placement === 'worker') {
      const pe = planned.eff.get(id);
      changes.push({
        kind: 'placement',
        opId: id,
        to: 'worker',
        parallelism: to.concurrency,
        reason: `${name} is a sync function that keeps the main thread busy ${formatSeconds(om.selfPerRoot)} per element; in ${to.concurrency} worker thread${to.concurrency === 1 ? '' : 's'} the main thread keeps ≈ ${formatSeconds((pe?.main ?? 0) - (pe?.overhead ?? 0))} per element for dispatch and the op allows ${afterText}.`,
      });
    } else if (from.concurrency !== to.concurrency) {
      changes.push({
        kind: 'parallelism',
        opId: id,
        from: om.op.knobs.parallelism,
        to: to.concurrency,
        reason: `${before ? before.detail : `${name} runs with ${from.concurrency} in flight.`} With ${to.concurrency}: ${afterText}.`,
      });
    }
    if (to.prefetchAfter && !from.prefetchAfter) {
      changes.push({
        kind: 'prefetch',
        opId: id,
        existing: false,
        size: to.prefetchAfter,
        reason: `${name} waits for its elements and nothing overlaps that wait with the work after it; a prefetch buffer after it lets them run at the same time.`,
      });
    }
    if (cache && cache.opId === id) {
      changes.push({
        kind: 'cache',
        opId: id,
        estimatedBytes: cache.estimatedBytes,
        reason: `${name}'s output is deterministic and ${cache.reread}; ${cache.cardinality.toLocaleString('en-US')} elements (${cache.cardinalitySource}) × ${formatBytes(cache.bytesPerElement)} ≈ ${formatBytes(cache.estimatedBytes)} fits in ${Math.round(C.cacheMemoryFraction * 100)}% of the ${formatBytes(r.memoryBudgetBytes)} memory budget. After the first pass it saves ${formatSeconds(cache.savedPerRoot)} of work per element.`,
      });
    }
  }

  const end = endPrefetch(m, chosen, planned);
  if (end) {
    changes.push(end.change);
    if (end.change.existing) chosen[end.change.opId].bufferSize = end.change.size;
    else chosen[end.change.opId].prefetchAfter = end.change.size;
  }

  const final = changes.length > 0 ? evaluate(m, chosen, r.cores) : current;
  return {
    changes,
    currentRate: m.measuredRate,
    predictedRate: changes.length > 0 ? final.bound * efficiencyFor(m, current, final) : m.measuredRate,
    predictedBound: final.bound,
    predictedBottleneck: bottleneckOf(m, final),
    overrides: toOverrides(m, changes),
    notes: notes.length > 0 ? notes : undefined,
  };
}

/** A prefetch after the last operator, sized to hold what the pipeline delivers while its slowest op works on one element. */
function endPrefetch(m: Measured, cfg: Config, ev: Evaluation): { change: PrefetchChange } | undefined {
  const root = m.ops.get(m.rootId);
  if (!root || !Number.isFinite(ev.bound)) return undefined;
  const slow = slowestLatency(m, cfg, ev);
  const needed = Math.min(C.maxPrefetch, Math.max(C.minPrefetch, Math.ceil(ev.bound * slow.seconds)));
  const slowName = slow.id ? describeOp((m.ops.get(slow.id) ?? root).op) : 'the slowest operator';
  const why = `At ${formatRate(ev.bound)}, ${slowName} takes ${formatSeconds(slow.seconds)} per element, so ${needed} element${needed === 1 ? '' : 's'} ready at the end of the pipeline keep the consumer from waiting on it.`;
  if (root.op.kind === 'prefetch') {
    const have = cfg[m.rootId]?.bufferSize ?? root.op.knobs.bufferSize ?? 1;
    if (have >= C.minPrefetch && needed <= have * (1 + C.hysteresis)) return undefined;
    if (needed <= have) return undefined;
    return { change: { kind: 'prefetch', opId: m.rootId, existing: true, from: have, size: needed, reason: why } };
  }
  return { change: { kind: 'prefetch', opId: m.rootId, existing: false, size: needed, reason: why } };
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
        at(ch.opId).cache = 'memory';
        break;
    }
  }
  return out;
}
