/**
 * Writes TFRecord files (what `tfrecord()` reads and TensorFlow's `TFRecordDataset` reads), plain
 * or gzip'd, through a file stream that respects backpressure.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { createGzip, type Gzip } from 'node:zlib';
import { frameRecord } from './tfrecord';

/** How `writeTfRecord` and `TfRecordWriter` write. */
export interface TfRecordWriterOptions {
  /** `'auto'` (default): gzip when the path ends in `.gz`; `'gzip'` or `'none'` to choose. */
  compression?: 'auto' | 'gzip' | 'none';
}

/** A TFRecord file being written: `write` each record (awaiting it), then `close`. */
export class TfRecordWriter {
  private readonly file: WriteStream;
  private readonly sink: WriteStream | Gzip;
  private closed = false;
  /** The stream's first error, thrown by the next `write` or `close` (an unheard 'error' would end the process). */
  private failure: Error | null = null;
  /** Records written so far. */
  records = 0;

  constructor(
    readonly path: string,
    options: TfRecordWriterOptions = {},
  ) {
    const compression = options.compression ?? 'auto';
    const gzip = compression === 'gzip' || (compression === 'auto' && path.toLowerCase().endsWith('.gz'));
    this.file = createWriteStream(path);
    this.sink = this.file;
    if (gzip) {
      const z = createGzip();
      z.pipe(this.file);
      this.sink = z;
    }
    for (const s of new Set([this.file, this.sink])) s.on('error', (e: Error) => (this.failure ??= e));
  }

  /** Appends one record; resolves when the stream can take more. */
  async write(record: Uint8Array): Promise<void> {
    if (this.closed) throw new Error(`TfRecordWriter(${this.path}): write after close.`);
    if (this.failure) throw this.failure;
    this.records++;
    if (!this.sink.write(frameRecord(record))) await once(this.sink, 'drain');
  }

  /** Flushes and closes the file; resolves once every byte is on disk. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.failure === null) this.sink.end();
    await finished(this.file).catch(() => undefined);
    if (this.failure) throw this.failure;
  }
}

/** Writes `records` to a TFRecord file at `path` and returns how many were written. */
export async function writeTfRecord(path: string, records: Iterable<Uint8Array> | AsyncIterable<Uint8Array>, options: TfRecordWriterOptions = {}): Promise<number> {
  const writer = new TfRecordWriter(path, options);
  try {
    for await (const record of records) await writer.write(record);
  } finally {
    await writer.close();
  }
  return writer.records;
}
