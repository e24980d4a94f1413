/**
 * Giving threads and calls in flight to the operators that need them: a greedy search that adds
 * one unit to whatever binds until nothing a knob can change binds any more, then a hedge so that
 * no cheap operator is left just at the predicted rate.
 */
import { cloneConfig, insertedAfter, outerOf, type Config } from './config';
import { MODEL_CONSTANTS as C } from './constants';
import { coreBudget, type Contention } from './cores';
import { workerOpRate } from './demands';
import { evaluate } from './evaluate';
import type { Evaluation } from './evaluation';
import { enclosingInterleave } from './graph';
import { can } from './knobs';
import type { Measured, OpMeasure } from './measured';
import { shardCap } from './readers';

/** Limits the planner works within. */
export interface Limits {
  /** The most cores worth planning threads for. */
  cores: number;
  /** Other work competing for the cores, when measured: CPU bounds then follow a fair share. */
  contention?: Contention;
  /** Largest pool per operator. */
  maxWorkers: number;
  /**
   * Worker threads across all operators. Pools of different operators are rarely all busy at
   * once, so this is twice the cores; the CPU bound, not this budget, is what stops the search
   * when the cores are full.
   */
  workerBudget: number;
  maxConcurrency: number;
  /** Stop adding once the bound reaches this root rate (`ModelOptions.targetRate`). */
  targetRate?: number;
}

/** The most threads or calls in flight `om` can use: the planner's limit, and a reader's shards. */
function capOf(om: OpMeasure | undefined, limit: number): number {
  return om ? Math.min(limit, shardCap(om)) : limit;
}

function workersUsed(cfg: Config): number {
  let n = 0;
  for (const c of Object.values(cfg)) if (c.placement === 'worker') n += c.concurrency;
  return n;
}

/**
 * Raise the inner datasets the interleave around `id` pulls at once to `want` (its cycleLength and
 * parallelism together: the smaller of the two is what counts), at most `maxConcurrency` and at
 * most the interleave's inputs when their number is known. False when it cannot grow.
 */
function raiseOuter(m: Measured, cfg: Config, id: string, ratio: number, lim: Limits): boolean {
  const outerId = enclosingInterleave(m, id);
  const outer = outerId !== undefined ? m.ops.get(outerId) : undefined;
  if (outerId === undefined || !cfg[outerId] || !outer || !can(outer.op, 'cycleLength') || !can(outer.op, 'parallelism')) return false;
  const o = outerOf(cfg, outerId);
  const now = Math.max(1, Math.min(o.cycle, o.parallelism));
  const input = m.ops.get(m.ops.get(outerId)?.op.inputs[0] ?? '');
  const inputs = input?.op.cardinality;
  const cap = Math.min(lim.maxConcurrency, inputs !== undefined && Number.isFinite(inputs) && inputs >= 1 ? inputs : Infinity);
  if (now >= cap) return false;
  const want = Math.min(cap, Math.max(now + 1, Math.ceil(now * ratio)));
  const c = cfg[outerId];
  c.cycleLength = Math.max(o.cycle, want);
  c.concurrency = Math.max(o.parallelism, want);
  return true;
}

/** One greedy step on the binding bound; false when no knob can relieve it. */
function step(m: Measured, cfg: Config, ev: Evaluation, lim: Limits): boolean {
  const b = ev.binding;
  // On a contended machine the cores a configuration gets grow with its busy threads: when all
  // cores bind, one more thread for the heaviest worker op wins a larger share.
  if (b.resource === 'cpu' && lim.contention) {
    let heaviest: string | undefined;
    for (const [opId, e] of ev.eff) if (cfg[opId]?.placement === 'worker' && e.worker > (heaviest ? (ev.eff.get(heaviest)?.worker ?? 0) : 0)) heaviest = opId;
    const c = heaviest ? cfg[heaviest] : undefined;
    if (!c || c.concurrency >= capOf(m.ops.get(heaviest ?? ''), lim.maxWorkers) || workersUsed(cfg) >= lim.workerBudget) return false;
    c.concurrency += 1;
    return true;
  }
  const id = b.opId;
  if (id === undefined) return false;
  const om = m.ops.get(id);
  const c = cfg[id];
  if (!om || !c) return false;
  if (b.resource === 'parallel-op') {
    if (c.concurrency >= capOf(om, lim.maxWorkers) || workersUsed(cfg) >= lim.workerBudget) return false;
    c.concurrency += 1;
    return true;
  }
  if (b.resource === 'latency') {
    // Jump straight to the concurrency that lifts this op to the next bound (k scales the rate linearly).
    const next = ev.bounds.find((o) => o.opId !== id && o.rate > b.rate * (1 + 1e-9));
    // An op inside an interleave's inner datasets that cannot take more calls itself (a source
    // read record by record) gets more of its instances pulled at once: the interleave's lever.
    const cap = capOf(om, lim.maxConcurrency);
    if (!om.tunable || c.concurrency >= cap) return raiseOuter(m, cfg, id, next ? next.rate / b.rate : Infinity, lim);
    // (Latency that grows with the calls does not scale so: the plan lowers such an op afterwards
    // to the fewest calls that keep the bound, plan.ts `trimQueued`.)
    const want = next ? Math.ceil((c.concurrency * next.rate) / b.rate) : cap;
    c.concurrency = Math.min(cap, Math.max(c.concurrency + 1, want));
    return true;
  }
  if (b.resource === 'sequential-op') {
    // A chain that runs in series: decouple the member that waits the longest.
    const segment = ev.segmentOf.get(id);
    let waiter: string | undefined;
    let longest = 0;
    for (const [other, key] of ev.segmentOf) {
      const w = ev.eff.get(other)?.wait ?? 0;
      if (key === segment && w > longest) {
        waiter = other;
        longest = w;
      }
    }
    if (waiter === undefined) return false;
    const wm = m.ops.get(waiter);
    const wc = cfg[waiter];
    if (!wm || !wc) return false;
    // A chain inside inner datasets: pull more of them at once before anything inside them.
    if (!wm.tunable && enclosingInterleave(m, waiter) !== undefined) {
      const next = ev.bounds.find((o) => o.rate > b.rate * (1 + 1e-9) && ev.segmentOf.get(o.opId ?? '') !== segment);
      if (raiseOuter(m, cfg, waiter, next ? next.rate / b.rate : 2, lim)) return true;
    }
    if (wc.placement === 'worker') {
      if (wc.concurrency >= Math.min(2, capOf(wm, lim.maxWorkers)) || workersUsed(cfg) >= lim.workerBudget) return false;
      wc.concurrency = 2;
      return true;
    }
    if (wm.tunable && wc.concurrency < 2 && capOf(wm, lim.maxConcurrency) >= 2) {
      wc.concurrency = 2;
      return true;
    }
    // Not tunable (an async source, a line reader): a prefetch after it lets the rest overlap its waits.
    if (!wc.prefetchAfter && waiter !== m.rootId && !insertedAfter(m, waiter, 'prefetch') && can(wm.op, 'prefetch')) {
      wc.prefetchAfter = C.minPrefetch;
      return true;
    }
    return false;
  }
  return false;
}

/** The best configuration the greedy search finds from `start` (never worse than `start`). */
export function allocate(m: Measured, start: Config, lim: Limits): Config {
  const cfg = cloneConfig(start);
  let best = cloneConfig(cfg);
  let bestBound = evaluate(m, cfg, coreBudget(lim)).bound;
  for (let round = 0; round < C.maxAllocationRounds; round++) {
    const ev = evaluate(m, cfg, coreBudget(lim));
    // Keep a configuration only when it gains something real, so that a knob whose returns fade
    // (latency that grows with concurrency) is not pushed to its limit for crumbs.
    if (ev.bound > bestBound * (1 + C.minStepGain)) {
      best = cloneConfig(cfg);
      bestBound = ev.bound;
    }
    if ((lim.targetRate !== undefined && ev.bound >= lim.targetRate) || !step(m, cfg, ev, lim)) break;
  }
  const last = evaluate(m, cfg, coreBudget(lim)).bound;
  if (last > bestBound * (1 + C.minStepGain)) best = cloneConfig(cfg);
  return best;
}

/**
 * Headroom for operators that do not bind: each worker op and each awaiting op gets enough
 * threads / calls in flight (an awaiting op inside an interleave's inner datasets: enough of them
 * pulled at once) that its own bound is `hedgeFactor` above the pipeline's, as far as the limits
 * allow. This never lowers the bound (more threads or calls only raise op bounds) and
 * keeps a cheap operator from becoming the next bottleneck when its latency or cost varies.
 */
export function hedge(m: Measured, start: Config, lim: Limits): Config {
  const cfg = cloneConfig(start);
  const target = evaluate(m, cfg, coreBudget(lim)).bound * C.hedgeFactor;
  if (!Number.isFinite(target)) return cfg;
  for (const id of m.order) {
    const om = m.ops.get(id);
    const c = cfg[id];
    if (!om || !c) continue;
    if (c.placement === 'worker') {
      for (;;) {
        const e = evaluate(m, cfg, coreBudget(lim)).eff.get(id);
        const own = e ? workerOpRate(e, c.concurrency, Math.min(c.concurrency, lim.cores)) : Infinity;
        if (own >= target || c.concurrency >= capOf(om, lim.maxWorkers) || c.concurrency >= lim.cores || workersUsed(cfg) >= lim.workerBudget) break;
        c.concurrency += 1;
      }
    } else if (om.isAsync && om.tunable && om.service > 0 && om.latencySlope <= 0) {
      // (An op whose latency grows with concurrency gets no headroom: more calls only queue.)
      const calls = evaluate(m, cfg, coreBudget(lim)).eff.get(id)?.async ?? 0;
      if (calls <= 0) continue;
      const own = c.concurrency / (calls * om.service);
      if (own < target) c.concurrency = Math.min(capOf(om, lim.maxConcurrency), Math.ceil((c.concurrency * target) / own));
    } else if (om.isAsync && !om.tunable && om.latencySlope <= 0 && enclosingInterleave(m, id) !== undefined) {
      // An awaiting op inside inner datasets (a shard read record by record) that takes no more
      // calls itself: the interleave pulls more of its datasets at once, as cheap as calls in flight.
      const own = evaluate(m, cfg, coreBudget(lim)).opBound.get(id) ?? Infinity;
      if (Number.isFinite(own) && own > 0 && own < target) raiseOuter(m, cfg, id, target / own, lim);
    }
  }
  return cfg;
}
