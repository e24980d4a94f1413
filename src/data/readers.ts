/**
 * The readers of stored formats: `csv`, `jsonLines`, `tfrecord`, `webdataset` (and, as their
 * formats land, `parquet`, `arrow`). Each is a source op of its own kind built by the one reader
 * op (internal/readers/reader.ts) from a format, with the knobs `parallelism` (shards read at once)
 * and `placement` (where decompression and parsing run), which a tracer's overrides may change.
 */
import type { CsvOptions, JsonLinesOptions, ReaderOptions, TableOptions, TfRecordOptions, WebDatasetOptions } from './options';
import { OPTION_KEYS } from './options';
import type { OpKind } from './tracing';
import { Dataset, finish } from './dataset';
import { beginOp, checkOptions, makeNode, overridden } from './internal/build';
import { resolveParallelism } from './internal/parallelism';
import { resolveCwd } from './internal/ops/files';
import { openReader, type ReaderConfig } from './internal/readers/reader';
import { checkHttpOptions } from './internal/readers/http';
import { defaultSeed } from './internal/rng';
import type { Example } from './internal/readers/example';
import { shardOrder, type WebDatasetSample } from './internal/readers/webdataset';
import type { Shard } from './internal/readers/format';
import type { CsvRow } from './internal/readers/csv';
import { csvFormat } from './internal/readers/csv';
import { parquetFormat } from './internal/readers/parquet';
import { arrowFormat } from './internal/readers/arrow';
import type { TableBatch, TableRow } from './internal/readers/table';

export type { CsvRow } from './internal/readers/csv';
export { FormatError } from './internal/readers/format';
export type { TableBatch, TableRow } from './internal/readers/table';

const COMPRESSIONS = ['auto', 'gzip', 'brotli', 'none'];

/**
 * A reader op of `kind` over `patterns`; `formatOptions` are the format's own options (plain data
 * that cross to worker threads), checked by `check` at build time so a bad one fails here.
 */
function reader<T>(kind: OpKind, patterns: string | readonly string[], options: ReaderOptions, keys: readonly string[], formatOptions: Record<string, unknown>, order?: ReaderConfig['order']): Dataset<T> {
  const env = beginOp(kind);
  checkOptions(kind, env, options, keys);
  if (typeof patterns !== 'string' && !(Array.isArray(patterns) && patterns.every((p) => typeof p === 'string'))) throw new TypeError(`${kind}() needs a path, a glob, a URL or a list of them.`);
  const compression = options.compression ?? 'auto';
  if (!COMPRESSIONS.includes(compression)) throw new RangeError(`${kind}() compression must be one of ${COMPRESSIONS.join(', ')}, not ${JSON.stringify(compression)}.`);
  const o = env.override;
  const placement = o?.placement ?? options.placement ?? 'main';
  if (placement !== 'main' && placement !== 'worker') throw new RangeError(`${kind}() placement must be 'main' or 'worker', not ${JSON.stringify(placement)}.`);
  checkHttpOptions(kind, options.http);
  const written = o?.parallelism ?? options.parallelism;
  const parallelism = resolveParallelism(written, placement, false);
  const cwd = resolveCwd(options.cwd);
  // The reader adds `numShards` once it has expanded its shards (the tracer reports knobs as they are then).
  const knobs = { parallelism: written, resolvedParallelism: parallelism };
  const node = makeNode<T>(
    env,
    {
      kind,
      inputs: [],
      placement,
      knobs,
      overridden: overridden(o, ['parallelism', 'placement']),
      random: order !== undefined,
    },
    (n) => openReader(n, { kind, patterns, cwd, compression, http: options.http, parallelism, placement, formatOptions, order, knobs }),
  );
  return finish(env, node);
}

/**
 * The rows of CSV files (RFC 4180), gzip or brotli compressed or not: objects keyed by the header
 * row (default), by `header: [names]`, or arrays with `header: false`; `schema` types columns.
 */
export function csv<R extends CsvRow = Record<string, string | number | boolean>>(pathOrGlob: string | readonly string[], options: CsvOptions = {}): Dataset<R> {
  const formatOptions = { header: options.header, delimiter: options.delimiter, schema: options.schema };
  csvFormat(formatOptions); // checks the delimiter at build time
  return reader<R>('csv', pathOrGlob, options, OPTION_KEYS.csv, formatOptions);
}

/** The values of JSON Lines files (one JSON value per line), compressed or not. */
export function jsonLines<T = unknown>(pathOrGlob: string | readonly string[], options: JsonLinesOptions = {}): Dataset<T> {
  return reader<T>('jsonLines', pathOrGlob, options, OPTION_KEYS.jsonLines, { skipEmpty: options.skipEmpty });
}

/**
 * The records of TFRecord files, compressed or not, each record's masked CRC-32C checked (unless
 * `verify: false`): their bytes, or with `decode: 'example'` their `tf.train.Example` features.
 */
export function tfrecord(pathOrGlob: string | readonly string[], options: TfRecordOptions & { decode: 'example' }): Dataset<Example>;
export function tfrecord(pathOrGlob: string | readonly string[], options?: TfRecordOptions & { decode?: 'bytes' }): Dataset<Uint8Array>;
export function tfrecord(pathOrGlob: string | readonly string[], options?: TfRecordOptions): Dataset<Uint8Array | Example>;
export function tfrecord(pathOrGlob: string | readonly string[], options: TfRecordOptions = {}): Dataset<Uint8Array | Example> {
  const decode = options.decode ?? 'bytes';
  if (decode !== 'bytes' && decode !== 'example') throw new RangeError(`tfrecord() decode must be 'bytes' or 'example', not ${JSON.stringify(decode)}.`);
  return reader('tfrecord', pathOrGlob, options, OPTION_KEYS.tfrecord, { decode, verify: options.verify !== false });
}

/**
 * The samples of WebDataset tar shards, compressed or not: members grouped by key into
 * `{ __key__, __url__, <extension>: bytes }`. `shuffleShards` (a seed, or `true` for the global
 * seed) reads the shards in a new seeded order each pass.
 */
export function webdataset(pathOrGlob: string | readonly string[], options: WebDatasetOptions = {}): Dataset<WebDatasetSample> {
  const shuffle = options.shuffleShards;
  if (shuffle !== undefined && typeof shuffle !== 'boolean' && !Number.isInteger(shuffle)) throw new RangeError(`webdataset() shuffleShards must be a seed (an integer) or a boolean, not ${JSON.stringify(shuffle)}.`);
  const seed = shuffle === true ? defaultSeed() : shuffle === false ? undefined : shuffle;
  let epoch = 0;
  const order = seed === undefined ? undefined : (shards: Shard[]) => shardOrder(shards, seed, epoch++);
  return reader<WebDatasetSample>('webdataset', pathOrGlob, options, OPTION_KEYS.webdataset, {}, order);
}

/**
 * The rows of Parquet files (objects), or with `as: 'batches'` one `TableBatch` of columns per row
 * group; read by ranges, one row group at a time, only the `columns` asked for.
 */
export function parquet<R extends TableRow = TableRow>(pathOrGlob: string | readonly string[], options?: TableOptions & { as?: 'rows' }): Dataset<R>;
export function parquet(pathOrGlob: string | readonly string[], options: TableOptions & { as: 'batches' }): Dataset<TableBatch>;
export function parquet(pathOrGlob: string | readonly string[], options: TableOptions): Dataset<TableRow | TableBatch>;
export function parquet(pathOrGlob: string | readonly string[], options: TableOptions = {}): Dataset<TableRow | TableBatch> {
  const formatOptions = { columns: options.columns, as: options.as };
  parquetFormat(formatOptions); // checks columns and as at build time
  return reader('parquet', pathOrGlob, options, OPTION_KEYS.table, formatOptions);
}

/**
 * The rows of Arrow IPC files, stream or file format (objects), or with `as: 'batches'` one
 * `TableBatch` of columns per record batch; streamed, gzip'd or not.
 */
export function arrow<R extends TableRow = TableRow>(pathOrGlob: string | readonly string[], options?: TableOptions & { as?: 'rows' }): Dataset<R>;
export function arrow(pathOrGlob: string | readonly string[], options: TableOptions & { as: 'batches' }): Dataset<TableBatch>;
export function arrow(pathOrGlob: string | readonly string[], options: TableOptions): Dataset<TableRow | TableBatch>;
export function arrow(pathOrGlob: string | readonly string[], options: TableOptions = {}): Dataset<TableRow | TableBatch> {
  const formatOptions = { columns: options.columns, as: options.as };
  arrowFormat(formatOptions);
  return reader('arrow', pathOrGlob, options, OPTION_KEYS.table, formatOptions);
}
