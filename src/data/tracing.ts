/**
 * The tracing contract between plumber-data and whoever watches it run (the Plumber runner).
 *
 * The two meet through global symbols rather than imports, because a user's pipeline may load its
 * own copy of plumber-data while the runner ships another: `Symbol.for` keys are shared by every
 * copy in the process. With no tracer and no overrides installed, the library records nothing and
 * captures no call sites, so an untraced pipeline pays (almost) nothing.
 */

/** Every operator the library offers, by the method or function name a user writes. */
export type OpKind =
  | 'from'
  | 'range'
  | 'files'
  | 'lines'
  | 'map'
  | 'filter'
  | 'flatMap'
  | 'interleave'
  | 'batch'
  | 'unbatch'
  | 'shuffle'
  | 'prefetch'
  | 'cache'
  | 'repeat'
  | 'take'
  | 'skip'
  | 'zip'
  | 'concatenate'
  | 'shard'
  | 'enumerate'
  | 'window'
  | 'paddedBatch'
  | 'bucketBySequenceLength'
  | 'groupByWindow'
  | 'rebatch'
  | 'scan'
  | 'sampleFromDatasets'
  | 'chooseFromDatasets'
  | 'ignoreErrors'
  | 'csv'
  | 'jsonLines'
  | 'tfrecord'
  | 'webdataset'
  | 'parquet'
  | 'arrow';

/**
 * The readers of stored formats: sources that read shards (local files or http(s) URLs), decompress
 * them when they are compressed and parse them into elements. Each has the knobs `parallelism`
 * (shards read at once) and `placement` (where decompression and parsing run: 'main' or 'worker').
 */
export const READER_KINDS: ReadonlySet<OpKind> = new Set<OpKind>(['csv', 'jsonLines', 'tfrecord', 'webdataset', 'parquet', 'arrow']);

/** Where an operator's own work runs. `libuv` is Node's thread pool (fs, zlib, sharp); `remote` is worker processes reached through a cluster (BullMQ on Redis). */
export type Placement = 'main' | 'worker' | 'libuv' | 'remote';

/**
 * The way a pipeline is written: plumber-data, or a library Plumber reads as it is (tfjs-data,
 * Node's stream operators and `pipeline`/`compose`, chains of async generator functions). The
 * runner's adapters report foreign stages as operators of the same kinds.
 */
export type Dialect = 'plumber-data' | 'tfjs-data' | 'node-streams' | 'async-generator';

/**
 * A change the operator's own library can make without rewriting the pipeline:
 * - `parallelism`: calls in flight (async fns) or worker threads (with `placement`);
 * - `placement`: run the fn in worker threads;
 * - `prefetch`: a buffer after the operator (tfjs-data's `.prefetch(n)`, a Node stream's `highWaterMark`);
 * - `cache`, `deterministic`, `cycleLength`: as plumber-data's.
 */
export type Lever = 'parallelism' | 'placement' | 'prefetch' | 'cache' | 'deterministic' | 'cycleLength';

/** A position in the user's source: absolute file path, 1-based line and column of the operator's method name. */
export interface CallSite {
  file: string;
  line: number;
  column: number;
}

/** The knob values an operator was built with (after overrides), as the runtime resolved them. */
export interface OpKnobs {
  /** As written: a number, `'auto'`, or absent. */
  parallelism?: number | 'auto';
  /** What the runtime actually used. */
  resolvedParallelism?: number;
  deterministic?: boolean;
  /** prefetch(n), shuffle(n): buffer size. */
  bufferSize?: number;
  /** batch(n). */
  batchSize?: number;
  dropRemainder?: boolean;
  /** interleave(cycleLength). */
  cycleLength?: number;
  /** take(n), skip(n), repeat(n): the count; repeat() without a count is `Infinity`, encoded as -1. */
  count?: number;
  /** cache(path): the path; cache(): undefined with `cacheMemory: true`. */
  cachePath?: string;
  cacheMemory?: boolean;
  /** shard(numShards, index); a reader: the shards its paths matched (known once it starts reading). */
  numShards?: number;
  shardIndex?: number;
  /** window(size, { shift, stride }): `size` is in `batchSize`; these are the rest. groupByWindow: `batchSize` is its window size. */
  shift?: number;
  stride?: number;
  /** bucketBySequenceLength: the length boundaries and the batch size of each bucket (one more than boundaries). */
  bucketBoundaries?: number[];
  bucketBatchSizes?: number[];
  /** sampleFromDatasets: the weight of each input, in input order (normalised to sum 1). chooseFromDatasets leaves it unset. */
  weights?: number[];
  /** sampleFromDatasets / shuffle: the seed, when one was given. */
  seed?: number;
  /** placement 'remote': the cluster's name (`connect({ name })`). */
  cluster?: string;
  /** map/filter with `fuse: true` that did fuse: its fn runs in the tasks (and threads) of the worker map it reads from. */
  fuse?: boolean;
}

/** What the library tells a tracer about an operator when it is built. */
export interface OpInfo {
  /**
   * Identity of the operator across the run: `${kind}@${file}:${line}:${column}` when the call site
   * is known, else `${kind}#${n}`. Operators built at the same call site (an interleave's inner
   * datasets, a helper called twice) share a key, and their counters add up.
   */
  key: string;
  kind: OpKind;
  site?: CallSite;
  /** Keys of the operators this one pulls from, in argument order. */
  inputs: string[];
  /** The user function's `name`, if the operator takes one. */
  fnName?: string;
  /**
   * The user function itself, so a tracer can find where it is exported (to tell whether it can
   * move to worker threads). Never serialised.
   */
  fn?: Function;
  /** Where the fn can be imported from, when the library knows (a map with `module`). */
  fnModule?: { file: string; exportName: string };
  /** True when the user function is declared `async` (a sync fn that returns a promise is found at run time: see `counters.asyncCalls`). */
  fnAsync?: boolean;
  placement: Placement;
  knobs: OpKnobs;
  /** The operator introduces randomness (shuffle; a map/filter declared `random: true` or handed the library's RNG). */
  random: boolean;
  /** Elements this operator will produce in one pass, when the library can tell (`Infinity` for repeat()). */
  cardinality?: number;
  /** Set when the operator was added or changed by an override rather than written in the source. */
  overridden?: boolean;
  /** The library the operator belongs to; absent: plumber-data. */
  dialect?: Dialect;
  /** The changes its library can make to it (see `Lever`); absent: every lever plumber-data has. */
  levers?: Lever[];
  /**
   * The key of the operator whose fn built this one while it ran (an interleave's or flatMap's
   * inner datasets), when the library saw it happen.
   */
  parent?: string;
}

/**
 * Counters an operator updates while it runs. The tracer owns the object; the library only adds to
 * it. Times are seconds. "Self" time excludes the time spent waiting on the operator's input.
 */
export interface OpCounters {
  /** Elements handed downstream. */
  produced: number;
  /** Elements taken from the input(s). */
  pulled: number;
  /** Main-thread seconds in the operator's own synchronous code (user fn + bookkeeping). */
  selfSeconds: number;
  /** CPU seconds worker threads spent in this operator's tasks, as measured by the workers. */
  workerCpuSeconds: number;
  /** Main-thread seconds spent posting tasks to workers and receiving their results. */
  dispatchSeconds: number;
  /** Seconds downstream spent waiting for this operator with nothing buffered. */
  waitSeconds: number;
  /** Sum over async calls of their latency from start to settle. */
  asyncLatencySeconds: number;
  /** Number of user-function calls that returned a promise. */
  asyncCalls: number;
  /** Number of user-function calls. */
  calls: number;
  /** Approximate bytes of produced elements (typed arrays, strings, buffers; sampled). */
  bytesProduced: number;
  /** Bytes read from disk by this operator (files, lines, cache(path) reads). */
  diskBytesRead: number;
  /** Files read to completion. */
  filesRead: number;
  /** Largest number of elements held in the operator's buffer at once. */
  bufferHighWater: number;
  /** Largest number of calls in flight at once. */
  inFlightHighWater: number;
  /** Cache operators: elements served from the cache rather than from upstream. */
  cacheHits: number;
  /** ignoreErrors: input errors skipped (each one a record lost on purpose). */
  errorsSkipped: number;
  /** paddedBatch / bucketBySequenceLength: positions in produced batches that hold padding. */
  paddedPositions: number;
  /** paddedBatch / bucketBySequenceLength: all positions in produced batches (padding included). */
  totalPositions: number;
  /**
   * Worker placement: tasks posted to worker threads. A task carries several elements (a chunk
   * sized from the measured per-task cost), so `dispatchSeconds / workerTasks` is the main thread's
   * cost of one task and `calls / workerTasks` the elements per task.
   */
  workerTasks: number;
  /**
   * map/filter/flatMap: calls by latency, a histogram in powers of two (`LATENCY_BUCKETS`): entry i
   * counts calls that took [2^i, 2^(i+1)) µs, entry 0 also those under 1 µs, the last also longer
   * ones. An async fn's call on the main thread counts from its call to its settling; a worker
   * map's, the fn's wall time per element in the thread. Absent until a call is timed. With
   * ordered output a slow call holds back those behind it: the spread is what prices that.
   */
  latencyHistogram?: number[];
  /** Worker placement: tasks by the wall time of the fn's calls in them, in the same buckets. */
  taskHistogram?: number[];
  /**
   * repeat: elements its input produced in its most recent complete pass, counted from that pass's
   * start (warm-up included). Absent until a pass ends. The size of a pass no operator could count
   * in advance (the lines of files, a filter's survivors).
   */
  passElements?: number;
  /** lines: bytes of the files it matched, at its latest pass's start (a pass reads them all). */
  sourceBytes?: number;
  /** Readers (and lines): bytes received over HTTP(S). Disk reads count in `diskBytesRead`. */
  netBytesRead?: number;
  /** Readers (and lines): bytes after decompression, counted only for compressed shards. */
  bytesDecompressed?: number;
  /** Readers: seconds a shard waited for bytes from the disk or the network with nothing to parse. */
  ioWaitSeconds?: number;
  /** Readers: seconds spent decompressing (on the thread that parses, or libuv's pool, as placed). */
  decompressSeconds?: number;
  /** Readers: CPU seconds spent parsing bytes into elements (on the main thread or in workers, as placed). */
  parseSeconds?: number;
  /** Readers: shards opened so far. */
  shardsOpened?: number;
  /** Cluster ops (placement 'remote'), from here on: distinct worker processes that returned results (a high-water mark, like the fields up to `remoteCores`). */
  remoteWorkers?: number;
  /** Their total `--concurrency` (jobs they run at once). */
  remoteConcurrency?: number;
  /** Cores of the hosts they run on, each host counted once. */
  remoteCores?: number;
  /** Sum over calls of the fn's wall seconds in the workers (awaited work counts). */
  remoteServiceSeconds?: number;
  /** Sum over calls of the seconds the job waited in the queue before a worker took it. */
  remoteQueueWaitSeconds?: number;
  /** Sum over calls of the rest of each call's latency: the network and Redis round trip. */
  remoteRoundTripSeconds?: number;
  /** Jobs the workers completed, and the seconds their slots were held for them (the fn, the job's Redis round trips, completing it and taking the next): a worker serves at most its concurrency × jobs ÷ seconds. */
  remoteSlotJobs?: number;
  remoteSlotSeconds?: number;
  /** Bytes of serialised elements sent to workers and of results received. */
  bytesShipped?: number;
  /** Distinct hosts the workers run on (a high-water mark; a host is its name and boot id): `remoteWorkers / remoteHosts` workers per host, `remoteCores / remoteHosts` cores each. */
  remoteHosts?: number;
  /** Workers that run on the consumer's own host (a high-water mark): they share its cores with the consumer. */
  remoteWorkersOnConsumerHost?: number;
  /** CPU seconds of the consumer's process while the op ran (the map's own handling and whatever else the process does): what competes with workers on its host. */
  remoteConsumerCpuSeconds?: number;
  /** CPU seconds of redis-server while the op ran, counted only when Redis is on the consumer's host (a loopback address). */
  remoteRedisCpuSeconds?: number;
  /**
   * Summed over the worker hosts: the wall seconds their clocks advanced between the workers'
   * reports, and the CPU seconds their cores sat idle meanwhile (from /proc/uptime). With the CPU
   * of the op's own processes there, they give the cores a host leaves to the op: (idle + ours) ÷ wall.
   */
  remoteHostWallSeconds?: number;
  remoteHostIdleSeconds?: number;
}

/** The interface a tracer installs at `globalThis[TRACER_KEY]`. */
export interface Tracer {
  /** Called once per operator instance when it is built; returns the counters it must update. Same key, same counters. */
  register(info: OpInfo): OpCounters;
  /**
   * Optional. Offered real input elements of a main-thread map/filter/flatMap with a sync fn,
   * before the fn sees them, so the tracer can later measure the fn on them (clone cost, CPU,
   * determinism). `index` is the element's index in the operator's input in this pass. Returns how
   * many input elements to pass over before offering the next (1: the very next), counted across
   * passes and across the operators built at one call site, in the order their elements come; 0
   * or less: offer no more. The library checks for this method once per operator pass and once
   * per chunk, so a tracer without it costs nothing per element.
   */
  sample?(key: string, element: unknown, index: number): number;
  /**
   * Optional. Told what the consumer of a dataset (a `for await` loop, `iterator().next()` calls)
   * does, so a tracer can split a training loop's time into waiting for input and its own step.
   * The library checks for this method once per iterator, so a tracer without it costs nothing
   * per element. A promise returned for a `'next'` event holds that pull until it settles (a
   * tracer whose budget is spent parks the loop while it reports).
   */
  consumer?(event: ConsumerEvent): void | PromiseLike<unknown>;
}

/** What the consumer of a dataset did (see `Tracer.consumer`). */
export interface ConsumerEvent {
  /** The `OpInfo.key` of the operator whose output the consumer iterates. */
  key: string;
  /**
   * `next`: the consumer asked for an element; `element`: one was handed to it; `end`: its pull
   * ended without one (the pass is over, it threw, or the iterator was returned).
   */
  type: 'next' | 'element' | 'end';
}

/**
 * A knob change applied at build time without editing the source. Keyed (see `OVERRIDES_KEY`) by
 * `${file}:${line}:${column}` of the operator's call site.
 */
export interface KnobOverride {
  /** map/filter/flatMap/interleave: the parallelism to use, or `'auto'` to let the library pick as it does for a written `'auto'`. */
  parallelism?: number | 'auto';
  /** map/filter: run the fn on the main thread or in worker threads. Worker placement needs the fn's module (from the map's own `module` option, or `module` here). */
  placement?: 'main' | 'worker';
  /** With `placement: 'worker'`: absolute path or file URL of the module that exports the fn. */
  module?: string;
  /** With `placement: 'worker'`: the export's name, when it differs from the fn's `name`. */
  exportName?: string;
  deterministic?: boolean;
  /** map/filter placed in workers right after a worker-placed map: run its fn in that map's tasks (see `MapOptions.fuse`); false undoes a written `fuse: true`. */
  fuse?: boolean;
  /** prefetch(n): its buffer size. On any other operator: insert `.prefetch(n)` right after it (0 removes an existing prefetch). */
  prefetch?: number;
  /** Insert `.cache()` (`'memory'`) or `.cache(path)` right after this operator; `false` disables an existing cache. */
  cache?: 'memory' | string | false;
  /** interleave: cycle length. */
  cycleLength?: number;
}

/** `globalThis[TRACER_KEY]`: the installed tracer, if any. */
export const TRACER_KEY: unique symbol = Symbol.for('plumber-data.tracer') as never;
/**
 * On a dataset of another library that plumber-data built from one of its own (`toTfDataset`'s
 * tfjs Dataset): the key of the plumber-data dataset's root operator, so a tracer can put the two
 * in one pipeline.
 */
export const SOURCE_KEY: unique symbol = Symbol.for('plumber-data.source') as never;
/** `globalThis[OVERRIDES_KEY]`: a `Map<string, KnobOverride>` keyed by `${file}:${line}:${column}`. */
export const OVERRIDES_KEY: unique symbol = Symbol.for('plumber-data.overrides') as never;
/** `dataset[DATASET_KEY]`: the `OpInfo.key` of the operator that produces the dataset (set on every Dataset). */
export const DATASET_KEY: unique symbol = Symbol.for('plumber-data.key') as never;

/** A fresh, zeroed counters object. */
export function newCounters(): OpCounters {
  return {
    produced: 0,
    pulled: 0,
    selfSeconds: 0,
    workerCpuSeconds: 0,
    dispatchSeconds: 0,
    waitSeconds: 0,
    asyncLatencySeconds: 0,
    asyncCalls: 0,
    calls: 0,
    bytesProduced: 0,
    diskBytesRead: 0,
    filesRead: 0,
    bufferHighWater: 0,
    inFlightHighWater: 0,
    cacheHits: 0,
    errorsSkipped: 0,
    paddedPositions: 0,
    totalPositions: 0,
    workerTasks: 0,
  };
}

/** Buckets of `OpCounters.latencyHistogram`: 2^0 … 2^25 µs (about 34 s and beyond in the last). */
export const LATENCY_BUCKETS = 26;

/** Adds one call of `seconds` to a latency histogram (see `OpCounters.latencyHistogram`), made on first use; returns it. */
export function addLatency(hist: number[] | undefined, seconds: number, count = 1): number[] {
  const h = hist ?? new Array<number>(LATENCY_BUCKETS).fill(0);
  const us = seconds * 1e6;
  const i = us < 2 ? 0 : Math.min(LATENCY_BUCKETS - 1, Math.floor(Math.log2(us)));
  h[i] += count;
  return h;
}

/** The key used in the overrides map for a call site. */
export function siteKey(site: CallSite): string {
  return `${site.file}:${site.line}:${site.column}`;
}

/**
 * How many elements one worker-thread task carries (a map with `placement: 'worker'`). A task has
 * a fixed cost (posting it, waking the thread, replying) besides the fn's work; the library
 * measures both as the map runs and gives a task the elements that make the fixed cost
 * `overheadShare` of it, but no more than `maxTaskSeconds` of fn work, `maxTaskBytes` of elements
 * (in and out) and `maxGroup` elements, and no more than a thread's share of what is left. Now
 * and then a task carries a single element, to measure the fixed cost as it is now.
 */
export interface WorkerChunking {
  /** The share of a task's time its fixed cost may take. */
  overheadShare: number;
  /** Longest a task's fn work should run, in seconds: bounds how late results come and how long order holds others back. */
  maxTaskSeconds: number;
  /** Bytes of elements (in and out) one task may carry: bounds the memory a map holds. */
  maxTaskBytes: number;
  /** The most elements one task carries, however cheap they are. */
  maxGroup: number;
}

/** The chunking this copy of the library dispatches worker tasks by (see `WorkerChunking`). */
export const WORKER_CHUNKING: Readonly<WorkerChunking> = Object.freeze({
  overheadShare: 0.05,
  maxTaskSeconds: 0.025,
  maxTaskBytes: 1 << 20,
  maxGroup: 4096,
});

// What a tracer in the same build needs of the library's rules, so it applies them rather than a
// copy: how `'auto'` resolves, the generator a fn is handed per element, the size estimate behind
// `bytesProduced`, how an element crossing to a worker thread is sent and rebuilt there (and what
// it moves rather than copies), and where a name sits near a stack frame's position (the runner's
// dialect adapters find their call sites so).
export { AUTO_ASYNC_IN_FLIGHT, inFlightParallelism, resolveParallelism } from './internal/parallelism';
export { Rng, elementSeed } from './internal/rng';
export { estimateBytes } from './internal/bytes';
export { exportedMember } from './internal/exports';
export { encodeAll, movableBuffers, restoreAll, withoutMoved, type BatchMaker, type Encoded, type Marks } from './internal/crossing';
export { tensorMakerFor } from './internal/tensors';
export { refine as siteOfName } from './internal/site';
