/**
 * What the two table formats (parquet.ts, arrow.ts) share: their options, their element shapes,
 * and the projection rules.
 */
import { FormatError } from './format';

/** The table formats' own options: plain data, so they cross to a worker thread as they are. */
export interface TableFormatOptions {
  /** Only these columns, in this order (default all, in the file's order). */
  columns?: readonly string[];
  /** `'rows'` (default): one object per row; `'batches'`: one `TableBatch` per row group / record batch. */
  as?: 'rows' | 'batches';
}

/** A table row: column name → value. */
export type TableRow = Record<string, unknown>;

/**
 * A row group (Parquet) or record batch (Arrow) as columns. A numeric column without nulls is a
 * typed array (`Float64Array`, `Int32Array`, `BigInt64Array` for 64-bit integers…); any other
 * column is an array of values, `null` where a value is missing.
 */
export interface TableBatch {
  numRows: number;
  columns: Record<string, ArrayLike<unknown>>;
}

/** Checks a table format's options when the reader is built, so a bad one fails there and not on the first read. */
export function checkTableOptions(kind: string, o: TableFormatOptions): void {
  if (o.columns !== undefined && !(Array.isArray(o.columns) && o.columns.every((c) => typeof c === 'string'))) throw new TypeError(`${kind}() columns must be a list of column names.`);
  if (o.as !== undefined && o.as !== 'rows' && o.as !== 'batches') throw new RangeError(`${kind}() as must be 'rows' or 'batches', not ${JSON.stringify(o.as)}.`);
}

/** The columns to read: `wanted` checked against the file's `available` ones (all when none are asked for). */
export function projectColumns(location: string, available: readonly string[], wanted: readonly string[] | undefined): string[] {
  if (wanted === undefined) return [...available];
  const missing = wanted.filter((c) => !available.includes(c));
  if (missing.length > 0) {
    const list = missing.map((c) => `'${c}'`).join(', ');
    throw new FormatError(location, 'schema', `no column ${list}: the file has ${available.map((c) => `'${c}'`).join(', ')}.`);
  }
  return [...wanted];
}

/** One message from anything thrown. */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
