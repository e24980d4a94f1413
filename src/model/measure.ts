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
 *   compiler threads), to worker ops in proportion to their measured worker CPU (a library whose
 *   workers time only the task body misses the current scheduler slice on Linux/Node 20: 0.5–0.7 ms
 *   reported for a 2 ms task; plumber-data now times a task from the end of the previous one, and
 *   the worker-bound fixture leaves 2.7% of worker CPU unexplained, so nothing is charged); else
 *   to libuv-placed operators in proportion to their async latency (fs,
 *   zlib, sharp); what is left (the runtime's share, or all of it without worker or libuv ops)
 *   goes to the ops in proportion to their own CPU, so a cache removes it with the work. With a
 *   wall `cpuClock` the main thread's own total is unknown, so nothing goes to workers.
 * - The graph is a DAG: a mixture's inputs each supply their share of its elements, and their
 *   per-root demands (counters ÷ root elements) carry that share, so a branch op's bound is its
 *   branch's bound ÷ the share. A sampling mixture's share is its weight, not the chunked reads
 *   and draw noise the counters also hold (see dataflow.ts `reweightBranches`). Operators that change element counts
 *   (shard, window, bucketing, rebatch, ignoreErrors' skips) need nothing special: their visit
 *   ratios are their measured produced counts.
 */
import type { OpProfile, Placement, Profile } from '../shared/profile';
import { MODEL_CONSTANTS as C } from './constants';
import { reweightBranches } from './dataflow';
import { formatSeconds, rootUnitOf, type RootUnit } from './describe';

/** One operator's measured demands, per root element unless a name says otherwise. */
export interface OpMeasure {
  op: OpProfile;
  /** V_i: elements produced here per root element. */
  visitRatio: number;
  /**
   * Elements produced in the window, with the share of the root element in progress at its end
   * for the root and what passes its elements through (see `RunInfo.partialElement`).
   */
  producedInWindow: number;
  /** User-function calls per root element. */
  callsPerRoot: number;
  /** Main-thread seconds in own code (selfSeconds, and for an async fn its work after its awaits: `move.awaited`). */
  selfPerRoot: number;
  /** Main-thread seconds spent handing tasks to workers (dispatchSeconds). */
  dispatchPerRoot: number;
  /** This op's share of main-thread CPU no operator claimed. */
  overheadPerRoot: number;
  /** The part of `overheadPerRoot` that follows the op's own time (GC of what its fn allocates): it moves with the fn to a worker. */
  overheadWorkPerRoot: number;
  /** Worker-thread CPU seconds, including `workerUnseenPerRoot`. */
  workerPerRoot: number;
  /** Worker CPU the per-task clock did not see, estimated from process CPU (see the header). */
  workerUnseenPerRoot: number;
  /** Estimated CPU on other threads (libuv) caused by this op. */
  otherCpuPerRoot: number;
  /** Calls that returned a promise, per root element. */
  asyncPerRoot: number;
  /** Mean seconds from an async call's start to its settling. */
  latency: number;
  /** Estimated seconds one call occupies a libuv thread (latency without pool queueing); equals latency off libuv. */
  service: number;
  /**
   * Seconds of latency each extra call in flight adds, fitted from `history` (0 when latency does
   * not grow with concurrency, or there is no history): latency(k) = latency + slope × (k − concurrency).
   */
  latencySlope: number;
  /** How the slope was found, for reason sentences. */
  latencyFit?: string;
  /** Bytes read from disk. */
  diskPerRoot: number;
  /** Mean bytes of one produced element (0 when unknown). */
  bytesPerElement: number;
  /** Mean bytes of one element of its (first) input. */
  inputBytesPerElement: number;
  /** Calls in flight (async), worker threads (worker), reads in flight (files), 1 otherwise. */
  concurrency: number;
  /** The op awaits promises (I/O or latency-bound work). */
  isAsync: boolean;
  /** Its `parallelism` knob changes something: an async fn, a worker map, reads in flight, interleave. */
  tunable: boolean;
  /**
   * A fn on the main thread whose module is known and that works rather than waits: a sync fn, or
   * an async fn whose calls the runner awaited and timed (`move.awaited`) and that spent at least
   * `awaitedWorkShare` of them on its own CPU, and whose elements a copy between threads leaves
   * as they are (no `op.moveBlocked`). It can move to worker threads.
   */
  movable: boolean;
  /**
   * Main-thread seconds per call (its own time and its share of the runtime's) that an earlier run
   * in `history` measured for this fn on the main thread, for an op this run had in worker
   * threads: what moving it back costs, measured, where the workers' clocks would only guess it
   * (a fn that allocates large arrays cost 1.9 ms a call on the main thread and 5.4 ms of worker
   * CPU a call in a pool).
   */
  mainSeen?: {
    selfPerCall: number;
    overheadPerCall: number;
    /**
     * This run's input bytes per call ÷ the earlier run's, when both were measured and differ:
     * the per-call figures above are scaled by it (see `inputScale`).
     */
    inputScale?: number;
  };
  /**
   * What moving the fn to worker threads costs per call, from `op.moveCost` when the runner
   * measured it (absent otherwise: the model then prices the clone by bytes and the fn's CPU as on
   * the main thread). Each clone round is split evenly between the sending side (serialise) and
   * the receiving side (deserialise): the input is serialised on the main thread and deserialised
   * in the worker, the output the other way round.
   */
  move?: {
    /** Seconds of one input's clone round and of one call's output's, for the window's elements (see `moveOf`). */
    cloneIn: number;
    cloneOut: number;
    /**
     * The window's bytes per call ÷ the sample's, when they differ enough to scale the clones by
     * (see `moveOf`): 0.07 when the few sampled emails ran 14× the window's mean size.
     */
    sizeScale?: number;
    /** The fn's CPU in a worker ÷ on the main thread, clamped to [workerCpuRatioMin, workerCpuRatioMax]; 1 when not measured. */
    workerCpuRatio: number;
    /**
     * What the probe measured of that ratio when it ran below the ratio the model prices by (a fn
     * the probe's worker ran at a fifth of its main-thread CPU; or at half, on calls that were not
     * representative): the model does not price a move by it, but a trial run with the move may
     * (see `trialPlan` in ./index.ts).
     */
    probeRatio?: number;
    /**
     * For an async fn: what a call awaited alone measured (see `awaitedWork`). In a worker thread
     * the fn's calls run one after another, so each holds its thread for its CPU and its wait.
     */
    awaited?: {
      /** Main-thread seconds of work per call after the call's first await, which the window's `selfSeconds` misses, carried into `selfPerRoot`. */
      afterAwait: number;
      /** Seconds a call waits (a read, a request) beyond its work. */
      wait: number;
    };
  };
}

/** A profile turned into demands, plus the graph's shape. */
export interface Measured {
  profile: Profile;
  rootId: string;
  /** What a root element is (an element, or a batch), for the sentences. */
  unit: RootUnit;
  /** Root elements produced in the window (C_root). */
  rootElements: number;
  /** Measured root rate of the run. */
  measuredRate: number;
  ops: Map<string, OpMeasure>;
  /** Ids in profile order. */
  order: string[];
  /** Who pulls from each op. */
  consumers: Map<string, string[]>;
  /** The ops built inside each op's fn (an interleave's or flatMap's inner datasets), by `parentId`. */
  children: Map<string, string[]>;
  /** Other-thread CPU per root element that no op could be charged with. */
  unattributedOtherCpuPerRoot: number;
}

/** True when a worker pool can run this op's fn. */
function fnKinds(op: OpProfile): boolean {
  return op.kind === 'map' || op.kind === 'filter' || op.kind === 'flatMap';
}

function currentConcurrency(op: OpProfile, isAsync: boolean): number {
  const k = op.knobs;
  // plumber-data resolves 'auto' to 1 for a main-thread fn not declared async, but runs 16 calls
  // in flight once it turns out to return promises.
  if (isAsync && k.parallelism === 'auto' && op.placement === 'main' && (k.resolvedParallelism ?? 1) <= 1) return 16;
  if (k.resolvedParallelism !== undefined && k.resolvedParallelism > 0) return k.resolvedParallelism;
  if (typeof k.parallelism === 'number' && k.parallelism > 0) return k.parallelism;
  return 1;
}

/**
 * How an awaiting op's latency grows with its calls in flight, from the same op in earlier runs
 * with another concurrency: a least-squares line through (k, latency) points. A throttled
 * resource (a disk's byte rate, a rate-limited service) shows as latency ∝ k; an independent wait
 * as a flat line. Growth below `minLatencyGrowth` over the measured range is treated as noise.
 */
function fitLatency(op: OpProfile, k: number, latency: number, history: Profile[]): { slope: number; fit?: string } {
  const points: Array<[number, number]> = [[k, latency]];
  for (const h of history) {
    const o = h.ops.find((x) => x.id === op.id && x.kind === op.kind);
    if (!o || o.counters.asyncCalls <= 0) continue;
    points.push([currentConcurrency(o, true), o.counters.asyncLatencySeconds / o.counters.asyncCalls]);
  }
  const ks = points.map(([x]) => x);
  const kMin = Math.min(...ks);
  const kMax = Math.max(...ks);
  if (kMax === kMin) return { slope: 0 };
  const mk = ks.reduce((a, b) => a + b, 0) / points.length;
  const ml = points.reduce((a, [, l]) => a + l, 0) / points.length;
  let cov = 0;
  let vk = 0;
  for (const [x, l] of points) {
    cov += (x - mk) * (l - ml);
    vk += (x - mk) * (x - mk);
  }
  const slope = cov / vk;
  const lMin = Math.min(...points.map(([, l]) => l));
  if (!(slope > 0) || slope * (kMax - kMin) < C.minLatencyGrowth * lMin) return { slope: 0 };
  const at = (kk: number) => points.find(([x]) => x === kk)?.[1] ?? 0;
  return {
    slope,
    fit: `its latency grew from ${formatSeconds(at(kMin))} at ${kMin} in flight to ${formatSeconds(at(kMax))} at ${kMax} across runs, ${formatSeconds(slope)} per extra call`,
  };
}

/**
 * How unclaimed main-thread time is charged: `perElement` seconds on every produced element, and
 * `perClaimedSecond` seconds on every second of an op's own main-thread time.
 *
 * Runtime plumbing per element (promise settling, generator resumption) is a few µs: at most
 * `plumbingSecondsPerElement` goes per element. The rest is either per-wakeup cost on an idle
 * thread (each settled promise, timer and I/O callback gets its own event-loop turn; these merge
 * as the rate grows: examples/remote measured 131, 32 and 13 µs per element at 1, 16 and 128 calls
 * in flight) or cost that grows with the work the fns do (GC of what they allocate). The
 * main thread's busy fraction u = main CPU ÷ window seconds splits it: a fraction u is charged in
 * proportion to each op's own main-thread time, and the idle part, 1 − u, does not grow with the
 * rate and is not charged. So a cache that removes the op that allocates also removes its GC, and
 * an idle thread's wakeups do not make the main thread look like the bottleneck.
 */
export function overheadRates(
  unclaimed: number,
  producedTotal: number,
  claimedMain: number,
  mainCpuSeconds: number,
  seconds: number,
): { perElement: number; perClaimedSecond: number } {
  if (!(unclaimed > 0) || producedTotal <= 0) return { perElement: 0, perClaimedSecond: 0 };
  const perElement = Math.min(unclaimed / producedTotal, C.plumbingSecondsPerElement);
  const rest = unclaimed - perElement * producedTotal;
  const u = seconds > 0 ? Math.min(1, Math.max(0, mainCpuSeconds / seconds)) : 1;
  if (claimedMain <= 0) return { perElement: perElement + (u * rest) / producedTotal, perClaimedSecond: 0 };
  return { perElement, perClaimedSecond: (u * rest) / claimedMain };
}

/** Turn a profile's counters into per-root-element demands; `history` holds earlier runs of the same pipeline. */
export function measure(profile: Profile, history: Profile[] = []): Measured {
  const { run, machine } = profile;
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const root = byId.get(profile.pipeline.rootId);
  // The root's counters count whole elements; the window's last, partial one (run.partialElement)
  // is in the counters of every operator below the root, so it counts for them too. The root and
  // what passes its elements through (a prefetch after a batch) had not made it yet.
  const rootElements = root && root.counters.produced > 0 ? root.counters.produced + (run.partialElement ?? 0) : run.elements;
  const n = rootElements > 0 ? rootElements : 1;
  const atRoot = new Set<string>();
  for (let op = root; op && op.counters.produced > 0 && op.counters.produced === root?.counters.produced && !atRoot.has(op.id); op = byId.get(op.inputs[0] ?? '')) atRoot.add(op.id);
  const measuredRate = run.seconds > 0 ? run.elements / run.seconds : 0;

  const consumers = new Map<string, string[]>();
  for (const op of profile.ops) {
    for (const input of op.inputs) consumers.set(input, [...(consumers.get(input) ?? []), op.id]);
  }
  const children = new Map<string, string[]>();
  for (const op of profile.ops) {
    if (op.parentId !== undefined && byId.has(op.parentId)) children.set(op.parentId, [...(children.get(op.parentId) ?? []), op.id]);
  }

  // What each op was handed per call in the window, by the library's size estimate.
  const inputBytesOf = (op: OpProfile): number | undefined => {
    const input = byId.get(op.inputs[0] ?? '');
    return input && input.counters.produced > 0 ? input.counters.bytesProduced / input.counters.produced : undefined;
  };
  const cpuClockIsReal = machine.cpuClock !== 'wall';
  const claimedByOps = profile.ops.reduce((s, op) => s + op.counters.selfSeconds + op.counters.dispatchSeconds, 0);
  const idle = C.idleMainOverheadPerSecond * run.seconds;
  const afterAwait = awaitedWork(profile.ops, inputBytesOf, cpuClockIsReal ? Math.max(0, run.mainThreadCpuSeconds - claimedByOps - idle) : 0);
  /** An op's own main-thread seconds in the window: its counters', and what its async fn did after its awaits. */
  const ownMain = (op: OpProfile): number => op.counters.selfSeconds + (afterAwait.get(op.id)?.perCall ?? 0) * op.counters.calls;

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
  const overhead = overheadRates(unclaimedMain, producedTotal, claimedMain, run.mainThreadCpuSeconds, run.seconds);
  // V8's own helper threads (GC, compilers) use some CPU whatever the ops do; only process CPU
  // beyond that share is worker CPU the per-task clock missed. Since plumber-data times each task
  // from the end of the previous one, the workers' clock sees nearly all of it and this is 0.
  const runtimeOther = Math.min(otherCpu, C.runtimeThreadsCpuFraction * (mainCpu + workerCpu));
  const unseenTotal = cpuClockIsReal && workerCpu > 0 ? otherCpu - runtimeOther : 0;
  const toWorkers = unseenTotal > 0;
  const unseenWorker = (own: number): number => (toWorkers ? (unseenTotal * own) / workerCpu : 0);
  // Other-thread CPU no op is charged with (the runtime's GC and compiler threads, libuv work of
  // ops that count no calls) follows the work the ops do: it is shared in proportion to each op's
  // own CPU, so a cache that removes the work removes it too. With no op CPU at all it stays a
  // per-element cost.
  const spread = toWorkers ? runtimeOther : libuvLatency > 0 ? 0 : otherCpu;
  let ownCpuTotal = 0;
  for (const op of profile.ops) ownCpuTotal += ownMain(op) + op.counters.dispatchSeconds + op.counters.workerCpuSeconds;
  const spreadOf = (op: OpProfile): number =>
    ownCpuTotal > 0 ? (spread * (ownMain(op) + op.counters.dispatchSeconds + op.counters.workerCpuSeconds)) / ownCpuTotal : 0;
  // Little's law: mean libuv calls in flight over the window. Above the pool size, the measured
  // latency includes queueing for a pool thread, which the service time must not.
  const libuvInFlight = run.seconds > 0 ? libuvLatency / run.seconds : 0;
  const libuvQueueShare = libuvInFlight > machine.libuvThreads ? machine.libuvThreads / libuvInFlight : 1;

  const ops = new Map<string, OpMeasure>();
  for (const op of profile.ops) {
    const c = op.counters;
    const inputBytes = inputBytesOf(op);
    const own = ownMain(op);
    const awaited = afterAwait.get(op.id);
    const placement: Placement = op.placement;
    let isAsync = placement !== 'worker' && (c.asyncCalls > 0 || (op.fnAsync === true && c.calls === 0));
    let asyncCalls = c.asyncCalls;
    let latency = c.asyncCalls > 0 ? c.asyncLatencySeconds / c.asyncCalls : 0;
    // A source that awaits without counting its calls (an async iterable in `from`, `lines`): the
    // time its consumer waited on it beyond its own sync time is its latency, one call per element.
    // Only for sources the library does not run on its parallel engine, which also adds its own
    // waits to `waitSeconds` and would count them twice.
    const inferred = op.inputs.length === 0 && asyncCalls === 0 && (op.kind === 'from' || op.kind === 'lines') && c.produced > 0 ? Math.max(0, c.waitSeconds - c.selfSeconds) : 0;
    if (inferred > 0 && inferred / c.produced >= C.minInferredLatencySeconds) {
      isAsync = true;
      asyncCalls = c.produced;
      latency = inferred / c.produced;
    }
    const tunable =
      (fnKinds(op) && (isAsync || placement === 'worker')) || op.kind === 'interleave' || op.kind === 'files';
    // Root elements this operator's counters cover (see atRoot).
    const per = atRoot.has(op.id) ? (root?.counters.produced ?? n) : n;
    ops.set(op.id, {
      op,
      visitRatio: c.produced / per,
      producedInWindow: c.produced + (atRoot.has(op.id) ? n - per : 0),
      callsPerRoot: c.calls / per,
      selfPerRoot: own / per,
      dispatchPerRoot: c.dispatchSeconds / per,
      overheadPerRoot: (overhead.perElement * c.produced + overhead.perClaimedSecond * (own + c.dispatchSeconds)) / per,
      overheadWorkPerRoot: (overhead.perClaimedSecond * (own + c.dispatchSeconds)) / per,
      workerPerRoot: (c.workerCpuSeconds + unseenWorker(c.workerCpuSeconds)) / per,
      workerUnseenPerRoot: unseenWorker(c.workerCpuSeconds) / per,
      otherCpuPerRoot: ((!toWorkers && placement === 'libuv' && libuvLatency > 0 ? (otherCpu * c.asyncLatencySeconds) / libuvLatency : 0) + spreadOf(op)) / per,
      asyncPerRoot: asyncCalls / per,
      latency,
      service: placement === 'libuv' ? latency * libuvQueueShare : latency,
      ...(() => {
        if (!isAsync || c.asyncCalls <= 0 || history.length === 0) return { latencySlope: 0 };
        const fit = fitLatency(op, currentConcurrency(op, isAsync), latency, history);
        return { latencySlope: fit.slope, latencyFit: fit.fit };
      })(),
      diskPerRoot: c.diskBytesRead / per,
      bytesPerElement: c.produced > 0 ? c.bytesProduced / c.produced : 0,
      inputBytesPerElement: inputBytes ?? 0,
      concurrency: placement === 'main' && !isAsync && op.kind !== 'interleave' ? 1 : currentConcurrency(op, isAsync),
      isAsync,
      tunable,
      movable:
        fnKinds(op) &&
        placement === 'main' &&
        (!isAsync || awaited?.works === true) &&
        op.fnModule !== undefined &&
        op.moveBlocked === undefined &&
        c.calls > 0,
      move: withAwaited(moveOf(op, inputBytes), awaited),
    });
  }
  const measured: Measured = {
    profile,
    rootId: profile.pipeline.rootId,
    unit: rootUnitOf(profile),
    rootElements,
    measuredRate,
    ops,
    order: profile.ops.map((o) => o.id),
    consumers,
    children,
    unattributedOtherCpuPerRoot: ownCpuTotal > 0 ? 0 : spread / n,
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
    if (om.op.placement !== 'worker' || !fnKinds(om.op)) continue;
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

/**
 * How much more input a call of `now`'s op took than a call of the same op in an earlier run
 * (`then`): the ratio of their input bytes per element, when both runs measured it, within
 * [1/inputScaleMax, inputScaleMax]; 1 otherwise. Every run starts from the pipeline's first
 * element, and a faster one reaches further into the data: the text example's run as written
 * measured tokenize on emails of 2.0 kB, the run with it in worker threads on emails of 3.5 kB. A
 * per-call cost carried from one run to the other is carried per byte, so the two stretches are
 * compared on the same work. A fn whose inputs are all alike (a fixed-size image, a number) has
 * the same bytes per call in every run, and keeps its figure.
 */
function inputScale(now: OpMeasure, then: OpMeasure): number {
  const a = now.inputBytesPerElement;
  const b = then.inputBytesPerElement;
  if (!(a > 0 && b > 0 && Number.isFinite(a) && Number.isFinite(b))) return 1;
  return Math.min(C.inputScaleMax, Math.max(1 / C.inputScaleMax, a / b));
}

/**
 * The window's bytes per call ÷ the sample's (both by the library's estimate), or 1 when either is
 * unknown or they agree within C.moveSampleAgreement. A clone's cost grows with what it copies, and
 * a handful of elements sampled from a corpus whose sizes spread over two orders of magnitude can
 * average far from its mean: six emails of the text example averaged 53 kB where the window's
 * averaged 3.8 kB, and priced at the sample's 0.9 ms a call to clone back, moving tokenize looked
 * like a loss that measured 2×.
 */
function bytesRatio(window: number | undefined, sample: number | undefined): number {
  if (!(window !== undefined && sample !== undefined && window > 0 && sample > 0 && Number.isFinite(window) && Number.isFinite(sample))) return 1;
  const r = window / sample;
  return Math.max(r, 1 / r) <= C.moveSampleAgreement ? 1 : r;
}

/**
 * The main-thread time each async fn worked after its first await in the window, and what its
 * calls wait beyond their work, from the runner's awaited calls (`MoveCost.awaitedSeconds`): the library
 * times an async call's sync part (`selfSeconds`) and its whole latency, and the work after an
 * await (a decode after a file read) lands in neither. Per call it is the awaited calls' CPU,
 * carried to the window's elements by bytes as the clones are, less the sync part the window
 * measured. Together they cannot exceed the main-thread CPU no op claimed (`unclaimed`): beyond
 * it they are scaled down, since the window's own clock is the better witness. `works`: the fn's
 * CPU is at least `awaitedWorkShare` of its awaited calls, and it may move to worker threads.
 */
function awaitedWork(
  ops: OpProfile[],
  inputBytesOf: (op: OpProfile) => number | undefined,
  unclaimed: number,
): Map<string, { perCall: number; wait: number; works: boolean }> {
  const found = new Map<string, { perCall: number; wait: number; works: boolean }>();
  let total = 0;
  for (const op of ops) {
    const mc = op.moveCost;
    const c = op.counters;
    if (!mc || mc.awaitedSeconds === undefined || op.placement !== 'main' || !fnKinds(op) || c.calls <= 0 || c.asyncCalls <= 0) continue;
    if (!(Number.isFinite(mc.mainCpuSeconds) && mc.mainCpuSeconds >= 0 && Number.isFinite(mc.awaitedSeconds) && mc.awaitedSeconds >= 0)) continue;
    const cpuPerCall = mc.mainCpuSeconds * bytesRatio(inputBytesOf(op), mc.inSizeBytes);
    const perCall = Math.max(0, cpuPerCall - c.selfSeconds / c.calls);
    const works = mc.mainCpuSeconds >= C.awaitedWorkShare * mc.awaitedSeconds;
    found.set(op.id, { perCall, wait: Math.max(0, mc.awaitedSeconds - mc.mainCpuSeconds), works });
    total += perCall * c.calls;
  }
  if (total > unclaimed) for (const v of found.values()) v.perCall *= unclaimed / total;
  return found;
}

/** An async fn's move, with what its awaited calls measured (see `awaitedWork`); none without a measured move. */
function withAwaited(move: OpMeasure['move'], awaited: { perCall: number; wait: number } | undefined): OpMeasure['move'] {
  if (!move || !awaited) return move;
  return { ...move, awaited: { afterAwait: awaited.perCall, wait: awaited.wait } };
}

/**
 * A measured move cost per call (see `OpMeasure.move`); undefined when absent or unusable. The
 * clones are carried from the sample to the window's elements by their bytes (`bytesRatio`):
 * `inputBytes` is what the op's input produced per element in the window, and the output's bytes
 * per call are the op's own.
 */
function moveOf(op: OpProfile, inputBytes: number | undefined): OpMeasure['move'] {
  const mc = op.moveCost;
  if (!mc || !(mc.samples > 0)) return undefined;
  const ok = (x: number) => Number.isFinite(x) && x >= 0;
  if (!ok(mc.cloneInSeconds) || !ok(mc.cloneOutSeconds)) return undefined;
  const c = op.counters;
  const inScale = bytesRatio(inputBytes, mc.inSizeBytes);
  // A filter sends back a boolean whatever it was given: nothing to scale.
  const outScale = op.kind === 'filter' ? 1 : bytesRatio(c.calls > 0 ? c.bytesProduced / c.calls : undefined, mc.outSizeBytes);
  const cloneIn = mc.cloneInSeconds * inScale;
  const cloneOut = mc.cloneOutSeconds * outScale;
  let ratio = 1;
  // The worker/main ratio comes from calling the fn on a few samples over and over. It speaks for
  // the pipeline only when those repeated calls cost what the fn cost per call in the window: a fn
  // that caches by input (a tokenizer's word cache) or whose cost depends on the input runs far
  // cheaper on a handful of repeated samples, and the ratio of two such figures is noise. Samples
  // larger than the window's elements are compared per byte (`inScale`): emails 14× the mean that
  // cost 13× the mean call are the same work, and what they measured in a worker speaks for it.
  const perCall = op.counters.calls > 0 ? op.counters.selfSeconds / op.counters.calls : undefined;
  const sampleCall = mc.mainCpuSeconds * inScale;
  const representative = perCall !== undefined && perCall > 0 && sampleCall > 0 && Math.max(perCall, sampleCall) / Math.min(perCall, sampleCall) <= C.moveSampleAgreement;
  const probed = mc.workerCpuSeconds !== undefined && ok(mc.workerCpuSeconds) && mc.mainCpuSeconds > 0 ? mc.workerCpuSeconds / mc.mainCpuSeconds : undefined;
  if (representative && probed !== undefined) ratio = Math.min(C.workerCpuRatioMax, Math.max(C.workerCpuRatioMin, probed));
  // Below what the model prices, the probe's figure is a reason to try the move, not a price:
  // even from calls that were not representative (a tokenizer's cached words), a worker that ran
  // them at half the main thread's CPU is worth one run with the move.
  const probeRatio = probed !== undefined && probed < ratio ? probed : undefined;
  const scaled = inScale !== 1 ? inScale : outScale;
  return { cloneIn, cloneOut, ...(scaled !== 1 ? { sizeScale: scaled } : {}), workerCpuRatio: ratio, ...(probeRatio !== undefined ? { probeRatio } : {}) };
}

/**
 * Seconds a moved call's clones cost each side, main thread and worker alike: half of the input's
 * round (serialised on the main thread, deserialised in the worker) plus half of the output's
 * (the other way round).
 */
export function cloneSide(move: NonNullable<OpMeasure['move']>): number {
  return (move.cloneIn + move.cloneOut) / 2;
}

/**
 * How many of `id`'s instances run at once because it sits inside inner datasets: the product,
 * over its enclosing interleaves, of the inner datasets each pulls at once — min(cycleLength,
 * parallelism) (src/data/internal/ops/interleave.ts: at most cycleLength are open, and
 * `parallelism` of them are pulled ahead concurrently). A flatMap flattens its inner datasets one
 * after another, so it multiplies by 1. `outer` gives an interleave's (cycleLength, parallelism)
 * under some configuration.
 */
export function nesting(m: Measured, id: string, outer: (interleaveId: string) => { cycle: number; parallelism: number }): number {
  let factor = 1;
  let cur = m.ops.get(id)?.op.parentId;
  for (let guard = 0; cur !== undefined && guard <= m.order.length; guard++) {
    const parent = m.ops.get(cur);
    if (!parent) break;
    if (parent.op.kind === 'interleave') {
      const o = outer(cur);
      factor *= Math.max(1, Math.min(o.cycle, o.parallelism));
    }
    cur = parent.op.parentId;
  }
  return factor;
}

/** The nearest interleave enclosing `id` (through its `parentId` chain), if any. */
export function enclosingInterleave(m: Measured, id: string): string | undefined {
  let cur = m.ops.get(id)?.op.parentId;
  for (let guard = 0; cur !== undefined && guard <= m.order.length; guard++) {
    const parent = m.ops.get(cur);
    if (!parent) return undefined;
    if (parent.op.kind === 'interleave') return cur;
    cur = parent.op.parentId;
  }
  return undefined;
}

/**
 * Mean latency per call of an awaiting op at `k` calls in flight (see `latencySlope`). Two runs
 * cannot tell a resource with a hard knee (a service with 6 slots: 4.3 ms up to 6 in flight,
 * then queueing) from one whose latency grows with every call (examples/remote: 32 ms at 1, 89 ms
 * at 216, and 68 in flight measured 0.84× of 128); the line through them is exact for the second
 * and errs low for the first, so the plan never asks for fewer calls than the rate needs.
 */
export function latencyAt(om: OpMeasure, k: number): number {
  if (om.latencySlope <= 0) return om.latency;
  return Math.max(om.latency + om.latencySlope * (k - om.concurrency), 0.05 * om.latency);
}

/** Seconds one call holds its resource at `k` calls in flight: the service time scaled like the latency. */
export function serviceAt(om: OpMeasure, k: number): number {
  return om.latency > 0 ? (om.service * latencyAt(om, k)) / om.latency : om.service;
}

/**
 * Ids of `id` and everything upstream of it: its inputs and, for an interleave or flatMap, the
 * operators of its inner datasets (they name it as `parentId`) and everything upstream of those.
 */
export function upstreamClosure(m: Measured, id: string): Set<string> {
  const seen = new Set<string>();
  const stack = [id];
  while (stack.length > 0) {
    const cur = stack.pop() as string;
    if (seen.has(cur)) continue;
    seen.add(cur);
    for (const input of m.ops.get(cur)?.op.inputs ?? []) stack.push(input);
    for (const child of m.children.get(cur) ?? []) stack.push(child);
  }
  return seen;
}

/** Ids strictly downstream of `id`, following consumers to the root. */
export function downstream(m: Measured, id: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>([id]);
  const stack = [...(m.consumers.get(id) ?? [])];
  while (stack.length > 0) {
    const cur = stack.pop() as string;
    if (seen.has(cur)) continue;
    seen.add(cur);
    out.push(cur);
    stack.push(...(m.consumers.get(cur) ?? []));
  }
  return out;
}

/**
 * How many times the pipeline reads what `id` produces in its whole life: the product of the
 * counts of the repeats downstream of it; Infinity when one repeats forever (no count, or a
 * negative one) and 1 when none repeats.
 */
export function passesOver(m: Measured, id: string): number {
  let passes = 1;
  for (const d of downstream(m, id)) {
    const op = m.ops.get(d)?.op;
    if (op?.kind !== 'repeat') continue;
    const count = op.knobs.count;
    if (count === undefined || count === null || count < 0) return Infinity;
    passes *= Math.max(1, count);
  }
  return passes;
}
