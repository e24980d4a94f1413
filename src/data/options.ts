/** Option types of the public API. */
import type { Cluster } from './cluster/placement';
import type { Parallelism } from './internal/parallelism';

export type { Parallelism } from './internal/parallelism';

/** Options of `map`, `filter` and `flatMap`. */
export interface MapOptions {
  /** Calls in flight (default 1). */
  parallelism?: Parallelism;
  /** `'main'` (default) or `'worker'`: run fn in a pool of `parallelism` worker threads; a `Cluster` (`connect()`): run it on worker processes through Redis. */
  placement?: 'main' | 'worker' | Cluster;
  /** With `placement: 'worker'`: absolute path or `file:` URL of the module that exports fn. */
  module?: string;
  /** With `placement: 'worker'`: the export's name when it differs from `fn.name`. */
  exportName?: string;
  /** Keep input order (default true); false lets the fastest call finish first. */
  deterministic?: boolean;
  /** Declare that fn is random (tools never cache after it). */
  random?: boolean;
  /** Seed of `ctx.rng` (default: the global seed, `setSeed`). */
  seed?: number;
  /** With a cluster placement: a worker gives up on an element whose fn has not settled after this many milliseconds, and the pass fails naming it. */
  timeoutMs?: number;
}

export interface InterleaveOptions {
  /** Inner datasets open at once (default 2). */
  cycleLength?: number;
  /** Consecutive elements taken from one inner dataset before moving to the next (default 1). */
  blockLength?: number;
  /** Inner datasets pulled concurrently (default 1; `'auto'` = cycleLength). */
  parallelism?: Parallelism;
  /** Strict round-robin order (default true); false takes from whichever inner dataset is ready. */
  deterministic?: boolean;
}

export interface BatchOptions {
  /** Drop a last batch smaller than n (default false). */
  dropRemainder?: boolean;
}

export interface ShuffleOptions {
  /** With a seed the order is reproducible; without one it derives from the global seed (`setSeed`) or is random. */
  seed?: number;
  /** Epoch e uses seed + e (default true); false repeats the same order each epoch. */
  reshuffleEachIteration?: boolean;
}

export interface FilesOptions {
  /** `'bytes'` (default): `{ path, bytes }`; `'text'`: `{ path, text }`; `'path'`: path strings, nothing read. */
  read?: 'bytes' | 'text' | 'path';
  /** Directory the pattern is relative to (default `process.cwd()`). */
  cwd?: string;
  /** Reads in flight (default 16; `'auto'` = 16). */
  parallelism?: Parallelism;
}

export interface LinesOptions {
  encoding?: BufferEncoding;
  cwd?: string;
}

/** `window(size, options)`. */
export interface WindowOptions {
  /** Input elements the window moves by from one window to the next (default: size). */
  shift?: number;
  /** Distance between the input elements of one window (default 1). */
  stride?: number;
  /** Drop the windows at the end that have fewer than `size` elements (default false). */
  dropRemainder?: boolean;
}

/**
 * A length to pad one component to: a number, `[number]` (tf.data's shape form), or null/`[null]`
 * for the longest in the batch.
 */
export type PaddedLength = number | null | readonly [number | null];

/** Padded lengths per component: one for a sequence element, a tuple for tuples, an object for records. */
export type PaddedShapes = PaddedLength | readonly PaddedLength[] | { readonly [key: string]: PaddedLength };

/** The value padding fills in: one for every component, or one per component (tuple or record). */
export type PaddingValue = number | string | bigint;
export type PaddingValues = PaddingValue | readonly PaddingValue[] | { readonly [key: string]: PaddingValue };

/** `paddedBatch(batchSize, options)`. */
export interface PaddedBatchOptions {
  /** Pad to these lengths instead of the longest element of the batch. */
  paddedShapes?: PaddedShapes;
  /** What to pad with (default 0; '' for strings, 0n for bigints). */
  paddingValues?: PaddingValues;
  /** Drop a last batch smaller than batchSize (default false). */
  dropRemainder?: boolean;
}

/** `bucketBySequenceLength(lengthFn, boundaries, batchSizes, options)`. */
export interface BucketOptions extends PaddedBatchOptions {
  /** Pad each batch to its bucket's upper boundary minus 1 instead of its longest element (default false). */
  padToBucketBoundary?: boolean;
  /** Batch without padding (every element of a bucket has the same length; default false). */
  noPadding?: boolean;
}

/** `groupByWindow(keyFn, reduceFn, options)`. */
export interface GroupByWindowOptions {
  /** Elements of one key gathered before reduceFn sees them. */
  windowSize: number;
}

/** `rebatch(batchSize, options)`. */
export interface RebatchOptions {
  /** Drop a last batch smaller than batchSize (default false). */
  dropRemainder?: boolean;
}

/** `sampleFromDatasets(datasets, options)`. */
export interface SampleOptions {
  /** The probability of each dataset (normalised; default uniform). */
  weights?: readonly number[];
  /** Seed of the choices: the same seed gives the same mixture (default: the global seed, `setSeed`). */
  seed?: number;
  /** End when any dataset ends (default false: go on with the others, weights renormalised). */
  stopOnEmptyDataset?: boolean;
}

/** `chooseFromDatasets(datasets, choices, options)`. */
export interface ChooseOptions {
  /** End when the chosen dataset has ended (default true); false skips the choice. */
  stopOnEmptyDataset?: boolean;
}

/** `ignoreErrors(options)`. */
export interface IgnoreErrorsOptions {
  /** Print a warning (console.warn) for each skipped element (default false). */
  logWarning?: boolean;
}

/**
 * The option names each operator knows, checked at build time (an unknown one is an error naming
 * it). `satisfies` keeps each list in step with its interface: a key added there and not here, or
 * misspelt here, fails to compile.
 */
type AllKeys<O, K extends readonly (keyof O)[]> = Exclude<keyof O, K[number]> extends never ? K : never;
const keys =
  <O>() =>
  <const K extends readonly (keyof O)[]>(k: AllKeys<O, K>): readonly string[] =>
    k as readonly string[];
export const OPTION_KEYS = {
  map: keys<MapOptions>()(['parallelism', 'placement', 'module', 'exportName', 'deterministic', 'random', 'seed', 'timeoutMs']),
  interleave: keys<InterleaveOptions>()(['cycleLength', 'blockLength', 'parallelism', 'deterministic']),
  batch: keys<BatchOptions>()(['dropRemainder']),
  shuffle: keys<ShuffleOptions>()(['seed', 'reshuffleEachIteration']),
  files: keys<FilesOptions>()(['read', 'cwd', 'parallelism']),
  lines: keys<LinesOptions>()(['encoding', 'cwd']),
  window: keys<WindowOptions>()(['shift', 'stride', 'dropRemainder']),
  paddedBatch: keys<PaddedBatchOptions>()(['paddedShapes', 'paddingValues', 'dropRemainder']),
  bucketBySequenceLength: keys<BucketOptions>()(['paddedShapes', 'paddingValues', 'padToBucketBoundary', 'noPadding', 'dropRemainder']),
  groupByWindow: keys<GroupByWindowOptions>()(['windowSize']),
  rebatch: keys<RebatchOptions>()(['dropRemainder']),
  sampleFromDatasets: keys<SampleOptions>()(['weights', 'seed', 'stopOnEmptyDataset']),
  chooseFromDatasets: keys<ChooseOptions>()(['stopOnEmptyDataset']),
  ignoreErrors: keys<IgnoreErrorsOptions>()(['logWarning']),
};
