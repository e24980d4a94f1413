/**
 * cache() and cache(path). The first complete pass is kept (in memory, or in a file written under
 * a temporary name and renamed into place only when the pass completes); later passes read it.
 * An interrupted pass keeps nothing, so a half-written cache can never be read back.
 */
import { mkdirSync } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import type { OpCounters } from '../../tracing';
import { PipelineError, type OpRef } from '../../errors';
import { type Chunks, countProduced, now, type OpNode, pull, Sampler, type Session } from '../core';
import { Batch } from './batch';

const MAGIC = Buffer.from('PLDC1\n', 'latin1');
const memory = new WeakMap<OpNode, unknown[]>();

/** v8.serialize keeps typed arrays, Maps, Dates…; Batch instances need their class restored. */
function encode(x: unknown, depth = 0): unknown {
  if (x instanceof Batch) return { $plumberBatch: [x.data, x.shape] };
  if (depth < 3 && x !== null && typeof x === 'object' && Object.getPrototypeOf(x) === Object.prototype) {
    const o: Record<string, unknown> = {};
    for (const k of Object.keys(x)) o[k] = encode((x as Record<string, unknown>)[k], depth + 1);
    return o;
  }
  if (depth < 3 && Array.isArray(x)) return x.map((v) => encode(v, depth + 1));
  return x;
}

function decode(x: unknown, depth = 0): unknown {
  if (depth < 4 && x !== null && typeof x === 'object') {
    if (Array.isArray(x)) return depth < 3 ? x.map((v) => decode(v, depth + 1)) : x;
    if (Object.getPrototypeOf(x) !== Object.prototype) return x;
    const b = (x as { $plumberBatch?: [never, number[]] }).$plumberBatch;
    if (b !== undefined) return new Batch(b[0], b[1]);
    const o = x as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = decode(o[k], depth + 1);
  }
  return x;
}

class MemoryCache<T> implements Chunks<T> {
  private readonly s = new Sampler();
  private collected: T[] | null = [];
  private pos = 0;
  constructor(
    private readonly node: OpNode<T>,
    private readonly up: Chunks<T> | null,
    private readonly stored: T[] | undefined,
  ) {}
  async next(hint: number): Promise<T[] | null> {
    const c = this.node.counters;
    if (this.stored !== undefined) {
      if (this.pos >= this.stored.length) return null;
      const out = this.stored.slice(this.pos, this.pos + hint);
      this.pos += out.length;
      if (c !== null) {
        c.cacheHits += out.length;
        countProduced(c, out);
      }
      return out;
    }
    const up = this.up as Chunks<T>;
    const chunk = await pull(up, hint, this.node.inputs[0].counters, this.s);
    if (chunk === null) {
      // A complete pass: keep it, unless another pass finished first.
      if (this.collected !== null && !memory.has(this.node)) memory.set(this.node, this.collected);
      this.collected = null;
      return null;
    }
    if (this.collected !== null) for (let i = 0; i < chunk.length; i++) this.collected.push(chunk[i]);
    if (c !== null) {
      c.pulled += chunk.length;
      countProduced(c, chunk);
      if (this.collected !== null && this.collected.length > c.bufferHighWater) c.bufferHighWater = this.collected.length;
    }
    return chunk;
  }
  async return(): Promise<void> {
    this.collected = null;
    this.pos = Infinity;
    if (this.up !== null) await this.up.return();
  }
}

/** Reads a cache file written by DiskWriter. */
class DiskReader<T> implements Chunks<T> {
  private fh: FileHandle | null = null;
  private buf: Buffer = Buffer.alloc(0);
  private eof = false;
  private closed = false;
  constructor(
    private readonly path: string,
    private readonly c: OpCounters | null,
    private readonly op: OpRef,
  ) {}
  async next(hint: number): Promise<T[] | null> {
    if (this.closed) return null;
    if (this.fh === null) {
      this.fh = await open(this.path, 'r');
      await this.fill(MAGIC.length);
      if (this.buf.length < MAGIC.length || !this.buf.subarray(0, MAGIC.length).equals(MAGIC)) {
        await this.return();
        throw new PipelineError(this.op, undefined, new Error(`${this.path} is not a plumber-data cache file. Delete it to rebuild the cache.`));
      }
      this.buf = this.buf.subarray(MAGIC.length);
    }
    const out: T[] = [];
    const t0 = this.c === null ? 0 : now();
    while (out.length < hint) {
      if (this.buf.length < 4) await this.fill(4);
      if (this.buf.length === 0 && this.eof) break;
      const len = this.buf.length >= 4 ? this.buf.readUInt32LE(0) : -1;
      if (len < 0 || this.buf.length < 4 + len) await this.fill(4 + Math.max(len, 0));
      if (len < 0 || this.buf.length < 4 + len) {
        await this.return();
        throw new PipelineError(this.op, undefined, new Error(`The cache file ${this.path} is truncated. Delete it to rebuild the cache.`));
      }
      out.push(decode(deserialize(this.buf.subarray(4, 4 + len))) as T);
      this.buf = this.buf.subarray(4 + len);
    }
    if (this.c !== null) {
      this.c.selfSeconds += (now() - t0) / 1000;
      this.c.cacheHits += out.length;
      countProduced(this.c, out);
    }
    if (out.length === 0) {
      if (this.c !== null) this.c.filesRead++;
      await this.return();
      return null;
    }
    return out;
  }
  /** Reads until at least `n` bytes are buffered or the file ends. */
  private async fill(n: number): Promise<void> {
    while (this.buf.length < n && !this.eof) {
      const chunk = Buffer.allocUnsafe(Math.max(1 << 20, n - this.buf.length));
      const { bytesRead } = await (this.fh as FileHandle).read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) this.eof = true;
      if (this.c !== null) this.c.diskBytesRead += bytesRead;
      this.buf = this.buf.length === 0 ? chunk.subarray(0, bytesRead) : Buffer.concat([this.buf, chunk.subarray(0, bytesRead)]);
    }
  }
  async return(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const fh = this.fh;
    this.fh = null;
    await fh?.close();
  }
}

/** Passes elements through while writing them to `${path}.<pid>.<random>.tmp`; renames on completion. */
class DiskWriter<T> implements Chunks<T> {
  private readonly s = new Sampler();
  private fh: FileHandle | null = null;
  private readonly tmp: string;
  private closed = false;
  constructor(
    private readonly path: string,
    private readonly up: Chunks<T>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
  ) {
    this.tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  }
  async next(hint: number): Promise<T[] | null> {
    if (this.closed) return null;
    if (this.fh === null) {
      mkdirSync(dirname(this.path), { recursive: true });
      this.fh = await open(this.tmp, 'w');
      await this.fh.write(MAGIC);
    }
    const chunk = await pull(this.up, hint, this.upC, this.s);
    if (this.closed) return null;
    if (chunk === null) {
      const fh = this.fh;
      this.fh = null;
      this.closed = true;
      await fh.close();
      await rename(this.tmp, this.path);
      return null;
    }
    const t0 = this.c === null ? 0 : now();
    const parts: Buffer[] = [];
    for (const x of chunk) {
      const body = serialize(encode(x));
      const head = Buffer.allocUnsafe(4);
      head.writeUInt32LE(body.length, 0);
      parts.push(head, body);
    }
    if (this.c !== null) {
      this.c.selfSeconds += (now() - t0) / 1000;
      this.c.pulled += chunk.length;
      countProduced(this.c, chunk);
    }
    await this.fh.write(Buffer.concat(parts));
    return chunk;
  }
  async return(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const fh = this.fh;
    this.fh = null;
    await this.up.return();
    if (fh !== null) {
      await fh.close();
      await unlink(this.tmp).catch(() => undefined);
    }
  }
}

class Pass<T> implements Chunks<T> {
  private readonly s = new Sampler();
  constructor(
    private readonly up: Chunks<T>,
    private readonly upC: OpCounters | null,
  ) {}
  next(hint: number): Promise<T[] | null> {
    return pull(this.up, hint, this.upC, this.s);
  }
  return(): Promise<void> {
    return this.up.return();
  }
}

export function openCache<T>(node: OpNode<T>, session: Session, path: string | undefined, enabled: boolean): Chunks<T> {
  const input = node.inputs[0] as OpNode<T>;
  if (!enabled) return new Pass(input.open(session), input.counters);
  const op: OpRef = { kind: 'cache', key: node.key, site: node.site };
  if (path === undefined) {
    const stored = memory.get(node) as T[] | undefined;
    return new MemoryCache(node, stored === undefined ? input.open(session) : null, stored);
  }
  return new Lazy(path, node, input, op, session);
}

/** Decides between reading and writing at the first pull, Sampler, when the file's existence is checked. */
class Lazy<T> implements Chunks<T> {
  private inner: Chunks<T> | null = null;
  private closed = false;
  constructor(
    private readonly path: string,
    private readonly node: OpNode<T>,
    private readonly input: OpNode<T>,
    private readonly op: OpRef,
    private readonly session: Session,
  ) {}
  async next(hint: number): Promise<T[] | null> {
    if (this.closed) return null;
    if (this.inner === null) {
      let exists = true;
      try {
        await (await open(this.path, 'r')).close();
      } catch {
        exists = false;
      }
      this.inner = exists ? new DiskReader<T>(this.path, this.node.counters, this.op) : new DiskWriter<T>(this.path, this.input.open(this.session), this.input.counters, this.node.counters);
    }
    return this.inner.next(hint);
  }
  async return(): Promise<void> {
    this.closed = true;
    await this.inner?.return();
  }
}
