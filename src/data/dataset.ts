/**
 * `Dataset<T>`: an immutable description of a pipeline. Each method builds one operator node
 * (registering it with a tracer when one is installed, applying knob overrides keyed by call
 * site); iterating opens one pass (an epoch) over the chain.
 */
import { DATASET_KEY } from './tracing';
import type { BatchOptions, BucketOptions, GroupByWindowOptions, IgnoreErrorsOptions, InterleaveOptions, MapOptions, PaddedBatchOptions, RebatchOptions, ShuffleOptions, WindowOptions } from './options';
import { OPTION_KEYS } from './options';
import { BULK, type Chunks, isThenable, type OpNode, pull, Sampler, Session } from './internal/core';
import { DatasetIterator } from './internal/iterator';
import { type BuildEnv, beginOp, checkOptions, makeNode, overridden } from './internal/build';
import { mapNode } from './internal/build-map';
import type { ElementContext } from './internal/context';
import { defaultSeed } from './internal/rng';
import { resolveParallelism } from './internal/parallelism';
import type { UserFn } from './internal/ops/map';
import type { Batch, TypedArray } from './internal/batch-class';
import { openBatch, openUnbatch, stack } from './internal/ops/batch';
import { openConcatenate, openPrefetch, openRepeat, openSkip, openTake, openZip } from './internal/ops/flow';
import { openShuffle } from './internal/ops/shuffle';
import { openEnumerate, openIgnoreErrors, openScan, openShard } from './internal/ops/select';
import { openGrouping, openWindow, windowRule, type GroupRule } from './internal/ops/window';
import { bucketOf, openPaddedBatch, openRebatch, padStack, type PadSpec } from './internal/ops/padded';
import { openSource } from './internal/ops/sources';
import { PipelineError } from './errors';
import { openCache } from './internal/ops/cache';
import { openInterleave } from './internal/ops/interleave';

/** What batch() makes of elements of type T. */
export type Batched<T> = T extends TypedArray ? Batch<T> : T extends Record<string, TypedArray | number> ? { [K in keyof T]: T[K] extends TypedArray ? Batch<T[K]> : Batch<Float64Array> } : T[];

/** One padded component of a batch: typed arrays stack into a Batch, arrays into padded arrays. */
type PaddedComponent<C> = C extends TypedArray ? Batch<C> : C extends readonly (infer E)[] ? E[][] : C extends number ? number[] : C[];

/** What paddedBatch() makes of elements of type T: a sequence, a tuple of them, or a record of them. */
export type PaddedBatch<T> = T extends TypedArray
  ? Batch<T>
  : T extends readonly (number | string | bigint | boolean)[]
    ? T[number][][]
    : T extends readonly unknown[]
      ? { -readonly [K in keyof T]: PaddedComponent<T[K]> }
      : T extends Record<string, unknown>
        ? { [K in keyof T]: T[K] extends number ? Batch<Float64Array> : PaddedComponent<T[K]> }
        : T[];

/** What unbatch() yields from batches of type T. */
export type Unbatched<T> = T extends (infer U)[] ? U : T extends Batch<infer A> ? A | number : T extends Record<string, Batch> ? { [K in keyof T]: unknown } : unknown;

export class Dataset<T> implements AsyncIterable<T> {
  /** The operator that produces this dataset's elements. */
  readonly node: OpNode<T>;
  readonly [DATASET_KEY]: string;

  /** @internal Datasets are made by `from`, `range`, `files`, … and the methods below. */
  constructor(node: OpNode<T>) {
    this.node = node;
    this[DATASET_KEY] = node.key;
  }

  /** Applies fn to every element: on the main thread, with async calls in flight, or in worker threads. */
  map<U>(fn: (x: T, ctx: ElementContext) => U | PromiseLike<U>, options?: MapOptions): Dataset<U> {
    const env = beginOp('map');
    return finish(env, mapNode<U>('map', env, this.node, fn as UserFn, options ?? {}));
  }

  /** Keeps the elements for which fn returns true (or a promise of true). */
  filter(fn: (x: T, ctx: ElementContext) => unknown, options?: MapOptions): Dataset<T> {
    const env = beginOp('filter');
    return finish(env, mapNode<T>('filter', env, this.node, fn as UserFn, options ?? {}));
  }

  /** Maps each element to an array, iterable, async iterable or Dataset, and yields their elements in order. */
  flatMap<U>(fn: (x: T, ctx: ElementContext) => readonly U[] | Iterable<U> | AsyncIterable<U> | Dataset<U> | PromiseLike<readonly U[] | Iterable<U>>, options?: MapOptions): Dataset<U> {
    const env = beginOp('flatMap');
    return finish(env, mapNode<U>('flatMap', env, this.node, fn as UserFn, options ?? {}));
  }

  /** Opens fn(x) for up to `cycleLength` elements at once and interleaves their elements round-robin. */
  interleave<U>(fn: (x: T) => Dataset<U> | readonly U[] | Iterable<U> | AsyncIterable<U>, options?: InterleaveOptions): Dataset<U> {
    const env = beginOp('interleave');
    checkOptions('interleave', env, options, OPTION_KEYS.interleave);
    const o = env.override;
    const cycleLength = o?.cycleLength ?? options?.cycleLength ?? 2;
    const blockLength = options?.blockLength ?? 1;
    if (!(blockLength >= 1) || !Number.isInteger(blockLength)) throw new RangeError(`interleave() needs blockLength to be an integer >= 1, not ${blockLength}.`);
    const written = o?.parallelism ?? options?.parallelism;
    const parallelism = written === 'auto' ? cycleLength : resolveParallelism(written, 'main', false);
    const deterministic = o?.deterministic ?? options?.deterministic ?? true;
    if (!(cycleLength >= 1)) throw new RangeError(`interleave() needs cycleLength >= 1, not ${cycleLength}.`);
    const node = makeNode<U>(
      env,
      {
        kind: 'interleave',
        inputs: [this.node],
        placement: 'main',
        fn,
        knobs: { parallelism: written, resolvedParallelism: parallelism, cycleLength, deterministic },
        overridden: overridden(o, ['cycleLength', 'parallelism', 'deterministic']),
      },
      (n, session) => openInterleave(n, session, fn as (x: unknown) => unknown, cycleLength, blockLength, parallelism, deterministic) as Chunks<U>,
    );
    return finish(env, node);
  }

  /** Groups n elements; typed arrays (and objects of typed arrays or numbers) are stacked into one buffer. */
  batch(n: number, options?: BatchOptions): Dataset<Batched<T>> {
    if (!(n >= 1)) throw new RangeError(`batch() needs a size >= 1, not ${n}.`);
    const env = beginOp('batch');
    checkOptions('batch', env, options, OPTION_KEYS.batch);
    const dropRemainder = options?.dropRemainder ?? false;
    const card = this.node.cardinality;
    const node = makeNode<Batched<T>>(
      env,
      {
        kind: 'batch',
        inputs: [this.node],
        placement: 'main',
        knobs: { batchSize: n, dropRemainder },
        cardinality: card === undefined ? undefined : dropRemainder ? Math.floor(card / n) : Math.ceil(card / n),
      },
      (nd, session) => openBatch(nd, session, n, dropRemainder) as Chunks<Batched<T>>,
    );
    return finish(env, node);
  }

  /** The inverse of batch(): yields the rows of each batch. */
  unbatch(): Dataset<Unbatched<T>> {
    const env = beginOp('unbatch');
    const node = makeNode<Unbatched<T>>(env, { kind: 'unbatch', inputs: [this.node], placement: 'main', knobs: {} }, (nd, session) => openUnbatch(nd, session) as Chunks<Unbatched<T>>);
    return finish(env, node);
  }

  /** A shuffle buffer of bufferSize elements; reproducible with a seed, reshuffled each epoch. */
  shuffle(bufferSize: number, options?: ShuffleOptions): Dataset<T> {
    if (!(bufferSize >= 1)) throw new RangeError(`shuffle() needs a buffer size >= 1, not ${bufferSize}.`);
    const env = beginOp('shuffle');
    checkOptions('shuffle', env, options, OPTION_KEYS.shuffle);
    const seed = options?.seed ?? defaultSeed();
    const reshuffle = options?.reshuffleEachIteration ?? true;
    let epoch = 0;
    const node = makeNode<T>(env, { kind: 'shuffle', inputs: [this.node], placement: 'main', knobs: { bufferSize }, random: true, cardinality: this.node.cardinality }, (nd, session) =>
      openShuffle(nd, session, bufferSize, reshuffle ? seed + epoch++ : seed),
    );
    return finish(env, node);
  }

  /** Keeps up to n elements ready ahead of the consumer, pulled concurrently with its work. */
  prefetch(n: number): Dataset<T> {
    const env = beginOp('prefetch');
    const size = env.override?.prefetch ?? n;
    const node = makeNode<T>(
      env,
      { kind: 'prefetch', inputs: [this.node], placement: 'main', knobs: { bufferSize: size }, cardinality: this.node.cardinality, overridden: overridden(env.override, ['prefetch']) },
      (nd, session) => openPrefetch(nd, session, size),
    );
    return new Dataset(node);
  }

  /** Keeps the first complete pass in memory, or on disk at `path` (written then renamed); later passes read it. */
  cache(path?: string): Dataset<T> {
    const env = beginOp('cache');
    const enabled = env.override?.cache !== false;
    return new Dataset(cacheNode(env, this.node, path, enabled, undefined));
  }

  /** The dataset n times (forever without n). */
  repeat(n?: number): Dataset<T> {
    const env = beginOp('repeat');
    const times = n ?? Infinity;
    const card = this.node.cardinality;
    const node = makeNode<T>(
      env,
      { kind: 'repeat', inputs: [this.node], placement: 'main', knobs: { count: times === Infinity ? -1 : times }, cardinality: card === undefined ? undefined : card === 0 ? 0 : card * times },
      (nd, session) => openRepeat(nd, session, times),
    );
    return finish(env, node);
  }

  /** The first n elements; upstream work stops once they are out. */
  take(n: number): Dataset<T> {
    const env = beginOp('take');
    const card = this.node.cardinality;
    const node = makeNode<T>(env, { kind: 'take', inputs: [this.node], placement: 'main', knobs: { count: n }, cardinality: card === undefined ? (n === 0 ? 0 : undefined) : Math.min(card, n) }, (nd, session) =>
      openTake(nd, session, n),
    );
    return finish(env, node);
  }

  /** All but the first n elements. */
  skip(n: number): Dataset<T> {
    const env = beginOp('skip');
    const card = this.node.cardinality;
    const node = makeNode<T>(env, { kind: 'skip', inputs: [this.node], placement: 'main', knobs: { count: n }, cardinality: card === undefined ? undefined : Math.max(0, card - n) }, (nd, session) =>
      openSkip(nd, session, n),
    );
    return finish(env, node);
  }

  /** Tuples of this dataset's elements and the others'; ends with the shortest. */
  zip<U extends unknown[]>(...others: { [K in keyof U]: Dataset<U[K]> }): Dataset<[T, ...U]> {
    return zipNodes(beginOp('zip'), [this, ...others] as Dataset<unknown>[]) as Dataset<[T, ...U]>;
  }

  /** This dataset's elements, then the others'. */
  concatenate<U>(...others: Dataset<U>[]): Dataset<T | U> {
    return concatNodes(beginOp('concatenate'), [this, ...others] as Dataset<T | U>[]);
  }

  /** Every numShards-th element starting at position index: shard `index` of `numShards` disjoint ones that together hold every element. */
  shard(numShards: number, index: number): Dataset<T> {
    if (!Number.isInteger(numShards) || numShards < 1) throw new RangeError(`shard() needs numShards to be an integer >= 1, not ${numShards}.`);
    if (!Number.isInteger(index) || index < 0 || index >= numShards) throw new RangeError(`shard() needs index to be an integer in [0, ${numShards}), not ${index}.`);
    const env = beginOp('shard');
    const card = this.node.cardinality;
    const node = makeNode<T>(
      env,
      {
        kind: 'shard',
        inputs: [this.node],
        placement: 'main',
        knobs: { numShards, shardIndex: index },
        cardinality: card === undefined ? undefined : card === Infinity ? Infinity : Math.max(0, Math.ceil((card - index) / numShards)),
      },
      (nd, session) => openShard(nd, session, numShards, index),
    );
    return finish(env, node);
  }

  /** Pairs each element with its position: [start + i, element]. */
  enumerate(start = 0): Dataset<[number, T]> {
    const env = beginOp('enumerate');
    const node = makeNode<[number, T]>(env, { kind: 'enumerate', inputs: [this.node], placement: 'main', knobs: {}, cardinality: this.node.cardinality }, (nd, session) => openEnumerate<T>(nd, session, start));
    return finish(env, node);
  }

  /**
   * Windows of up to `size` elements, each a Dataset: window k holds elements k·shift + j·stride
   * (j < size). Each window is materialised (holds its elements) before it is handed out.
   */
  window(size: number, options?: WindowOptions): Dataset<Dataset<T>> {
    const env = beginOp('window');
    checkOptions('window', env, options, OPTION_KEYS.window);
    const shift = options?.shift ?? size;
    const stride = options?.stride ?? 1;
    const dropRemainder = options?.dropRemainder ?? false;
    for (const [name, v] of [
      ['size', size],
      ['shift', shift],
      ['stride', stride],
    ] as const) {
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`window() needs ${name} to be an integer >= 1, not ${v}.`);
    }
    const card = this.node.cardinality;
    const span = (size - 1) * stride + 1;
    const node = makeNode<Dataset<T>>(
      env,
      {
        kind: 'window',
        inputs: [this.node],
        placement: 'main',
        knobs: { batchSize: size, shift, stride, dropRemainder },
        cardinality: card === undefined || card === Infinity ? card : dropRemainder ? (card < span ? 0 : Math.floor((card - span) / shift) + 1) : Math.ceil(card / shift),
      },
      (nd, session) => openWindow<T>(nd, session, { size, shift, stride, dropRemainder }, arrayDataset) as Chunks<Dataset<T>>,
    );
    return finish(env, node);
  }

  /** Like batch(), padding each sequence component to the longest in the batch (or to `paddedShapes`). */
  paddedBatch(batchSize: number, options?: PaddedBatchOptions): Dataset<PaddedBatch<T>> {
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`paddedBatch() needs a batch size that is an integer >= 1, not ${batchSize}.`);
    const env = beginOp('paddedBatch');
    checkOptions('paddedBatch', env, options, OPTION_KEYS.paddedBatch);
    const dropRemainder = options?.dropRemainder ?? false;
    const spec: PadSpec = { paddedShapes: options?.paddedShapes, paddingValues: options?.paddingValues };
    const card = this.node.cardinality;
    const node = makeNode<PaddedBatch<T>>(
      env,
      {
        kind: 'paddedBatch',
        inputs: [this.node],
        placement: 'main',
        knobs: { batchSize, dropRemainder },
        cardinality: card === undefined ? undefined : dropRemainder ? Math.floor(card / batchSize) : Math.ceil(card / batchSize),
      },
      (nd, session) => openPaddedBatch(nd, session, batchSize, dropRemainder, spec) as Chunks<PaddedBatch<T>>,
    );
    return finish(env, node);
  }

  /**
   * Batches of elements of similar length: an element of length L goes to bucket b, the number of
   * boundaries <= L; bucket b batches bucketBatchSizes[b] elements and pads them as paddedBatch().
   */
  bucketBySequenceLength(elementLengthFn: (x: T) => number, bucketBoundaries: readonly number[], bucketBatchSizes: readonly number[], options: BucketOptions & { noPadding: true }): Dataset<Batched<T>>;
  bucketBySequenceLength(elementLengthFn: (x: T) => number, bucketBoundaries: readonly number[], bucketBatchSizes: readonly number[], options?: BucketOptions): Dataset<PaddedBatch<T>>;
  bucketBySequenceLength(elementLengthFn: (x: T) => number, bucketBoundaries: readonly number[], bucketBatchSizes: readonly number[], options?: BucketOptions): Dataset<unknown> {
    const env = beginOp('bucketBySequenceLength');
    checkOptions('bucketBySequenceLength', env, options, OPTION_KEYS.bucketBySequenceLength);
    if (typeof elementLengthFn !== 'function') throw new TypeError('bucketBySequenceLength() needs a function from an element to its length.');
    const bounds = [...bucketBoundaries];
    const sizes = [...bucketBatchSizes];
    if (bounds.some((b, i) => !(b >= 0) || (i > 0 && b <= bounds[i - 1]))) throw new RangeError(`bucketBySequenceLength() needs bucketBoundaries in increasing order, not [${bounds.join(', ')}].`);
    if (sizes.length !== bounds.length + 1) throw new RangeError(`bucketBySequenceLength() needs one batch size per bucket: ${bounds.length + 1} for ${bounds.length} boundaries, not ${sizes.length}.`);
    if (sizes.some((b) => !Number.isInteger(b) || b < 1)) throw new RangeError(`bucketBySequenceLength() needs batch sizes that are integers >= 1, not [${sizes.join(', ')}].`);
    const dropRemainder = options?.dropRemainder ?? false;
    const noPadding = options?.noPadding ?? false;
    const toBoundary = options?.padToBucketBoundary ?? false;
    if (noPadding && (toBoundary || options?.paddedShapes !== undefined)) throw new RangeError('bucketBySequenceLength(): noPadding cannot be combined with padToBucketBoundary or paddedShapes.');
    const node = makeNode<unknown>(
      env,
      { kind: 'bucketBySequenceLength', inputs: [this.node], placement: 'main', knobs: { bucketBoundaries: bounds, bucketBatchSizes: sizes, dropRemainder }, fn: elementLengthFn },
      (nd, session) => {
        const c = nd.counters;
        const op = { kind: nd.kind, key: nd.key, site: nd.site };
        const rule: GroupRule<T, number, unknown> = {
          key: (x) => {
            const len = elementLengthFn(x);
            if (typeof len !== 'number' || !(len >= 0)) throw new TypeError(`elementLengthFn must return a length (a number >= 0), not ${String(len)}.`);
            const b = bucketOf(len, bounds);
            if (toBoundary && b === bounds.length) {
              throw new RangeError(`with padToBucketBoundary every element must be shorter than the last boundary (${bounds[bounds.length - 1]}); one has length ${len}.`);
            }
            return b;
          },
          size: (b) => sizes[b],
          reduce: (b, xs, full) => {
            if (!full && dropRemainder) return [];
            if (c !== null) c.calls++;
            if (noPadding) return [stack(xs)];
            const spec: PadSpec = { paddedShapes: options?.paddedShapes, paddingValues: options?.paddingValues, defaultLength: toBoundary ? bounds[b] - 1 : undefined };
            return [padStack(xs, spec, c, op)];
          },
        };
        return openGrouping(nd, session, rule);
      },
    );
    return finish(env, node);
  }

  /**
   * Groups elements by keyFn into windows of `windowSize`; each full window (and at the end each
   * partial one, in ascending key order) goes to reduceFn(key, window), whose elements are the output.
   */
  groupByWindow<K extends number | string, U>(keyFn: (x: T) => K, reduceFn: (key: K, window: Dataset<T>) => Dataset<U> | readonly U[] | Iterable<U> | AsyncIterable<U>, options: GroupByWindowOptions): Dataset<U> {
    const env = beginOp('groupByWindow');
    checkOptions('groupByWindow', env, options, OPTION_KEYS.groupByWindow);
    if (typeof keyFn !== 'function' || typeof reduceFn !== 'function') throw new TypeError('groupByWindow() needs a keyFn and a reduceFn.');
    const windowSize = options?.windowSize;
    if (!Number.isInteger(windowSize) || windowSize < 1) throw new RangeError(`groupByWindow() needs { windowSize } to be an integer >= 1, not ${String(windowSize)}.`);
    const node = makeNode<U>(env, { kind: 'groupByWindow', inputs: [this.node], placement: 'main', knobs: { batchSize: windowSize }, fn: keyFn }, (nd, session) =>
      openGrouping(nd, session, windowRule<T, K, U>(nd, session, keyFn, reduceFn as (key: K, ds: unknown) => unknown, windowSize, arrayDataset)),
    );
    return finish(env, node);
  }

  /** Re-cuts batches to `batchSize` rows: unbatch().batch(batchSize) in one operator. */
  rebatch(batchSize: number, options?: RebatchOptions): Dataset<T> {
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`rebatch() needs a batch size that is an integer >= 1, not ${batchSize}.`);
    const env = beginOp('rebatch');
    checkOptions('rebatch', env, options, OPTION_KEYS.rebatch);
    const dropRemainder = options?.dropRemainder ?? false;
    const node = makeNode<T>(env, { kind: 'rebatch', inputs: [this.node], placement: 'main', knobs: { batchSize, dropRemainder } }, (nd, session) => openRebatch(nd, session, batchSize, dropRemainder) as Chunks<T>);
    return finish(env, node);
  }

  /** A running state: fn(state, element) returns [newState, output]; each pass starts from initialState. */
  scan<S, U>(initialState: S, fn: (state: S, x: T) => readonly [S, U]): Dataset<U> {
    if (typeof fn !== 'function') throw new TypeError('scan() needs a function (state, element) => [newState, output].');
    const env = beginOp('scan');
    const node = makeNode<U>(env, { kind: 'scan', inputs: [this.node], placement: 'main', knobs: {}, fn, cardinality: this.node.cardinality }, (nd, session) => openScan(nd, session, initialState, fn));
    return finish(env, node);
  }

  /** Drops the elements whose production failed upstream (a fn threw), counting them in `errorsSkipped`. */
  ignoreErrors(options?: IgnoreErrorsOptions): Dataset<T> {
    const env = beginOp('ignoreErrors');
    checkOptions('ignoreErrors', env, options, OPTION_KEYS.ignoreErrors);
    const logWarning = options?.logWarning ?? false;
    const node = makeNode<T>(env, { kind: 'ignoreErrors', inputs: [this.node], placement: 'main', knobs: {} }, (nd, session) => openIgnoreErrors(nd, session, logWarning));
    return finish(env, node);
  }

  /** Folds one pass into a value: fn(state, element) for every element, from initialState. */
  async reduce<S>(initialState: S, fn: (state: S, x: T) => S): Promise<S> {
    if (typeof fn !== 'function') throw new TypeError('reduce() needs a function (state, element) => newState.');
    const session = new Session();
    const it = this.node.open(session);
    const s = new Sampler();
    let state = initialState;
    let index = 0;
    try {
      for (;;) {
        const chunk = await pull(it, BULK, this.node.counters, s);
        if (chunk === null) return state;
        for (let i = 0; i < chunk.length; i++, index++) {
          try {
            state = fn(state, chunk[i]);
          } catch (e) {
            throw new PipelineError({ kind: this.node.kind, key: this.node.key, site: this.node.site }, index, e, `reduce's fn failed on element ${index}: ${e instanceof Error ? e.message : String(e)}`);
          }
        }
      }
    } finally {
      await it.return();
      await session.dispose();
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return new DatasetIterator(this.node);
  }

  /** An explicit iterator for a trainer that pulls elements (or batches) itself; `return()` stops early and ends workers. */
  iterator(): AsyncIterableIterator<T> {
    return new DatasetIterator(this.node);
  }

  /** All elements of one pass, in an array. */
  async toArray(): Promise<T[]> {
    const session = new Session();
    const it = this.node.open(session);
    const out: T[] = [];
    const s = new Sampler();
    try {
      for (;;) {
        const chunk = await pull(it, BULK, this.node.counters, s);
        if (chunk === null) return out;
        for (let i = 0; i < chunk.length; i++) out.push(chunk[i]);
      }
    } finally {
      await it.return();
      await session.dispose();
    }
  }

  /** Calls fn on every element of one pass, awaiting it when it returns a promise. */
  async forEach(fn: (x: T) => unknown): Promise<void> {
    const session = new Session();
    const it = this.node.open(session);
    const s = new Sampler();
    try {
      for (;;) {
        const chunk = await pull(it, BULK, this.node.counters, s);
        if (chunk === null) return;
        for (let i = 0; i < chunk.length; i++) {
          const r = fn(chunk[i]);
          if (isThenable(r)) await r;
        }
      }
    } finally {
      await it.return();
      await session.dispose();
    }
  }
}

/** A dataset over a window's (or group's) elements; untraced, since there is one per window. */
export function arrayDataset<T>(xs: T[]): Dataset<T> {
  const node: OpNode<T> = {
    kind: 'from',
    key: 'from#window',
    site: undefined,
    info: null,
    counters: null,
    sample: null,
    inputs: [],
    cardinality: xs.length,
    open: (session) => openSource(xs, node, session),
  };
  return new Dataset(node);
}

function cacheNode<T>(env: BuildEnv, input: OpNode<T>, path: string | undefined, enabled: boolean, key: string | undefined): OpNode<T> {
  return makeNode<T>(
    env,
    {
      kind: 'cache',
      inputs: [input],
      placement: path === undefined ? 'main' : 'libuv',
      knobs: path === undefined ? { cacheMemory: true } : { cachePath: path },
      cardinality: input.cardinality,
      overridden: key !== undefined || !enabled ? true : undefined,
    },
    (nd, session) => openCache(nd, session, path, enabled),
    key,
  );
}

/**
 * Applies the overrides that insert operators after this one: a cache, then a prefetch on top.
 * Inserted operators have no call site of their own; their keys derive from the operator they follow.
 */
export function finish<T>(env: BuildEnv, node: OpNode<T>): Dataset<T> {
  const o = env.override;
  if (o === undefined) return new Dataset(node);
  let top = node;
  const noSite: BuildEnv = { tracer: env.tracer, site: undefined, override: undefined };
  if (o.cache !== undefined && o.cache !== false && node.kind !== 'cache') {
    top = cacheNode(noSite, top, o.cache === 'memory' ? undefined : o.cache, true, `${node.key}+cache`);
  }
  if (o.prefetch !== undefined && o.prefetch > 0 && node.kind !== 'prefetch') {
    const size = o.prefetch;
    top = makeNode<T>(
      noSite,
      { kind: 'prefetch', inputs: [top], placement: 'main', knobs: { bufferSize: size }, cardinality: top.cardinality, overridden: true },
      (nd, session) => openPrefetch(nd, session, size),
      `${node.key}+prefetch`,
    );
  }
  return new Dataset(top);
}

export function zipNodes(env: BuildEnv, ds: Dataset<unknown>[]): Dataset<unknown[]> {
  const cards = ds.map((d) => d.node.cardinality);
  const node = makeNode<unknown[]>(
    env,
    { kind: 'zip', inputs: ds.map((d) => d.node), placement: 'main', knobs: {}, cardinality: cards.every((c) => c !== undefined) ? Math.min(...(cards as number[])) : undefined },
    (nd, session) => openZip(nd, session),
  );
  return finish(env, node);
}

export function concatNodes<T>(env: BuildEnv, ds: Dataset<T>[]): Dataset<T> {
  const cards = ds.map((d) => d.node.cardinality);
  const node = makeNode<T>(
    env,
    { kind: 'concatenate', inputs: ds.map((d) => d.node), placement: 'main', knobs: {}, cardinality: cards.every((c) => c !== undefined) ? cards.reduce((a, b) => (a as number) + (b as number), 0) : undefined },
    (nd, session) => openConcatenate(nd, session),
  );
  return finish(env, node);
}
