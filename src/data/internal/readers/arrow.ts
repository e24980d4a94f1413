/**
 * Arrow IPC through apache-arrow, read front to back: the stream format as it is, and the file
 * format as the stream it holds — an IPC file is the magic `ARROW1`, padding, a stream ending in
 * its end-of-stream marker, then a footer that only random access needs. So both formats stream
 * from disk or HTTP, gzip'd or not, one record batch at a time.
 *
 * Rules: a stream that stops at a message boundary without its end-of-stream marker (a file cut
 * short) is an error naming the file and the batch, never fewer rows in silence; projection
 * (`columns`) selects fields from each batch (the bytes of the others are still read: IPC has no
 * column chunks to skip).
 */
import type { RecordBatch, Vector } from 'apache-arrow';
import { FormatError, type ParseClock, type Shard, type StreamFormat } from './format';
import { checkTableOptions, messageOf, projectColumns, type TableBatch, type TableFormatOptions, type TableRow } from './table';

type Arrow = typeof import('apache-arrow');

let library: Promise<Arrow> | null = null;

/** apache-arrow is large: loaded on the first Arrow read, so a pipeline without one never pays for it. */
function load(): Promise<Arrow> {
  library ??= import('apache-arrow');
  return library;
}

const MAGIC = Buffer.from('ARROW1');
/** The file format's leading magic and its padding to 8 bytes. */
const FILE_PREFIX = 8;
/** The end-of-stream marker: a continuation token and a zero length (the pre-1.0 marker, 4 zero bytes, is not accepted: a cut stream can end in them). */
const EOS = Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

/**
 * The shard's bytes as the IPC stream inside them: a file's prefix is dropped. Keeps the last
 * bytes seen and whether the input ended, so the caller can tell a complete stream from a cut one;
 * adds the time spent waiting for bytes to `waitSeconds`.
 */
class IpcBytes implements AsyncIterable<Uint8Array> {
  isFile = false;
  ended = false;
  offset = 0;
  waitSeconds = 0;
  private tail: Buffer = Buffer.alloc(0);
  private readonly it: AsyncIterator<Uint8Array>;
  /** Every byte so far, until the first record batch proves the stream readable (see `whole`). */
  private kept: Uint8Array[] | null = [];

  constructor(bytes: AsyncIterable<Uint8Array>) {
    this.it = bytes[Symbol.asyncIterator]();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    // The first bytes, until there are enough to tell a file (ARROW1) from a stream; null after.
    let head: Buffer | null = Buffer.alloc(0);
    for (;;) {
      const t0 = performance.now();
      const r = await this.it.next();
      this.waitSeconds += (performance.now() - t0) / 1000;
      if (r.done) break;
      const chunk = r.value;
      this.kept?.push(chunk);
      this.offset += chunk.length;
      this.tail = Buffer.concat([this.tail, chunk]).subarray(-EOS.length);
      if (head === null) {
        yield chunk;
        continue;
      }
      head = Buffer.concat([head, chunk]);
      if (head.length < FILE_PREFIX) continue;
      this.isFile = head.subarray(0, MAGIC.length).equals(MAGIC);
      const first = this.isFile ? head.subarray(FILE_PREFIX) : head;
      head = null;
      if (first.length > 0) yield first;
    }
    this.ended = true;
    if (head !== null && head.length > 0) yield head;
  }

  /** Stops keeping the bytes read: the stream is readable as a stream. */
  readable(): void {
    this.kept = null;
  }

  /** The whole input: the bytes kept so far and the rest, read to the end. */
  async whole(): Promise<Buffer> {
    const parts = this.kept ?? [];
    this.kept = null;
    for (let r = await this.it.next(); !r.done; r = await this.it.next()) {
      parts.push(r.value);
      this.offset += r.value.length;
    }
    this.ended = true;
    const whole = Buffer.concat(parts);
    this.tail = whole.subarray(-EOS.length);
    return whole;
  }

  /** True when the input was read to its end and that end is not a complete stream or file. */
  cutShort(): boolean {
    if (!this.ended) return false;
    if (this.isFile) return !this.tail.subarray(-MAGIC.length).equals(MAGIC);
    return !this.tail.equals(EOS);
  }

  async close(): Promise<void> {
    await this.it.return?.();
  }
}

/** `arrow(…)`'s format. */
export function arrowFormat(options: TableFormatOptions): StreamFormat<TableRow | TableBatch> {
  checkTableOptions('arrow', options);
  return { kind: 'arrow', streamed: true, parse: (bytes, shard, clock) => parseArrow(bytes, shard, clock, options) };
}

/**
 * The record batches of the IPC bytes, streamed. A file whose stream part has no schema message
 * (apache-arrow's own JS writer keeps the schema in the footer only) cannot be read front to back:
 * it is read whole and through its footer instead.
 */
async function* recordBatches(arrow: Arrow, input: IpcBytes, fail: (e: unknown) => never): AsyncGenerator<RecordBatch> {
  let streamed: AsyncIterator<RecordBatch> | null = null;
  let first: IteratorResult<RecordBatch> | null = null;
  try {
    const reader = await arrow.RecordBatchReader.from(input);
    streamed = reader[Symbol.asyncIterator]();
    first = await streamed.next();
  } catch (e) {
    if (!input.isFile) fail(e);
  }
  if (first === null) {
    const whole = await input.whole();
    let reader;
    try {
      reader = arrow.RecordBatchReader.from(whole);
    } catch (e) {
      fail(e);
    }
    for (const batch of reader as Iterable<RecordBatch>) yield batch;
    return;
  }
  input.readable();
  for (let r = first; !r.done; r = await (streamed as AsyncIterator<RecordBatch>).next().catch(fail)) yield r.value;
}

async function* parseArrow(bytes: AsyncIterable<Uint8Array>, shard: Shard, clock: ParseClock, o: TableFormatOptions): AsyncGenerator<(TableRow | TableBatch)[]> {
  const arrow = await load();
  const input = new IpcBytes(bytes);
  let index = 0;
  const fail = (e: unknown): never => {
    if (e instanceof FormatError) throw e;
    throw new FormatError(shard.location, `record batch ${index} (byte ${input.offset})`, messageOf(e));
  };
  try {
    const batches = recordBatches(arrow, input, fail);
    let columns: string[] | null = null;
    for (;;) {
      const t0 = performance.now();
      const wait0 = input.waitSeconds;
      const r = await batches.next().catch(fail);
      if (r.done) break;
      const batch = r.value;
      columns ??= projectColumns(
        shard.location,
        batch.schema.fields.map((f) => f.name),
        o.columns,
      );
      const out = o.as === 'batches' ? [toBatch(arrow, batch, columns)] : toRows(arrow, batch, columns);
      clock.parsed(Math.max(0, (performance.now() - t0) / 1000 - (input.waitSeconds - wait0)));
      index++;
      if (out.length > 0) yield out;
    }
    if (input.cutShort()) {
      throw new FormatError(shard.location, `record batch ${index} (byte ${input.offset})`, `the ${input.isFile ? 'file' : 'stream'} ends without its end-of-stream marker: it was cut short.`);
    }
  } finally {
    await input.close();
  }
}

/** A column's values: a typed array for an integer or float column without nulls (no copy), else an array with `null`s. */
function columnValues(arrow: Arrow, v: Vector): ArrayLike<unknown> {
  const t = v.type;
  if (v.nullCount === 0 && (arrow.DataType.isInt(t) || (arrow.DataType.isFloat(t) && t.precision !== arrow.Precision.HALF))) {
    const a = v.toArray() as ArrayLike<unknown>;
    if (ArrayBuffer.isView(a)) return a;
  }
  return Array.from(v as Iterable<unknown>);
}

function toBatch(arrow: Arrow, batch: RecordBatch, columns: string[]): TableBatch {
  const out: Record<string, ArrayLike<unknown>> = {};
  for (const name of columns) out[name] = columnValues(arrow, batch.getChild(name) as Vector);
  return { numRows: batch.numRows, columns: out };
}

function toRows(arrow: Arrow, batch: RecordBatch, columns: string[]): TableRow[] {
  const values = columns.map((name) => columnValues(arrow, batch.getChild(name) as Vector));
  const rows: TableRow[] = new Array(batch.numRows);
  for (let i = 0; i < batch.numRows; i++) {
    const row: TableRow = {};
    for (let j = 0; j < columns.length; j++) row[columns[j]] = values[j][i];
    rows[i] = row;
  }
  return rows;
}
