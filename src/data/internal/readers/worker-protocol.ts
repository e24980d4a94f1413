/** The messages between a reader op and its worker threads (reader-worker.ts). */
import type { HttpOptions } from '../../options';
import type { OpCounters, OpKind } from '../../tracing';
import type { Compression } from './compression';
import type { Shard } from './format';

/**
 * Chunks a worker posts ahead of the reader's takes. Two starved the workers: with the reader's
 * thread rebuilding one chunk while the next crossed, a worker sat waiting for an acknowledgement.
 */
export const WINDOW = 4;

/**
 * Bytes per chunk a worker reads and inflates, four times the main thread's 64 KB: a worker posts
 * a message per chunk it parses, and each costs the reader's thread a receipt and an
 * acknowledgement, and the worker a round trip to zlib's thread. Measured (scratch profile, 2
 * workers, bench:formats' shards, all threads' CPU per element): TFRecord's small records ~25% less,
 * JSON Lines ~5% less, CSV the same. The window of chunks ahead (WINDOW) is then at most 1 MB of
 * text per worker.
 */
export const WORKER_CHUNK_BYTES = 1 << 18;

/** Milliseconds a stopped worker gets to close its files and exit before it is terminated. */
export const STOP_GRACE_MS = 2000;

/**
 * What a shard is read as: the reader's kind and the format's own options (plain data). It comes
 * with each `open`, so a warm thread (worker-pool.ts) serves any reader.
 */
export interface ReaderWorkerFormat {
  kind: OpKind;
  options: Record<string, unknown>;
}

export type ToReaderWorker =
  | { type: 'open'; format: ReaderWorkerFormat; shard: Shard; compression: 'auto' | Compression; http?: HttpOptions; traced: boolean }
  | { type: 'ack' }
  /** Stop reading and end the thread (it exits once its files are closed). */
  | { type: 'stop' };

/** The counters a worker measures for the reader, as deltas since its previous message. */
export const SHIPPED_STATS = ['diskBytesRead', 'netBytesRead', 'bytesDecompressed', 'ioWaitSeconds', 'decompressSeconds', 'parseSeconds', 'shardsOpened', 'filesRead'] as const;
export type ShippedStats = Partial<Pick<OpCounters, (typeof SHIPPED_STATS)[number] | 'workerCpuSeconds'>>;

export type FromReaderWorker =
  | { type: 'chunk'; items: unknown[]; stats?: ShippedStats }
  | { type: 'end'; stats?: ShippedStats }
  | { type: 'error'; name: string; message: string; format?: { location: string; position: string; detail: string }; stats?: ShippedStats };
