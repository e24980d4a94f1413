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
  /**
   * With `placement: 'worker'`, right after another worker-placed `map`: run this fn in that map's
   * tasks (its worker calls both fns on each element), so elements cross to a thread and back once
   * instead of twice. Threads and chunking are the earlier map's; order is kept unless one of them sets
   * `deterministic: false` (as it would be unfused). Anywhere else it has no effect. Not on flatMap.
   */
  fuse?: boolean;
  /** Pin the operator where it is written: Plumber never proposes to move it (the library ignores it when running). */
  keepPosition?: boolean;
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
  /** Pin the shuffle where it is written: Plumber never proposes to move it (the library ignores it when running). */
  keepPosition?: boolean;
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
  /** `'auto'` (default): gzip or brotli by extension (`.gz`, `.br`) or gzip's magic bytes; or force one. */
  compression?: 'auto' | 'gzip' | 'brotli' | 'none';
}

/** HTTP(S) shards: how readers fetch them. */
export interface HttpOptions {
  /** Request headers (an authorization token, say). */
  headers?: Record<string, string>;
  /** Retries of a transient failure (a reset connection, 408, 429, 5xx) with exponential backoff (default 3); a 4xx fails at once. */
  retries?: number;
  /** Milliseconds without a byte before a request counts as failed (default 30,000). */
  timeoutMs?: number;
  /** The first retry's backoff in milliseconds, doubled for each further one, with jitter (default 200). */
  retryDelayMs?: number;
}

/**
 * Options every reader takes (`csv`, `jsonLines`, `tfrecord`, `webdataset`, `parquet`, `arrow`).
 * Shards are local paths, globs, or http(s) URLs; a list mixes them.
 */
export interface ReaderOptions {
  /** Directory relative paths and globs are resolved against (default `process.cwd()`). */
  cwd?: string;
  /** `'auto'` (default): gzip or brotli by extension (`.gz`, `.br`) or gzip's magic bytes; or force one. */
  compression?: 'auto' | 'gzip' | 'brotli' | 'none';
  /** Shards read at once, their elements interleaved one at a time in shard order (default 1: one shard after another). */
  parallelism?: Parallelism;
  /** Where decompression and parsing run: `'main'` (default) or `'worker'` (worker threads, one per shard in flight). */
  placement?: 'main' | 'worker';
  /** How HTTP(S) shards are fetched. */
  http?: HttpOptions;
}

/** `csv(pathOrGlob, options)`: RFC 4180 rows as objects keyed by the header (or arrays without one). */
export interface CsvOptions extends ReaderOptions {
  /** `true` (default): the first row names the columns; an array names them and every row is data; `false`: rows are arrays. */
  header?: boolean | readonly string[];
  /** Field delimiter (default `','`). */
  delimiter?: string;
  /** Column types: `'string'` (default), `'number'` (empty and `NaN` give NaN), `'int'`, `'boolean'`; a value that does not parse is an error naming file and line. */
  schema?: Readonly<Record<string, 'string' | 'number' | 'int' | 'boolean'>>;
}

/** `jsonLines(pathOrGlob, options)`: one JSON value per line. */
export interface JsonLinesOptions extends ReaderOptions {
  /** Skip empty lines (default true); a line that is not JSON is an error naming file and line. */
  skipEmpty?: boolean;
}

/** `tfrecord(pathOrGlob, options)`: TFRecord records, raw or decoded as `tf.train.Example`. */
export interface TfRecordOptions extends ReaderOptions {
  /** `'bytes'` (default): each record's bytes; `'example'`: decoded `tf.train.Example` features. */
  decode?: 'bytes' | 'example';
  /** Verify each record's masked CRC-32C (default true). */
  verify?: boolean;
}

/** `webdataset(pathOrGlob, options)`: tar shards, files grouped into samples by key. */
export interface WebDatasetOptions extends ReaderOptions {
  /** Shuffle the shard order each pass with this seed (default: shards in order). */
  shuffleShards?: number | boolean;
}

/** `parquet(pathOrGlob, options)` and `arrow(pathOrGlob, options)`: tables. */
export interface TableOptions extends ReaderOptions {
  /** Only these columns are read (default all). */
  columns?: readonly string[];
  /** `'rows'` (default): one object per row; `'batches'`: one element per row group / record batch, as columns. */
  as?: 'rows' | 'batches';
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
  map: keys<MapOptions>()(['parallelism', 'placement', 'module', 'exportName', 'deterministic', 'random', 'seed', 'timeoutMs', 'keepPosition', 'fuse']),
  interleave: keys<InterleaveOptions>()(['cycleLength', 'blockLength', 'parallelism', 'deterministic']),
  batch: keys<BatchOptions>()(['dropRemainder']),
  shuffle: keys<ShuffleOptions>()(['seed', 'reshuffleEachIteration', 'keepPosition']),
  files: keys<FilesOptions>()(['read', 'cwd', 'parallelism']),
  lines: keys<LinesOptions>()(['encoding', 'cwd', 'compression']),
  csv: keys<CsvOptions>()(['cwd', 'compression', 'parallelism', 'placement', 'http', 'header', 'delimiter', 'schema']),
  jsonLines: keys<JsonLinesOptions>()(['cwd', 'compression', 'parallelism', 'placement', 'http', 'skipEmpty']),
  tfrecord: keys<TfRecordOptions>()(['cwd', 'compression', 'parallelism', 'placement', 'http', 'decode', 'verify']),
  webdataset: keys<WebDatasetOptions>()(['cwd', 'compression', 'parallelism', 'placement', 'http', 'shuffleShards']),
  table: keys<TableOptions>()(['cwd', 'compression', 'parallelism', 'placement', 'http', 'columns', 'as']),
  window: keys<WindowOptions>()(['shift', 'stride', 'dropRemainder']),
  paddedBatch: keys<PaddedBatchOptions>()(['paddedShapes', 'paddingValues', 'dropRemainder']),
  bucketBySequenceLength: keys<BucketOptions>()(['paddedShapes', 'paddingValues', 'padToBucketBoundary', 'noPadding', 'dropRemainder']),
  groupByWindow: keys<GroupByWindowOptions>()(['windowSize']),
  rebatch: keys<RebatchOptions>()(['dropRemainder']),
  sampleFromDatasets: keys<SampleOptions>()(['weights', 'seed', 'stopOnEmptyDataset']),
  chooseFromDatasets: keys<ChooseOptions>()(['stopOnEmptyDataset']),
  ignoreErrors: keys<IgnoreErrorsOptions>()(['logWarning']),
};
