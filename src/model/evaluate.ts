/**
 * The bounds of one configuration: Plumber's operational analysis with Node's main thread as a
 * resource of its own. Each bound is the highest root rate one resource allows; the pipeline's
 * bound is their minimum.
 *
 * Assumptions (calibrate with real runs):
 * - Demands per root element measured in the profile stay the same under other knobs; only the
 *   operators a change touches get new demands (moved to workers, or cached away).
 * - Operators run in series unless something decouples them: a prefetch buffer, or an operator
 *   on plumber-data's parallel engine (async maps, worker maps, file reads: they pull their input
 *   ahead). Ops in one such segment add their main-thread time and their waits (a source that
 *   awaits off the engine); that sum caps the rate too.
 * - Worker threads get at most one core each; all threads together get `cores`.
 * - An awaiting op with k calls in flight and latency L per call delivers k / L calls per second
 *   (Little's law); on libuv, calls also share `machine.libuvThreads` pool threads.
 * - An inserted memory cache removes all work at and above it (the steady state after the first
 *   pass); the first pass costs what it costs today.
 */
import type { Bound, Resource } from '../shared/analysis';
import { MODEL_CONSTANTS as C } from './constants';
import { outerOf, type Config } from './config';
import { coresGot, type Contention, type CoreBudget } from './cores';
import { clusterBounds } from './cluster';
import { describeOp, formatRootRate, formatSeconds, listWords, perCallWords } from './describe';
import { nesting, passesOver, upstreamClosure } from './graph';
import { latencyAt, serviceAt } from './latency';
import type { Measured, OpMeasure } from './measured';
import { cloneSide } from './move';

/** One op's demands per root element under a configuration. */
export interface Effective {
  /** All main-thread seconds, including `overhead`. */
  main: number;
  /** The op's share of main-thread time no op claimed (runtime overhead), part of `main`. */
  overhead: number;
  worker: number;
  /** Seconds per root element a worker thread holds for the op beyond its CPU: an async fn's waits, its calls run one after another there. */
  workerWait: number;
  other: number;
  disk: number;
  /** Async calls per root element. */
  async: number;
  /** Seconds per root element the op holds up its segment when it runs one element at a time. */
  wait: number;
  /** Fraction of its measured work that remains (0 when cached away). */
  factor: number;
  /** It decouples its input: it has two or more calls or threads in flight. */
  decoupler: boolean;
  /** Instances of it that run at once because it sits inside inner datasets an interleave pulls in parallel (1 outside). */
  nested: number;
}

export interface Evaluation {
  bound: number;
  binding: Bound;
  /** Finite bounds, lowest first. */
  bounds: Bound[];
  /** Lowest bound attributed to each op (Infinity when none). */
  opBound: Map<string, number>;
  eff: Map<string, Effective>;
  mainPerRoot: number;
  cpuPerRoot: number;
  /** Each op's segment: ops with the same key run in series for each element. */
  segmentOf: Map<string, string>;
}

/** Resources a knob cannot relieve come first among equal bounds: then the planner stops at them. */
const tieOrder: Resource[] = ['cpu', 'disk', 'libuv', 'main-thread', 'source', 'parallel-op', 'latency', 'sequential-op'];

function fnKind(om: OpMeasure): boolean {
  const k = om.op.kind;
  return k === 'map' || k === 'filter' || k === 'flatMap';
}

/**
 * Elements per second `threads` worker threads give an op, whose CPU gets `cores` cores among
 * them: each call holds its thread for its CPU (slower on a share of a core) and its wait.
 */
export function workerOpRate(e: Pick<Effective, 'worker' | 'workerWait'>, threads: number, cores: number): number {
  if (!(e.worker > 0)) return Infinity;
  if (!(e.workerWait > 0)) return cores / e.worker;
  return threads / ((e.worker * threads) / cores + e.workerWait);
}

/** Demands of each op under `cfg`. */
export function effectiveDemands(m: Measured, cfg: Config): Map<string, Effective> {
  // The share of its work a cached op still does: its first pass, of all the passes the
  // pipeline reads the cache (a cache under repeat(4) still computes a quarter of the elements
  // it hands out; under repeat(), none in the steady state).
  const cached = new Map<string, number>();
  for (const [id, c] of Object.entries(cfg)) {
    if (!c.cacheAfter) continue;
    const fill = 1 / passesOver(m, id);
    for (const up of upstreamClosure(m, id)) cached.set(up, Math.min(cached.get(up) ?? 1, fill));
  }
  const out = new Map<string, Effective>();
  const machine = m.profile.machine;
  for (const [id, om] of m.ops) {
    const c = cfg[id];
    const f = cached.get(id) ?? 1;
    let overhead = om.overheadPerRoot;
    let main = om.selfPerRoot + om.dispatchPerRoot + overhead;
    // A cluster op's worker CPU is spent on other hosts: it takes nothing from this machine's cores.
    let worker = om.op.placement === 'remote' ? 0 : om.workerPerRoot;
    let workerWait = 0;
    if (c.placement === 'worker' && om.op.placement === 'main') {
      // Moving a sync fn to workers: its own time becomes worker CPU; the main thread keeps its
      // bookkeeping and pays a dispatch per task (several small elements share one task) and its
      // side of each clone; the worker pays a task overhead and the other side. With a measured
      // move cost the clones are the measured rounds (input and output, half on each side) and
      // the fn's CPU scales by what it measured in a worker; without, only the input is cloned,
      // priced by its bytes, and the fn costs in a worker what it cost on the main thread.
      const calls = om.callsPerRoot;
      const perCall = calls > 0 ? om.selfPerRoot / calls : 0;
      const group = perCall > 0 ? Math.max(1, Math.min(C.workerMaxGroup, Math.round(C.workerTargetTaskSeconds / perCall))) : C.workerMaxGroup;
      const bytesClone = om.inputBytesPerElement / C.cloneBytesPerSecond;
      const clone = om.move ? cloneSide(om.move) : bytesClone;
      const ratio = om.move ? om.move.workerCpuRatio : 1;
      const dispatch = machine.workerDispatchSeconds ?? C.workerDispatchSeconds;
      const taskOverhead = machine.workerTaskOverheadSeconds ?? C.workerTaskOverheadSeconds;
      const book = Math.min(C.bookkeepingSecondsPerElement, perCall / 2);
      // The runtime overhead that follows the fn's own time (GC of what it allocates) moves with it.
      overhead = om.overheadPerRoot - om.overheadWorkPerRoot;
      main = calls * (book + dispatch / group + clone) + overhead;
      worker = Math.max(0, om.selfPerRoot - calls * book) * ratio + calls * (taskOverhead / group + clone) + om.overheadWorkPerRoot * ratio;
      workerWait = calls * (om.move?.awaited?.wait ?? 0);
    } else if (c.placement === 'main' && om.op.placement === 'worker') {
      // Back on the main thread the pool's dispatch and clones go, and with them the process CPU
      // no thread's clock caught that the workers were charged with: the fn costs what its tasks
      // measured on the workers' own clocks (their share of a task's handling included, so this
      // errs towards the pool).
      // An earlier run that had the fn on the main thread measured what it costs there: that
      // figure, when there is one.
      if (om.mainSeen) {
        overhead = om.mainSeen.overheadPerCall * om.callsPerRoot;
        main = om.mainSeen.selfPerCall * om.callsPerRoot + overhead;
      } else main = om.selfPerRoot + om.overheadPerRoot + (om.workerPerRoot - om.workerUnseenPerRoot);
      worker = 0;
    }
    // plumber-data runs async maps, worker maps and file reads on its parallel engine, which starts
    // the next call as soon as a result is handed downstream: even with one call in flight they
    // overlap the work after them. Sources that await without the engine (`from` an async
    // iterable, `lines`) and sync fns do not.
    const onEngine = c.placement === 'worker' || (om.isAsync && (fnKind(om) || om.op.kind === 'files'));
    const decoupler = onEngine || (om.op.kind === 'interleave' && c.concurrency >= 2);
    let wait = 0;
    if (!decoupler) {
      if (c.placement === 'worker') wait = worker * f;
      else if (om.isAsync) wait = om.asyncPerRoot * latencyAt(om, c.concurrency) * f;
    }
    out.set(id, {
      // A cache after this op serves its elements from memory: a little main-thread time per element.
      main: main * f + (c.cacheAfter ? C.cacheHitSecondsPerElement * om.visitRatio : 0),
      overhead: overhead * f,
      worker: worker * f,
      workerWait: workerWait * f,
      other: om.otherCpuPerRoot * f,
      disk: om.diskPerRoot * f,
      async: om.asyncPerRoot * f,
      wait,
      factor: f,
      decoupler,
      nested: nesting(m, id, (p) => outerOf(cfg, p)),
    });
  }
  return out;
}

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

/** Busy threads a configuration runs: the main thread and every worker thread. */
function busyThreads(cfg: Config): number {
  let n = 1;
  for (const c of Object.values(cfg)) if (c.placement === 'worker') n += c.concurrency;
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
 * rate and its busy share again, down to one core (a text pipeline with tokenize in two worker
 * threads, 1.9 of 2 cores free, was priced at one core and no faster than as written).
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

/**
 * All bounds of a configuration, and the binding one. `budget`: whole cores, or the contention
 * measured during the run, in which case the configuration gets the share its busy threads win
 * (src/model/cores.ts `coresGot`): more worker threads take more of a contended machine.
 */
export function evaluate(m: Measured, cfg: Config, budget: CoreBudget): Evaluation {
  const shared = typeof budget !== 'number';
  const eff = effectiveDemands(m, cfg);
  const bounds: Bound[] = [];
  const machine = m.profile.machine;
  let mainSum = 0;
  let cpuSum = m.unattributedOtherCpuPerRoot;
  let workerSum = 0;
  let otherSum = m.unattributedOtherCpuPerRoot;
  let diskSum = 0;
  let libuvSum = 0;
  for (const [id, e] of eff) {
    mainSum += e.main;
    workerSum += e.worker;
    otherSum += e.other;
    cpuSum += e.main + e.worker + e.other;
    diskSum += e.disk;
    const om = m.ops.get(id) as OpMeasure;
    if (cfg[id].placement === 'libuv') libuvSum += e.async * serviceAt(om, cfg[id].concurrency);
  }
  const { cores, threads } = shared ? contendedCores(budget, cfg, mainSum, workerSum, cpuSum) : { cores: budget, threads: busyThreads(cfg) };
  // The share of a core one thread gets: 1 unless other work competes for the cores.
  const perThread = shared ? Math.min(1, cores / threads) : 1;
  const oneThread = shared ? `one thread's ${Math.round(perThread * 100)}% of a core` : 'one thread';
  // Name each op's own time; the unclaimed runtime overhead is shown as one sum, because it is
  // only shared out to ops (by elements and own time), not measured at them.
  const mainParts: Array<[string, number]> = [...eff].map(([id, e]) => [id, e.main - e.overhead]);
  const overheadSum = [...eff.values()].reduce((s, e) => s + e.overhead, 0);
  // (A nanosecond an element or less is rounding, not overhead.)
  const overheadText = overheadSum >= 1e-9 ? `${formatSeconds(overheadSum)} of runtime overhead no operator claimed (promises, timers, GC)` : '';

  if (mainSum > 0) {
    // When no operator claimed any of it (a cache serving the pipeline, say), the overhead is all there is.
    const claimed = breakdown(m, mainParts);
    const why = claimed && overheadText ? `${claimed} and ${overheadText}` : claimed || overheadText;
    bounds.push({
      resource: 'main-thread',
      rate: perThread / mainSum,
      detail: `The main thread is busy ${formatSeconds(mainSum)} per ${m.unit.one}${why ? ` (${why})` : ''}; ${oneThread} gives at most ${formatRootRate(m, perThread / mainSum)}.`,
    });
  }
  if (cpuSum > 0) {
    const parts = [`main thread ${formatSeconds(mainSum)}`];
    if (workerSum > 0) parts.push(`worker threads ${formatSeconds(workerSum)}`);
    if (otherSum > 0) parts.push(`libuv and other threads ${formatSeconds(otherSum)}`);
    bounds.push({
      resource: 'cpu',
      rate: cores / cpuSum,
      detail: `All threads together need ${formatSeconds(cpuSum)} of CPU per ${m.unit.one} (${listWords(parts)}); ${coresWords(cores, budget)} give${Number(cores.toPrecision(2)) === 1 ? 's' : ''} at most ${formatRootRate(m, cores / cpuSum)}.`,
    });
  }
  if (diskSum > 0 && machine.diskReadBytesPerSec && machine.diskReadBytesPerSec > 0) {
    const rate = machine.diskReadBytesPerSec / diskSum;
    bounds.push({
      resource: 'disk',
      rate,
      detail: `Each ${m.unit.one} reads ${Math.round(diskSum).toLocaleString('en-US')} bytes from disk; at the measured ${(machine.diskReadBytesPerSec / 1e6).toFixed(0)} MB/s that allows at most ${formatRootRate(m, rate)}.`,
    });
  }
  if (libuvSum > 0) {
    const rate = machine.libuvThreads / libuvSum;
    bounds.push({
      resource: 'libuv',
      rate,
      detail: `File and native work holds a libuv pool thread ${formatSeconds(libuvSum)} per ${m.unit.one}; ${machine.libuvThreads} pool threads (UV_THREADPOOL_SIZE) give at most ${formatRootRate(m, rate)}.`,
    });
  }

  for (const [id, e] of eff) {
    const om = m.ops.get(id) as OpMeasure;
    const c = cfg[id];
    const name = label(m, id);
    if (om.op.placement === 'remote') {
      bounds.push(...clusterBounds(om.op, om.callsPerRoot * e.factor, c.concurrency, name));
    } else if (c.placement === 'worker' && e.worker > 0) {
      // Each busy thread gets an equal share of the cores the configuration gets.
      const p = shared ? (c.concurrency * cores) / threads : Math.min(c.concurrency, cores);
      const rate = workerOpRate(e, c.concurrency, p);
      const est =
        om.op.placement === 'main'
          ? ' (estimated from its main-thread time)'
          : om.workerUnseenPerRoot > 0
            ? `, ${formatSeconds(om.workerUnseenPerRoot * e.factor)} of it process CPU that the per-task clock missed`
            : '';
      bounds.push({
        resource: 'parallel-op',
        opId: id,
        rate,
        detail: `${name} needs ${formatSeconds(e.worker)} of worker CPU per ${m.unit.one}${perCallWords(e.worker, om.callsPerRoot * e.factor)}${est}${e.workerWait > 0 ? ` and waits ${formatSeconds(e.workerWait)} in its thread besides` : ''}; ${c.concurrency} worker thread${c.concurrency === 1 ? '' : 's'}${shared ? ` (sharing ${coresWords(cores, budget)})` : c.concurrency > cores ? ` on ${cores} cores` : ''} give${c.concurrency === 1 ? 's' : ''} at most ${formatRootRate(m, rate)}.`,
      });
    } else if (om.isAsync && e.async > 0 && om.service > 0) {
      const service = serviceAt(om, c.concurrency);
      const latency = latencyAt(om, c.concurrency);
      // Inside inner datasets an interleave pulls in parallel, each instance has its own calls in
      // flight: the op's calls in flight are its own times the instances running at once.
      const rate = (c.concurrency * e.nested) / (e.async * service);
      const inner = e.nested > 1 ? ` in each of ${e.nested} inner datasets pulled at once` : '';
      const queued = service < latency * 0.999 ? ` (${formatSeconds(service)} of its ${formatSeconds(latency)} latency is service, the rest waits for the libuv pool)` : '';
      const grows = om.latencyFit ? ` (${om.latencyFit})` : '';
      bounds.push({
        resource: 'latency',
        opId: id,
        rate,
        detail: `${name} waits ${formatSeconds(service)} per call${queued}${grows}, ${Number(e.async.toPrecision(3))} call${e.async === 1 ? '' : 's'} per ${m.unit.one}, with ${c.concurrency} call${c.concurrency === 1 ? '' : 's'} in flight${inner}: at most ${formatRootRate(m, rate)}.`,
      });
    } else if (c.placement === 'main' && e.main - e.overhead > 0 && (fnKind(om) || e.main - e.overhead >= 0.05 * mainSum)) {
      const own = e.main - e.overhead;
      const rate = perThread / own;
      bounds.push({
        resource: 'sequential-op',
        opId: id,
        rate,
        detail: `${name} runs on the main thread and needs ${formatSeconds(own)} per ${m.unit.one}${perCallWords(own, om.callsPerRoot * e.factor)}; one element at a time, at most ${formatRootRate(m, rate)}.`,
      });
    }
  }

  // Segments: ops that run in series for each element because nothing decouples them.
  const segments = new Map<string, Array<[string, number, number]>>();
  const segmentOf = new Map<string, string>();
  for (const [id, e] of eff) {
    const key = segmentKey(m, cfg, eff, id);
    segmentOf.set(id, key);
    const time = e.main + e.wait;
    if (time <= 0) continue;
    segments.set(key, [...(segments.get(key) ?? []), [id, time, e.wait]]);
  }
  for (const members of segments.values()) {
    const total = members.reduce((s, [, t]) => s + t, 0);
    const waits = members.reduce((s, [, , w]) => s + w, 0);
    const significant = members.filter(([, t]) => t >= 0.01 * total);
    // Only a wait that matters makes a series bound differ from the main-thread bound.
    if (waits < 0.01 * total || significant.length < 2 || !significant.some(([, , w]) => w > 0)) continue;
    const [domId] = [...members].sort((a, b) => b[1] - a[1])[0];
    // A segment inside inner datasets runs once per instance pulled at once; its main-thread share
    // is still capped by the main-thread bound.
    const nested = Math.min(...members.map(([id]) => eff.get(id)?.nested ?? 1));
    const rate = nested / total;
    const inner = nested > 1 ? ` in each of ${nested} inner datasets pulled at once` : '';
    const words = [...significant]
      .sort((a, b) => b[1] - a[1])
      .map(([id, t, w]) => `${label(m, id)} ${w > 0 ? 'waits' : 'needs'} ${formatSeconds(t)}`);
    bounds.push({
      resource: 'sequential-op',
      opId: domId,
      rate,
      detail: `Nothing overlaps these operators, so each element passes through them in series${inner}: ${listWords(words)} per ${m.unit.one}; together at most ${formatRootRate(m, rate)}.`,
    });
  }

  const finite = bounds.filter((b) => Number.isFinite(b.rate) && b.rate > 0);
  finite.sort((a, b) => a.rate - b.rate || tieOrder.indexOf(a.resource) - tieOrder.indexOf(b.resource));
  const opBound = new Map<string, number>();
  for (const id of m.order) opBound.set(id, Infinity);
  for (const b of finite) {
    if (b.opId !== undefined && b.rate < (opBound.get(b.opId) ?? Infinity)) opBound.set(b.opId, b.rate);
  }
  const binding: Bound = finite[0] ?? {
    resource: 'source',
    rate: Infinity,
    detail: 'No operator used measurable time, so the model finds no bound.',
  };
  return { bound: binding.rate, binding, bounds: finite, opBound, eff, mainPerRoot: mainSum, cpuPerRoot: cpuSum, segmentOf };
}
