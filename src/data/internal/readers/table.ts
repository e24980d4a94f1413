/**
 * What the two table formats (parquet.ts, arrow.ts) share: their options, their element shapes,
 * and the projection rules.
 */
import { FormatError, type Format } from './format';
import { arraySlice, columnBuffers, columnSlice, packColumn, unpackedArray, unpackedRows, type Unpacked, type ValueColumn } from './columns-packed';

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

/** A table chunk as it crosses from a reader's worker thread: one batch, and whether the reader hands on rows. */
export interface PackedTable {
  batch: TableBatch;
  rows: boolean;
  /** For rows: the batch's plain-array columns of one kind of value, packed (columns-packed.ts); their place in `batch` is left empty. */
  packed?: Record<string, ValueColumn>;
}

/** A batch headed for rows with its plain-array columns of numbers, strings or booleans packed (one string crosses, not one per row). */
function packRows(batch: TableBatch): PackedTable {
  const packed: Record<string, ValueColumn> = {};
  for (const name of Object.keys(batch.columns)) {
    const col = batch.columns[name];
    if (!Array.isArray(col) || name === '__proto__') continue;
    const c = packColumn(col);
    if (c.t === 'a') continue;
    packed[name] = c;
    batch.columns[name] = [];
  }
  return { batch, rows: true, packed };
}

/**
 * A table format's packed twin for worker placement: it reads batches, and the reader's thread
 * makes the rows (`unpackTable`), because posting a batch's columns (typed arrays moved, not
 * copied) costs far less than cloning as many row objects.
 */
export function packedTableFormat(format: (o: TableFormatOptions) => Format<TableRow | TableBatch>, o: TableFormatOptions): Format<PackedTable> {
  const inner = format({ ...o, as: 'batches' });
  const rows = o.as !== 'batches';
  const pack = async function* (chunks: AsyncIterable<(TableRow | TableBatch)[]>): AsyncGenerator<PackedTable[]> {
    for await (const chunk of chunks) yield chunk.map((batch) => (rows ? packRows(batch as TableBatch) : { batch: batch as TableBatch, rows }));
  };
  return inner.streamed
    ? { kind: inner.kind, streamed: true, parse: (bytes, shard, clock) => pack(inner.parse(bytes, shard, clock)) }
    : { kind: inner.kind, streamed: false, read: (file, shard, clock) => pack(inner.read(file, shard, clock)) };
}

/** The buffers a packed batch can move: those its typed-array columns own whole (a view into a shared buffer is copied instead). */
export function tableBuffers(p: PackedTable): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const col of Object.values(p.batch.columns)) {
    if (ArrayBuffer.isView(col) && col.byteOffset === 0 && col.byteLength === col.buffer.byteLength && col.buffer instanceof ArrayBuffer) out.add(col.buffer);
  }
  for (const c of Object.values(p.packed ?? {})) for (const b of columnBuffers(c)) out.add(b);
  return [...out];
}

/** The elements of a packed batch: the batch itself, or its rows (keys in the columns' order), made a range at a time. */
export function unpackTable(p: PackedTable): Unpacked<TableRow | TableBatch> {
  if (!p.rows) return unpackedArray<TableRow | TableBatch>([p.batch]);
  const names = Object.keys(p.batch.columns);
  const packed = p.packed ?? {};
  const columns = names.map((n) => (Object.hasOwn(packed, n) ? columnSlice(packed[n]) : arraySlice(p.batch.columns[n])));
  return unpackedRows(names, columns, p.batch.numRows) as Unpacked<TableRow>;
}
