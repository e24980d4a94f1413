/**
 * The contract between a reader's op (reader.ts: shards, parallel reads, placement, counters) and
 * a format (csv, jsonLines, tfrecord, webdataset, parquet, arrow). A format does no I/O of its own:
 * it parses the bytes it is handed, or reads the ranges it asks for, so the same format works on
 * local files and HTTP(S) shards, on the main thread and in a worker.
 */
import type { OpKind } from '../../tracing';

/** One shard of a reader: a local absolute path or an http(s) URL, and its place in the list. */
export interface Shard {
  location: string;
  index: number;
}

/** Where a format's parsing time goes: the op adds it to its counters (`parseSeconds`). */
export interface ParseClock {
  /** Seconds of parsing to add (measured by the format around its own CPU work). */
  parsed(seconds: number): void;
}

/**
 * A format read front to back: the shard's bytes arrive (decompressed) as a stream of chunks, and
 * elements leave in chunks. An error names the shard's location and the position (line, record,
 * byte offset) — `FormatError` below.
 */
export interface StreamFormat<T> {
  kind: OpKind;
  streamed: true;
  parse(bytes: AsyncIterable<Uint8Array>, shard: Shard, clock: ParseClock): AsyncIterable<T[]>;
}

/** A shard the format reads by ranges (Parquet's footer first, then the row groups it needs). */
export interface RandomAccess {
  /** The shard's size in bytes. */
  size: number;
  /** Bytes [start, end) of the shard. */
  read(start: number, end: number): Promise<Uint8Array>;
}

/** A format read by ranges: never decompressed as a whole (its own pages are compressed inside). */
export interface RangedFormat<T> {
  kind: OpKind;
  streamed: false;
  read(file: RandomAccess, shard: Shard, clock: ParseClock): AsyncIterable<T[]>;
}

export type Format<T> = StreamFormat<T> | RangedFormat<T>;

/** Bad bytes in a shard: the message names the shard and the position, and says what was expected. */
export class FormatError extends Error {
  constructor(
    readonly location: string,
    /** Where, in the format's own terms: `line 12`, `record 3 at byte 4,096`. */
    readonly position: string,
    message: string,
  ) {
    super(`${location}: ${position}: ${message}`);
    this.name = 'FormatError';
  }
}
