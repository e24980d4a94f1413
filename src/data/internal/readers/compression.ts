/**
 * Decompression of a shard's byte stream: gzip and brotli through node:zlib, streamed chunk by
 * chunk (never a whole file in memory).
 *
 * The inflating runs on libuv's thread pool (zlib's asynchronous API), so it overlaps the parsing
 * of the previous chunk on the thread that parses, as a hand-written `pipe(createGunzip())` does:
 * one compressed chunk is always being inflated ahead of the consumer. `decompressSeconds` is the
 * time from handing zlib a chunk to its callback: the pool's busy time, an upper bound when the
 * parsing thread is slow to run the callback.
 *
 * Concatenated gzip members (`cat a.gz b.gz`) inflate as one stream (zlib handles them). A stream
 * that ends early or holds bad bytes is a FormatError naming the shard and the compressed offset.
 */
import { createBrotliDecompress, createGunzip, type BrotliDecompress, type Gunzip } from 'node:zlib';
import type { OpCounters } from '../../tracing';
import { FormatError, type Shard } from './format';

export type Compression = 'gzip' | 'brotli' | 'none';

/** The compression a location's name declares: `.gz`/`.gzip` gzip, `.br` brotli; undefined when it says nothing. */
export function compressionByName(location: string): Compression | undefined {
  const path = location.replace(/[?#].*$/, '').toLowerCase();
  if (path.endsWith('.gz') || path.endsWith('.gzip')) return 'gzip';
  if (path.endsWith('.br')) return 'brotli';
  return undefined;
}

/** True when the bytes start as a gzip member does (1f 8b). */
export function hasGzipMagic(head: Uint8Array): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/** Inflated bytes held ahead of the consumer before no more compressed input is handed to zlib. */
const HIGH_WATER = 1 << 20;
const ZLIB_CHUNK = 1 << 16;

/**
 * The shard's bytes, decompressed as `option` says: `'auto'` picks by the name, then by gzip's
 * magic bytes in the first chunk; `'none'` passes them through. Counts `bytesDecompressed` and
 * `decompressSeconds` on `c` (when traced) for compressed shards. Inflated chunks are of at most
 * `chunkBytes` (zlib's output chunk).
 */
export async function* decompress(raw: AsyncIterable<Uint8Array>, option: 'auto' | Compression, shard: Shard, c: OpCounters | null, chunkBytes = ZLIB_CHUNK): AsyncGenerator<Uint8Array> {
  const it = raw[Symbol.asyncIterator]();
  let kind: Compression | undefined = option === 'auto' ? compressionByName(shard.location) : option;
  try {
    let first: IteratorResult<Uint8Array> | undefined;
    if (kind === undefined) {
      first = await it.next();
      kind = !first.done && hasGzipMagic(first.value) ? 'gzip' : 'none';
    }
    if (kind === 'none') {
      if (first !== undefined) {
        if (first.done) return;
        yield first.value;
      }
      for (;;) {
        const r = await it.next();
        if (r.done) return;
        yield r.value;
      }
    }
    yield* inflate(it, first, kind, shard, c, chunkBytes);
  } finally {
    await it.return?.();
  }
}

/** One zlib stream driven by hand: one compressed chunk in flight, the inflated output queued. */
async function* inflate(it: AsyncIterator<Uint8Array>, first: IteratorResult<Uint8Array> | undefined, kind: 'gzip' | 'brotli', shard: Shard, c: OpCounters | null, chunkBytes: number): AsyncGenerator<Uint8Array> {
  const z: Gunzip | BrotliDecompress = kind === 'gzip' ? createGunzip({ chunkSize: chunkBytes }) : createBrotliDecompress({ chunkSize: chunkBytes });
  const out: Buffer[] = [];
  let buffered = 0;
  let failure: Error | null = null;
  let ended = false;
  let inFlight = false;
  let inputDone = false;
  /** Compressed bytes handed to zlib so far. */
  let consumed = 0;
  let wake: (() => void) | null = null;
  const notify = (): void => {
    const w = wake;
    wake = null;
    w?.();
  };
  z.on('data', (b: Buffer) => {
    out.push(b);
    buffered += b.length;
    if (c !== null) c.bytesDecompressed = (c.bytesDecompressed ?? 0) + b.length;
    notify();
  });
  z.on('error', (e: Error) => {
    failure = e;
    notify();
  });
  z.on('end', () => {
    ended = true;
    notify();
  });
  let pending = first;
  try {
    for (;;) {
      if (failure !== null) throw zlibError(failure, kind, shard, consumed, z.bytesWritten);
      if (!inputDone && !inFlight && buffered < HIGH_WATER) {
        const r = pending ?? (await it.next());
        pending = undefined;
        if (r.done) {
          inputDone = true;
          z.end();
        } else {
          inFlight = true;
          consumed += r.value.length;
          const t0 = c !== null ? performance.now() : 0;
          z.write(r.value, () => {
            inFlight = false;
            if (c !== null) c.decompressSeconds = (c.decompressSeconds ?? 0) + (performance.now() - t0) / 1000;
            notify();
          });
        }
        continue;
      }
      if (out.length > 0) {
        const b = out.shift() as Buffer;
        buffered -= b.length;
        yield b;
        continue;
      }
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    z.destroy();
  }
}

/** zlib's error as the shard's: where in the compressed bytes, and what it means for the file. */
function zlibError(e: Error, kind: 'gzip' | 'brotli', shard: Shard, consumed: number, zlibRead: number): FormatError {
  const code = (e as { code?: string }).code;
  // zlib reports input that stops inside a stream (gzip or brotli) as Z_BUF_ERROR, 'unexpected end of file'.
  const truncated = code === 'Z_BUF_ERROR' || /unexpected end/i.test(e.message);
  if (truncated) return new FormatError(shard.location, `byte ${consumed.toLocaleString('en-US')}`, `unexpected end of ${kind} data at byte ${consumed} — the file is truncated`);
  return new FormatError(shard.location, `byte ${zlibRead.toLocaleString('en-US')}`, `corrupt ${kind} data at or before compressed byte ${zlibRead} (${e.message})`);
}
