/**
 * From raw counters to per-root-element demands: the measured side of the model. Everything here
 * is a counter divided by the number of root elements in the window, so each number can be traced
 * back to the profile.
 *
 * Assumptions (calibrate with real runs):
 * - `selfSeconds` and `dispatchSeconds` are disjoint main-thread times (tracing.ts says so).
 * - Main-thread CPU the operators did not claim (`run.mainThreadCpuSeconds` − Σ self − Σ dispatch −
 *   a fixed idle share per second: promise plumbing, async-generator resumption, GC, wakeups) is
 *   charged a few µs per element produced, the busy fraction of the rest in proportion to each
 *   op's own main-thread time (GC of what it allocates), and the idle fraction not at all
 *   (per-wakeup cost that does not grow with the rate); see `overheadRates`. Either way it
 *   vanishes with the work a cache removes.
 *   With a wall-clock `cpuClock` the main-thread total includes idle time and is not used.
 * - CPU on other threads that no operator measured (process CPU − main thread − workers) goes, in
 *   order: beyond `runtimeThreadsCpuFraction` of the measured main + worker CPU (V8's GC and
 *   compiler threads), to worker ops in proportion to their measured worker CPU (a worker clock
 *   that times only the task body misses the current scheduler slice; plumber-data times a task
 *   from the end of the previous one, so with it there is seldom any excess); else to
 *   libuv-placed operators in proportion to their async latency (fs, zlib, sharp); what is left (the runtime's share, or all of it without worker or libuv ops)
 *   goes to the ops in proportion to their own CPU, so a cache removes it with the work. With a
 *   wall `cpuClock` the main thread's own total is unknown, so nothing goes to workers.
 * - The graph is a DAG: a mixture's inputs each supply their share of its elements, and their
 *   per-root demands (counters ÷ root elements) carry that share, so a branch op's bound is its
 *   branch's bound ÷ the share. A sampling mixture's share is its weight, not the chunked reads
 *   and draw noise the counters also hold (see dataflow.ts `reweightBranches`). Operators that
 *   change element counts (shard, window, bucketing, rebatch, ignoreErrors' skips) need nothing
 *   special: their visit ratios are their measured produced counts.
 */
import type { OpProfile, Placement, Profile } from '../shared/profile';
import { MODEL_CONSTANTS as C } from './constants';
import { reweightBranches } from './dataflow';
import { rootUnitOf } from './describe';
import { can, currentConcurrency, isFnOp } from './knobs';
import { fitLatency } from './latency';
import type { Measured, OpMeasure } from './measured';
import { awaitedWork, inputScale, moveOf, withAwaited } from './move';
import { isReader, readerMainSeconds, readerMove, readerParts, readerWaits } from './readers';

/**
 * How unclaimed main-thread time is charged: `perElement` seconds on every produced element, and
 * `perClaimedSecond` seconds on every second of an op's own main-thread time.
 *
 * Runtime plumbing per element (promise settling, generator resumption) is a few µs: at most
 * `plumbingSecondsPerElement` goes per element. The rest is either per-wakeup cost on an idle
 * thread (each settled promise, timer and I/O callback gets its own event-loop turn; these merge
 * as the rate grows, so their cost per element falls) or cost that grows with the work the fns
 * do (GC of what they allocate). The main thread's busy fraction u = main CPU ÷ window seconds
 * splits it: a fraction u is charged in proportion to each op's own main-thread time, and the
 * idle part, 1 − u, does not grow with the rate and is not charged. So a cache that removes the op that allocates also removes its GC, and
 * an idle thread's wakeups do not make the main thread look like the bottleneck.
 */
export function overheadRates(unclaimed: number, producedTotal: number, claimedMain: number, mainCpuSeconds: number, seconds: number): { perElement: number; perClaimedSecond: number } {
  if (!(unclaimed > 0) || producedTotal <= 0) return { perElement: 0, perClaimedSecond: 0 };
  const perElement = Math.min(unclaimed / producedTotal, C.plumbingSecondsPerElement);
  const rest = unclaimed - perElement * producedTotal;
  const u = seconds > 0 ? Math.min(1, Math.max(0, mainCpuSeconds / seconds)) : 1;
  if (claimedMain <= 0) return { perElement: perElement + (u * rest) / producedTotal, perClaimedSecond: 0 };
  return { perElement, perClaimedSecond: (u * rest) / claimedMain };
}

/**
 * Root elements in the window, and the operators whose counters count them as the root does. The
 * root's counters count whole elements; the window's last, partial one (run.partialElement) is in
 * the counters of every operator below the root, so it counts for them too. The root and what
 * passes its elements through (a prefetch after a batch) had not made it yet: `atRoot`.
 */
interface Window {
  byId: Map<string, OpProfile>;
  root: OpProfile | undefined;
  rootElements: number;
  /** Root elements to divide by: `rootElements`, at least 1. */
  n: number;
  atRoot: Set<string>;
}

function windowOf(profile: Profile): Window {
  const { run } = profile;
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const root = byId.get(profile.pipeline.rootId);
  const rootElements = root && root.counters.produced > 0 ? root.counters.produced + (run.partialElement ?? 0) : run.elements;
  const atRoot = new Set<string>();
  for (let op = root; op && op.counters.produced > 0 && op.counters.produced === root?.counters.produced && !atRoot.has(op.id); op = byId.get(op.inputs[0] ?? '')) atRoot.add(op.id);
  return { byId, root, rootElements, n: rootElements > 0 ? rootElements : 1, atRoot };
}

/** Who pulls from each op, and the ops built inside each op's fn (by `parentId`). */
function edgesOf(profile: Profile, byId: Map<string, OpProfile>): { consumers: Map<string, string[]>; children: Map<string, string[]> } {
  const consumers = new Map<string, string[]>();
  for (const op of profile.ops) {
    for (const input of op.inputs) consumers.set(input, [...(consumers.get(input) ?? []), op.id]);
  }
  const children = new Map<string, string[]>();
  for (const op of profile.ops) {
    if (op.parentId !== undefined && byId.has(op.parentId)) children.set(op.parentId, [...(children.get(op.parentId) ?? []), op.id]);
  }
  return { consumers, children };
}

/**
 * How the window's CPU is shared out among the ops: each op's own main-thread time, its share of
 * the main-thread time no op claimed, and its share of the CPU on other threads (see the header).
 */
interface CpuShares {
  /** What each async fn worked after its awaits and waited beyond its work (see `awaitedWork`). */
  afterAwait: ReturnType<typeof awaitedWork>;
  /** An op's own main-thread seconds in the window: its counters', and what its async fn did after its awaits. */
  ownMain(op: OpProfile): number;
  overhead: { perElement: number; perClaimedSecond: number };
  /** Other-thread CPU beyond the runtime's share goes to worker ops, as CPU their clock missed. */
  toWorkers: boolean;
  /** Worker CPU the per-task clock missed, for an op whose clock saw `own`. */
  unseenWorker(own: number): number;
  otherCpu: number;
  libuvLatency: number;
  /** The op's share of other-thread CPU that follows the ops' own CPU. */
  spreadOf(op: OpProfile): number;
  /** Other-thread CPU shared in proportion to the ops' own CPU, and that own CPU's total (0: it stays a per-element cost). */
  spread: number;
  ownCpuTotal: number;
  /** The share of a libuv op's latency that is service, not queueing for a pool thread. */
  libuvQueueShare: number;
}

function cpuShares(profile: Profile, inputBytesOf: (op: OpProfile) => number | undefined): CpuShares {
  const { run, machine } = profile;
  const cpuClockIsReal = machine.cpuClock !== 'wall';
  const claimedByOps = profile.ops.reduce((s, op) => s + op.counters.selfSeconds + op.counters.dispatchSeconds, 0);
  const idle = C.idleMainOverheadPerSecond * run.seconds;
  const afterAwait = awaitedWork(profile.ops, inputBytesOf, cpuClockIsReal ? Math.max(0, run.mainThreadCpuSeconds - claimedByOps - idle) : 0);
  const ownMain = (op: OpProfile): number => {
    const own = op.counters.selfSeconds + (afterAwait.get(op.id)?.perCall ?? 0) * op.counters.calls;
    return readerMainSeconds(op, own) ?? own;
  };

  let claimedMain = 0;
  let workerCpu = 0;
  let producedTotal = 0;
  let libuvLatency = 0;
  for (const op of profile.ops) {
    claimedMain += ownMain(op) + op.counters.dispatchSeconds;
    workerCpu += op.counters.workerCpuSeconds;
    producedTotal += op.counters.produced;
    if (op.placement === 'libuv') libuvLatency += op.counters.asyncLatencySeconds;
  }
  const unclaimedMain = cpuClockIsReal ? Math.max(0, run.mainThreadCpuSeconds - claimedMain - idle) : 0;
  const mainCpu = cpuClockIsReal ? Math.max(run.mainThreadCpuSeconds, claimedMain) : claimedMain;
  const otherCpu = Math.max(0, run.processCpuSeconds - mainCpu - workerCpu);
  // V8's own helper threads (GC, compilers) use some CPU whatever the ops do; only process CPU
  // beyond that share is worker CPU the per-task clock missed. Since plumber-data times each task
  // from the end of the previous one, the workers' clock sees nearly all of it and this is 0.
  const runtimeOther = Math.min(otherCpu, C.runtimeThreadsCpuFraction * (mainCpu + workerCpu));
  const unseenTotal = cpuClockIsReal && workerCpu > 0 ? otherCpu - runtimeOther : 0;
  const toWorkers = unseenTotal > 0;
  // Other-thread CPU no op is charged with (the runtime's GC and compiler threads, libuv work of
  // ops that count no calls) follows the work the ops do: it is shared in proportion to each op's
  // own CPU, so a cache that removes the work removes it too. With no op CPU at all it stays a
  // per-element cost.
  const spread = toWorkers ? runtimeOther : libuvLatency > 0 ? 0 : otherCpu;
  let ownCpuTotal = 0;
  for (const op of profile.ops) ownCpuTotal += ownMain(op) + op.counters.dispatchSeconds + op.counters.workerCpuSeconds;
  // Little's law: mean libuv calls in flight over the window. Above the pool size, the measured
  // latency includes queueing for a pool thread, which the service time must not.
  const libuvInFlight = run.seconds > 0 ? libuvLatency / run.seconds : 0;
  return {
    afterAwait,
    ownMain,
    overhead: overheadRates(unclaimedMain, producedTotal, claimedMain, run.mainThreadCpuSeconds, run.seconds),
    toWorkers,
    unseenWorker: (own) => (toWorkers ? (unseenTotal * own) / workerCpu : 0),
    otherCpu,
    libuvLatency,
    spreadOf: (op) => (ownCpuTotal > 0 ? (spread * (ownMain(op) + op.counters.dispatchSeconds + op.counters.workerCpuSeconds)) / ownCpuTotal : 0),
    spread,
    ownCpuTotal,
    libuvQueueShare: libuvInFlight > machine.libuvThreads ? machine.libuvThreads / libuvInFlight : 1,
  };
}

/**
 * Whether the op awaits, its async calls and their mean latency. A source that awaits without
 * counting its calls (an async iterable in `from`, `lines`): the time its consumer waited on it
 * beyond its own sync time is its latency, one call per element. Only for sources the library does
 * not run on its parallel engine, which also adds its own waits to `waitSeconds` and would count
 * them twice.
 */
function waitsOf(op: OpProfile): { isAsync: boolean; asyncCalls: number; latency: number } {
  const reader = readerWaits(op);
  if (reader) return reader;
  const c = op.counters;
  const counted = {
    isAsync: op.placement !== 'worker' && (c.asyncCalls > 0 || (op.fnAsync === true && c.calls === 0)),
    asyncCalls: c.asyncCalls,
    latency: c.asyncCalls > 0 ? c.asyncLatencySeconds / c.asyncCalls : 0,
  };
  // An array source (its length is its cardinality) awaits nothing of its own: its consumer's wait
  // on it is the event loop's other work (the library yields a turn now and then, and a training
  // step holding the thread delays that turn by the whole step), not a latency of the source.
  const array = op.kind === 'from' && typeof op.cardinality === 'number';
  const inferred = op.inputs.length === 0 && c.asyncCalls === 0 && !array && (op.kind === 'from' || op.kind === 'lines') && c.produced > 0 ? Math.max(0, c.waitSeconds - c.selfSeconds) : 0;
  if (inferred > 0 && inferred / c.produced >= C.minInferredLatencySeconds) return { isAsync: true, asyncCalls: c.produced, latency: inferred / c.produced };
  return counted;
}

/** One op's demands: its counters over the root elements they cover (`per`), with its shares of the CPU no op claimed. */
function opMeasure(op: OpProfile, w: Window, cpu: CpuShares, inputBytes: number | undefined, history: Profile[]): OpMeasure {
  const c = op.counters;
  const own = cpu.ownMain(op);
  const awaited = cpu.afterAwait.get(op.id);
  const placement: Placement = op.placement;
  const { isAsync, asyncCalls, latency } = waitsOf(op);
  // An operator whose library has no parallelism lever (tfjs-data's mapAsync awaits one call at a
  // time) is not tunable, however it awaits: see `can`.
  const tunable = ((isFnOp(op) && (isAsync || placement === 'worker')) || op.kind === 'interleave' || op.kind === 'files' || isReader(op)) && can(op, 'parallelism');
  const concurrency = placement === 'main' && !isAsync && op.kind !== 'interleave' && !isReader(op) ? 1 : currentConcurrency(op, isAsync);
  const reader = readerParts(op, concurrency);
  // Root elements this operator's counters cover (see `Window`).
  const per = w.atRoot.has(op.id) ? (w.root?.counters.produced ?? w.n) : w.n;
  const fit = isAsync && c.asyncCalls > 0 && history.length > 0 ? fitLatency(op, currentConcurrency(op, isAsync), latency, history) : undefined;
  return {
    op,
    visitRatio: c.produced / per,
    producedInWindow: c.produced + (w.atRoot.has(op.id) ? w.n - per : 0),
    // A reader calls no fn: each element it yields is one call of its own work.
    callsPerRoot: (reader ? c.produced : c.calls) / per,
    selfPerRoot: own / per,
    dispatchPerRoot: c.dispatchSeconds / per,
    overheadPerRoot: (cpu.overhead.perElement * c.produced + cpu.overhead.perClaimedSecond * (own + c.dispatchSeconds)) / per,
    overheadWorkPerRoot: (cpu.overhead.perClaimedSecond * (own + c.dispatchSeconds)) / per,
    workerPerRoot: (c.workerCpuSeconds + cpu.unseenWorker(c.workerCpuSeconds)) / per,
    workerUnseenPerRoot: cpu.unseenWorker(c.workerCpuSeconds) / per,
    otherCpuPerRoot: ((!cpu.toWorkers && placement === 'libuv' && cpu.libuvLatency > 0 ? (cpu.otherCpu * c.asyncLatencySeconds) / cpu.libuvLatency : 0) + cpu.spreadOf(op)) / per,
    asyncPerRoot: asyncCalls / per,
    latency,
    service: placement === 'libuv' ? latency * cpu.libuvQueueShare : latency,
    ...(fit ? { latencySlope: fit.slope, latencyFit: fit.fit } : { latencySlope: 0 }),
    diskPerRoot: c.diskBytesRead / per,
    bytesPerElement: c.produced > 0 ? c.bytesProduced / c.produced : 0,
    inputBytesPerElement: inputBytes ?? 0,
    concurrency,
    isAsync,
    tunable,
    movable:
      (isFnOp(op) && placement === 'main' && (!isAsync || awaited?.works === true) && op.fnModule !== undefined && op.moveBlocked === undefined && c.calls > 0 && can(op, 'placement')) ||
      (reader !== undefined && placement === 'main' && reader.decompress + reader.parse > 0 && can(op, 'placement')),
    move: reader ? (moveOf(op, inputBytes) ?? readerMove(op)) : withAwaited(moveOf(op, inputBytes), awaited),
    ...(reader ? { reader } : {}),
  };
}

/** Turn a profile's counters into per-root-element demands; `history` holds earlier runs of the same pipeline. */
export function measure(profile: Profile, history: Profile[] = []): Measured {
  const { run } = profile;
  const w = windowOf(profile);
  const { consumers, children } = edgesOf(profile, w.byId);
  // What each op was handed per call in the window, by the library's size estimate.
  const inputBytesOf = (op: OpProfile): number | undefined => {
    const input = w.byId.get(op.inputs[0] ?? '');
    return input && input.counters.produced > 0 ? input.counters.bytesProduced / input.counters.produced : undefined;
  };
  const cpu = cpuShares(profile, inputBytesOf);
  const ops = new Map<string, OpMeasure>();
  for (const op of profile.ops) ops.set(op.id, opMeasure(op, w, cpu, inputBytesOf(op), history));
  const measured: Measured = {
    profile,
    rootId: profile.pipeline.rootId,
    unit: rootUnitOf(profile),
    rootElements: w.rootElements,
    measuredRate: run.seconds > 0 ? run.elements / run.seconds : 0,
    ops,
    order: profile.ops.map((o) => o.id),
    consumers,
    children,
    unattributedOtherCpuPerRoot: cpu.ownCpuTotal > 0 ? 0 : cpu.spread / w.n,
  };
  // A sampling mixture's branches at their weights, not at what read-ahead made the counters show.
  reweightBranches(measured);
  seenOnMain(measured, history);
  return measured;
}

/**
 * For each op this run had in worker threads, its main-thread cost per call in the latest run of
 * `history` that had it on the main thread (`OpMeasure.mainSeen`).
 */
function seenOnMain(m: Measured, history: Profile[]): void {
  const measuredRuns = new Map<Profile, Measured>();
  for (const om of m.ops.values()) {
    if (om.op.placement !== 'worker' || !isFnOp(om.op)) continue;
    for (let i = history.length - 1; i >= 0; i--) {
      const h = history[i]!;
      const was = h.ops.find((o) => o.id === om.op.id);
      if (!was || was.kind !== om.op.kind || was.placement !== 'main' || was.fnAsync === true || !(was.counters.calls > 0)) continue;
      let hm = measuredRuns.get(h);
      if (!hm) measuredRuns.set(h, (hm = measure(h)));
      const hom = hm.ops.get(om.op.id);
      if (hom && hom.callsPerRoot > 0 && !hom.isAsync) {
        const scale = inputScale(om, hom);
        om.mainSeen = { selfPerCall: (hom.selfPerRoot / hom.callsPerRoot) * scale, overheadPerCall: (hom.overheadPerRoot / hom.callsPerRoot) * scale, ...(scale !== 1 ? { inputScale: scale } : {}) };
      }
      break;
    }
  }
}
