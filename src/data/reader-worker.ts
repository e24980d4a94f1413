/**
 * The worker-thread entry of a reader with `placement: 'worker'`: it reads whole shards — open,
 * decompress, parse — and posts their elements back in chunks. Formats are plumber-data's own
 * (internal/readers/formats.ts), found by the reader's kind, so no user module is loaded.
 *
 * Backpressure: at most WINDOW chunks are posted and not yet taken by the reader (each take is
 * acknowledged); the shard's reading waits for an acknowledgement beyond that. One shard at a
 * time: the reader sends the next `open` after this one's `end`.
 */
import { parentPort } from 'node:worker_threads';
import { newCounters, type OpCounters } from './tracing';
import { threadCpuSeconds } from './internal/cpuclock';
import { FormatError } from './internal/readers/format';
import { formatFor, workerPackingFor } from './internal/readers/formats';
import { readShard, type ShardReadOptions } from './internal/readers/shard-read';
import type { Format } from './internal/readers/format';
import { SHIPPED_STATS, WINDOW, WORKER_CHUNK_BYTES, type FromReaderWorker, type ReaderWorkerFormat, type ShippedStats, type ToReaderWorker } from './internal/readers/worker-protocol';

const port = parentPort;
if (port === null) throw new Error('reader-worker.ts runs in a worker thread.');

/** The format of the last `open` (a thread kept warm reads the next pass's shards with the same one, JIT-warm). */
let made: { key: string; format: Format<unknown>; packing: ReturnType<typeof workerPackingFor> } | null = null;

function formatOf(f: ReaderWorkerFormat): NonNullable<typeof made> {
  const key = JSON.stringify([f.kind, f.options]);
  if (made?.key === key) return made;
  // A kind with a packing posts packed chunks, their buffers moved.
  const packing = workerPackingFor(f.kind);
  return (made = { key, packing, format: packing !== undefined ? packing.packed(f.options) : formatFor(f.kind, f.options) });
}
let credits = WINDOW;
let wake: (() => void) | null = null;
let cpuMark = threadCpuSeconds();

/** The counters' shipped fields since the last shipment (then zeroed), with this thread's CPU seconds. */
function take(c: OpCounters | null): ShippedStats | undefined {
  if (c === null) return undefined;
  const out: ShippedStats = {};
  for (const k of SHIPPED_STATS) {
    const v = c[k];
    if (typeof v === 'number' && v !== 0) {
      out[k] = v;
      c[k] = 0;
    }
  }
  const cpu = threadCpuSeconds();
  out.workerCpuSeconds = cpu - cpuMark;
  cpuMark = cpu;
  return out;
}

function post(m: FromReaderWorker, transfer: ArrayBuffer[] = []): void {
  (port as NonNullable<typeof port>).postMessage(m, transfer);
}

/** The shard being read: stopping aborts it. */
let current: { abort: AbortController; done: Promise<void> } | null = null;

async function read(f: ReaderWorkerFormat, shard: { location: string; index: number }, o: ShardReadOptions, traced: boolean, abort: AbortController): Promise<void> {
  const c = traced ? newCounters() : null;
  const { format, packing } = formatOf(f);
  const clock = { parsed: (s: number): void => void (c !== null && (c.parseSeconds = (c.parseSeconds ?? 0) + s)) };
  cpuMark = threadCpuSeconds();
  try {
    for await (const items of readShard(format, shard, { ...o, signal: abort.signal }, c, clock)) {
      while (credits <= 0 && !abort.signal.aborted) await new Promise<void>((r) => (wake = r));
      if (abort.signal.aborted) return;
      credits--;
      post({ type: 'chunk', items, stats: take(c) }, packing !== undefined ? items.flatMap((p) => packing.transfer(p)) : []);
    }
    post({ type: 'end', stats: take(c) });
  } catch (e) {
    if (abort.signal.aborted) return;
    const err = e instanceof Error ? e : new Error(String(e));
    const f = e instanceof FormatError ? { location: e.location, position: e.position, detail: e.message.slice(`${e.location}: ${e.position}: `.length) } : undefined;
    post({ type: 'error', name: err.name, message: err.message, format: f, stats: take(c) });
  }
}

function wakeUp(): void {
  const w = wake;
  wake = null;
  w?.();
}

port.on('message', (m: ToReaderWorker) => {
  if (m.type === 'ack') {
    credits++;
    wakeUp();
  } else if (m.type === 'stop') {
    // The thread ends by running out of work once the shard's read has unwound, so the file it
    // had open is closed first: a thread terminated while a close is pending leaves the file open.
    const r = current;
    r?.abort.abort();
    wakeUp();
    void (r?.done ?? Promise.resolve()).then(() => (port as NonNullable<typeof port>).close());
  } else {
    const abort = new AbortController();
    current = { abort, done: read(m.format, m.shard, { compression: m.compression, http: m.http, chunkBytes: WORKER_CHUNK_BYTES }, m.traced, abort) };
  }
});
