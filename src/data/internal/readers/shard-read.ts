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
}

/** `raw`'s chunks, adding the time spent waiting for each to `ioWaitSeconds`. */
async function* timedIo(raw: AsyncIterable<Uint8Array>, c: OpCounters): AsyncGenerator<Uint8Array> {
  const it = raw[Symbol.asyncIterator]();
  try {
    for (;;) {
      const t0 = performance.now();
      const r = await it.next();
      c.ioWaitSeconds = (c.ioWaitSeconds ?? 0) + (performance.now() - t0) / 1000;
      if (r.done) return;
      yield r.value;
    }
  } finally {
    await it.return?.();
  }
}

/** Range reads that add their time to `ioWaitSeconds`: the time at least one is in flight (a format may issue several at once). */
function timedRanges(file: RandomAccess, c: OpCounters): RandomAccess {
  let inFlight = 0;
  let since = 0;
  return {
    size: file.size,
    async read(start, end) {
      if (inFlight++ === 0) since = performance.now();
      try {
        return await file.read(start, end);
      } finally {
        if (--inFlight === 0) c.ioWaitSeconds = (c.ioWaitSeconds ?? 0) + (performance.now() - since) / 1000;
      }
    },
  };
}

/** The shard's elements in chunks; everything it opened is closed when the iteration ends, however it ends. */
export async function* readShard<T>(format: Format<T>, shard: Shard, o: ShardReadOptions, c: OpCounters | null, clock: ParseClock): AsyncGenerator<T[]> {
  if (c !== null) c.shardsOpened = (c.shardsOpened ?? 0) + 1;
  if (format.streamed) {
    const raw = openStream(shard, { signal: o.signal, http: o.http, counters: c });
    yield* format.parse(decompress(c !== null ? timedIo(raw, c) : raw, o.compression, shard, c), shard, clock);
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
