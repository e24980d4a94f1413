/**
 * TFRecord framing (tensorflow/core/lib/io/record_writer.cc): each record is
 *
 *   uint64 length (little-endian) | uint32 masked_crc32c(length's 8 bytes) | data | uint32 masked_crc32c(data)
 *
 * parsed here from decompressed chunks of any size. A record inside one chunk is a view into that
 * chunk (no copy); one spanning chunks is copied once into a buffer of its length. With `verify`,
 * a length or data CRC that does not match is a `FormatError`; a shard ending inside a record is one
 * always. Positions name the record (1 for the first) and the byte offset its frame starts at, in
 * the decompressed stream.
 */
import { crc32c, crc32cRange, maskCrc } from './crc32c';
import { decodeExample, type Example } from './example';
import { FormatError, type ParseClock, type Shard, type StreamFormat } from './format';

const HEADER = 12;
const FOOTER = 4;

/** What a TFRecord format yields: raw records, or decoded `tf.train.Example`s. */
export interface TfRecordFormatOptions {
  decode?: 'bytes' | 'example';
  verify?: boolean;
}

/** A record's position for messages: `record 3 at byte 4,096`. */
function position(record: number, offset: number): string {
  return `record ${record} at byte ${offset.toLocaleString('en-US')}`;
}

/** The records one chunk completes, as `TfRecordFramer.pushRanges` finds them. */
export interface RecordRanges {
  /** Where each record inside the chunk starts and ends (not included), in order. */
  starts: number[];
  ends: number[];
  /** A record begun in earlier chunks and completed in this one (it comes before the ranges), or null. */
  spanning: Uint8Array | null;
}

/** Splits a TFRecord byte stream into records, chunk by chunk; `end()` when the stream ends. */
export class TfRecordFramer {
  private readonly header = new Uint8Array(HEADER);
  private readonly footer = new Uint8Array(FOOTER);
  private headerFill = 0;
  private body: Uint8Array | null = null;
  private bodyFill = 0;
  private footerFill = 0;
  /** Byte offset, in the stream, of the frame being read. */
  private frameStart = 0;
  /** Records completed so far. */
  private count = 0;

  constructor(
    private readonly location: string,
    private readonly verify: boolean,
  ) {}

  /** Appends the records `chunk` completes to `out` (those before a bad frame too, before its error). */
  push(chunk: Uint8Array, out: Uint8Array[]): void {
    const found: RecordRanges = { starts: [], ends: [], spanning: null };
    try {
      this.pushRanges(chunk, found);
    } finally {
      if (found.spanning !== null) out.push(found.spanning);
      for (let i = 0; i < found.starts.length; i++) out.push(chunk.subarray(found.starts[i], found.ends[i]));
    }
  }

  /**
   * The records `chunk` completes, added to `into` as ranges of it (where their data starts and
   * ends), not as views: a worker copies them out in one go (records-packed.ts). A
   * record that spans chunks completes at most once per chunk, before any range (a chunk that
   * starts inside a record finishes it first), and is added as `into.spanning`.
   */
  pushRanges(chunk: Uint8Array, into: RecordRanges): void {
    let at = 0;
    const n = chunk.length;
    const spanning: Uint8Array[] = [];
    while (at < n) {
      if (this.body === null && this.headerFill === 0) {
        // The common case: a whole frame inside this chunk is read in place.
        const whole = this.wholeFrame(chunk, at);
        if (whole > 0) {
          into.starts.push(at + HEADER);
          into.ends.push(whole - FOOTER);
          this.finish(whole - at);
          at = whole;
          continue;
        }
      }
      at = this.partial(chunk, at, spanning);
      if (spanning.length > 0) {
        if (into.spanning !== null || into.starts.length > 0) throw new Error('internal: a record spanning chunks completed after another record of the chunk');
        into.spanning = spanning.pop() as Uint8Array;
      }
    }
  }

  /** Throws if the stream ended inside a record. */
  end(): void {
    if (this.body === null && this.headerFill === 0) return;
    const have = this.headerFill + this.bodyFill + this.footerFill;
    const want = this.body === null ? `${HEADER}-byte header` : `${HEADER + this.body.length + FOOTER}-byte frame`;
    throw new FormatError(this.location, position(this.count + 1, this.frameStart), `truncated record: the shard ends ${have} bytes into its ${want}.`);
  }

  /** Records completed so far. */
  get records(): number {
    return this.count;
  }

  /** The end of the frame starting at `at` if all of it is in `chunk`, else 0. */
  private wholeFrame(chunk: Uint8Array, at: number): number {
    if (chunk.length - at < HEADER) return 0;
    const length = this.length(chunk, at);
    const end = at + HEADER + length + FOOTER;
    if (end > chunk.length) return 0;
    if (this.verify) this.checkData(chunk, at + HEADER, end - FOOTER, readU32(chunk, end - FOOTER));
    return end;
  }

  /** Reads what it can of a frame that spans chunks; returns where it stopped in `chunk`. */
  private partial(chunk: Uint8Array, at: number, out: Uint8Array[]): number {
    if (this.body === null) {
      const take = Math.min(HEADER - this.headerFill, chunk.length - at);
      this.header.set(chunk.subarray(at, at + take), this.headerFill);
      this.headerFill += take;
      if (this.headerFill < HEADER) return at + take;
      const length = this.length(this.header, 0);
      try {
        this.body = new Uint8Array(length);
      } catch {
        // Unverified garbage can claim gigabytes; say so rather than fail with an allocation error.
        throw this.error(`a record length of ${length.toLocaleString('en-US')} bytes cannot be held in memory (is this a TFRecord file? verify would check the length).`);
      }
      return at + take;
    }
    if (this.bodyFill < this.body.length) {
      const take = Math.min(this.body.length - this.bodyFill, chunk.length - at);
      this.body.set(chunk.subarray(at, at + take), this.bodyFill);
      this.bodyFill += take;
      return at + take;
    }
    const take = Math.min(FOOTER - this.footerFill, chunk.length - at);
    this.footer.set(chunk.subarray(at, at + take), this.footerFill);
    this.footerFill += take;
    if (this.footerFill === FOOTER) {
      const data = this.body;
      if (this.verify) this.checkData(data, 0, data.length, readU32(this.footer, 0));
      out.push(data);
      this.finish(HEADER + data.length + FOOTER);
    }
    return at + take;
  }

  /** The data length in the header at `at`, its CRC checked when verifying. */
  private length(bytes: Uint8Array, at: number): number {
    const lo = readU32(bytes, at);
    const hi = readU32(bytes, at + 4);
    if (this.verify) {
      const stored = readU32(bytes, at + 8);
      const actual = maskCrc(crc32cRange(bytes, at, at + 8));
      if (stored !== actual) throw this.error(`corrupt length: its masked CRC-32C is ${hex(actual)} but the frame stores ${hex(stored)}.`);
    }
    // 2^32 bytes is past what one Uint8Array holds on most platforms; no real record comes near.
    if (hi !== 0) throw this.error(`a record length of ${(hi * 2 ** 32 + lo).toLocaleString('en-US')} bytes is not a TFRecord frame (is this a TFRecord file?).`);
    return lo;
  }

  /** Checks the CRC of the record in `bytes` from `start` to `end`. */
  private checkData(bytes: Uint8Array, start: number, end: number, stored: number): void {
    const actual = maskCrc(crc32cRange(bytes, start, end));
    if (stored !== actual) throw this.error(`corrupt data: the ${end - start}-byte record's masked CRC-32C is ${hex(actual)} but the frame stores ${hex(stored)}.`);
  }

  private finish(frameBytes: number): void {
    this.count++;
    this.frameStart += frameBytes;
    this.headerFill = 0;
    this.body = null;
    this.bodyFill = 0;
    this.footerFill = 0;
  }

  private error(message: string): FormatError {
    return new FormatError(this.location, position(this.count + 1, this.frameStart), message);
  }
}

function readU32(bytes: Uint8Array, at: number): number {
  return (bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24)) >>> 0;
}

function hex(n: number): string {
  return `0x${n.toString(16).padStart(8, '0')}`;
}

/** Frames one record as TFRecord bytes (what the writer writes). */
export function frameRecord(data: Uint8Array): Uint8Array {
  const frame = new Uint8Array(HEADER + data.length + FOOTER);
  const view = new DataView(frame.buffer);
  view.setUint32(0, data.length, true);
  view.setUint32(4, Math.floor(data.length / 2 ** 32), true);
  view.setUint32(8, maskCrc(crc32c(frame.subarray(0, 8))), true);
  frame.set(data, HEADER);
  view.setUint32(HEADER + data.length, maskCrc(crc32c(data)), true);
  return frame;
}

/** The TFRecord format: raw records (`decode: 'bytes'`, the default) or decoded Examples. */
export function tfRecordFormat(options: TfRecordFormatOptions & { decode: 'example' }): StreamFormat<Example>;
export function tfRecordFormat(options?: TfRecordFormatOptions & { decode?: 'bytes' }): StreamFormat<Uint8Array>;
export function tfRecordFormat(options?: TfRecordFormatOptions): StreamFormat<Uint8Array | Example>;
export function tfRecordFormat(options: TfRecordFormatOptions = {}): StreamFormat<Uint8Array | Example> {
  const verify = options.verify ?? true;
  const examples = options.decode === 'example';
  return {
    kind: 'tfrecord',
    streamed: true,
    parse: (bytes, shard, clock) => (examples ? parseExamples(bytes, shard, clock, verify) : parseRecords(bytes, shard, clock, verify)),
  };
}

/** Plain Uint8Array views over a chunk, so elements are the same type on the main thread as after a worker's copy (never Buffers). */
export function plain(chunk: Uint8Array): Uint8Array {
  return Object.getPrototypeOf(chunk) === Uint8Array.prototype ? chunk : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

async function* parseRecords(bytes: AsyncIterable<Uint8Array>, shard: Shard, clock: ParseClock, verify: boolean): AsyncGenerator<Uint8Array[]> {
  const framer = new TfRecordFramer(shard.location, verify);
  for await (const chunk of bytes) {
    const t0 = performance.now();
    const out: Uint8Array[] = [];
    let failed = false;
    let failure: unknown;
    try {
      framer.push(plain(chunk), out);
    } catch (e) {
      [failed, failure] = [true, e];
    }
    clock.parsed((performance.now() - t0) / 1000);
    // The records before a bad one are delivered before its error.
    if (out.length > 0) yield out;
    if (failed) throw failure;
  }
  framer.end();
}

async function* parseExamples(bytes: AsyncIterable<Uint8Array>, shard: Shard, clock: ParseClock, verify: boolean): AsyncGenerator<Example[]> {
  let frameStart = 0;
  let record = 0;
  for await (const records of parseRecords(bytes, shard, clock, verify)) {
    const t0 = performance.now();
    const examples: Example[] = [];
    let failure: FormatError | null = null;
    for (const r of records) {
      record++;
      try {
        examples.push(decodeExample(r));
      } catch (e) {
        failure = new FormatError(shard.location, position(record, frameStart), `not a tf.train.Example: ${(e as Error).message}`);
        break;
      }
      frameStart += HEADER + r.length + FOOTER;
    }
    clock.parsed((performance.now() - t0) / 1000);
    if (examples.length > 0) yield examples;
    if (failure !== null) throw failure;
  }
}
