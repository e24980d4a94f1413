/**
 * One shard read front to back: open → decompress → parse (or, for a ranged format, open for range
 * reads → parse), as the reader op runs it on the main thread and reader-worker.ts in a worker.
 * Counts the shard's I/O wait, bytes and decompression on `c`; parsing time goes to `clock`.
 */
import type { OpCounters } from '../../tracing';
import type { HttpOptions } from '../../options';
import { decompress, type Compression } from './compression';
import type { Format, ParseClock, RandomAccess, Shard } from './format';
import { openRandomAccess, openStream } from './source';

export interface ShardReadOptions {
  compression: 'auto' | Compression;
  http?: HttpOptions;
  signal?: AbortSignal;
  /** Bytes per chunk read from a local file and per chunk inflated (64 KB unless said): the size of the chunks a streamed format parses. */
  chunkBytes?: number;
}

/**
 * I/O wait is the time this thread's event loop sat idle while at least one of the op's reads was
 * outstanding: waiting on bytes with nothing else to run. A read's own wall time would also count
 * the work the thread did meanwhile (reads start a chunk ahead, while the consumer parses or maps),
 * and reads that overlap (shards at once, a format's parallel ranges) would count their wait twice.
 */
const idleMs = (): number => performance.eventLoopUtilization().idle;
const outstanding = new WeakMap<OpCounters, { reads: number; since: number }>();

/** Runs `read`, counting the idle time while the op has any read outstanding into `c.ioWaitSeconds`. */
async function timedRead<R>(c: OpCounters, read: () => Promise<R>): Promise<R> {
  let o = outstanding.get(c);
  if (o === undefined) outstanding.set(c, (o = { reads: 0, since: 0 }));
  if (o.reads++ === 0) o.since = idleMs();
  try {
    return await read();
  } finally {
    if (--o.reads === 0) c.ioWaitSeconds = (c.ioWaitSeconds ?? 0) + Math.max(0, idleMs() - o.since) / 1000;
  }
}

/** `raw`'s chunks, counting the wait for each (see timedRead). */
async function* timedIo(raw: AsyncIterable<Uint8Array>, c: OpCounters): AsyncGenerator<Uint8Array> {
  const it = raw[Symbol.asyncIterator]();
  try {
    for (;;) {
      const r = await timedRead(c, () => it.next());
      if (r.done) return;
      yield r.value;
    }
  } finally {
    await it.return?.();
  }
}

/** Range reads whose wait is counted (see timedRead). */
function timedRanges(file: RandomAccess, c: OpCounters): RandomAccess {
  return { size: file.size, read: (start, end) => timedRead(c, () => file.read(start, end)) };
}

/** The shard's elements in chunks; everything it opened is closed when the iteration ends, however it ends. */
export async function* readShard<T>(format: Format<T>, shard: Shard, o: ShardReadOptions, c: OpCounters | null, clock: ParseClock): AsyncGenerator<T[]> {
  if (c !== null) c.shardsOpened = (c.shardsOpened ?? 0) + 1;
  if (format.streamed) {
    const raw = openStream(shard, { signal: o.signal, http: o.http, counters: c, chunkBytes: o.chunkBytes });
    yield* format.parse(decompress(c !== null ? timedIo(raw, c) : raw, o.compression, shard, c, o.chunkBytes), shard, clock);
  } else {
    const file = await openRandomAccess(shard, { signal: o.signal, http: o.http, counters: c });
    try {
      yield* format.read(c !== null ? timedRanges(file, c) : file, shard, clock);
    } finally {
      await file.close();
    }
  }
  if (c !== null) c.filesRead++;
}
