/**
 * The profile: what one traced run of a pipeline measured. Written by the runner, read by the
 * model, the language server, the extension and the CLI. Versioned JSON: bump PROFILE_VERSION on
 * any change a reader could misread, and keep `profile.schema.json` in step (a unit test checks).
 *
 * Rates are root elements per second unless a name says otherwise. Times are seconds.
 */
import type { CallSite, Dialect, KnobOverride, Lever, OpCounters, OpKind, OpKnobs, Placement } from '../data/tracing';

export type { CallSite, Dialect, KnobOverride, Lever, OpCounters, OpKind, OpKnobs, Placement };

export const PROFILE_VERSION = 1 as const;

/** A slice of the measured window: root elements that arrived in it and its length in seconds. */
export interface WindowSlice {
  elements: number;
  seconds: number;
}

/** The machine the run happened on. */
export interface Machine {
  /** Logical cores available to the process (`os.availableParallelism()`). */
  cores: number;
  memoryTotalBytes: number;
  memoryFreeBytes: number;
  nodeVersion: string;
  platform: string;
  arch: string;
  cpuModel: string;
  /** libuv thread-pool size (UV_THREADPOOL_SIZE, default 4): the concurrency of fs, zlib and sharp work. */
  libuvThreads: number;
  /** Sequential read bandwidth of the filesystem holding the pipeline's files, from a short probe; absent when not measured. */
  diskReadBytesPerSec?: number;
  /** Which clock measured per-thread CPU: Node ≥ 22 `threadCpuUsage`, Linux `schedstat`, or wall time as a fallback. */
  cpuClock: 'threadCpuUsage' | 'schedstat' | 'wall';
  /**
   * Cores this process could actually get just before the run (0 < x ≤ cores), from a short probe
   * that spins one worker thread per core and sums the CPU time they were given. Below `cores`
   * when other work shares the machine. Absent when not measured.
   */
  availableCores?: number;
  /**
   * Main-thread seconds one worker task costs besides its elements (posting it, taking the result
   * back), measured on this machine with plumber-data's worker pool and an empty task before the
   * run. Absent when not measured (the model then uses its constant).
   */
  workerDispatchSeconds?: number;
  /** Worker-thread seconds one task costs besides the fn itself (receiving, replying), measured with the same calibration. */
  workerTaskOverheadSeconds?: number;
  /**
   * True when Linux schedules the runner's threads as one group against other programs: autogroup
   * is on (/proc/sys/kernel/sched_autogroup_enabled) and the runner leads its own session, as it
   * always does. Other programs then keep their share however many threads the pipeline runs (a
   * one-thread program beside a pipeline of three busy threads on 2 cores keeps a whole core),
   * where threads of one session share the cores one by one. Absent off Linux.
   */
  groupScheduled?: boolean;
  workerChunking?: { overheadShare: number; maxTaskSeconds: number; maxTaskBytes: number; maxGroup: number };
  /** V8's heap limit in the runner (`v8.getHeapStatistics().heap_size_limit`): a process whose heap must grow past it crashes. Absent in older profiles. */
  heapLimitBytes?: number;
  /**
   * Resident bytes one worker thread adds to the process, measured: the growth of the runner's
   * resident set from starting a one-thread pool and serving tasks with it (src/runner/calibrate.ts).
   * Absent when not measured.
   */
  workerThreadRssBytes?: number;
}

/** Knob overrides applied to a run, keyed by operator id (`OpProfile.id`). */
export type Overrides = Record<string, KnobOverride>;

/** How and how long the pipeline ran. */
export interface RunInfo {
  startedAt: string;
  /**
   * Root elements consumed during the measured window (after warm-up), plus `partialElement` when
   * the window ended between two.
   */
  elements: number;
  /**
   * The share of one more root element the window held when its budget ended it between two (0 <
   * x < 1): what the root had taken towards it over what it takes per element (20 of a batch's 32
   * images: 0.63). Every operator's counters include that work. Absent when the window ended on a
   * root element, or the root takes nothing finer than its own elements.
   */
  partialElement?: number;
  /** Wall seconds of the measured window. */
  seconds: number;
  warmupElements: number;
  warmupSeconds: number;
  /**
   * Seconds from the start of iteration to the first element (part of `warmupSeconds`): the
   * pipeline's start (modules loading, worker threads starting), not its rate. Absent in profiles
   * of older runners and when no element came.
   */
  firstElementSeconds?: number;
  /** Successive rate estimates agreed within 2% before the budget ran out. */
  converged: boolean;
  /** Why measurement stopped. */
  endReason: 'converged' | 'budget' | 'exhausted' | 'error' | 'cancelled';
  /** Root rate estimates taken during the run, in order (elements per second): cumulative, each over the window so far. */
  rateEstimates: number[];
  /**
   * Consecutive, non-overlapping slices of the measured window, in order: root elements counted in
   * each and its length. Their spread says how much the rate moved while it was measured, so a
   * reader can tell a real difference between two runs from noise; kept as counts and times (not
   * rates) so slices holding one or two elements of a slow pipeline pool without the heavy tail of
   * 1 ÷ Δt. Absent when the window was too short to slice (fewer than 2 slices).
   */
  windowSlices?: WindowSlice[];
  /**
   * The same window cut as finely as its points were taken (up to 48 slices, in order; their sums
   * are the slices'): where the run stood along the data as it went, so two runs can be timed on
   * the same stretches of elements (engine/paired.ts). Absent when no finer than `windowSlices`.
   */
  windowCurve?: WindowSlice[];
  /**
   * Cores this process could get during the measured window: (its own CPU + the machine's idle
   * CPU) ÷ the window's wall time, from /proc/stat, clamped to (0, machine.cores]. What other
   * work on the machine left over while the pipeline ran. Absent off Linux.
   */
  availableCores?: number;
  /**
   * The share of a core the main thread got while it was runnable during the window (0 < x ≤ 1):
   * run time ÷ (run time + run-queue wait), from /proc/thread-self/schedstat. Below 1 when other
   * threads compete for the cores; with `availableCores` it tells how many busy threads other work
   * runs, and so what share more threads of the pipeline would get. Absent when the main thread
   * was rarely runnable, or off Linux.
   */
  mainThreadShare?: number;
  /** The machine's 1-minute load average at the end of the window (`os.loadavg()[0]`). */
  loadAverage?: number;
  overrides: Overrides;
  /** Main-thread CPU seconds in the measured window (per `Machine.cpuClock`). */
  mainThreadCpuSeconds: number;
  /** Whole-process CPU seconds (all threads) in the measured window, from `process.cpuUsage()`. */
  processCpuSeconds: number;
  /** Peak resident set size of the runner process, bytes. */
  peakRssBytes: number;
  /**
   * Resident bytes of the process just before the pipeline was iterated, after a full garbage
   * collection: the runtime, the modules and the built datasets, before any operator holds an
   * element (src/runner/memory.ts). Absent when not measured.
   */
  baseRssBytes?: number;
  /**
   * The largest resident set read while the pipeline ran (every 25 ms from its first pull to the
   * window's end): unlike `peakRssBytes`, which is the process's whole life, it leaves out the
   * probes run before the pipeline and the measurements after it. Absent when not measured.
   */
  windowPeakRssBytes?: number;
  /**
   * Resident bytes the runner's own probes before the window left in the process outside V8's
   * heap (settled, after a full collection each side): the threads of the worker calibration and
   * of the cores' probe are gone, but their arenas and pages stay resident. The heap pages they
   * touched, the pipeline's own allocation touches too. A run without probes starts this much
   * lower; `baseRssBytes` includes it. Absent when not measured.
   */
  probesRssBytes?: number;
  /**
   * What a person should know about how the run went that is not a measurement: a process the
   * pipeline started that left the run's process group and was ended with the run, one sentence
   * each. Absent when there is nothing to say.
   */
  warnings?: string[];
}

/** One operator as it ran. Counters cover the measured window only. */
export interface OpProfile {
  /**
   * Stable id within the profile: `${line}:${column}` when the operator is in the pipeline's own
   * file, `${relativePath}:${line}:${column}` when it is in another file (POSIX path relative
   * to the pipeline file's directory, e.g. `lib/decode.ts:4:10`), `${kind}#${n}` when the
   * call site is unknown. Overrides and plans refer to operators by this id.
   */
  id: string;
  kind: OpKind;
  site?: CallSite;
  /** Ids of the operators it pulls from. */
  inputs: string[];
  fnName?: string;
  fnAsync?: boolean;
  /** Where the fn is exported from, when the runner or library found it: such a fn can run in worker threads. */
  fnModule?: { file: string; exportName: string };
  placement: Placement;
  knobs: OpKnobs;
  random: boolean;
  /**
   * The runner called the fn twice on the same sampled element with identical context and got
   * different results: the fn draws randomness the library does not know about (`Math.random`,
   * crypto; an async fn's calls are awaited). Absent when not checked (no sample, results that cannot be compared).
   */
  randomObserved?: boolean;
  /**
   * For operators built inside another operator's fn (an interleave's or flatMap's inner
   * datasets): the id of that operator. Their counters add up over every inner instance.
   */
  parentId?: string;
  /** What moving this operator's fn to worker threads would cost, measured on a sample of its real input elements after the window. */
  moveCost?: MoveCost;
  /**
   * What a copy between threads changed in the sampled elements this operator's fn takes or
   * makes (a class's instances arrive as plain objects, Buffers as Uint8Arrays): its fn cannot run
   * in worker threads without changing what the pipeline computes. Absent when the sample crossed
   * unchanged, or was not checked.
   */
  moveBlocked?: MoveBlocked;
  /** What the elements this operator hands on hold in memory: measured for every sampled main-thread map/filter/flatMap. */
  held?: HeldBytes;
  /**
   * What one of the elements this operator takes in holds in memory, measured the same way on
   * copies of its sampled input elements (the elements its input operator hands on): measured for
   * every operator whose input the runner sampled. Absent when none was sampled.
   */
  inputHeld?: HeldBytes;
  cardinality?: number;
  overridden?: boolean;
  // --- issue 52 (time): what a disk cache after the operator would cost ---
  /** What `cache(path)` right after this operator would cost per element, measured where `held` is. */
  diskCacheCost?: DiskCacheCost;
  /** The library the operator belongs to (tfjs-data, Node streams, an async generator); absent: plumber-data. */
  dialect?: Dialect;
  /** The changes its own library can make (see `Lever`); absent: all of plumber-data's. The model plans only these in the dialect; more is a conversion. */
  levers?: Lever[];
  counters: OpCounters;
}

/**
 * The operator plumber-data makes for the plain iterables an interleave's fn returns (arrays,
 * generators, async iterables: no Dataset, so no operator of their own): a `from` nested in the
 * interleave, with no call site. Their elements and waits are counted there.
 */
export function isPlainInner(op: Pick<OpProfile, 'kind' | 'site' | 'parentId'>): boolean {
  return op.kind === 'from' && op.site === undefined && op.parentId !== undefined;
}

/** What a copy between threads (a structured clone) changes in an operator's elements. */
export interface MoveBlocked {
  /** The fn's input elements, or its results (a flatMap's: the elements it yields). */
  side: 'input' | 'result';
  /**
   * class: instances of a class arrive as plain objects; buffer: Node Buffers arrive as plain
   * Uint8Arrays; uncloneable: the values cannot be copied at all; altered: other parts lost
   * (properties keyed by symbols).
   */
  change: 'class' | 'buffer' | 'uncloneable' | 'altered';
  /** What changes, plural, for a sentence: "Sample objects", "Buffers", "functions". */
  what: string;
}

/**
 * Memory one element an operator hands on keeps alive (JS heap and array buffers), measured after
 * the window on copies of what its fn made of the sampled elements: what a cache after it holds
 * per element. The byte counters (`bytesProduced`) are an estimate made for throughput that sees
 * nothing inside a Map; the model carries the heap to the window's elements by the ratio of the two.
 */
export interface HeldBytes {
  /** Heap bytes per sampled element. */
  heapBytes: number;
  /** The byte counters' estimate of the same elements, per element. */
  sizeBytes: number;
}

/**
 * What plumber-data's `cache(path)` pays per element it writes and reads back, measured on the
 * sampled elements by doing what the library does (src/runner/diskCost.ts): serialise, checksum and
 * write each to a temporary file; read it back in blocks, checksum and deserialise. The sample is
 * repeated to a few MB so the file system's time shows; the file is read back from the page cache
 * when it holds it, as a later pass would.
 */
export interface DiskCacheCost {
  /** Elements sampled. */
  samples: number;
  /** Serialised bytes of one element (what the file holds per element, besides a 9-byte record head). */
  serializedBytes: number;
  /** Seconds to serialise, checksum and write one element (the first pass's extra work on the main thread). */
  writeSeconds: number;
  /** Seconds to read, checksum and deserialise one element (each later pass's work on the main thread). */
  readSeconds: number;
  /** Seconds a first pass waits before its first element is written: looking for the file, creating its directory and temporary file, the header and the first record, cold (src/runner/diskCost.ts). */
  startSeconds?: number;
  /** Seconds a later pass waits before its first element: looking for the file, opening it, reading and decoding its first record, cold. */
  openSeconds?: number;
}

/**
 * The cost of running an operator's fn in a worker thread instead of the main thread, per element,
 * measured on a sample of real input elements (seconds, bytes). A structured clone is paid on the
 * sending side (serialise) and the receiving side (deserialise); each figure here is the whole
 * round (both sides) for one direction.
 */
export interface MoveCost {
  /** Elements sampled. */
  samples: number;
  /** Seconds to structured-clone one input element (main → worker). */
  cloneInSeconds: number;
  /** Seconds to structured-clone one output element (worker → main). */
  cloneOutSeconds: number;
  /** Serialised bytes of one input element, and of one output element. */
  inBytes: number;
  outBytes: number;
  /**
   * The library's size estimate (the one its byte counters use, `bytesProduced`) of one sampled
   * input and of one call's output, mean over the sample: the model compares them with the
   * window's bytes per call to carry the clone costs from the sample to the window's elements.
   */
  inSizeBytes?: number;
  outSizeBytes?: number;
  /** CPU seconds of one fn call on the main thread, measured on the sample. */
  mainCpuSeconds: number;
  /** CPU seconds of one fn call inside a worker thread on the same sample; absent when the fn could not be loaded in a worker. */
  workerCpuSeconds?: number;
  /**
   * Resident bytes the process grew by from starting a worker thread (with the runner's loader
   * flags, as the library's pool does) and running this fn in it: the thread, the fn's module and
   * its garbage between collections, at the largest reading while the fn was timed there
   * (src/runner/workerRss.ts). Measured where `workerCpuSeconds` is.
   */
  workerRssBytes?: number;
  /**
   * For an async fn: wall seconds of one call awaited alone on the sample, what it waits for
   * (a read, a request) and its work together. Its `mainCpuSeconds` is then the time the main
   * thread's event loop was active during the call (its work, after its awaits too), median per
   * call. Absent for sync fns.
   */
  awaitedSeconds?: number;
}

/** Why a run failed, in words a person can act on. */
export interface ProfileError {
  kind: 'not-found' | 'compile' | 'load' | 'no-pipeline' | 'throw' | 'timeout' | 'exit' | 'oom' | 'empty' | 'cancelled' | 'override' | 'internal';
  message: string;
  /** The operator that failed, if known. */
  opId?: string;
  /** The index of the element that failed in that operator's input, if known. */
  elementIndex?: number;
  site?: CallSite;
  /** Pipelines that were found, when the one asked for was not. */
  available?: string[];
}

/** A profile: one run of one pipeline. */
export interface Profile {
  version: typeof PROFILE_VERSION;
  pipeline: {
    /** Absolute path of the module that exports the pipeline. */
    file: string;
    /** The export's name (`default` for a default export). */
    exportName: string;
    /** Id of the operator whose output is the pipeline's output. */
    rootId: string;
  };
  machine: Machine;
  run: RunInfo;
  ops: OpProfile[];
  /**
   * Present when the module was a training script (it iterated a dataset itself) and the runner
   * watched its loop instead of pulling the pipeline: how the loop's time split between waiting
   * for input and its own steps. `run` then describes the same window (its elements are the
   * elements the loop took), with the pipeline's share of the CPU: its `mainThreadCpuSeconds` and
   * `processCpuSeconds` leave out the trainer's own main-thread CPU (src/runner/train.ts,
   * `pipelineShare`), so the pipeline model reads the pipeline's demands.
   */
  trainer?: TrainerInfo;
  error?: ProfileError;
}

/**
 * A training loop as it ran over the measured window. A step is the time from an element being
 * handed to the loop to the loop's next `next()` call; a wait is the time from that call to the
 * element arriving. Main-thread CPU is read at each of these moments (per `Machine.cpuClock`).
 */
export interface TrainerInfo {
  /** Steps measured (elements the loop took in the window). */
  steps: number;
  /** Wall seconds of the window: the sum of `waitSeconds` and `stepSeconds`. */
  seconds: number;
  /** Seconds the loop waited in `next()` for its input. */
  waitSeconds: number;
  /** Seconds the loop spent in its own steps. */
  stepSeconds: number;
  /** Main-thread CPU seconds while the loop waited: the pipeline's main-thread work that held the loop up. */
  waitMainCpuSeconds: number;
  /** Main-thread CPU seconds during the steps: the trainer's own, plus pipeline work that ran in its awaits. */
  stepMainCpuSeconds: number;
  /** The longest single wait, seconds. */
  maxWaitSeconds: number;
  /**
   * Seconds the pipeline's operators ran on the main thread during the steps, as they timed
   * themselves: work done in the trainer's awaits (async completions, worker dispatch), which the
   * step time includes but the trainer did not do.
   */
  pipelineStepSeconds: number;
  /** Steps taken before the window (warm-up: the model's first steps compile and allocate). */
  warmupSteps: number;
  /** Why the window ended: the budget was spent, or the loop stopped asking (its data or its epochs ran out). */
  endReason: 'budget' | 'exhausted';
}

/** Messages the runner streams on its IPC channel, in order: any number of `progress`, then one `profile`. */
export type RunnerMessage =
  | { type: 'progress'; phase: 'loading' | 'warmup' | 'measuring'; elements: number; seconds: number; rate?: number }
  | { type: 'profile'; profile: Profile }
  | { type: 'pipelines'; file: string; pipelines: string[] }
  | SampleMessage;

/** A sample run's result (mode `sample`): each element's canonical digest in the order the pipeline yielded it, or why they cannot be compared. */
export interface SampleMessage {
  type: 'sample';
  digests: string[];
  /** The pipeline ended before the sample was full. */
  exhausted: boolean;
  /** Why the elements cannot be compared (one holds a function, the pipeline threw). */
  notComparable?: string;
}
