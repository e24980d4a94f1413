/**
 * What plumber-data's `cache(path)` would pay per element after an operator, measured on the
 * elements the operator handed on for the sample, by doing what the library does with them
 * (src/data/internal/ops/cache.ts): the first pass serialises each element (`v8.serialize`),
 * checksums it (CRC-32) and writes it to a file; each later pass reads the file back in blocks of
 * 1 MB, checksums and deserialises each record. The sample is repeated to at least `MIN_BYTES` so
 * the file system's time shows, written to a temporary file (removed after) and timed in rounds
 * until a budget is spent, the fastest round kept (as the move probe times its clones): a round
 * that a collection or another process interrupted says nothing about the work. The file is read
 * back as written, from the page cache when it holds it, as a later pass would.
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { open, readdir, rename, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import * as zlib from 'node:zlib';
import type { DiskCacheCost } from '../shared/profile';

/** Rounds, at least, and the most wall time the timing may take per operator. */
const MIN_ROUNDS = 3;
const BUDGET_MS = 150;
/** The sample repeated to at least this many serialised bytes (and at most `MAX_COPIES` elements). */
const MIN_BYTES = 4 * 1024 * 1024;
const MAX_COPIES = 4096;
/** The library's read block. */
const BLOCK = 1 << 20;
/** CRC, length, kind before each record's body. */
const RECORD_HEAD = 9;
/** The library's file header: its format line, counts and checksum (about this size; its exact size does not change a timing). */
const FILE_HEAD = 28;

const crc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32 ?? ((): number => 0);

/** One record as the library writes it: CRC, length, kind, then the serialised value. */
function record(v: unknown): Buffer {
  const body = serialize(v);
  const head = Buffer.allocUnsafe(RECORD_HEAD);
  head.writeUInt32LE(body.length, 4);
  head[8] = 0;
  head.writeUInt32LE(crc32(body, crc32(head.subarray(4))), 0);
  return Buffer.concat([head, body]);
}

/**
 * What a disk cache pays before its first element, on a fresh file, timed once, cold, with the
 * file system calls the library makes (fs/promises, through libuv's threads): a first pass looks
 * for the file and for stale temporary files beside it, creates its directory, opens its
 * temporary file, writes a header and its first record (`startSeconds`); a later pass looks for
 * the file, opens it and reads and decodes its first record (`openSeconds`). At the scale of a
 * first batch (milliseconds) these and the cache's cold code are what it waits for, beyond the
 * per-element costs `diskCacheCost` times warm. The library looks for stale files, creates its
 * temporary file and writes each chunk's records beside the next elements' work (write-behind),
 * so a first pass waits for less than `startSeconds` where upstream work hides them: counted
 * whole, the safe side. Call it before `diskCacheCost`, whose rounds warm the same code. Undefined
 * when the file cannot be written.
 */
export async function diskCacheStartCost(value: unknown): Promise<{ startSeconds: number; openSeconds: number } | undefined> {
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), 'plumber-diskstart-'));
    const file = join(dir, 'cache', 'probe.plumbercache');
    const tmp = `${file}.tmp`;
    let t0 = performance.now();
    await stat(file).catch(() => undefined);
    await readdir(dir);
    mkdirSync(dirname(file), { recursive: true });
    const w = await open(tmp, 'w');
    let written: number;
    try {
      await w.write(Buffer.alloc(FILE_HEAD), 0, FILE_HEAD, 0);
      const rec = record(value);
      await w.write(rec, 0, rec.length, FILE_HEAD);
      written = rec.length;
    } finally {
      await w.close();
    }
    const startSeconds = (performance.now() - t0) / 1000;
    await rename(tmp, file);
    t0 = performance.now();
    await stat(file);
    const r = await open(file, 'r');
    try {
      const buf = Buffer.allocUnsafe(Math.min(BLOCK, FILE_HEAD + written));
      await r.read(buf, 0, buf.length, 0);
      const len = buf.readUInt32LE(FILE_HEAD + 4);
      crc32(buf.subarray(FILE_HEAD + 4, FILE_HEAD + RECORD_HEAD + len));
      deserialize(buf.subarray(FILE_HEAD + RECORD_HEAD, FILE_HEAD + RECORD_HEAD + len));
    } finally {
      await r.close();
    }
    return { startSeconds, openSeconds: (performance.now() - t0) / 1000 };
  } catch {
    return undefined;
  } finally {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}

/** One write pass of `values`, then one read pass; seconds of each. */
function roundTrip(file: string, values: readonly unknown[]): { write: number; read: number; bytes: number } {
  let t0 = performance.now();
  const fd = openSync(file, 'w');
  let bytes = 0;
  try {
    for (const v of values) {
      const rec = record(v);
      writeSync(fd, rec);
      bytes += rec.length;
    }
  } finally {
    closeSync(fd);
  }
  const write = performance.now() - t0;
  t0 = performance.now();
  const rd = openSync(file, 'r');
  try {
    let buf: Buffer = Buffer.alloc(0);
    let pos = 0;
    for (;;) {
      if (buf.length < RECORD_HEAD) buf = refill(rd, buf, RECORD_HEAD, pos);
      if (buf.length < RECORD_HEAD) break;
      const len = buf.readUInt32LE(4);
      if (buf.length < RECORD_HEAD + len) buf = refill(rd, buf, RECORD_HEAD + len, pos);
      crc32(buf.subarray(4, RECORD_HEAD + len));
      deserialize(buf.subarray(RECORD_HEAD, RECORD_HEAD + len));
      pos += RECORD_HEAD + len;
      buf = buf.subarray(RECORD_HEAD + len);
    }
  } finally {
    closeSync(rd);
  }
  return { write, read: performance.now() - t0, bytes };
}

/** `buf` and the file's next bytes after it, at least `n` of them when the file has them, read in blocks as the library reads. */
function refill(fd: number, buf: Buffer, n: number, pos: number): Buffer {
  const want = Math.max(n, BLOCK);
  const next = Buffer.allocUnsafe(want);
  buf.copy(next, 0);
  let have = buf.length;
  while (have < want) {
    const got = readSync(fd, next, have, want - have, pos + have);
    if (got === 0) break;
    have += got;
  }
  return next.subarray(0, have);
}

/** Per-element cost of writing and reading `values` through a disk cache; undefined when any cannot be serialised or the file cannot be written. */
export function diskCacheCost(values: readonly unknown[]): DiskCacheCost | undefined {
  if (values.length === 0) return undefined;
  let sampleBytes = 0;
  try {
    for (const v of values) sampleBytes += serialize(v).length;
  } catch {
    // cache(path) would fail on these elements: no disk cost to price.
    return undefined;
  }
  const each = Math.max(1, sampleBytes / values.length);
  const copies = Math.max(values.length, Math.min(MAX_COPIES, Math.ceil(MIN_BYTES / each)));
  const repeated = Array.from({ length: copies }, (_, i) => values[i % values.length]);
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), 'plumber-diskcost-'));
    const file = join(dir, 'probe.plumbercache');
    let write = Infinity;
    let read = Infinity;
    let bytes = 0;
    const start = performance.now();
    for (let round = 0; round < MIN_ROUNDS || (performance.now() - start < BUDGET_MS && round < 20); round++) {
      const r = roundTrip(file, repeated);
      write = Math.min(write, r.write);
      read = Math.min(read, r.read);
      bytes = r.bytes;
    }
    return { samples: values.length, serializedBytes: Math.round(bytes / copies) - RECORD_HEAD, writeSeconds: write / 1000 / copies, readSeconds: read / 1000 / copies };
  } catch {
    return undefined;
  } finally {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}
