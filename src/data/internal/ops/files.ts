/**
 * files() and lines(): sources that read the disk. File reads run with bounded concurrency on
 * libuv's thread pool (one read at a time costs ~250 µs per file here, 16 in flight ~10 µs), and
 * count the bytes and files they read.
 */
import { createReadStream, statSync } from 'node:fs';
import { readFile, open, stat, type FileHandle } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { glob, globSync, isDynamicPattern } from 'tinyglobby';
import type { OpCounters } from '../../tracing';
import { PipelineError, type OpRef } from '../../errors';
import { type Chunks, type OpNode, type Session } from '../core';
import { Engine, type Launcher } from './engine';
import { compressionByName, decompress, hasGzipMagic, type Compression } from '../readers/compression';

/** A file read by `files()` with `read: 'bytes'`. */
export interface FileBytes {
  path: string;
  bytes: Uint8Array;
}
/** A file read by `files()` with `read: 'text'`. */
export interface FileText {
  path: string;
  text: string;
}

const GLOB_OPTIONS = { absolute: true, onlyFiles: true, expandDirectories: false } as const;

/**
 * The patterns split into plain paths and globs. A path with no glob syntax (and no escape, which
 * only a glob can undo) names its file directly: it is checked with one stat instead of being
 * handed to the glob, whose cost grows with the square of the patterns (a list of 1,600 file
 * names took 2.2 s to match, 6,046 over 30 s, and a traced build matches twice).
 */
function splitPatterns(patterns: string | readonly string[], cwd: string): { paths: string[]; globs: string[] } {
  const paths: string[] = [];
  const globs: string[] = [];
  for (const p of typeof patterns === 'string' ? [patterns] : patterns) {
    if (isDynamicPattern(p) || p.includes('\\')) globs.push(p);
    else paths.push(resolve(cwd, p));
  }
  return { paths, globs };
}

/** The union of the globs' matches and the plain paths that name files, each once, sorted. */
function sortedUnion(globbed: readonly string[], paths: readonly string[], isFile: readonly boolean[]): string[] {
  const all = new Set(globbed.map((p) => resolve(p)));
  paths.forEach((p, i) => isFile[i] && all.add(p));
  return [...all].sort();
}

/** Absolute paths matching the pattern(s), sorted. A pattern naming an existing file matches it. */
export async function matchFiles(patterns: string | readonly string[], cwd: string): Promise<string[]> {
  const { paths, globs } = splitPatterns(patterns, cwd);
  const [globbed, isFile] = await Promise.all([
    globs.length > 0 ? glob(globs, { cwd, ...GLOB_OPTIONS }) : [],
    Promise.all(
      paths.map((p) =>
        stat(p).then(
          (s) => s.isFile(),
          () => false,
        ),
      ),
    ),
  ]);
  return sortedUnion(globbed, paths, isFile);
}

/**
 * How many files the pattern(s) match now: the source's cardinality, which tools need to size a
 * cache. Only computed when a tracer is watching (the runner), so an untraced build does no I/O.
 */
export function countFiles(patterns: string | readonly string[], cwd: string): number {
  const { paths, globs } = splitPatterns(patterns, cwd);
  const globbed = globs.length > 0 ? globSync(globs, { cwd, ...GLOB_OPTIONS }) : [];
  return sortedUnion(
    globbed,
    paths,
    paths.map((p) => statSync(p, { throwIfNoEntry: false })?.isFile() ?? false),
  ).length;
}

/** Counts the call sites that read files. */
function countRead(c: OpCounters | null, bytes: number): void {
  if (c !== null) {
    c.diskBytesRead += bytes;
    c.filesRead++;
  }
}

class ArrayChunks implements Chunks<string> {
  private pos = 0;
  constructor(private readonly a: string[]) {}
  async next(hint: number): Promise<string[] | null> {
    if (this.pos >= this.a.length) return null;
    const out = this.a.slice(this.pos, this.pos + hint);
    this.pos += out.length;
    return out;
  }
  async return(): Promise<void> {
    this.pos = this.a.length;
  }
}

/** Globs on the first pull, then reads with `parallelism` reads in flight, in path order. */
class Files implements Chunks<unknown> {
  private engine: Engine<string, unknown> | null = null;
  private closed = false;
  private readonly abort = new AbortController();
  constructor(
    private readonly patterns: string | readonly string[],
    private readonly cwd: string,
    private readonly read: 'bytes' | 'text' | 'path',
    private readonly parallelism: number,
    private readonly c: OpCounters | null,
    private readonly op: OpRef,
  ) {}
  async next(hint: number): Promise<unknown[] | null> {
    if (this.closed) return null;
    if (this.engine === null) {
      const paths = await matchFiles(this.patterns, this.cwd);
      if (this.closed) return null;
      const read = this.read;
      const c = this.c;
      const signal = this.abort.signal;
      const launcher: Launcher<string, unknown> = {
        groupSize: () => 1,
        fail: (e, base) => new PipelineError(this.op, base, e),
        launch: (items) => {
          const path = items[0];
          if (read === 'path') return [path];
          if (read === 'text')
            return readFile(path, { encoding: 'utf8', signal }).then((text) => {
              countRead(c, Buffer.byteLength(text));
              return [{ path, text }];
            });
          return readFile(path, { signal }).then((buf) => {
            countRead(c, buf.byteLength);
            const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
            return [{ path, bytes }];
          });
        },
      };
      this.engine = new Engine(new ArrayChunks(paths), null, this.c, launcher, this.parallelism, true, 'selfSeconds');
    }
    return this.engine.next(hint);
  }
  async return(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    await this.engine?.close();
  }
}

export function openFiles(node: OpNode, _session: Session, patterns: string | readonly string[], cwd: string, read: 'bytes' | 'text' | 'path', parallelism: number): Chunks<unknown> {
  return new Files(patterns, cwd, read, parallelism, node.counters, { kind: node.kind, key: node.key, site: node.site });
}

/** A file's bytes in 64 KB chunks, counted as read from disk. (readers/source.ts's openStream for one local file: importing it here would make a cycle.) */
async function* rawChunks(path: string, c: OpCounters | null): AsyncGenerator<Uint8Array> {
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 16 }) as AsyncIterable<Buffer>) {
    if (c !== null) c.diskBytesRead += chunk.length;
    yield chunk;
  }
}

/**
 * Streams the lines of each matching file in path order, 64 KB at a time; no file is read whole.
 * A compressed file (gzip or brotli, by its name or gzip's magic bytes, or as `compression` says)
 * is inflated as it streams (readers/compression.ts); a plain one is read straight into one block.
 */
class Lines implements Chunks<string> {
  private paths: string[] | null = null;
  private fileIndex = 0;
  private fh: FileHandle | null = null;
  /** The open file's inflated bytes, when it is compressed (then `fh` is null). */
  private inflated: AsyncGenerator<Uint8Array> | null = null;
  private decoder: StringDecoder | null = null;
  private partial = '';
  private ready: string[] = [];
  private rpos = 0;
  private closed = false;
  private readonly block = Buffer.allocUnsafe(1 << 16);
  constructor(
    private readonly pattern: string | readonly string[],
    private readonly cwd: string,
    private readonly encoding: BufferEncoding,
    private readonly compression: 'auto' | Compression,
    private readonly c: OpCounters | null,
    private readonly op: OpRef,
  ) {}
  async next(hint: number): Promise<string[] | null> {
    try {
      while (!this.closed) {
        if (this.rpos < this.ready.length) {
          const out = this.rpos === 0 && this.ready.length <= hint ? this.ready : this.ready.slice(this.rpos, this.rpos + hint);
          this.rpos += out.length;
          if (this.rpos >= this.ready.length) {
            this.ready = [];
            this.rpos = 0;
          }
          if (this.c !== null) {
            this.c.produced += out.length;
            this.c.bytesProduced += out.length * out[0].length;
          }
          return out;
        }
        if (!(await this.readBlock())) return null;
      }
      return null;
    } catch (e) {
      await this.return();
      throw e instanceof PipelineError ? e : new PipelineError(this.op, undefined, e);
    }
  }
  /** Reads one block into `ready`. False when every file is done. */
  private async readBlock(): Promise<boolean> {
    if (this.paths === null) {
      this.paths = await matchFiles(this.pattern, this.cwd);
      // How much there is to read: with the bytes read per line so far, tools estimate how many
      // lines a pass holds before one ends.
      if (this.c !== null) {
        const sizes = await Promise.all(
          this.paths.map((p) =>
            stat(p).then(
              (s) => s.size,
              () => 0,
            ),
          ),
        );
        this.c.sourceBytes = sizes.reduce((a, b) => a + b, 0);
      }
    }
    if (this.fh === null && this.inflated === null) {
      if (this.fileIndex >= this.paths.length) return false;
      await this.openFile(this.paths[this.fileIndex], this.fileIndex++);
      this.decoder = new StringDecoder(this.encoding);
      this.partial = '';
    }
    let bytes: Uint8Array | null;
    if (this.inflated !== null) {
      const r = await this.inflated.next();
      bytes = r.done === true ? null : r.value;
    } else {
      const { bytesRead } = await (this.fh as FileHandle).read(this.block, 0, this.block.length, null);
      if (this.c !== null) this.c.diskBytesRead += bytesRead;
      bytes = bytesRead === 0 ? null : this.block.subarray(0, bytesRead);
    }
    const decoder = this.decoder as StringDecoder;
    let text: string;
    if (bytes === null) {
      text = this.partial + decoder.end();
      const fh = this.fh;
      this.fh = null;
      this.inflated = null;
      await fh?.close();
      if (this.c !== null) this.c.filesRead++;
      if (text.length > 0) this.ready = [text.endsWith('\r') ? text.slice(0, -1) : text];
      this.rpos = 0;
      return true;
    }
    text = this.partial + decoder.write(bytes as Buffer);
    const parts = text.split('\n');
    this.partial = parts.pop() as string;
    for (let i = 0; i < parts.length; i++) if (parts[i].endsWith('\r')) parts[i] = parts[i].slice(0, -1);
    this.ready = parts;
    this.rpos = 0;
    return true;
  }
  /** Opens a file: straight for a plain one, through the decompressor for a compressed one. */
  private async openFile(path: string, index: number): Promise<void> {
    const fh = await open(path, 'r');
    let kind: Compression | undefined = this.compression === 'auto' ? compressionByName(path) : this.compression;
    if (kind === undefined) {
      const head = Buffer.alloc(2);
      const { bytesRead } = await fh.read(head, 0, 2, 0);
      kind = hasGzipMagic(head.subarray(0, bytesRead)) ? 'gzip' : 'none';
    }
    if (kind === 'none') {
      this.fh = fh;
      return;
    }
    await fh.close();
    const shard = { location: path, index };
    this.inflated = decompress(rawChunks(path, this.c), kind, shard, this.c);
  }
  async return(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const fh = this.fh;
    const inflated = this.inflated;
    this.fh = null;
    this.inflated = null;
    await Promise.all([fh?.close(), inflated?.return(undefined)]);
  }
}

export function openLines(node: OpNode<string>, _session: Session, pattern: string | readonly string[], cwd: string, encoding: BufferEncoding, compression: 'auto' | Compression = 'auto'): Chunks<string> {
  return new Lines(pattern, cwd, encoding, compression, node.counters, { kind: node.kind, key: node.key, site: node.site });
}

/** Resolves a `cwd` option against the process's working directory. */
export function resolveCwd(cwd: string | undefined): string {
  return cwd === undefined ? process.cwd() : isAbsolute(cwd) ? cwd : resolve(cwd);
}
