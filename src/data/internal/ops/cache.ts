/**
 * cache() and cache(path). The first complete pass is kept (in memory, or in a file written under
 * a temporary name and renamed into place only when the pass completes); later passes read it.
 * An interrupted pass keeps nothing, so a half-written cache can never be read back.
 *
 * The file format (version 2), little-endian:
 *   header  "PLDC2\n" · u64 element count · u64 file length · u32 CRC-32 of the 22 bytes before it
 *   record  u32 CRC-32 of the rest of the record · u32 body length · u8 kind · body
 * A body is `v8.serialize(element)` (kind 0), or `v8.serialize([element, batchPaths])` (kind 1)
 * when the element holds Batches: the paths say where to restore them, so no key of user data is
 * ever read as a marker. The header is written last, so a file whose pass did not complete, a
 * truncated file, a bit flip or a damaged length field is an error before any wrong element is
 * returned; elements before a damaged record are delivered first, as with any pipeline error.
 */
import { mkdirSync } from 'node:fs';
import { open, readdir, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import * as zlib from 'node:zlib';
import type { OpCounters } from '../../tracing';
import { atPath, describeThrown, findUncloneable, PipelineError, type OpRef } from '../../errors';
import { damaged, foreign, ioFailed, notAFile } from './cache-errors';
import { type Chunks, countProduced, now, type OpNode, pull, Sampler, type Session, SOURCE_CHUNK_MAX, turnIfDue } from '../core';
import { crossingMarks, restoreMarks, type Path } from '../crossing';

const MAGIC = Buffer.from('PLDC', 'latin1');
const FORMAT = 2;
const FORMAT_LINE = Buffer.from(`PLDC${FORMAT}\n`, 'latin1');
/** The format line, the element count, the file length and the header's own CRC. */
const HEADER_BYTES = FORMAT_LINE.length + 8 + 8 + 4;
/** CRC, body length, kind. */
const RECORD_HEAD = 9;
/** fs reads take an int32 length: a larger element is read in pieces of this size. */
const MAX_READ = 1 << 30;
const memory = new WeakMap<OpNode, unknown[]>();

/** The CRC-32 table of the IEEE polynomial (zlib's, PNG's), for Node versions without zlib.crc32. */
let table: Int32Array | null = null;

/** CRC-32 (IEEE) in JavaScript: the same numbers as zlib.crc32, which Node < 20.15 lacks. */
export function crc32Js(data: Uint8Array, value = 0): number {
  if (table === null) {
    table = new Int32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c;
    }
  }
  const t = table;
  let c = ~value;
  for (let i = 0; i < data.length; i++) c = t[(c ^ data[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

const nativeCrc = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
/** CRC-32 of `data`, continuing from `value` (the CRC of the bytes before it). */
const crc32: (data: Uint8Array, value?: number) => number = nativeCrc ?? crc32Js;

/**
 * The paths of the Batches in `x`, or null when it holds none: v8.serialize keeps Buffers (and
 * every other value plumber-data crosses with) but turns a Batch into a plain object.
 */
function batchPaths(x: unknown): Path[] | null {
  const paths = crossingMarks(x)
    ?.filter(([, kind]) => kind === 1)
    .map(([path]) => path);
  return paths !== undefined && paths.length > 0 ? paths : null;
}

/** One element as a record body, and its kind. */
function encode(x: unknown): { kind: number; body: Buffer } {
  const paths = batchPaths(x);
  return paths === null ? { kind: 0, body: serialize(x) } : { kind: 1, body: serialize([x, paths]) };
}

function decode(kind: number, body: Buffer): unknown {
  const v: unknown = deserialize(body);
  if (kind === 0) return v;
  const [root, paths] = v as [unknown, Path[]];
  return restoreMarks(
    root,
    paths.map((path) => [path, 1]),
  );
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
      // Replaying from memory resolves at once: the source that would take the turns is not pulled.
      const turn = turnIfDue();
      if (turn) await turn;
      if (this.pos >= this.stored.length) return null;
      const out = this.stored.slice(this.pos, this.pos + Math.min(hint, SOURCE_CHUNK_MAX));
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

/** Reads a cache file written by DiskWriter, checking its header and every record's checksum. */
class DiskReader<T> implements Chunks<T> {
  private fh: FileHandle | null = null;
  private buf: Buffer = Buffer.alloc(0);
  /** File offset of buf[0]. */
  private pos = 0;
  /** The file's length, as its header states and fstat confirmed. */
  private size = 0;
  private count = 0;
  private index = 0;
  private closed = false;
  constructor(
    private readonly path: string,
    private readonly c: OpCounters | null,
    private readonly op: OpRef,
  ) {}
  async next(hint: number): Promise<T[] | null> {
    if (this.closed) return null;
    try {
      if (this.fh === null) await this.begin();
      const out: T[] = [];
      const t0 = this.c === null ? 0 : now();
      while (out.length < hint && this.index < this.count) {
        // Awaits only to refill the buffer: a promise per element would cost more than small elements do.
        if (this.buf.length < RECORD_HEAD) await this.fill(this.room(RECORD_HEAD));
        const len = this.buf.readUInt32LE(4);
        if (this.buf.length < RECORD_HEAD + len) await this.fill(this.room(RECORD_HEAD + len));
        out.push(this.record(len) as T);
      }
      if (this.c !== null) {
        this.c.selfSeconds += (now() - t0) / 1000;
        this.c.cacheHits += out.length;
        countProduced(this.c, out);
      }
      if (out.length === 0) {
        if (this.pos !== this.size) throw damaged(this.op, this.path, `has ${this.size - this.pos} bytes after its last element (it holds more than its header says)`);
        if (this.c !== null) this.c.filesRead++;
        await this.return();
        return null;
      }
      return out;
    } catch (e) {
      // The first error is the one to report: a failed close after it would only hide it.
      await this.return().catch(() => undefined);
      // Everything this reader throws itself is a PipelineError already: the rest came from fs.
      throw e instanceof PipelineError ? e : ioFailed(this.op, this.path, 'read', e);
    }
  }

  /** Opens the file and checks its header against the file's real length. */
  private async begin(): Promise<void> {
    this.fh = await open(this.path, 'r');
    const st = await this.fh.stat();
    const other = notAFile(st);
    if (other !== null) throw foreign(this.op, this.path, other);
    const actual = st.size;
    this.size = actual;
    await this.fill(Math.min(actual, HEADER_BYTES));
    const b = this.buf;
    if (b.length < MAGIC.length || !b.subarray(0, MAGIC.length).equals(MAGIC)) throw foreign(this.op, this.path, 'it does not start with the cache header');
    const nl = b.indexOf(0x0a, MAGIC.length);
    const version = nl < 0 ? NaN : Number(b.subarray(MAGIC.length, nl).toString('latin1'));
    if (!Number.isInteger(version) || nl > MAGIC.length + 4) throw foreign(this.op, this.path, 'it starts like one, but its header has no format version');
    if (version !== FORMAT) {
      const age = version < FORMAT ? 'an older' : 'a newer';
      throw damaged(this.op, this.path, `is in cache format ${version}, written by ${age} plumber-data; this one reads format ${FORMAT}`);
    }
    if (actual < HEADER_BYTES) throw damaged(this.op, this.path, `is truncated inside its header (${actual} of ${HEADER_BYTES} bytes)`);
    const stored = b.readUInt32LE(HEADER_BYTES - 4);
    if (crc32(b.subarray(0, HEADER_BYTES - 4)) !== stored) throw damaged(this.op, this.path, 'has a damaged header (its checksum does not match)');
    this.count = Number(b.readBigUInt64LE(FORMAT_LINE.length));
    const declared = Number(b.readBigUInt64LE(FORMAT_LINE.length + 8));
    if (actual < declared) throw damaged(this.op, this.path, `is truncated: its header says ${declared} bytes (${this.count} elements), the file has ${actual}`);
    if (actual > declared) throw damaged(this.op, this.path, `has ${actual - declared} bytes after its last element (its header says ${declared} bytes, the file has ${actual})`);
    this.consume(HEADER_BYTES);
  }

  /**
   * `n` if the file holds that many more bytes for the next record; else the record's header or
   * its length field is damaged. A damaged length must be caught before it sizes a read: past the
   * end of the file, it would ask for gigabytes.
   */
  private room(n: number): number {
    const left = this.size - this.pos;
    if (n === RECORD_HEAD && left < RECORD_HEAD) throw damaged(this.op, this.path, `ends before element ${this.index} of ${this.count} (at byte ${this.pos})`);
    if (n > left) throw damaged(this.op, this.path, `has a damaged length field at byte ${this.pos + 4} (element ${this.index} would need ${n - RECORD_HEAD} bytes; ${left - RECORD_HEAD} remain)`);
    return n;
  }

  /** The next element, whose `len` bytes are buffered, checked against its CRC. */
  private record(len: number): unknown {
    const at = this.pos;
    const i = this.index;
    const stored = this.buf.readUInt32LE(0);
    const rec = this.buf.subarray(4, RECORD_HEAD + len);
    if (crc32(rec) !== stored) throw damaged(this.op, this.path, `is damaged in element ${i} (bytes ${at}–${at + RECORD_HEAD + len - 1} fail their checksum)`);
    const kind = rec[4];
    if (kind !== 0 && kind !== 1) throw damaged(this.op, this.path, `has element ${i} of an unknown kind ${kind}`);
    let x: unknown;
    try {
      x = decode(kind, rec.subarray(5));
    } catch (e) {
      // The bytes are as written, so this Node.js reads v8's format differently (a newer Node wrote it).
      throw damaged(this.op, this.path, `holds element ${i}, which this Node.js ${process.version} cannot deserialize (${describeThrown(e)}); was it written by a newer Node.js?`);
    }
    this.consume(RECORD_HEAD + len);
    this.index++;
    return x;
  }

  private consume(n: number): void {
    this.buf = this.buf.subarray(n);
    this.pos += n;
  }

  /** Reads until at least `n` bytes are buffered; the caller has checked that the file holds them. */
  private async fill(n: number): Promise<void> {
    if (this.buf.length >= n) return;
    const left = this.size - this.pos - this.buf.length;
    const want = Math.min(Math.max(n, 1 << 20), this.buf.length + left);
    const next = Buffer.allocUnsafe(want);
    this.buf.copy(next, 0);
    let have = this.buf.length;
    while (have < want) {
      const { bytesRead } = await (this.fh as FileHandle).read(next, have, Math.min(want - have, MAX_READ), null);
      if (bytesRead === 0) break;
      have += bytesRead;
      if (this.c !== null) this.c.diskBytesRead += bytesRead;
    }
    this.buf = next.subarray(0, have);
    // The file shrank while being read (fstat said more): as truncated as any other short file.
    if (have < n) throw damaged(this.op, this.path, `is truncated: it ended at byte ${this.pos + have} while being read`);
  }

  async return(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const fh = this.fh;
    this.fh = null;
    try {
      await fh?.close();
    } catch (e) {
      throw ioFailed(this.op, this.path, 'close', e);
    }
  }
}

/** This machine's name as it appears in temp file names (so a shared directory never mixes hosts up). */
const HOST = hostname().replace(/[^A-Za-z0-9-]/g, '_') || 'host';

/** `${path}.${host}.${pid}.${random}.tmp`: the pid lets a later run tell a dead writer's file from a live one's. */
function tempName(path: string): string {
  return `${path}.${HOST}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
}

/** The pid in a temp file name of this cache written on this host, or null for any other name. */
function tempPid(base: string, name: string): number | null {
  const prefix = `${base}.${HOST}.`;
  if (!name.startsWith(prefix) || !name.endsWith('.tmp')) return null;
  const m = /^(\d+)\.[0-9a-f]+$/.exec(name.slice(prefix.length, -'.tmp'.length));
  return m === null ? null : Number(m[1]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists but belongs to someone else.
    return (e as { code?: string }).code === 'EPERM';
  }
}

/**
 * Removes the temp files of this cache left by writers that died (kill -9, a crash, power loss):
 * those named for this host and a pid that no longer runs, holding nothing or a cache header — so
 * a file Plumber did not write is never removed, nor one a live process is still writing.
 */
async function removeStaleTemps(path: string): Promise<string[]> {
  const dir = dirname(path);
  const base = basename(path);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const pid = tempPid(base, name);
    if (pid === null || pid === process.pid || alive(pid)) continue;
    const file = join(dir, name);
    try {
      const fh = await open(file, 'r');
      const head = Buffer.alloc(MAGIC.length);
      const { bytesRead } = await fh.read(head, 0, head.length, 0).finally(() => fh.close());
      if (bytesRead !== 0 && !head.subarray(0, bytesRead).equals(MAGIC.subarray(0, bytesRead))) continue;
      await unlink(file);
      removed.push(file);
    } catch {
      // Another run removed it first, or it is not ours to read: either way, leave it.
    }
  }
  return removed;
}

/** Passes elements through while writing them to a temp file; renames it into place on completion. */
class DiskWriter<T> implements Chunks<T> {
  private readonly s = new Sampler();
  private fh: FileHandle | null = null;
  /** The temp file being created, from the first pull on (`begin`). */
  private opening: Promise<FileHandle> | null = null;
  private readonly tmp: string;
  private closed = false;
  /** The last chunk's write, still going (see `step`). */
  private writing: Promise<void> | null = null;
  /** Elements written, and bytes (the header's included). */
  private count = 0;
  private bytes = HEADER_BYTES;
  constructor(
    private readonly path: string,
    private readonly up: Chunks<T>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private readonly op: OpRef,
  ) {
    this.tmp = tempName(path);
  }
  async next(hint: number): Promise<T[] | null> {
    if (this.closed) return null;
    try {
      return await this.step(hint);
    } catch (e) {
      // Whatever failed (the pipeline upstream, an element, the disk), the temp file goes.
      await this.return().catch(() => undefined);
      throw e;
    }
  }

  /** Opens the temp file with a placeholder header; a failure names the cache file. */
  private async begin(): Promise<FileHandle> {
    let fh: FileHandle | null = null;
    try {
      mkdirSync(dirname(this.path), { recursive: true });
      fh = await open(this.tmp, 'w');
      // A placeholder with our format line (so a stale one is recognised as ours) and no checksum:
      // until the real header is written last, the file reads as damaged.
      const placeholder = Buffer.alloc(HEADER_BYTES);
      FORMAT_LINE.copy(placeholder, 0);
      await fh.write(placeholder, 0, HEADER_BYTES, 0);
      return fh;
    } catch (e) {
      this.fh = fh;
      throw ioFailed(this.op, this.path, 'write', e);
    }
  }

  /** Writes the real header, closes the temp file and renames it over the cache's path. */
  private async finish(fh: FileHandle): Promise<void> {
    let doing: 'write' | 'close' | 'rename into place' = 'write';
    try {
      await fh.write(this.header(), 0, HEADER_BYTES, 0);
      doing = 'close';
      // Once close is called the handle is done with, whether it succeeds or not.
      this.fh = null;
      await fh.close();
      doing = 'rename into place';
      await rename(this.tmp, this.path);
    } catch (e) {
      throw ioFailed(this.op, this.path, doing, e);
    }
  }

  private async step(hint: number): Promise<T[] | null> {
    if (this.opening === null) {
      // The temp file is created while the first elements are computed (through libuv's threads),
      // not before: the first element waits for the slower of the two, not for both.
      this.opening = this.begin();
      this.opening.catch(() => undefined);
    }
    const chunk = await pull(this.up, hint, this.upC, this.s);
    if (this.closed) return null;
    // A chunk goes downstream while it is written (write-behind): its write, and the temp file's
    // creation before the first, run beside the next chunk's work instead of ahead of the
    // consumer. The previous write ends (and its error surfaces) before the next is issued, so
    // at most one chunk's bytes wait for the disk, and the file is complete before it is renamed.
    const writing = this.writing;
    this.writing = null;
    await writing;
    if (chunk === null) {
      this.fh ??= await this.opening;
      await this.finish(this.fh);
      this.closed = true;
      return null;
    }
    const t0 = this.c === null ? 0 : now();
    const parts: Buffer[] = [];
    const at = this.bytes;
    for (let i = 0; i < chunk.length; i++) {
      let rec: { kind: number; body: Buffer };
      try {
        rec = encode(chunk[i]);
      } catch (e) {
        throw this.unserialisable(chunk[i], this.count + i, e);
      }
      const head = Buffer.allocUnsafe(RECORD_HEAD);
      head.writeUInt32LE(rec.body.length, 4);
      head[8] = rec.kind;
      head.writeUInt32LE(crc32(rec.body, crc32(head.subarray(4))), 0);
      parts.push(head, rec.body);
      this.bytes += RECORD_HEAD + rec.body.length;
    }
    this.count += chunk.length;
    if (this.c !== null) {
      this.c.selfSeconds += (now() - t0) / 1000;
      this.c.pulled += chunk.length;
      countProduced(this.c, chunk);
    }
    // Every write says where it goes: the header is written at 0 last, and a positional write
    // does not move the file's offset.
    this.writing = this.write(Buffer.concat(parts), at);
    // Awaited by the next step or by `return`: not an unhandled rejection in between.
    this.writing.catch(() => undefined);
    return chunk;
  }

  /** Writes one chunk's records at `at`, once the temp file is open; a failure names the cache file. */
  private async write(data: Buffer, at: number): Promise<void> {
    this.fh ??= await (this.opening as Promise<FileHandle>);
    try {
      await this.fh.write(data, 0, data.length, at);
    } catch (e) {
      throw ioFailed(this.op, this.path, 'write', e);
    }
  }

  private header(): Buffer {
    const h = Buffer.alloc(HEADER_BYTES);
    FORMAT_LINE.copy(h, 0);
    h.writeBigUInt64LE(BigInt(this.count), FORMAT_LINE.length);
    h.writeBigUInt64LE(BigInt(this.bytes), FORMAT_LINE.length + 8);
    h.writeUInt32LE(crc32(h.subarray(0, HEADER_BYTES - 4)), HEADER_BYTES - 4);
    return h;
  }

  private unserialisable(x: unknown, index: number, e: unknown): PipelineError {
    const u = findUncloneable(x);
    const what = u === null ? describeThrown(e) : `it holds ${u.what}${atPath(u)}`;
    return new PipelineError(
      this.op,
      index,
      e,
      `element ${index} cannot be stored in the cache file ${this.path}: ${what}. cache(path) stores elements with v8.serialize: numbers, strings, plain objects, arrays, typed arrays, Maps, Sets, Dates and Batches round-trip; functions and symbols cannot be stored.`,
    );
  }

  /**
   * Ends an incomplete pass: the temp file is closed and removed whatever happens upstream, and
   * a failure to close or remove it is not reported (the pass keeps nothing either way, and a
   * temp file left behind is removed by the next run once this process is gone).
   */
  async return(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.up.return();
    } finally {
      // A write still going, and a temp file still being created, are waited for, so that the
      // file is closed and removed after them.
      await this.writing?.catch(() => undefined);
      this.writing = null;
      const opened = this.fh === null && this.opening !== null ? await this.opening.catch(() => null) : null;
      const fh = this.fh ?? opened;
      this.fh = null;
      await fh?.close().catch(() => undefined);
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

/** Cache paths whose stale temp files this process has looked for. */
const swept = new Set<string>();

/** Decides between reading and writing at the first pull, when the file's existence is checked. */
class Lazy<T> implements Chunks<T> {
  private inner: Chunks<T> | null = null;
  private closed = false;
  /** The look for stale temp files, run beside the pass and waited for at its end. */
  private sweep: Promise<unknown> | null = null;
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
      // Only ENOENT means "no cache yet": a file this process cannot read is someone's cache,
      // never recomputed and renamed over. stat, not open: opening a FIFO would wait forever.
      let exists = true;
      try {
        const other = notAFile(await stat(this.path));
        if (other !== null) throw foreign(this.op, this.path, other);
      } catch (e) {
        if (e instanceof PipelineError) throw e;
        if ((e as { code?: unknown } | null)?.code !== 'ENOENT') throw ioFailed(this.op, this.path, 'read', e);
        exists = false;
      }
      // Stale temp files are looked for once per process, and at every write: beside the pass,
      // not before its first element (they are other processes' files, never the one this pass
      // writes), and done by the time the pass ends.
      if (!exists || !swept.has(this.path)) {
        swept.add(this.path);
        this.sweep = removeStaleTemps(this.path);
      }
      if (this.closed) return null;
      this.inner = exists ? new DiskReader<T>(this.path, this.node.counters, this.op) : new DiskWriter<T>(this.path, this.input.open(this.session), this.input.counters, this.node.counters, this.op);
    }
    const out = await this.inner.next(hint);
    if (out === null) await this.swept();
    return out;
  }
  /** Waits for the look for stale temp files (it reports nothing: a file it could not remove stays). */
  private async swept(): Promise<void> {
    const sweep = this.sweep;
    this.sweep = null;
    await sweep?.catch(() => undefined);
  }
  async return(): Promise<void> {
    this.closed = true;
    try {
      await this.inner?.return();
    } finally {
      await this.swept();
    }
  }
}
