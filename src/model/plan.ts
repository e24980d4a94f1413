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
import type { Bound, Plan, PlanChange } from '../shared/analysis';
import type { KnobOverride, Overrides } from '../shared/profile';
import { allocate, hedge, type Limits } from './allocate';
import { bottleneckOf } from './analyze';
import { chooseCache, type CacheCandidate } from './cache';
import { shardNotes } from './dataflow';
import { applyOverrides, cloneConfig, configFromProfile, outerOf, type Config } from './config';
import { MODEL_CONSTANTS as C } from './constants';
import { describeOp, formatBytes, formatRootRate, formatSeconds, perCallWords } from './describe';
import { coreBudget, type CoreBudget } from './cores';
import { evaluate } from './evaluate';
import type { Evaluation } from './evaluation';
import { enclosingInterleave } from './graph';
import { isFnOp } from './knobs';
import type { Measured, OpMeasure } from './measured';
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
  return m.order
    .map((id) => m.ops.get(id))
    .filter((om): om is OpMeasure => om !== undefined && om.op.placement === 'worker' && isFnOp(om.op) && om.op.fnAsync !== true && om.callsPerRoot > 0);
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

function opBoundDetail(ev: Evaluation, id: string): Bound | undefined {
  return ev.bounds.find((b) => b.opId === id && b.resource !== 'sequential-op') ?? ev.bounds.find((b) => b.opId === id);
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

/** The plan for a measured profile. */
export function planMeasured(m: Measured, r: Resolved): Plan {
  const base = configFromProfile(m);
  const { current, ranBound, baseline } = asRan(m, base, r);
  const notes: string[] = [];

  const cacheChoice = chooseCache(m, r.memoryBudgetBytes, r.randomOps);
  notes.push(...cacheChoice.notes);
  notes.push(...shardNotes(m));
  const withoutCache = searchMoves(m, base, r);
  let chosen = withoutCache;
  let caches: CacheCandidate[] = [];
  if (cacheChoice.candidates.length > 0) {
    const cachedStart = cloneConfig(base);
    for (const c of cacheChoice.candidates) cachedStart[c.opId].cacheAfter = true;
    const withCache = searchMoves(m, cachedStart, r);
    const picked = best(m, [withoutCache, withCache], r, C.minGain);
    if (picked.cfg === withCache) {
      chosen = withCache;
      caches = cacheChoice.candidates;
    }
  }
  const noGain = evaluate(m, chosen, coreBudget(r)).bound < current.bound * (1 + C.minGain);
  if (noGain) caches = [];
  const trimmed = trimQueued(m, noGain ? base : quiet(m, base, hedge(m, chosen, r), r), r);
  chosen = trimmed.cfg;
  // Calls in flight an earlier pass set, lowered below what the run had to where more mostly
  // wait: no gain of their own, so exempt from the gain rules below, but only for knobs a run was
  // given, not the source's.
  const trims = new Set([...trimmed.lowered].filter((id) => chosen[id]!.concurrency < base[id]!.concurrency && m.profile.run.overrides?.[id]?.parallelism !== undefined));

  const changes: PlanChange[] = [];
  const planned = evaluate(m, chosen, coreBudget(r));
  for (const id of m.order) {
    const om = m.ops.get(id);
    const from = base[id];
    const to = chosen[id];
    if (!om || !from || !to) continue;
    const name = describeOp(om.op);
    const before = opBoundDetail(current, id);
    const after = planned.opBound.get(id) ?? Infinity;
    const afterText = Number.isFinite(after) ? `at most ${formatRootRate(m, after)}` : 'no longer a limit';
    if (om.op.kind === 'interleave') {
      changes.push(...interleaveChanges(m, id, from, to, current, planned));
    } else if (from.placement === 'main' && to.placement === 'worker') {
      const pe = planned.eff.get(id);
      changes.push({
        kind: 'placement',
        opId: id,
        to: 'worker',
        parallelism: to.concurrency,
        reason: `${name} ${fnWords(om)} keeps the main thread busy ${formatSeconds(om.selfPerRoot)} per ${m.unit.one}${perCallWords(om.selfPerRoot, om.callsPerRoot)}${awaitedWords(om)}; in ${to.concurrency} worker thread${to.concurrency === 1 ? '' : 's'} the main thread keeps ≈ ${formatSeconds((pe?.main ?? 0) - (pe?.overhead ?? 0))} per ${m.unit.one} for dispatch${moveWords(om)} and the op allows ${afterText}.`,
      });
    } else if (from.placement === 'worker' && to.placement === 'main') {
      const pe = current.eff.get(id);
      const back = planned.eff.get(id);
      changes.push({
        kind: 'placement',
        opId: id,
        to: 'main',
        parallelism: 1,
        reason: `${name} runs in worker threads, where handing each element over and taking its result back keeps the main thread busy ${formatSeconds((pe?.main ?? 0) - (pe?.overhead ?? 0))} per ${m.unit.one}${(pe?.worker ?? 0) > 0 ? ` and the fn takes ${formatSeconds(pe!.worker)} of worker CPU` : ''} (measured in this run); on the main thread the fn itself needs ≈ ${formatSeconds((back?.main ?? 0) - (back?.overhead ?? 0))} per ${m.unit.one}${om.mainSeen ? ` (measured there in an earlier run${om.mainSeen.inputScale !== undefined ? `, scaled to this run's ${formatScale(om.mainSeen.inputScale)} the input bytes per call` : ''})` : ''}, and the op allows ${afterText}.`,
      });
    } else if (from.concurrency !== to.concurrency) {
      const fewer = to.concurrency < from.concurrency && om.latencySlope > 0;
      const fromBound = current.opBound.get(id) ?? Infinity;
      changes.push({
        kind: 'parallelism',
        opId: id,
        from: om.op.knobs.parallelism,
        to: to.concurrency,
        reason: `${before ? before.detail : `${name} runs with ${from.concurrency} in flight.`}${
          fewer
            ? ` Its latency grows with the calls in flight, so past ${to.concurrency} more calls mostly wait: with ${to.concurrency} the op allows ${afterText}, with ${from.concurrency} ${Number.isFinite(fromBound) ? `at most ${formatRootRate(m, fromBound)}` : 'no limit'}.`
            : ` With ${to.concurrency}: ${afterText}.`
        }`,
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
    const cache = caches.find((c) => c.opId === id);
    if (cache) {
      changes.push({
        kind: 'cache',
        opId: id,
        estimatedBytes: cache.estimatedBytes,
        reason: `${name}'s output is deterministic and ${cache.reread}; ${cache.cardinality.toLocaleString('en-US')} elements (${cache.cardinalitySource}) × ${formatBytes(cache.bytesPerElement)}${cache.bytesSource ? ` (${cache.bytesSource})` : ''} ≈ ${formatBytes(cache.estimatedBytes)} fits in ${Math.round(C.cacheMemoryFraction * 100)}% of the ${formatBytes(r.memoryBudgetBytes)} memory budget. After the first pass it saves ${formatSeconds(cache.savedPerRoot)} of work per ${m.unit.one}.`,
      });
    }
  }

  // Each change must carry its weight, and the whole must be a predicted gain: drop, in order,
  // every change whose removal does not lower the prediction (it is noise the verification would
  // only spend time on), then propose nothing unless what is left beats the pipeline as it ran
  // (its measured rate; for a target machine, its prediction there) by `minGain`.
  const rateOf = (subset: PlanChange[]) => predictChanges(m, base, current, subset, coreBudget(r), ranBound);
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
  if (cacheChoice.randomRefusal) {
    const above = kept.filter((c) => c.kind === 'cache').map((c) => m.ops.get(c.opId)).filter((om) => om !== undefined);
    const where = above.map((om) => `after ${describeOp(om.op)}`);
    const listed = where.length <= 1 ? where.join('') : `${where.slice(0, -1).join(', ')} and ${where[where.length - 1]}`;
    notes.push(`${cacheChoice.randomRefusal}, so the plan ${above.length > 0 ? `caches ${listed}, above it` : 'proposes no cache'}.`);
  }
  const withEffects = kept.map((ch) => ({ ...ch, predictedRate: rateOf([ch]).rate }));
  const final = kept.length > 0 ? keptRate.ev : current;
  return {
    changes: withEffects,
    currentRate: m.measuredRate,
    predictedRate: kept.length > 0 ? keptRate.rate : baseline,
    predictedBound: final.bound,
    predictedBottleneck: bottleneckOf(m, final),
    overrides: toOverrides(m, kept),
    notes: notes.length > 0 ? notes : undefined,
    cores: r.cores,
    coresAvailable: r.coresAvailable,
    coresNote: r.coresNote,
  };
}

/** "1.7×" for a ratio above 1, "0.6×" below: how many times another run's. */
function formatScale(x: number): string {
  return `${Number(x.toPrecision(2))}×`;
}

/** What moving measured, for a placement's reason: ", measured: cloning 4 µs in and 4 µs out per call, the fn 1.4× its main-thread CPU in a worker". */
/** "is a sync function that", or for an async fn that works more than it waits, "is an async function whose work". */
function fnWords(om: OpMeasure): string {
  return om.move?.awaited ? 'is an async function whose work' : 'is a sync function that';
}

/** What awaiting an async fn's calls one at a time measured: the work after its awaits, and its waits. */
function awaitedWords(om: OpMeasure): string {
  const a = om.move?.awaited;
  if (!a) return '';
  // A wait under a hundredth of the work is the probe's own turn of the event loop, not the fn's.
  const wait = a.wait >= 0.01 * a.afterAwait && a.wait > 0 ? `, where each also waits ${formatSeconds(a.wait)}` : '';
  return `, ${formatSeconds(a.afterAwait)} of each call after its awaits, as awaiting calls one at a time measured${wait}`;
}

function moveWords(om: OpMeasure): string {
  const mv = om.move;
  if (!mv) return '';
  const ratio = Math.abs(mv.workerCpuRatio - 1) >= 0.05 ? `, the fn ${Number(mv.workerCpuRatio.toFixed(2))}× its main-thread CPU in a worker` : '';
  const scaled = mv.sizeScale !== undefined ? `, scaled from sampled elements ${formatScale(1 / mv.sizeScale)} the window's size` : '';
  return ` (measured: cloning ${formatSeconds(mv.cloneIn)} in and ${formatSeconds(mv.cloneOut)} out per call${scaled}${ratio})`;
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

/**
 * An interleave's levers: its cycleLength (inner datasets open at once) and parallelism (pulled at
 * once); the smaller of the two multiplies what the operators inside its inner datasets deliver.
 */
function interleaveChanges(m: Measured, id: string, from: Config[string], to: Config[string], current: Evaluation, planned: Evaluation): PlanChange[] {
  const om = m.ops.get(id);
  if (!om) return [];
  const a = outerOf({ [id]: from }, id);
  const b = outerOf({ [id]: to }, id);
  if (a.cycle === b.cycle && a.parallelism === b.parallelism) return [];
  const name = describeOp(om.op);
  const inner = m.order.filter((o) => enclosingInterleave(m, o) === id);
  const innerBound = (ev: Evaluation) => Math.min(...inner.map((o) => ev.opBound.get(o) ?? Infinity));
  const binding = current.bounds.find((x) => x.opId !== undefined && inner.includes(x.opId));
  const after = innerBound(planned);
  const why = `${binding ? `${binding.detail} ` : ''}${name} pulls ${Math.min(a.cycle, a.parallelism)} of its inner datasets at once (cycleLength ${a.cycle}, parallelism ${a.parallelism}); with cycleLength ${b.cycle} and parallelism ${b.parallelism} it pulls ${Math.min(b.cycle, b.parallelism)}, and the operators inside allow ${Number.isFinite(after) ? `at most ${formatRootRate(m, after)}` : 'any rate'}.`;
  const out: PlanChange[] = [];
  if (a.cycle !== b.cycle) out.push({ kind: 'cycleLength', opId: id, from: om.op.knobs.cycleLength, to: b.cycle, reason: why });
  // A written parallelism of 'auto' follows the cycle length: the cycleLength change is enough.
  const follows = om.op.knobs.parallelism === 'auto' && b.parallelism === b.cycle;
  if (a.parallelism !== b.parallelism && !follows) out.push({ kind: 'parallelism', opId: id, from: om.op.knobs.parallelism, to: b.parallelism, reason: why });
  return out;
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
        at(ch.opId).cache = 'memory';
        break;
      case 'cycleLength':
        at(ch.opId).cycleLength = ch.to;
        break;
    }
  }
  return out;
}
