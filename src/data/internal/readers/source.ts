/**
 * Where readers' bytes come from: shard lists (paths, globs, http(s) URLs), streamed reads and
 * range reads. Local files only for now; HTTP(S) joins them here (issue 51), behind the same calls.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { OpCounters } from '../../tracing';
import type { HttpOptions } from '../../options';
import { matchFiles } from '../ops/files';
import type { RandomAccess, Shard } from './format';

/** True for an http(s) URL. */
export function isUrl(location: string): boolean {
  return /^https?:\/\//i.test(location);
}

/** The shards a reader's argument names, in order: globs expand (sorted), URLs stay as written. */
export async function expandShards(patterns: string | readonly string[], cwd: string): Promise<Shard[]> {
  const list = typeof patterns === 'string' ? [patterns] : patterns;
  const out: string[] = [];
  for (const p of list) {
    if (isUrl(p)) out.push(p);
    else out.push(...(await matchFiles(p, cwd)));
  }
  return out.map((location, index) => ({ location, index }));
}

export interface OpenOptions {
  signal?: AbortSignal;
  http?: HttpOptions;
  /** Counts bytes read (`diskBytesRead` / `netBytesRead`); null when nothing traces. */
  counters: OpCounters | null;
}

/** The shard's raw (still compressed) bytes, streamed in chunks of about 64 KB. */
export async function* openStream(shard: Shard, options: OpenOptions): AsyncGenerator<Uint8Array> {
  if (isUrl(shard.location)) throw new Error(`${shard.location}: HTTP(S) shards are not supported yet.`);
  const c = options.counters;
  const stream = createReadStream(shard.location, { highWaterMark: 1 << 16, signal: options.signal });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (c !== null) c.diskBytesRead += chunk.length;
    yield chunk;
  }
}

/** The shard opened for range reads; `close()` when done. */
export async function openRandomAccess(shard: Shard, options: OpenOptions): Promise<RandomAccess & { close(): Promise<void> }> {
  if (isUrl(shard.location)) throw new Error(`${shard.location}: HTTP(S) shards are not supported yet.`);
  const c = options.counters;
  const fh = await open(shard.location, 'r');
  const { size } = await fh.stat();
  return {
    size,
    async read(start, end) {
      const buf = Buffer.allocUnsafe(Math.max(0, end - start));
      let off = 0;
      while (off < buf.length) {
        const { bytesRead } = await fh.read(buf, off, buf.length - off, start + off);
        if (bytesRead === 0) break;
        off += bytesRead;
      }
      if (c !== null) c.diskBytesRead += off;
      return buf.subarray(0, off);
    },
    close: () => fh.close(),
  };
}
