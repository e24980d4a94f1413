/**
 * `Dataset<T>`: an immutable description of a pipeline. Each method builds one operator node
 * (registering it with a tracer when one is installed, applying knob overrides keyed by call
 * site); iterating opens one pass (an epoch) over the chain.
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { KnobOverride } from './tracing';
import { DATASET_KEY } from './tracing';
import type { BatchOptions, InterleaveOptions, MapOptions, Parallelism, ShuffleOptions } from './options';
import { BULK, type Chunks, isThenable, type OpNode, pull, Sampler, Session } from './internal/core';
import { DatasetIterator } from './internal/iterator';
import { type BuildEnv, beginOp, isAsyncFunction, makeNode } from './internal/build';
import { FnEnv, type ElementContext } from './internal/context';
import { defaultSeed } from './internal/rng';
import { MainMap, type UserFn } from './internal/ops/map';
import { Flatten } from './internal/ops/flatten';
import { openBatch, openUnbatch, type Batch, type TypedArray } from './internal/ops/batch';
import { openConcatenate, openPrefetch, openRepeat, openSkip, openTake, openZip } from './internal/ops/flow';
import { openShuffle } from './internal/ops/shuffle';
import { openCache } from './internal/ops/cache';
import { openInterleave } from './internal/ops/interleave';
import { openWorkerMap } from './internal/ops/worker-map';
import { openClusterMap } from './internal/ops/cluster-map';
import { Cluster } from './cluster/placement';

/** What batch() makes of elements of type T. */
export type Batched<T> = T extends TypedArray
  ? Batch<T>
  : T extends Record<string, TypedArray | number>
    ? { [K in keyof T]: T[K] extends TypedArray ? Batch<T[K]> : Batch<Float64Array> }
    : T[];

/** What unbatch() yields from batches of type T. */
export type Unbatched<T> = T extends (infer U)[] ? U : T extends Batch<infer A> ? A | number : T extends Record<string, Batch> ? { [K in keyof T]: unknown } : unknown;

type MapKind = 'map' | 'filter' | 'flatMap';

function resolveParallelism(p: Parallelism | undefined, placement: 'main' | 'worker', fnAsync: boolean): number {
  if (typeof p === 'number') {
    if (!(p >= 1)) throw new RangeError(`parallelism must be a number >= 1 or 'auto', not ${p}.`);
    return Math.floor(p);
  }
  if (p === 'auto') return placement === 'worker' ? availableParallelism() : fnAsync ? 16 : 1;
  return 1;
}

function toPath(moduleOrUrl: string): string {
  return moduleOrUrl.startsWith('file:') ? fileURLToPath(moduleOrUrl) : moduleOrUrl;
}

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
    return this.mapLike<U>('map', beginOp('map'), fn as UserFn, options ?? {});
  }

  /** Keeps the elements for which fn returns true (or a promise of true). */
  filter(fn: (x: T, ctx: ElementContext) => unknown, options?: MapOptions): Dataset<T> {
    return this.mapLike<T>('filter', beginOp('filter'), fn as UserFn, options ?? {});
  }

  /** Maps each element to an array, iterable, async iterable or Dataset, and yields their elements in order. */
  flatMap<U>(
    fn: (x: T, ctx: ElementContext) => readonly U[] | Iterable<U> | AsyncIterable<U> | Dataset<U> | PromiseLike<readonly U[] | Iterable<U>>,
    options?: MapOptions,
  ): Dataset<U> {
    return this.mapLike<U>('flatMap', beginOp('flatMap'), fn as UserFn, options ?? {});
  }

  /** Opens fn(x) for up to `cycleLength` elements at once and interleaves their elements round-robin. */
  interleave<U>(fn: (x: T) => Dataset<U> | readonly U[] | Iterable<U> | AsyncIterable<U>, options?: InterleaveOptions): Dataset<U> {
    const env = beginOp('interleave');
    const o = env.override;
    const cycleLength = o?.cycleLength ?? options?.cycleLength ?? 2;
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
        overridden: overrides(o, ['cycleLength', 'parallelism', 'deterministic']),
      },
      (n, session) => openInterleave(n, session, fn as (x: unknown) => unknown, cycleLength, parallelism, deterministic) as Chunks<U>,
    );
    return finish(env, node);
  }

  /** Groups n elements; typed arrays (and objects of typed arrays or numbers) are stacked into one buffer. */
  batch(n: number, options?: BatchOptions): Dataset<Batched<T>> {
    if (!(n >= 1)) throw new RangeError(`batch() needs a size >= 1, not ${n}.`);
    const env = beginOp('batch');
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
    const seed = options?.seed ?? defaultSeed();
    const reshuffle = options?.reshuffleEachIteration ?? true;
    let epoch = 0;
    const node = makeNode<T>(
      env,
      { kind: 'shuffle', inputs: [this.node], placement: 'main', knobs: { bufferSize }, random: true, cardinality: this.node.cardinality },
      (nd, session) => openShuffle(nd, session, bufferSize, reshuffle ? seed + epoch++ : seed),
    );
    return finish(env, node);
  }

  /** Keeps up to n elements ready ahead of the consumer, pulled concurrently with its work. */
  prefetch(n: number): Dataset<T> {
    const env = beginOp('prefetch');
    const size = env.override?.prefetch ?? n;
    const node = makeNode<T>(
      env,
      { kind: 'prefetch', inputs: [this.node], placement: 'main', knobs: { bufferSize: size }, cardinality: this.node.cardinality, overridden: overrides(env.override, ['prefetch']) },
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
    const node = makeNode<T>(
      env,
      { kind: 'take', inputs: [this.node], placement: 'main', knobs: { count: n }, cardinality: card === undefined ? (n === 0 ? 0 : undefined) : Math.min(card, n) },
      (nd, session) => openTake(nd, session, n),
    );
    return finish(env, node);
  }

  /** All but the first n elements. */
  skip(n: number): Dataset<T> {
    const env = beginOp('skip');
    const card = this.node.cardinality;
    const node = makeNode<T>(
      env,
      { kind: 'skip', inputs: [this.node], placement: 'main', knobs: { count: n }, cardinality: card === undefined ? undefined : Math.max(0, card - n) },
      (nd, session) => openSkip(nd, session, n),
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

  private mapLike<U>(kind: MapKind, env: BuildEnv, fn: UserFn, options: MapOptions): Dataset<U> {
    if (typeof fn !== 'function') throw new TypeError(`${kind}() needs a function.`);
    const o = env.override;
    // A cluster placement (issue 12) runs the fn's export on worker processes: see cluster-map.ts.
    const cluster = o?.placement === undefined && options.placement instanceof Cluster ? options.placement : undefined;
    const placement = cluster !== undefined ? 'main' : (o?.placement ?? (options.placement as 'main' | 'worker' | undefined) ?? 'main');
    const written = o?.parallelism ?? options.parallelism ?? (cluster !== undefined ? 'auto' : undefined);
    const fnAsync = isAsyncFunction(fn);
    const parallelism = resolveParallelism(written, placement, fnAsync);
    const runtimeParallelism = written === 'auto' && placement === 'main' ? 16 : parallelism;
    const deterministic = o?.deterministic ?? options.deterministic ?? true;
    const seed = options.seed ?? defaultSeed();
    const moduleOpt = o?.module ?? options.module;
    const exportName = o?.exportName ?? options.exportName ?? fn.name;
    if (cluster !== undefined && !exportName) throw new TypeError(`${kind}(fn, { placement: ${cluster.toString()} }) needs \`exportName\`: the function has no name for the workers to find it by.`);
    if (placement === 'worker') {
      if (moduleOpt === undefined) {
        throw new TypeError(`${kind}(${fn.name || 'fn'}, { placement: 'worker' }) needs \`module\`: the absolute path or file URL (import.meta.url) of the module that exports the function.`);
      }
      if (!exportName) throw new TypeError(`${kind}(fn, { placement: 'worker' }) needs \`exportName\`: the function has no name to find it by in ${moduleOpt}.`);
    }
    const modulePath = moduleOpt === undefined ? undefined : toPath(moduleOpt);
    const card = this.node.cardinality;
    let epoch = 0;
    const node = makeNode<U>(
      env,
      {
        kind,
        inputs: [this.node],
        placement: cluster !== undefined ? 'remote' : placement,
        fn,
        fnModule: modulePath !== undefined && exportName ? { file: modulePath, exportName } : undefined,
        knobs: cluster !== undefined ? { parallelism: written, resolvedParallelism: parallelism, deterministic, cluster: cluster.name } : { parallelism: written, resolvedParallelism: parallelism, deterministic },
        random: options.random ?? false,
        cardinality: kind === 'map' ? card : undefined,
        overridden: overrides(o, ['parallelism', 'placement', 'module', 'exportName', 'deterministic']),
      },
      (nd, session) => {
        const input = nd.inputs[0];
        const fnEnv = new FnEnv(seed, epoch++, nd.info);
        const op = { kind, key: nd.key, site: nd.site };
        let inner: Chunks<unknown>;
        if (cluster !== undefined) {
          return openClusterMap(nd, input.open(session), { mode: kind, cluster, exportName, module: modulePath, parallelism, deterministic }) as Chunks<U>;
        } else if (placement === 'worker') {
          inner = openWorkerMap(nd, session, {
            mode: kind,
            module: modulePath as string,
            exportName,
            threads: parallelism,
            deterministic,
            seed,
            epoch: fnEnv.epoch,
            env: fnEnv,
          });
        } else {
          inner = new MainMap(input.open(session), input.counters, nd.counters, fn, fnEnv, op, { filter: kind === 'filter', parallelism: runtimeParallelism, deterministic, sample: nd.sample, parent: kind === 'flatMap' && nd.info !== null ? nd.key : undefined }, fnAsync);
        }
        if (kind !== 'flatMap' || placement === 'worker') return inner as Chunks<U>;
        return new Flatten(inner, nd.counters, op, session) as Chunks<U>;
      },
    );
    return finish(env, node);
  }
}

function overrides(o: KnobOverride | undefined, keys: (keyof KnobOverride)[]): boolean | undefined {
  return o !== undefined && keys.some((k) => o[k] !== undefined) ? true : undefined;
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
