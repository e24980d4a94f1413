/**
 * A plan's changes as sentences: for each op whose knobs differ between the configuration the
 * profile ran with and the one chosen, the change and why, with what the op allows after it.
 */
import type { Bound, PlanChange } from '../shared/analysis';
import type { CacheCandidate } from './cache';
import { outerOf, type Config } from './config';
import { MODEL_CONSTANTS as C } from './constants';
import { describeOp, formatBytes, formatRootRate, formatSeconds, knobName, perCallWords } from './describe';
import type { Evaluation } from './evaluation';
import { enclosingInterleave } from './graph';
import type { Measured, OpMeasure } from './measured';

/** Both configurations and their evaluations: what a change's reason compares. */
interface Between {
  m: Measured;
  base: Config;
  chosen: Config;
  current: Evaluation;
  planned: Evaluation;
}

function opBoundDetail(ev: Evaluation, id: string): Bound | undefined {
  return ev.bounds.find((b) => b.opId === id && b.resource !== 'sequential-op') ?? ev.bounds.find((b) => b.opId === id);
}

/** "1.7×" for a ratio above 1, "0.6×" below: how many times another run's. */
function formatScale(x: number): string {
  return `${Number(x.toPrecision(2))}×`;
}

/** "is a sync function that", for an async fn that works more than it waits "is an async function whose work", for a reader "decompresses and parses on the main thread, which". */
function fnWords(om: OpMeasure): string {
  if (om.reader) return 'decompresses and parses on the main thread, which';
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

/** What moving measured, for a placement's reason: " (measured: cloning 4 µs in and 4 µs out per call, the fn 1.4× its main-thread CPU in a worker)". */
function moveWords(om: OpMeasure): string {
  const mv = om.move;
  if (!mv) return '';
  const ratio = Math.abs(mv.workerCpuRatio - 1) >= 0.05 ? `, the fn ${Number(mv.workerCpuRatio.toFixed(2))}× its main-thread CPU in a worker` : '';
  const scaled = mv.sizeScale !== undefined ? `, scaled from sampled elements ${formatScale(1 / mv.sizeScale)} the window's size` : '';
  return ` (measured: cloning ${formatSeconds(mv.cloneIn)} in and ${formatSeconds(mv.cloneOut)} out per call${scaled}${ratio})`;
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

/** What the op allows under the chosen configuration, as words. */
function afterWords(b: Between, id: string): string {
  const after = b.planned.opBound.get(id) ?? Infinity;
  return Number.isFinite(after) ? `at most ${formatRootRate(b.m, after)}` : 'no longer a limit';
}

function toWorker(b: Between, om: OpMeasure, concurrency: number): PlanChange {
  const { m } = b;
  const id = om.op.id;
  const pe = b.planned.eff.get(id);
  return {
    kind: 'placement',
    opId: id,
    to: 'worker',
    parallelism: concurrency,
    reason: `${describeOp(om.op)} ${fnWords(om)} keeps the main thread busy ${formatSeconds(om.selfPerRoot)} per ${m.unit.one}${perCallWords(om.selfPerRoot, om.callsPerRoot)}${awaitedWords(om)}; in ${concurrency} worker thread${concurrency === 1 ? '' : 's'} the main thread keeps ≈ ${formatSeconds((pe?.main ?? 0) - (pe?.overhead ?? 0))} per ${m.unit.one} for dispatch${moveWords(om)} and the op allows ${afterWords(b, id)}.`,
  };
}

function toMain(b: Between, om: OpMeasure): PlanChange {
  const { m } = b;
  const id = om.op.id;
  const pe = b.current.eff.get(id);
  const back = b.planned.eff.get(id);
  return {
    kind: 'placement',
    opId: id,
    to: 'main',
    parallelism: 1,
    reason: `${describeOp(om.op)} runs in worker threads, where handing each element over and taking its result back keeps the main thread busy ${formatSeconds((pe?.main ?? 0) - (pe?.overhead ?? 0))} per ${m.unit.one}${(pe?.worker ?? 0) > 0 ? ` and the fn takes ${formatSeconds(pe!.worker)} of worker CPU` : ''} (measured in this run); on the main thread the fn itself needs ≈ ${formatSeconds((back?.main ?? 0) - (back?.overhead ?? 0))} per ${m.unit.one}${om.mainSeen ? ` (measured there in an earlier run${om.mainSeen.inputScale !== undefined ? `, scaled to this run's ${formatScale(om.mainSeen.inputScale)} the input bytes per call` : ''})` : ''}, and the op allows ${afterWords(b, id)}.`,
  };
}

function parallelismChange(b: Between, om: OpMeasure, from: number, to: number): PlanChange {
  const { m } = b;
  const id = om.op.id;
  const before = opBoundDetail(b.current, id);
  const afterText = afterWords(b, id);
  const fewer = to < from && om.latencySlope > 0;
  const fromBound = b.current.opBound.get(id) ?? Infinity;
  return {
    kind: 'parallelism',
    opId: id,
    from: om.op.knobs.parallelism,
    to,
    reason: `${before ? before.detail : `${describeOp(om.op)} runs with ${from} in flight.`}${
      fewer
        ? ` Its latency grows with the calls in flight, so past ${to} more calls mostly wait: with ${to} the op allows ${afterText}, with ${from} ${Number.isFinite(fromBound) ? `at most ${formatRootRate(m, fromBound)}` : 'no limit'}.`
        : ` With ${to}: ${afterText}.`
    }`,
  };
}

function cacheChange(m: Measured, om: OpMeasure, cache: CacheCandidate, memoryBudgetBytes: number): PlanChange {
  const size = `${cache.cardinality.toLocaleString('en-US')} elements (${cache.cardinalitySource}) × ${formatBytes(cache.bytesPerElement)}${cache.bytesSource ? ` (${cache.bytesSource})` : ''} ≈ ${formatBytes(cache.estimatedBytes)}`;
  if (cache.path !== undefined) {
    return {
      kind: 'cache',
      opId: om.op.id,
      estimatedBytes: cache.estimatedBytes,
      path: cache.path,
      reason: `${describeOp(om.op)}'s output is deterministic and ${cache.reread}; ${size} is more than ${Math.round(C.cacheMemoryFraction * 100)}% of the ${formatBytes(memoryBudgetBytes)} memory budget, so it goes on disk at ${cache.path}. After the first pass it reads ${formatSeconds(cache.diskReadPerRoot ?? 0)} per ${m.unit.one} (predicted: deserialising and the disk's measured bandwidth) instead of recomputing ${formatSeconds(cache.savedPerRoot)}.`,
    };
  }
  return {
    kind: 'cache',
    opId: om.op.id,
    estimatedBytes: cache.estimatedBytes,
    reason: `${describeOp(om.op)}'s output is deterministic and ${cache.reread}; ${size} fits in ${Math.round(C.cacheMemoryFraction * 100)}% of the ${formatBytes(memoryBudgetBytes)} memory budget. After the first pass it saves ${formatSeconds(cache.savedPerRoot)} of work per ${m.unit.one}.`,
  };
}

/** The changes from `b.base` to `b.chosen`, op by op in profile order, with the caches chosen. */
export function changesBetween(b: Between, caches: CacheCandidate[], memoryBudgetBytes: number): PlanChange[] {
  const { m } = b;
  const changes: PlanChange[] = [];
  for (const id of m.order) {
    const om = m.ops.get(id);
    const from = b.base[id];
    const to = b.chosen[id];
    if (!om || !from || !to) continue;
    if (om.op.kind === 'interleave') changes.push(...interleaveChanges(m, id, from, to, b.current, b.planned));
    else if (from.placement === 'main' && to.placement === 'worker') changes.push(toWorker(b, om, to.concurrency));
    else if (from.placement === 'worker' && to.placement === 'main') changes.push(toMain(b, om));
    else if (from.concurrency !== to.concurrency) changes.push(parallelismChange(b, om, from.concurrency, to.concurrency));
    if (to.prefetchAfter && !from.prefetchAfter) {
      changes.push({
        kind: 'prefetch',
        opId: id,
        existing: false,
        size: to.prefetchAfter,
        reason: `${describeOp(om.op)} waits for its elements and nothing overlaps that wait with the work after it; ${knobName(om.op, 'prefetch') === 'prefetch' ? 'a prefetch buffer after it' : `a buffer of its own (${knobName(om.op, 'prefetch')})`} lets them run at the same time.`,
      });
    }
    const cache = caches.find((c) => c.opId === id);
    if (cache) changes.push(cacheChange(m, om, cache, memoryBudgetBytes));
  }
  return changes;
}
