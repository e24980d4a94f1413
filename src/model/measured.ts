/**
 * What `measure` (./measure.ts) makes of a profile: each operator's demands per root element and
 * the graph's shape. Types only, so every part of the model can name them without importing the
 * measuring itself.
 */
import type { OpProfile, Profile } from '../shared/profile';
import type { RootUnit } from './describe';

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
  /** Its `parallelism` knob changes something (an async fn, a worker map, reads in flight, interleave) and its library has that lever. */
  tunable: boolean;
  /**
   * A fn on the main thread whose module is known and that works rather than waits: a sync fn, or
   * an async fn whose calls the runner awaited and timed (`move.awaited`) and that spent at least
   * `awaitedWorkShare` of them on its own CPU, and whose elements a copy between threads leaves
   * as they are (no `op.moveBlocked`), in a library that can run it there (the `placement` lever).
   * It can move to worker threads.
   */
  movable: boolean;
  /** A reader's work per element by part (read, decompress, parse), its shards and what binds (./readers.ts). */
  reader?: ReaderParts;
  /**
   * Main-thread seconds per call (its own time and its share of the runtime's) that an earlier run
   * in `history` measured for this fn on the main thread, for an op this run had in worker
   * threads: what moving it back costs, measured, where the workers' clocks would only guess it
   * (a fn that allocates large arrays can cost far less on the main thread than in a pool).
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
     * (see `moveOf`): below 1 when the few sampled elements ran larger than the window's mean.
     */
    sizeScale?: number;
    /** The fn's CPU in a worker ÷ on the main thread, clamped to [workerCpuRatioMin, workerCpuRatioMax]; 1 when not measured. */
    workerCpuRatio: number;
    /**
     * What the probe measured of that ratio when it ran below the ratio the model prices by (also
     * on calls that were not representative): the model does not price a move by it, but a trial
     * run with the move may (see `trialPlan` in ./index.ts).
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

/** The part of a reader's work that takes the most time per element. */
export type ReaderPart = 'read' | 'decompress' | 'parse';

/** A reader's work per element it yields, by part (seconds), and what binds. */
export interface ReaderParts {
  read: number;
  decompress: number;
  parse: number;
  /** The largest part. */
  binds: ReaderPart;
  /** Decompression and parsing together outweigh the waits: worker threads can take the work. */
  cpuBound: boolean;
  /** Shards the reader matched, when it said (`knobs.numShards`): the most it can read at once. */
  shards?: number;
  /** Shards it read at once in the run. */
  parallelism: number;
}
