/**
 * The bounds of one configuration: Plumber's operational analysis with Node's main thread as a
 * resource of its own. Each bound is the highest root rate one resource allows; the pipeline's
 * bound is their minimum.
 *
 * Assumptions (calibrate with real runs; those about each op's demands are in ./demands.ts):
 * - Operators run in series unless something decouples them: a prefetch buffer, or an operator
 *   on plumber-data's parallel engine (async maps, worker maps, file reads: they pull their input
 *   ahead). Ops in one such segment add their main-thread time and their waits (a source that
 *   awaits off the engine); that sum caps the rate too.
 * - Worker threads get at most one core each; all threads together get `cores`.
 * - An awaiting op with k calls in flight and latency L per call delivers k / L calls per second
 *   (Little's law); on libuv, calls also share `machine.libuvThreads` pool threads.
 */
import type { Bound, Resource } from '../shared/analysis';
import type { Config } from './config';
import { coresGot, type Contention, type CoreBudget } from './cores';
import { clusterBounds } from './cluster';
import { effectiveDemands, workerOpRate } from './demands';
import { describeOp, formatRootRate, formatSeconds, listWords, perCallWords } from './describe';
import type { Effective, Evaluation } from './evaluation';
import { isFnOp } from './knobs';
import { latencyAt, serviceAt } from './latency';
import { keepsOrder, latencySpread, orderedShare, tailWords } from './tail';
import type { Measured, OpMeasure } from './measured';

/** Resources a knob cannot relieve come first among equal bounds: then the planner stops at them. */
const tieOrder: Resource[] = ['cpu', 'disk', 'libuv', 'main-thread', 'source', 'parallel-op', 'latency', 'sequential-op'];

/** Where `id`'s segment ends: the nearest decoupling point downstream of it. */
function segmentKey(m: Measured, cfg: Config, eff: Map<string, Effective>, id: string): string {
  let cur = id;
  for (let guard = 0; guard <= m.order.length; guard++) {
    if ((cfg[cur]?.prefetchAfter ?? 0) > 0) return `after:${cur}`;
    if (cur === m.rootId) return 'root';
    const next = m.consumers.get(cur)?.[0];
    if (next === undefined) return `orphan:${cur}`;
    const nm = m.ops.get(next);
    const decouples = nm?.op.kind === 'prefetch' ? (cfg[next]?.bufferSize ?? 1) > 0 : eff.get(next)?.decoupler === true;
    if (decouples) return `in:${next}`;
    cur = next;
  }
  return `cycle:${id}`;
}

function label(m: Measured, id: string): string {
  const om = m.ops.get(id);
  return om ? describeOp(om.op) : id;
}

/** "map(a) 12.1 ms, map(b) 3.4 ms and 0.2 ms in 3 other operators". */
function breakdown(m: Measured, parts: Array<[string, number]>, top = 3): string {
  const sorted = parts.filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]);
  const shown = sorted.slice(0, top).map(([id, v]) => `${label(m, id)} ${formatSeconds(v)}`);
  const rest = sorted.slice(top);
  if (rest.length > 0) {
    const sum = rest.reduce((s, [, v]) => s + v, 0);
    shown.push(`${formatSeconds(sum)} in ${rest.length} other operator${rest.length > 1 ? 's' : ''}`);
  }
  return listWords(shown);
}

/** Busy threads a configuration runs: the main thread and every worker thread (a fused map runs in the threads of the map before it). */
function busyThreads(cfg: Config): number {
  let n = 1;
  for (const c of Object.values(cfg)) if (c.placement === 'worker' && c.fused !== true) n += c.concurrency;
  return n;
}

/**
 * The cores a configuration gets on a contended machine, and its busy threads. A thread competes
 * for a core only while it is busy: a main thread that only dispatches to workers is not a whole
 * busy thread. So the busy threads (each thread's busy fraction, at the rate the configuration
 * reaches) and the cores they get are found together, by a few rounds of fixed-point iteration
 * from "every thread busy". The CPU of libuv's and V8's own threads (reads, GC, the compiler) is
 * busy threads too: the CPU bound charges it to the cores, so the cores must count its threads,
 * or a configuration whose busy share dips below its cores is given fewer cores, which lowers its
 * rate and its busy share again, down to one core.
 */
function contendedCores(budget: Contention, cfg: Config, mainSum: number, workerSum: number, cpuSum: number): { cores: number; threads: number } {
  const workers = busyThreads(cfg) - 1;
  const otherSum = Math.max(0, cpuSum - mainSum - workerSum);
  // From above: every thread busy, and other threads on every core (the iteration settles on the
  // largest consistent share; from below, a CPU-bound configuration would stay at its start).
  let threads = workers + 1 + (otherSum > 0 ? budget.machine : 0);
  let cores = coresGot(budget, threads);
  for (let round = 0; round < 16; round++) {
    const per = Math.min(1, cores / Math.max(1, threads));
    const rate = Math.min(mainSum > 0 ? per / mainSum : Infinity, cpuSum > 0 ? cores / cpuSum : Infinity, workers > 0 && workerSum > 0 ? (workers * per) / workerSum : Infinity);
    if (!Number.isFinite(rate)) break;
    const busy = Math.min(1, (rate * mainSum) / per) + Math.min(workers, (rate * workerSum) / per) + Math.min(budget.machine, (rate * otherSum) / per);
    const next = Math.max(1, busy);
    if (Math.abs(next - threads) < 1e-3) break;
    threads = next;
    cores = coresGot(budget, threads);
  }
  return { cores, threads: Math.max(1, threads) };
}

/**
 * Cores as a sentence: "2 cores", "1.3 cores (a fair share beside other work)", or, where the
 * kernel shares cores program by program, "1 core (what other programs leave)". Where other work
 * would leave more than the configuration's busy threads can use, it is the threads that limit:
 * "1 core (one per busy thread; other programs leave 1.9)".
 */
function coresWords(n: number, budget: CoreBudget): string {
  const x = Number(n.toPrecision(2));
  let why = '';
  if (typeof budget !== 'number') {
    const left = coresGot(budget, budget.machine);
    if (n < left - 0.05) why = ` (one per busy thread; ${'group' in budget ? 'other programs leave' : 'a fair share beside other work is'} ${Number(left.toPrecision(2))})`;
    else why = 'group' in budget ? ' (what other programs leave)' : ' (a fair share beside other work)';
  }
  return `${x} core${x === 1 ? '' : 's'}${why}`;
}

/** A configuration's demands summed over its ops, per root element. */
interface Totals {
  main: number;
  /** Every thread's CPU: main, worker and other threads, and other-thread CPU no op was charged with. */
  cpu: number;
  worker: number;
  other: number;
  disk: number;
  /** Seconds per root element calls hold a libuv pool thread. */
  libuv: number;
}

/** The cores a configuration gets, and the share of a core each of its busy threads gets. */
interface Share {
  budget: CoreBudget;
  /** Other work competes for the cores (the budget is a measured contention, not whole cores). */
  shared: boolean;
  cores: number;
  threads: number;
  /** The share of a core one thread gets: 1 unless other work competes for the cores. */
  perThread: number;
}

function totalsOf(m: Measured, cfg: Config, eff: Map<string, Effective>): Totals {
  const t: Totals = { main: 0, cpu: m.unattributedOtherCpuPerRoot, worker: 0, other: m.unattributedOtherCpuPerRoot, disk: 0, libuv: 0 };
  for (const [id, e] of eff) {
    t.main += e.main;
    t.worker += e.worker;
    t.other += e.other;
    t.cpu += e.main + e.worker + e.other;
    t.disk += e.disk;
    const om = m.ops.get(id) as OpMeasure;
    if (cfg[id].placement === 'libuv') t.libuv += e.async * serviceAt(om, cfg[id].concurrency);
  }
  return t;
}

function shareOf(budget: CoreBudget, cfg: Config, t: Totals): Share {
  if (typeof budget === 'number') return { budget, shared: false, cores: budget, threads: busyThreads(cfg), perThread: 1 };
  const { cores, threads } = contendedCores(budget, cfg, t.main, t.worker, t.cpu);
  return { budget, shared: true, cores, threads, perThread: Math.min(1, cores / threads) };
}

/**
 * The main thread's bound. Each op's own time is named; the unclaimed runtime overhead is shown as
 * one sum, because it is only shared out to ops (by elements and own time), not measured at them.
 */
function mainThreadBound(m: Measured, eff: Map<string, Effective>, t: Totals, s: Share): Bound[] {
  if (!(t.main > 0)) return [];
  const mainParts: Array<[string, number]> = [...eff].map(([id, e]) => [id, e.main - e.overhead]);
  const overheadSum = [...eff.values()].reduce((sum, e) => sum + e.overhead, 0);
  // (A nanosecond an element or less is rounding, not overhead.)
  const overheadText = overheadSum >= 1e-9 ? `${formatSeconds(overheadSum)} of runtime overhead no operator claimed (promises, timers, GC)` : '';
  // When no operator claimed any of it (a cache serving the pipeline, say), the overhead is all there is.
  const claimed = breakdown(m, mainParts);
  const why = claimed && overheadText ? `${claimed} and ${overheadText}` : claimed || overheadText;
  const oneThread = s.shared ? `one thread's ${Math.round(s.perThread * 100)}% of a core` : 'one thread';
  return [
    {
      resource: 'main-thread',
      rate: s.perThread / t.main,
      detail: `The main thread is busy ${formatSeconds(t.main)} per ${m.unit.one}${why ? ` (${why})` : ''}; ${oneThread} gives at most ${formatRootRate(m, s.perThread / t.main)}.`,
    },
  ];
}

/** The bounds every op shares: the main thread, all cores, the disk and libuv's pool. */
function machineBounds(m: Measured, eff: Map<string, Effective>, t: Totals, s: Share): Bound[] {
  const bounds = mainThreadBound(m, eff, t, s);
  const machine = m.profile.machine;
  if (t.cpu > 0) {
    const parts = [`main thread ${formatSeconds(t.main)}`];
    if (t.worker > 0) parts.push(`worker threads ${formatSeconds(t.worker)}`);
    if (t.other > 0) parts.push(`libuv and other threads ${formatSeconds(t.other)}`);
    bounds.push({
      resource: 'cpu',
      rate: s.cores / t.cpu,
      detail: `All threads together need ${formatSeconds(t.cpu)} of CPU per ${m.unit.one} (${listWords(parts)}); ${coresWords(s.cores, s.budget)} give${Number(s.cores.toPrecision(2)) === 1 ? 's' : ''} at most ${formatRootRate(m, s.cores / t.cpu)}.`,
    });
  }
  if (t.disk > 0 && machine.diskReadBytesPerSec && machine.diskReadBytesPerSec > 0) {
    const rate = machine.diskReadBytesPerSec / t.disk;
    bounds.push({
      resource: 'disk',
      rate,
      detail: `Each ${m.unit.one} reads ${Math.round(t.disk).toLocaleString('en-US')} bytes from disk; at the measured ${(machine.diskReadBytesPerSec / 1e6).toFixed(0)} MB/s that allows at most ${formatRootRate(m, rate)}.`,
    });
  }
  if (t.libuv > 0) {
    const rate = machine.libuvThreads / t.libuv;
    bounds.push({
      resource: 'libuv',
      rate,
      detail: `File and native work holds a libuv pool thread ${formatSeconds(t.libuv)} per ${m.unit.one}; ${machine.libuvThreads} pool threads (UV_THREADPOOL_SIZE) give at most ${formatRootRate(m, rate)}.`,
    });
  }
  return bounds;
}

/** A worker-placed op's bound: each busy thread gets an equal share of the cores the configuration gets. */
function workerBound(m: Measured, id: string, e: Effective, concurrency: number, s: Share): Bound {
  const om = m.ops.get(id) as OpMeasure;
  const p = s.shared ? (concurrency * s.cores) / s.threads : Math.min(concurrency, s.cores);
  const rate = workerOpRate(e, concurrency, p);
  const est =
    om.op.placement === 'main' ? ' (estimated from its main-thread time)' : om.workerUnseenPerRoot > 0 ? `, ${formatSeconds(om.workerUnseenPerRoot * e.factor)} of it process CPU that the per-task clock missed` : '';
  const threads = `${concurrency} worker thread${concurrency === 1 ? '' : 's'}${s.shared ? ` (sharing ${coresWords(s.cores, s.budget)})` : concurrency > s.cores ? ` on ${s.cores} cores` : ''}`;
  return {
    resource: 'parallel-op',
    opId: id,
    rate,
    detail: `${label(m, id)} needs ${formatSeconds(e.worker)} of worker CPU per ${m.unit.one}${perCallWords(e.worker, om.callsPerRoot * e.factor)}${est}${e.workerWait > 0 ? ` and waits ${formatSeconds(e.workerWait)} in its thread besides` : ''}; ${threads} give${concurrency === 1 ? 's' : ''} at most ${formatRootRate(m, rate)}.`,
  };
}

/**
 * An awaiting op's bound (Little's law). Inside inner datasets an interleave pulls in parallel,
 * each instance has its own calls in flight: the op's calls in flight are its own times the
 * instances running at once.
 */
function latencyBound(m: Measured, id: string, e: Effective, concurrency: number, ordered: boolean): Bound {
  const om = m.ops.get(id) as OpMeasure;
  const service = serviceAt(om, concurrency);
  const latency = latencyAt(om, concurrency);
  // In order, a slow call holds back the calls behind it (tail.ts).
  const share = ordered ? orderedShare(latencySpread(om.op), concurrency) : 1;
  const rate = ((concurrency * e.nested) / (e.async * service)) * share;
  const held = share < 0.999 ? `; in input order a slow call holds back those behind it (${tailWords(om.op, concurrency)}), leaving ${Math.round(share * 100)}% of that` : '';
  const inner = e.nested > 1 ? ` in each of ${e.nested} inner datasets pulled at once` : '';
  const queued = service < latency * 0.999 ? ` (${formatSeconds(service)} of its ${formatSeconds(latency)} latency is service, the rest waits for the libuv pool)` : '';
  const grows = om.latencyFit ? ` (${om.latencyFit})` : '';
  return {
    resource: 'latency',
    opId: id,
    rate,
    detail: `${label(m, id)} waits ${formatSeconds(service)} per call${queued}${grows}, ${Number(e.async.toPrecision(3))} call${e.async === 1 ? '' : 's'} per ${m.unit.one}, with ${concurrency} call${concurrency === 1 ? '' : 's'} in flight${inner}${held}: at most ${formatRootRate(m, rate)}.`,
  };
}

/** A main-thread op's bound: one element at a time, on its share of a core. */
function sequentialBound(m: Measured, id: string, e: Effective, s: Share): Bound {
  const om = m.ops.get(id) as OpMeasure;
  const own = e.main - e.overhead;
  const rate = s.perThread / own;
  return {
    resource: 'sequential-op',
    opId: id,
    rate,
    detail: `${label(m, id)} runs on the main thread and needs ${formatSeconds(own)} per ${m.unit.one}${perCallWords(own, om.callsPerRoot * e.factor)}; one element at a time, at most ${formatRootRate(m, rate)}.`,
  };
}

/** Each op's own bound, by where it runs: on a cluster, in worker threads, awaiting, or on the main thread. */
function opBounds(m: Measured, cfg: Config, eff: Map<string, Effective>, t: Totals, s: Share): Bound[] {
  const bounds: Bound[] = [];
  for (const [id, e] of eff) {
    const om = m.ops.get(id) as OpMeasure;
    const c = cfg[id];
    if (om.op.placement === 'remote') bounds.push(...clusterBounds(om.op, om.callsPerRoot * e.factor, c.concurrency, label(m, id)));
    else if (c.placement === 'worker' && e.worker > 0) bounds.push(workerBound(m, id, e, c.concurrency, s));
    else if (om.isAsync && e.async > 0 && om.service > 0) bounds.push(latencyBound(m, id, e, c.concurrency, keepsOrder(om.op, c)));
    else if (c.placement === 'main' && e.main - e.overhead > 0 && (isFnOp(om.op) || e.main - e.overhead >= 0.05 * t.main)) bounds.push(sequentialBound(m, id, e, s));
  }
  return bounds;
}

/**
 * Series bounds: ops that run in series for each element because nothing decouples them. Only a
 * wait that matters makes a series bound differ from the main-thread bound. A segment inside inner
 * datasets runs once per instance pulled at once; its main-thread share is still capped by the
 * main-thread bound.
 */
function seriesBounds(m: Measured, cfg: Config, eff: Map<string, Effective>): { bounds: Bound[]; segmentOf: Map<string, string> } {
  const segments = new Map<string, Array<[string, number, number]>>();
  const segmentOf = new Map<string, string>();
  for (const [id, e] of eff) {
    const key = segmentKey(m, cfg, eff, id);
    segmentOf.set(id, key);
    const time = e.main + e.wait;
    if (time <= 0) continue;
    segments.set(key, [...(segments.get(key) ?? []), [id, time, e.wait]]);
  }
  const bounds: Bound[] = [];
  for (const members of segments.values()) {
    const total = members.reduce((sum, [, time]) => sum + time, 0);
    const waits = members.reduce((sum, [, , w]) => sum + w, 0);
    const significant = members.filter(([, time]) => time >= 0.01 * total);
    if (waits < 0.01 * total || significant.length < 2 || !significant.some(([, , w]) => w > 0)) continue;
    const [domId, domTime, domWait] = [...members].sort((a, b) => b[1] - a[1])[0];
    const nested = Math.min(...members.map(([id]) => eff.get(id)?.nested ?? 1));
    const rate = nested / total;
    const inner = nested > 1 ? ` in each of ${nested} inner datasets pulled at once` : '';
    const words = [...significant].sort((a, b) => b[1] - a[1]).map(([id, time, w]) => `${label(m, id)} ${w > 0 ? 'waits' : 'needs'} ${formatSeconds(time)}`);
    bounds.push({
      resource: 'sequential-op',
      opId: domId,
      rate,
      detail: `Nothing overlaps these operators, so each element passes through them in series${inner}: ${listWords(words)} per ${m.unit.one}; together at most ${formatRootRate(m, rate)}.`,
      ...(domWait >= domTime / 2 ? { waiting: true } : {}),
    });
  }
  return { bounds, segmentOf };
}

/** The finite bounds, lowest first, and the lowest bound attributed to each op. */
function ranked(m: Measured, bounds: Bound[]): { finite: Bound[]; opBound: Map<string, number> } {
  const finite = bounds.filter((b) => Number.isFinite(b.rate) && b.rate > 0);
  finite.sort((a, b) => a.rate - b.rate || tieOrder.indexOf(a.resource) - tieOrder.indexOf(b.resource));
  const opBound = new Map<string, number>();
  for (const id of m.order) opBound.set(id, Infinity);
  for (const b of finite) {
    if (b.opId !== undefined && b.rate < (opBound.get(b.opId) ?? Infinity)) opBound.set(b.opId, b.rate);
  }
  return { finite, opBound };
}

/**
 * All bounds of a configuration, and the binding one. `budget`: whole cores, or the contention
 * measured during the run, in which case the configuration gets the share its busy threads win
 * (src/model/cores.ts `coresGot`): more worker threads take more of a contended machine.
 */
export function evaluate(m: Measured, cfg: Config, budget: CoreBudget): Evaluation {
  const eff = effectiveDemands(m, cfg);
  const totals = totalsOf(m, cfg, eff);
  const share = shareOf(budget, cfg, totals);
  const series = seriesBounds(m, cfg, eff);
  const { finite, opBound } = ranked(m, [...machineBounds(m, eff, totals, share), ...opBounds(m, cfg, eff, totals, share), ...series.bounds]);
  const binding: Bound = finite[0] ?? {
    resource: 'source',
    rate: Infinity,
    detail: 'No operator used measurable time, so the model finds no bound.',
  };
  return { bound: binding.rate, binding, bounds: finite, opBound, eff, mainPerRoot: totals.main, cpuPerRoot: totals.cpu, segmentOf: series.segmentOf };
}
