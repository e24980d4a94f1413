/**
 * A reader's worker thread, seen from the reader op: it reads one shard at a time (reader-worker.ts)
 * and hands its chunks to the reader in order, acknowledging each one taken so the worker reads
 * ahead only WINDOW chunks. The worker's measurements arrive with its chunks and are added to the
 * op's counters. `close()` ends the thread; a reader closes its hosts when its pass is returned or
 * fails, and parks them (worker-pool.ts) when its pass ran to its end.
 */
import { existsSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { OpCounters } from '../../tracing';
import { FormatError, type Shard } from './format';
import type { ShardReadOptions } from './shard-read';
import { workerPackingFor } from './formats';
import type { Unpacked } from './columns-packed';
import { SOURCE_CHUNK_MAX } from '../core';
import { STOP_GRACE_MS, type FromReaderWorker, type ReaderWorkerFormat, type ShippedStats } from './worker-protocol';

/**
 * Reader threads of this process, counted across every copy of the library loaded (tests look at
 * it): started, alive (not yet exited) and parked (idle in worker-pool.ts).
 */
export interface ReaderThreadCounts {
  started: number;
  alive: number;
  parked: number;
}
const COUNTS_KEY = Symbol.for('plumber-data.readerThreads');
export const readerThreads: ReaderThreadCounts = ((globalThis as Record<symbol, unknown>)[COUNTS_KEY] ??= { started: 0, alive: 0, parked: 0 }) as ReaderThreadCounts;

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

/** One shard opened on a thread: its messages, in order, until its end or error. */
interface Opened {
  messages: FromReaderWorker[];
  /** Its end or error has arrived: later messages are the next shard's. */
  ended: boolean;
}

export class WorkerHost {
  private readonly worker: Worker;
  /**
   * Shards opened on the thread and not yet read to their end by the reader, in the order opened.
   * The thread reads one at a time, so a message belongs to the first one whose end has not
   * arrived: a shard opened ahead (reader.ts) queues behind the one before it.
   */
  private readonly opened: Opened[] = [];
  private failure: Error | null = null;
  private waiters: Array<() => void> = [];
  private closing = false;
  private exited = false;
  /** Set once a shard's read ended other than at its end (an error, or a pass returned mid-shard): the thread is not reused. */
  private spoiled = false;
  /** Shards opened and not yet read to their end. */
  private reading = 0;

  constructor() {
    this.worker = new Worker(workerFile());
    readerThreads.started++;
    readerThreads.alive++;
    this.worker.on('message', (m: FromReaderWorker) => {
      const q = this.opened.find((o) => !o.ended);
      if (q === undefined) return;
      q.messages.push(m);
      if (m.type !== 'chunk') q.ended = true;
      this.notify();
      if (m.type === 'end' && this.idle()) this.onIdle?.();
    });
    this.worker.on('error', (e) => {
      this.failure ??= e;
      this.notify();
    });
    this.worker.on('exit', (code) => {
      this.exited = true;
      readerThreads.alive--;
      this.onExit?.();
      if (!this.closing) this.failure ??= new Error(`the reader's worker thread exited (code ${code}) while reading`);
      this.notify();
    });
  }

  private notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Whether the thread has read every shard it was given to its end (the reader may not have taken them all yet). */
  idle(): boolean {
    return this.opened.every((o) => o.ended);
  }

  /** Called when the thread has read its last shard to the end and has none to read (the last one set; null for none). */
  onIdle: (() => void) | null = null;

  /** Whether the thread is idle and sound: every shard it opened was read to its end, and it has neither failed nor been closed. */
  reusable(): boolean {
    return !this.spoiled && this.reading === 0 && this.failure === null && !this.closing && !this.exited && this.opened.length === 0;
  }

  /** Whether the thread keeps the process alive: a parked one does not. */
  hold(held: boolean): void {
    if (held) this.worker.ref();
    else this.worker.unref();
  }

  /** Called once the thread has exited, however it ended (the last one set; null for none). */
  onExit: (() => void) | null = null;

  /** Starts reading `shard` as `format` says; its chunks come from the source returned. */
  open<T>(format: ReaderWorkerFormat, shard: Shard, o: ShardReadOptions, c: OpCounters | null): ShardSource<T> {
    const q: Opened = { messages: [], ended: false };
    this.opened.push(q);
    this.worker.postMessage({ type: 'open', format, shard, compression: o.compression, http: o.http, traced: c !== null });
    this.reading++;
    const packing = workerPackingFor(format.kind);
    if (packing === undefined) return { next: () => this.next(q, c) as Promise<T[] | null>, close: async () => undefined };
    // Rebuilding packed elements is this thread's share of the parsing; it is done a range of at
    // most SOURCE_CHUNK_MAX elements at a time, as the reader takes them (see columns-packed.ts).
    const waiting: unknown[] = [];
    let cur: Unpacked | null = null;
    let pos = 0;
    const timed = <R>(f: () => R): R => {
      if (c === null) return f();
      const t0 = performance.now();
      const r = f();
      const s = (performance.now() - t0) / 1000;
      c.parseSeconds = (c.parseSeconds ?? 0) + s;
      c.selfSeconds += s;
      return r;
    };
    return {
      next: async () => {
        while (cur === null || pos >= cur.count) {
          if (waiting.length === 0) {
            const packed = await this.next(q, c);
            if (packed === null) return null;
            waiting.push(...packed);
          }
          const p = waiting.shift();
          cur = timed(() => packing.unpack(p));
          pos = 0;
        }
        const from = pos;
        const end = Math.min(cur.count, pos + SOURCE_CHUNK_MAX);
        pos = end;
        const u = cur;
        return timed(() => u.take(from, end) as T[]);
      },
      close: async () => undefined,
    };
  }

  private async next(q: Opened, c: OpCounters | null): Promise<unknown[] | null> {
    for (;;) {
      const m = q.messages.shift();
      if (m !== undefined) {
        if (c !== null && m.stats !== undefined) addStats(c, m.stats);
        if (m.type === 'chunk') {
          this.worker.postMessage({ type: 'ack' });
          if (m.items.length > 0) return m.items;
          continue;
        }
        if (m.type === 'end') {
          this.reading--;
          this.opened.splice(this.opened.indexOf(q), 1);
          return null;
        }
        this.spoiled = true;
        if (m.format !== undefined) throw new FormatError(m.format.location, m.format.position, m.format.detail);
        const e = new Error(m.message);
        e.name = m.name;
        throw e;
      }
      if (this.failure !== null) {
        this.spoiled = true;
        throw this.failure;
      }
      await new Promise<void>((r) => this.waiters.push(r));
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
