/**
 * Parquet through hyparquet (pure JS, no dependencies), read by ranges: the footer first, then one
 * row group at a time, and of each only the column chunks projected (`columns`), so a file over
 * HTTP costs the bytes of the columns read, not the file.
 *
 * Rules: a row group yields exactly the rows its footer declares, or it is an error naming the
 * file and the row group; a file that is not Parquet (no `PAR1`, a footer that does not parse) is
 * an error naming the file. Codecs: snappy (hysnappy), gzip and brotli (Node's zlib), zstd, lz4.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { AsyncBuffer, Compressors, FileMetaData, SchemaElement } from 'hyparquet' with { 'resolution-mode': 'import' };
import { FormatError, type ParseClock, type RandomAccess, type RangedFormat, type Shard } from './format';
import { checkTableOptions, messageOf, projectColumns, type TableBatch, type TableFormatOptions, type TableRow } from './table';

/** The footer read first: hyparquet's own default is 512 KB, too much for a small projected read over HTTP. */
const FOOTER_FETCH = 1 << 16;

type Hyparquet = typeof import('hyparquet', { with: { 'resolution-mode': 'import' } });

interface Library {
  hyparquet: Hyparquet;
  compressors: Compressors;
}

let library: Promise<Library> | null = null;

/** hyparquet is an ES module: loaded on the first Parquet read, so a pipeline without one never pays for it. */
function load(): Promise<Library> {
  library ??= Promise.all([import('hyparquet'), import('hyparquet-compressors')]).then(([hyparquet, extra]) => ({
    hyparquet,
    compressors: {
      ...extra.compressors,
      // Node's zlib is native and faster than the pure-JS inflate and brotli.
      GZIP: (input: Uint8Array, outputLength: number) => checkedLength(gunzipSync(input), outputLength),
      BROTLI: (input: Uint8Array, outputLength: number) => checkedLength(brotliDecompressSync(input), outputLength),
    },
  }));
  return library;
}

function checkedLength(out: Buffer, expected: number): Uint8Array {
  if (out.length !== expected) throw new Error(`a page decompressed to ${out.length} bytes, its header says ${expected}`);
  return out;
}

/** An error from the file's own reads (HTTP, disk): passed on as it is, not dressed as bad Parquet. */
const ioErrors = new WeakSet<object>();

/** Byte ranges closer than this are read as one (fewer requests over HTTP, a little more read). */
const COALESCE_GAP = 1 << 16;

/**
 * The shard as hyparquet's AsyncBuffer. Bytes are read ahead of the parsing — the footer read
 * (the file's last bytes, all of a small file) and, for each row group, its projected column
 * chunks at once (`prefetch`) — and kept, so hyparquet's own slices are served from memory. The
 * time spent waiting for them is `io.seconds`: reads that overlap the parsing would count the
 * parsing as waiting.
 */
class ShardBuffer implements AsyncBuffer {
  readonly byteLength: number;
  private tail: { start: number; bytes: Uint8Array } | null = null;
  private kept: { start: number; bytes: Uint8Array }[] = [];
  readonly io = { seconds: 0 };

  constructor(private readonly file: RandomAccess) {
    this.byteLength = file.size;
  }

  /** Reads the ranges ([start, end) pairs) not in the footer read, at once, and keeps them in place of the previous row group's. */
  async prefetch(all: [number, number][]): Promise<void> {
    const tail = this.tail;
    const ranges = tail === null ? all : all.filter(([start, end]) => start < tail.start || end > tail.start + tail.bytes.length);
    const t0 = performance.now();
    try {
      const bytes = await Promise.all(ranges.map(([start, end]) => this.file.read(start, end)));
      this.kept = ranges.map(([start], i) => ({ start, bytes: bytes[i] }));
    } catch (e) {
      if (typeof e === 'object' && e !== null) ioErrors.add(e);
      throw e;
    } finally {
      this.io.seconds += (performance.now() - t0) / 1000;
    }
  }

  async slice(start: number, end = this.byteLength): Promise<ArrayBuffer> {
    let b: Uint8Array | undefined;
    for (const k of this.tail === null ? this.kept : [this.tail, ...this.kept]) {
      if (start >= k.start && end <= k.start + k.bytes.length) b = k.bytes.subarray(start - k.start, end - k.start);
    }
    if (b === undefined) {
      const t0 = performance.now();
      try {
        b = await this.file.read(start, end);
      } catch (e) {
        if (typeof e === 'object' && e !== null) ioErrors.add(e);
        throw e;
      } finally {
        this.io.seconds += (performance.now() - t0) / 1000;
      }
      if (end === this.byteLength && this.tail === null) this.tail = { start, bytes: b };
    }
    // A view of a larger buffer (a Buffer's pool, a kept range) is copied out: hyparquet wants its own ArrayBuffer.
    return (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b.buffer : b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)) as ArrayBuffer;
  }
}

/** The byte ranges of a row group's chunks of `columns`, sorted, near ones merged. */
function chunkRanges(rg: FileMetaData['row_groups'][number], columns: ReadonlySet<string>): [number, number][] {
  const ranges: [number, number][] = [];
  for (const chunk of rg.columns) {
    const m = chunk.meta_data;
    if (m === undefined || !columns.has(m.path_in_schema[0])) continue;
    const first = m.dictionary_page_offset !== undefined && Number(m.dictionary_page_offset) > 0 ? Math.min(Number(m.dictionary_page_offset), Number(m.data_page_offset)) : Number(m.data_page_offset);
    ranges.push([first, first + Number(m.total_compressed_size)]);
  }
  ranges.sort((x, y) => x[0] - y[0]);
  const merged: [number, number][] = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last !== undefined && r[0] - last[1] <= COALESCE_GAP) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  return merged;
}

/** `parquet(…)`'s format. */
export function parquetFormat(options: TableFormatOptions): RangedFormat<TableRow | TableBatch> {
  checkTableOptions('parquet', options);
  return { kind: 'parquet', streamed: false, read: (file, shard, clock) => readParquet(file, shard, clock, options) };
}

async function readMetadata(lib: Library, buffer: AsyncBuffer, shard: Shard): Promise<FileMetaData> {
  // 8 bytes at least: the magic `PAR1` at both ends; a footer length between them makes 12.
  if (buffer.byteLength < 12) throw new FormatError(shard.location, 'byte 0', `${buffer.byteLength} bytes is too short for a Parquet file.`);
  try {
    return await lib.hyparquet.parquetMetadataAsync(buffer, { initialFetchSize: FOOTER_FETCH });
  } catch (e) {
    if (ioErrors.has(e as object)) throw e;
    throw new FormatError(shard.location, 'footer', `not a readable Parquet file (${messageOf(e)}).`);
  }
}

async function* readParquet(file: RandomAccess, shard: Shard, clock: ParseClock, o: TableFormatOptions): AsyncGenerator<(TableRow | TableBatch)[]> {
  const lib = await load();
  const buffer = new ShardBuffer(file);
  const io = buffer.io;
  const metadata = await readMetadata(lib, buffer, shard);
  const available = lib.hyparquet.parquetSchema(metadata).children.map((c) => c.element.name);
  const columns = projectColumns(shard.location, available, o.columns);
  // hyparquet gives an object row's keys in the file's order; `columns` asks for its own.
  const reorder = available.filter((c) => columns.includes(c)).some((c, i) => c !== columns[i]);
  const wanted = new Set(columns);
  const elements = new Map(lib.hyparquet.parquetSchema(metadata).children.map((c) => [c.element.name, c.children.length === 0 ? c.element : undefined]));
  let rowStart = 0;
  for (const [group, rg] of metadata.row_groups.entries()) {
    const numRows = Number(rg.num_rows);
    const rowEnd = rowStart + numRows;
    const where = `row group ${group} (rows ${rowStart}–${rowEnd - 1})`;
    if (numRows === 0) continue;
    let out: TableRow[] | TableBatch;
    await buffer.prefetch(chunkRanges(rg, wanted));
    const t0 = performance.now();
    const io0 = io.seconds;
    try {
      if (o.as === 'batches') {
        const batch = await readBatch(lib, buffer, metadata, columns, rowStart, rowEnd);
        for (const c of columns) batch.columns[c] = typedColumn(elements.get(c), batch.columns[c]);
        out = batch;
      } else {
        out = await readRows(lib, buffer, metadata, columns, rowStart, rowEnd);
        if (reorder) out = out.map((row) => Object.fromEntries(columns.map((c) => [c, row[c]])));
      }
    } catch (e) {
      if (ioErrors.has(e as object) || e instanceof FormatError) throw e;
      throw new FormatError(shard.location, where, messageOf(e));
    }
    clock.parsed(Math.max(0, (performance.now() - t0) / 1000 - (io.seconds - io0)));
    const got = Array.isArray(out) ? out.length : out.numRows;
    if (got !== numRows) throw new FormatError(shard.location, where, `decoded ${got} rows, the footer says ${numRows}.`);
    yield Array.isArray(out) ? out : [out];
    rowStart = rowEnd;
  }
}

function readRows(lib: Library, file: AsyncBuffer, metadata: FileMetaData, columns: string[], rowStart: number, rowEnd: number): Promise<TableRow[]> {
  return new Promise((resolve, reject) => {
    let rows: TableRow[] = [];
    lib.hyparquet.parquetRead({ file, metadata, columns, rowStart, rowEnd, rowFormat: 'object', compressors: lib.compressors, onComplete: (r) => (rows = r) }).then(() => resolve(rows), reject);
  });
}

/** One row group as columns; a column hyparquet decoded in one piece is handed on as it is (a typed array, often). */
async function readBatch(lib: Library, file: AsyncBuffer, metadata: FileMetaData, columns: string[], rowStart: number, rowEnd: number): Promise<TableBatch> {
  const pieces = new Map<string, { start: number; data: ArrayLike<unknown> }[]>(columns.map((c) => [c, []]));
  await lib.hyparquet.parquetRead({
    file,
    metadata,
    columns,
    rowStart,
    rowEnd,
    compressors: lib.compressors,
    onChunk: (chunk) => pieces.get(chunk.columnName)?.push({ start: chunk.rowStart, data: chunk.columnData }),
  });
  const numRows = rowEnd - rowStart;
  const out: Record<string, ArrayLike<unknown>> = {};
  for (const [name, parts] of pieces) {
    parts.sort((a, b) => a.start - b.start);
    if (parts.length === 1 && parts[0].start === rowStart && parts[0].data.length === numRows) {
      out[name] = parts[0].data;
      continue;
    }
    const values: unknown[] = [];
    let next = rowStart;
    for (const { start, data } of parts) {
      if (start > next) throw new Error(`column '${name}' has no values for rows ${next}–${start - 1}`);
      for (let i = Math.max(0, next - start); i < data.length && start + i < rowEnd; i++) values.push(data[i]);
      next = Math.max(next, Math.min(rowEnd, start + data.length));
    }
    if (values.length !== numRows) throw new Error(`column '${name}' decoded ${values.length} values, the footer says ${numRows}`);
    out[name] = values;
  }
  return { numRows, columns: out };
}

/** Typed arrays for the plain numeric types, when hyparquet gave an array (an optional column) that holds no null. */
const TYPED_ARRAYS: Partial<Record<string, { from(values: ArrayLike<never>): ArrayLike<unknown> }>> = {
  DOUBLE: Float64Array,
  FLOAT: Float32Array,
  INT32: Int32Array,
  INT64: BigInt64Array,
};

/** The column as a typed array where its type is a plain number (no logical type: dates, decimals… stay as decoded) and it holds no null. */
function typedColumn(element: SchemaElement | undefined, data: ArrayLike<unknown>): ArrayLike<unknown> {
  if (element === undefined || ArrayBuffer.isView(data) || element.converted_type !== undefined || element.logical_type !== undefined) return data;
  const Typed = element.type === undefined ? undefined : TYPED_ARRAYS[element.type];
  if (Typed === undefined) return data;
  for (let i = 0; i < data.length; i++) if (data[i] === null || data[i] === undefined) return data;
  return Typed.from(data as ArrayLike<never>);
}
