/**
 * A streaming tar reader for WebDataset shards: POSIX ustar and pax (`tar --format=pax`, long and
 * non-ASCII names) and GNU tar's default format (its `L` long-name entries). Regular files come out
 * with their path and bytes; directories, links, devices and pax global headers are passed over.
 * Every 512-byte header's checksum is checked, so a shard that is not tar, or is damaged, is a
 * `FormatError` naming the byte offset; so is a shard that ends inside an entry or without the
 * end-of-archive zero blocks (a download cut at a member's edge would otherwise lose members quietly).
 *
 * A file whose bytes lie inside one chunk is a view into that chunk; one spanning chunks is copied
 * once into a buffer of its size. Tar is simple enough that this beats a library: it parses the
 * chunks the reader op hands it synchronously, where tar-stream makes a stream per member (about
 * 3x the time on shards of 10 KB members).
 */
import { TextDecoder } from 'node:util';
import { FormatError } from './format';

const BLOCK = 512;
const latin1 = new TextDecoder('latin1');
const utf8 = new TextDecoder('utf-8');

/** One regular file from a tar stream. */
export interface TarFile {
  path: string;
  data: Uint8Array;
  /** Byte offset of the file's header (the first of its headers, for long names) in the stream. */
  offset: number;
}

interface Pending {
  /** Header fields from a pax or GNU long-name entry that apply to the next file. */
  path?: string;
  size?: number;
  /** Where the first of this file's headers starts. */
  start?: number;
}

/** Splits a tar byte stream into files, chunk by chunk; `end()` when the stream ends. */
export class TarReader {
  private readonly header = new Uint8Array(BLOCK);
  private headerFill = 0;
  /** The entry whose data is being read: its bytes so far, and what to do with them. */
  private entry: { type: string; path: string; data: Uint8Array; fill: number; offset: number } | null = null;
  /** Padding bytes still to skip after an entry's data. */
  private skip = 0;
  private offset = 0;
  private done = false;
  private pending: Pending = {};

  constructor(private readonly location: string) {}

  /** Appends the files `chunk` completes to `out`. */
  push(chunk: Uint8Array, out: TarFile[]): void {
    let at = 0;
    const n = chunk.length;
    while (at < n && !this.done) {
      if (this.entry !== null) {
        const e = this.entry;
        const take = Math.min(e.data.length - e.fill, n - at);
        e.data.set(chunk.subarray(at, at + take), e.fill);
        e.fill += take;
        this.offset += take;
        at += take;
        if (e.fill === e.data.length) this.complete(e.type, e.path, e.data, e.offset, out);
      } else if (this.skip > 0) {
        // The padding after an entry's data, up to the next 512-byte block.
        const take = Math.min(this.skip, n - at);
        this.skip -= take;
        this.offset += take;
        at += take;
      } else if (this.headerFill === 0 && n - at >= BLOCK) {
        at = this.headerAt(chunk, at, out);
      } else {
        const take = Math.min(BLOCK - this.headerFill, n - at);
        this.header.set(chunk.subarray(at, at + take), this.headerFill);
        this.headerFill += take;
        at += take;
        // `offset` stays at the header's first byte until headerAt counts the whole block.
        if (this.headerFill === BLOCK) {
          this.headerFill = 0;
          this.headerAt(this.header, 0, out, false);
        }
      }
    }
  }

  /** Throws unless the stream ended with tar's end-of-archive marker (a zero block). */
  end(): void {
    if (this.done) return;
    if (this.headerFill > 0) throw this.error(this.offset, `truncated tar: the shard ends ${this.headerFill} bytes into a 512-byte header.`);
    if (this.entry !== null) {
      const e = this.entry;
      throw this.error(e.offset, `truncated tar: '${e.path}' should have ${e.data.length} bytes but the shard ends after ${e.fill}.`);
    }
    if (this.pending.start !== undefined) throw this.error(this.pending.start, 'truncated tar: the shard ends between an extended header and its file.');
    if (this.skip > 0) throw this.error(this.offset, `truncated tar: the shard ends ${this.skip} bytes short of the block its last member's data ends in.`);
    // Every tar writer ends an archive with zero blocks; without them the shard may have been cut at a member's edge.
    throw this.error(this.offset, "truncated tar: the shard ends without tar's end-of-archive blocks, so members may be missing.");
  }

  /**
   * Reads the header at `at` in `bytes` and, when the entry's data is also in `bytes` (and `inPlace`),
   * the data too; returns the position after what it consumed.
   */
  private headerAt(bytes: Uint8Array, at: number, out: TarFile[], inPlace = true): number {
    const start = this.offset;
    this.offset += BLOCK;
    const h = bytes.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) {
      this.done = true; // the end-of-archive marker; whatever follows is padding
      return at + BLOCK;
    }
    this.checkHeader(h, start);
    const type = h[156] === 0 ? '0' : String.fromCharCode(h[156]);
    const size = this.pending.size ?? this.sizeOf(h, start);
    const path = this.pending.path ?? nameOf(h);
    const offset = this.pending.start ?? start;
    this.skip = (BLOCK - (size % BLOCK)) % BLOCK;
    const dataAt = at + BLOCK;
    if (inPlace && bytes.length - dataAt >= size) {
      this.offset += size;
      this.complete(type, path, bytes.subarray(dataAt, dataAt + size), offset, out);
      return dataAt + size;
    }
    this.entry = { type, path, data: new Uint8Array(size), fill: 0, offset };
    if (size === 0) this.complete(type, path, this.entry.data, offset, out);
    return dataAt;
  }

  /** An entry's data is all here: a file goes out, an extended header applies to the next entry. */
  private complete(type: string, path: string, data: Uint8Array, offset: number, out: TarFile[]): void {
    this.entry = null;
    if (type === 'x' || type === 'L') {
      const next = type === 'x' ? parsePax(data, () => this.error(offset, 'a pax extended header is malformed.')) : { path: cString(data, utf8) };
      this.pending = { ...this.pending, ...next, start: this.pending.start ?? offset };
      return;
    }
    this.pending = {};
    if (type === '0' || type === '7') out.push({ path, data, offset });
  }

  private checkHeader(h: Uint8Array, start: number): void {
    const stored = parseOctal(h.subarray(148, 156));
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i];
    if (stored !== sum) throw this.error(start, `not a tar header (checksum ${stored ?? 'unreadable'}, the bytes sum to ${sum}): is this a tar file, or is it damaged?`);
  }

  /** The size field: octal, or GNU's base-256 (high bit set) for files of 8 GiB and more. */
  private sizeOf(h: Uint8Array, start: number): number {
    const field = h.subarray(124, 136);
    if (field[0] & 0x80) {
      let n = field[0] & 0x7f;
      for (let i = 1; i < field.length; i++) n = n * 256 + field[i];
      return n;
    }
    const n = parseOctal(field);
    if (n === null) throw this.error(start, 'a tar header has an unreadable size field.');
    return n;
  }

  private error(offset: number, message: string): FormatError {
    return new FormatError(this.location, `byte ${offset.toLocaleString('en-US')}`, message);
  }
}

/** A header's path: ustar's prefix joined to its name (GNU's format keeps other fields there). */
function nameOf(h: Uint8Array): string {
  const name = cString(h.subarray(0, 100), utf8);
  const posix = h[257] === 0x75 && h[262] === 0 && latin1.decode(h.subarray(257, 262)) === 'ustar';
  const prefix = posix ? cString(h.subarray(345, 500), utf8) : '';
  return prefix ? `${prefix}/${name}` : name;
}

function cString(bytes: Uint8Array, decoder: TextDecoder): string {
  const nul = bytes.indexOf(0);
  return decoder.decode(nul < 0 ? bytes : bytes.subarray(0, nul));
}

/** An octal field (NUL- or space-terminated, maybe space-padded); null when it holds no digits. */
function parseOctal(field: Uint8Array): number | null {
  let n = 0;
  let digits = 0;
  for (const b of field) {
    if (b >= 0x30 && b <= 0x37) {
      n = n * 8 + (b - 0x30);
      digits++;
    } else if (digits > 0 || (b !== 0x20 && b !== 0)) break;
  }
  return digits > 0 ? n : null;
}

/** pax records (`<length> <key>=<value>\n`): the path and size they set for the next file. */
function parsePax(data: Uint8Array, malformed: () => Error): { path?: string; size?: number } {
  const out: { path?: string; size?: number } = {};
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    const length = space < 0 ? NaN : Number(latin1.decode(data.subarray(at, space)));
    if (!Number.isInteger(length) || length <= 0 || at + length > data.length) throw malformed();
    const record = utf8.decode(data.subarray(space + 1, at + length - 1));
    const eq = record.indexOf('=');
    const key = record.slice(0, eq);
    const value = record.slice(eq + 1);
    if (key === 'path') out.path = value;
    else if (key === 'size') out.size = Number(value);
    at += length;
  }
  return out;
}
