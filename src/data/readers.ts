/**
 * The readers of stored formats: `csv`, `jsonLines` (and, as their formats land, `tfrecord`,
 * `webdataset`, `parquet`, `arrow`). Each is a source op of its own kind built by the one reader
 * op (internal/readers/reader.ts) from a format, with the knobs `parallelism` (shards read at once)
 * and `placement` (where decompression and parsing run), which a tracer's overrides may change.
 */
import type { CsvOptions, JsonLinesOptions, ReaderOptions } from './options';
import { OPTION_KEYS } from './options';
import type { OpKind } from './tracing';
import { Dataset, finish } from './dataset';
import { beginOp, checkOptions, makeNode, overridden } from './internal/build';
import { resolveParallelism } from './internal/parallelism';
import { resolveCwd } from './internal/ops/files';
import { openReader } from './internal/readers/reader';
import type { CsvRow } from './internal/readers/csv';
import { csvFormat } from './internal/readers/csv';

export type { CsvRow } from './internal/readers/csv';
export { FormatError } from './internal/readers/format';

const COMPRESSIONS = ['auto', 'gzip', 'brotli', 'none'];

/**
 * A reader op of `kind` over `patterns`; `formatOptions` are the format's own options (plain data
 * that cross to worker threads), checked by `check` at build time so a bad one fails here.
 */
function reader<T>(kind: OpKind, patterns: string | readonly string[], options: ReaderOptions, keys: readonly string[], formatOptions: Record<string, unknown>): Dataset<T> {
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
    (n) => openReader(n, { kind, patterns, cwd, compression, http: options.http, parallelism, placement, formatOptions }),
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
