/**
 * The readers of stored formats: `csv`, `jsonLines`, `tfrecord`, `webdataset`, `parquet`, `arrow`. Each is a source op of its own kind built by the one reader
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
import type { Shard } from './internal/readers/format';
import { defaultSeed } from './internal/rng';
import type { Example } from './internal/readers/example';
import { tfRecordFormat } from './internal/readers/tfrecord';
import { shardOrder, type WebDatasetSample } from './internal/readers/webdataset';
import { checkTableOptions, type TableBatch, type TableRow } from './internal/readers/table';
import type { CsvRow } from './internal/readers/csv';
import { csvFormat } from './internal/readers/csv';

export type { CsvRow } from './internal/readers/csv';
export type { TableBatch, TableRow } from './internal/readers/table';
export { FormatError } from './internal/readers/format';

const COMPRESSIONS = ['auto', 'gzip', 'brotli', 'none'];

/**
 * A reader op of `kind` over `patterns`; `formatOptions` are the format's own options (plain data
 * that cross to worker threads), checked by `check` at build time so a bad one fails here.
 */
function reader<T>(kind: OpKind, patterns: string | readonly string[], options: ReaderOptions, keys: readonly string[], formatOptions: Record<string, unknown>, order?: () => ReaderConfig['order']): Dataset<T> {
  const env = beginOp(kind);
  checkOptions(kind, env, options, keys);
  if (typeof patterns !== 'string' && !(Array.isArray(patterns) && patterns.every((p) => typeof p === 'string'))) throw new TypeError(`${kind}() needs a path, a glob, a URL or a list of them.`);
  const compression = options.compression ?? 'auto';
  if (!COMPRESSIONS.includes(compression)) throw new RangeError(`${kind}() compression must be one of ${COMPRESSIONS.join(', ')}, not ${JSON.stringify(compression)}.`);
  const o = env.override;
  const placement = o?.placement ?? options.placement ?? 'main';
  if (placement !== 'main' && placement !== 'worker') throw new RangeError(`${kind}() placement must be 'main' or 'worker', not ${JSON.stringify(placement)}.`);
  const written = o?.parallelism ?? options.parallelism;
  const parallelism = resolveParallelism(written, placement, false);
  const cwd = resolveCwd(options.cwd);
  const node = makeNode<T>(
    env,
    {
      kind,
      inputs: [],
      placement,
      knobs: { parallelism: written, resolvedParallelism: parallelism },
      overridden: overridden(o, ['parallelism', 'placement']),
    },
    (n) => openReader(n, { kind, patterns, cwd, compression, http: options.http, parallelism, placement, formatOptions, order: order?.() }),
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
 * The records of TFRecord files (TensorFlow's `TFRecordDataset`), CRC-checked unless `verify:
 * false`: each record's bytes, or with `decode: 'example'` its `tf.train.Example` features.
 */
export function tfrecord(pathOrGlob: string | readonly string[], options: TfRecordOptions & { decode: 'example' }): Dataset<Example>;
export function tfrecord(pathOrGlob: string | readonly string[], options?: TfRecordOptions & { decode?: 'bytes' }): Dataset<Uint8Array>;
export function tfrecord(pathOrGlob: string | readonly string[], options: TfRecordOptions = {}): Dataset<Uint8Array | Example> {
  const formatOptions = { decode: options.decode, verify: options.verify };
  tfRecordFormat(formatOptions); // checks the options at build time
  return reader('tfrecord', pathOrGlob, options, OPTION_KEYS.tfrecord, formatOptions);
}

/**
 * The samples of WebDataset tar shards (`wds.WebDataset`): a shard's files grouped by key. With
 * `shuffleShards` (a seed, or true for the global seed) each pass reads the shards in a new order.
 */
export function webdataset(pathOrGlob: string | readonly string[], options: WebDatasetOptions = {}): Dataset<WebDatasetSample> {
  const shuffle = options.shuffleShards;
  if (shuffle !== undefined && typeof shuffle !== 'boolean' && !Number.isInteger(shuffle)) throw new TypeError(`webdataset() shuffleShards must be a seed (an integer) or a boolean, not ${JSON.stringify(shuffle)}.`);
  let epoch = 0;
  const order =
    shuffle === undefined || shuffle === false
      ? undefined
      : () => {
          const e = epoch++;
          return (shards: Shard[]) => shardOrder(shards, shuffle, e, defaultSeed).map((s, index) => ({ location: s.location, index }));
        };
  return reader('webdataset', pathOrGlob, options, OPTION_KEYS.webdataset, {}, order);
}

/** The rows (or, with `as: 'batches'`, the row groups as columns) of Parquet files, `columns` only when given. */
export function parquet<R extends TableRow = TableRow>(pathOrGlob: string | readonly string[], options?: TableOptions & { as?: 'rows' }): Dataset<R>;
export function parquet(pathOrGlob: string | readonly string[], options: TableOptions & { as: 'batches' }): Dataset<TableBatch>;
export function parquet(pathOrGlob: string | readonly string[], options: TableOptions = {}): Dataset<TableRow | TableBatch> {
  const formatOptions = { columns: options.columns, as: options.as };
  checkTableOptions('parquet', formatOptions);
  return reader('parquet', pathOrGlob, options, OPTION_KEYS.table, formatOptions);
}

/** The rows (or, with `as: 'batches'`, the record batches as columns) of Arrow IPC files and streams, `columns` only when given. */
export function arrow<R extends TableRow = TableRow>(pathOrGlob: string | readonly string[], options?: TableOptions & { as?: 'rows' }): Dataset<R>;
export function arrow(pathOrGlob: string | readonly string[], options: TableOptions & { as: 'batches' }): Dataset<TableBatch>;
export function arrow(pathOrGlob: string | readonly string[], options: TableOptions = {}): Dataset<TableRow | TableBatch> {
  const formatOptions = { columns: options.columns, as: options.as };
  checkTableOptions('arrow', formatOptions);
  return reader('arrow', pathOrGlob, options, OPTION_KEYS.table, formatOptions);
}
