/**
 * Where readers' bytes come from: shard lists (paths, globs, http(s) URLs, brace ranges), streamed
 * reads and range reads, of local files and of HTTP(S) URLs (http.ts) behind the same calls.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { OpCounters } from '../../tracing';
import type { HttpOptions } from '../../options';
import { matchFiles } from '../ops/files';
import type { RandomAccess, Shard } from './format';
import { httpRandomAccess, httpStream, type RetryInfo } from './http';

/** True for an http(s) URL. */
export function isUrl(location: string): boolean {
  return /^https?:\/\//i.test(location);
}

/** `{a..b}` (numbers, zero-padded to the wider end) and, in URLs, `{x,y,z}`: the first brace group of a pattern. */
const BRACE = /\{(\d+)\.\.(\d+)\}|\{([^{}]*,[^{}]*)\}/;

/**
 * A pattern with its brace groups expanded, WebDataset style: `shard-{0000..0009}.tar` names ten
 * shards, in order. Lists `{a,b}` expand only in URLs: in a local pattern the glob matches them.
 */
export function expandBraces(pattern: string): string[] {
  const url = isUrl(pattern);
  const m = BRACE.exec(pattern);
  if (m === null || (m[3] !== undefined && !url)) return [pattern];
  const head = pattern.slice(0, m.index);
  const rest = pattern.slice(m.index + m[0].length);
  let items: string[];
  if (m[3] !== undefined) items = m[3].split(',');
  else {
    const [a, b] = [Number(m[1]), Number(m[2])];
    const width = m[1].length === m[2].length || m[1].startsWith('0') ? Math.max(m[1].length, m[2].length) : 0;
    const step = a <= b ? 1 : -1;
    if (Math.abs(b - a) >= 1_000_000) throw new RangeError(`${pattern}: the range {${m[1]}..${m[2]}} names more than a million shards.`);
    items = [];
    for (let i = a; i !== b + step; i += step) items.push(String(i).padStart(width, '0'));
  }
  return items.flatMap((item) => expandBraces(head + item + rest));
}

/**
 * The shards a reader's argument names, in order: brace ranges expand, globs expand (sorted), URLs
 * stay as written. A pattern that names no file is an error: a reader never reads fewer shards in silence.
 */
export async function expandShards(patterns: string | readonly string[], cwd: string): Promise<Shard[]> {
  const list = typeof patterns === 'string' ? [patterns] : patterns;
  const out: string[] = [];
  for (const p of list.flatMap(expandBraces)) {
    if (isUrl(p)) {
      out.push(p);
      continue;
    }
    const found = await matchFiles(p, cwd);
    if (found.length === 0) throw new Error(`${p}: no such file${/[*?[{]/.test(p) ? ' matches this pattern' : ''} (relative paths are resolved against ${cwd}).`);
    out.push(...found);
  }
  return out.map((location, index) => ({ location, index }));
}

export interface OpenOptions {
  signal?: AbortSignal;
  http?: HttpOptions;
  /** Counts bytes read (`diskBytesRead` / `netBytesRead`); null when nothing traces. */
  counters: OpCounters | null;
  /** Told of each retry of an HTTP(S) request (for logs and tests). */
  onRetry?(info: RetryInfo): void;
  /** Bytes per chunk of a local file's stream (64 KB unless said). */
  chunkBytes?: number;
}

/** The shard's raw (still compressed) bytes, streamed in chunks of about 64 KB (`chunkBytes` for local files). */
export async function* openStream(shard: Shard, options: OpenOptions): AsyncGenerator<Uint8Array> {
  if (isUrl(shard.location)) {
    yield* httpStream(shard.location, options);
    return;
  }
  const c = options.counters;
  const stream = createReadStream(shard.location, { highWaterMark: options.chunkBytes ?? 1 << 16, signal: options.signal });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (c !== null) c.diskBytesRead += chunk.length;
    yield chunk;
  }
}

/** The shard opened for range reads; `close()` when done. */
export async function openRandomAccess(shard: Shard, options: OpenOptions): Promise<RandomAccess & { close(): Promise<void> }> {
  if (isUrl(shard.location)) return httpRandomAccess(shard.location, options);
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
