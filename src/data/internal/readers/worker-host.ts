/**
 * A reader's worker thread, seen from the reader op: it reads one shard at a time (reader-worker.ts)
 * and hands its chunks to the reader in order, acknowledging each one taken so the worker reads
 * ahead only WINDOW chunks. The worker's measurements arrive with its chunks and are added to the
 * op's counters. `close()` terminates the thread; a reader closes its hosts when its pass ends.
 */
import { existsSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { OpCounters } from '../../tracing';
import { FormatError, type Shard } from './format';
import type { ShardReadOptions } from './shard-read';
import { workerPackingFor } from './formats';
import { STOP_GRACE_MS, type FromReaderWorker, type ReaderWorkerData, type ShippedStats } from './worker-protocol';

/**
 * The worker entry: the bundle beside this one in the built library (dist/), or the built bundle
 * when running from source (tests), as map's worker pool finds its own (worker-map.ts): Node 20
 * cannot start a worker thread on a TypeScript file.
 */
function workerFile(): string {
  let root = __dirname;
  for (const leaf of ['readers', 'internal', 'dist']) if (root.endsWith(sep + leaf)) root = dirname(root);
  const candidates = [join(__dirname, 'reader-worker.js'), join(root, 'dist', 'reader-worker.js')];
  for (const c of candidates) if (existsSync(c)) return c;
  return candidates[1];
}

/** A chunk source for one shard: `next()` gives the shard's next chunk, null at its end. */
export interface ShardSource<T> {
  next(): Promise<T[] | null>;
  close(): Promise<void>;
}

function addStats(c: OpCounters, s: ShippedStats): void {
  for (const [k, v] of Object.entries(s) as [keyof ShippedStats, number][]) c[k] = (c[k] ?? 0) + v;
}

export class WorkerHost {
  private readonly worker: Worker;
  private readonly queue: FromReaderWorker[] = [];
  private failure: Error | null = null;
  private wake: (() => void) | null = null;
  private closing = false;
  private exited = false;

  constructor(private readonly data: ReaderWorkerData) {
    this.worker = new Worker(workerFile(), { workerData: data });
    this.worker.on('message', (m: FromReaderWorker) => {
      this.queue.push(m);
      this.notify();
    });
    this.worker.on('error', (e) => {
      this.failure ??= e;
      this.notify();
    });
    this.worker.on('exit', (code) => {
      this.exited = true;
      if (!this.closing) this.failure ??= new Error(`the reader's worker thread exited (code ${code}) while reading`);
      this.notify();
    });
  }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  /** Starts reading `shard`; its chunks come from the source returned. */
  open<T>(shard: Shard, o: ShardReadOptions, c: OpCounters | null): ShardSource<T> {
    this.worker.postMessage({ type: 'open', shard, compression: o.compression, http: o.http, traced: c !== null });
    const packing = workerPackingFor(this.data.kind);
    if (packing === undefined) return { next: () => this.next(c) as Promise<T[] | null>, close: async () => undefined };
    // Rebuilding packed elements is this thread's share of the parsing.
    return {
      next: async () => {
        const packed = await this.next(c);
        if (packed === null) return null;
        const t0 = c !== null ? performance.now() : 0;
        const out = (packed.length === 1 ? packing.unpack(packed[0]) : packed.flatMap((p) => packing.unpack(p))) as T[];
        if (c !== null) {
          const s = (performance.now() - t0) / 1000;
          c.parseSeconds = (c.parseSeconds ?? 0) + s;
          c.selfSeconds += s;
        }
        return out;
      },
      close: async () => undefined,
    };
  }

  private async next(c: OpCounters | null): Promise<unknown[] | null> {
    for (;;) {
      const m = this.queue.shift();
      if (m !== undefined) {
        if (c !== null && m.stats !== undefined) addStats(c, m.stats);
        if (m.type === 'chunk') {
          this.worker.postMessage({ type: 'ack' });
          if (m.items.length > 0) return m.items;
          continue;
        }
        if (m.type === 'end') return null;
        if (m.format !== undefined) throw new FormatError(m.format.location, m.format.position, m.format.detail);
        const e = new Error(m.message);
        e.name = m.name;
        throw e;
      }
      if (this.failure !== null) throw this.failure;
      await new Promise<void>((r) => (this.wake = r));
    }
  }

  /**
   * Ends the thread, mid-shard or not. It is asked to stop and exits by itself once its read has
   * unwound and its files are closed (a thread terminated while a file's close is pending leaves
   * the file open); it is terminated if it has failed, or has not exited after STOP_GRACE_MS.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.exited) return;
    if (this.failure === null) {
      const exited = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), STOP_GRACE_MS);
        this.worker.once('exit', () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      this.worker.postMessage({ type: 'stop' });
      if (await exited) return;
    }
    await this.worker.terminate();
  }
}
