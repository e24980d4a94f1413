/**
 * TFRecord records, decoded Examples and WebDataset samples packed for a worker crossing: every
 * byte array of a chunk copied (in the worker) into one buffer that is moved, not cloned, plus a
 * small index; the reader rebuilds the elements as views into that buffer. Cloning them instead
 * copies each chunk a record or member views into, and costs the receiving thread about as much
 * as parsing them did.
 */
import type { Example, Feature } from './example';
import type { ParseClock, Shard, StreamFormat } from './format';
import { TfRecordFramer, tfRecordFormat, type RecordRanges, type TfRecordFormatOptions } from './tfrecord';
import { webDatasetFormat, type WebDatasetSample } from './webdataset';
import { unpackedArray, type Unpacked } from './columns-packed';

/** Byte arrays laid end to end in one buffer, each at a multiple of its alignment. */
class Arena {
  private readonly parts: Uint8Array[] = [];
  private readonly at: number[] = [];
  private size = 0;

  /** Adds `bytes` and returns its offset. */
  add(bytes: Uint8Array, align = 1): number {
    this.size = Math.ceil(this.size / align) * align;
    const offset = this.size;
    this.parts.push(bytes);
    this.at.push(offset);
    this.size += bytes.length;
    return offset;
  }

  finish(): ArrayBuffer {
    const out = new Uint8Array(this.size);
    this.parts.forEach((p, i) => out.set(p, this.at[i]));
    return out.buffer;
  }
}

/** A chunk of elements packed: one buffer, and where each byte array starts and how long it is. */
export interface PackedChunk {
  what: 'records' | 'examples' | 'samples';
  /** The shard, for samples' `__url__`. */
  location: string;
  bytes: ArrayBuffer;
  offsets: Int32Array;
  lengths: Int32Array;
  /** Per element: Examples' feature names, kinds (`b`ytes, `f`loat, `i`nt64) and item counts; samples' key and fields. */
  index: (string | number)[];
}

function packer(): { arena: Arena; offsets: number[]; lengths: number[]; put(bytes: Uint8Array, align?: number): void } {
  const arena = new Arena();
  const offsets: number[] = [];
  const lengths: number[] = [];
  return {
    arena,
    offsets,
    lengths,
    put(bytes, align = 1) {
      offsets.push(arena.add(bytes, align));
      lengths.push(bytes.length);
    },
  };
}

function finish(what: PackedChunk['what'], location: string, p: ReturnType<typeof packer>, index: (string | number)[]): PackedChunk {
  return { what, location, bytes: p.arena.finish(), offsets: Int32Array.from(p.offsets), lengths: Int32Array.from(p.lengths), index };
}

function packExamples(examples: Example[], location: string): PackedChunk {
  const p = packer();
  const index: (string | number)[] = [];
  for (const ex of examples) {
    const names = Object.keys(ex);
    index.push(names.length);
    for (const name of names) {
      const f = ex[name];
      if (f instanceof Float32Array) {
        index.push(name, 'f');
        p.put(new Uint8Array(f.buffer, f.byteOffset, f.byteLength), 4);
      } else if (f instanceof BigInt64Array) {
        index.push(name, 'i');
        p.put(new Uint8Array(f.buffer, f.byteOffset, f.byteLength), 8);
      } else {
        index.push(name, 'b', f.length);
        for (const b of f) p.put(b);
      }
    }
  }
  return finish('examples', location, p, index);
}

function unpackExamples(c: PackedChunk): Example[] {
  const out: Example[] = [];
  let k = 0;
  let blob = 0;
  const view = (): Uint8Array => new Uint8Array(c.bytes, c.offsets[blob], c.lengths[blob++]);
  while (k < c.index.length) {
    const ex: Example = {};
    const n = c.index[k++] as number;
    for (let j = 0; j < n; j++) {
      const name = c.index[k++] as string;
      const kind = c.index[k++] as string;
      let f: Feature;
      if (kind === 'f') f = new Float32Array(c.bytes, c.offsets[blob], c.lengths[blob++] / 4);
      else if (kind === 'i') f = new BigInt64Array(c.bytes, c.offsets[blob], c.lengths[blob++] / 8);
      else f = Array.from({ length: c.index[k++] as number }, view);
      ex[name] = f;
    }
    out.push(ex);
  }
  return out;
}

function packSamples(samples: WebDatasetSample[], location: string): PackedChunk {
  const p = packer();
  const index: (string | number)[] = [];
  for (const s of samples) {
    const fields = Object.keys(s).filter((f) => f !== '__key__' && f !== '__url__');
    index.push(s.__key__, fields.length, ...fields);
    for (const f of fields) p.put(s[f] as Uint8Array);
  }
  return finish('samples', location, p, index);
}

function unpackSamples(c: PackedChunk): WebDatasetSample[] {
  const out: WebDatasetSample[] = [];
  let k = 0;
  let blob = 0;
  while (k < c.index.length) {
    const s: WebDatasetSample = { __key__: c.index[k++] as string, __url__: c.location };
    const n = c.index[k++] as number;
    for (let j = 0; j < n; j++, blob++) s[c.index[k++] as string] = new Uint8Array(c.bytes, c.offsets[blob], c.lengths[blob]);
    out.push(s);
  }
  return out;
}

/** A format's chunks packed one chunk to one value (its errors, and the elements before them, pass through). */
function packed<T>(format: StreamFormat<T>, pack: (items: T[], location: string) => PackedChunk): StreamFormat<PackedChunk> {
  return {
    kind: format.kind,
    streamed: true,
    async *parse(bytes: AsyncIterable<Uint8Array>, shard: Shard, clock: ParseClock): AsyncGenerator<PackedChunk[]> {
      for await (const items of format.parse(bytes, shard, clock)) {
        const t0 = performance.now();
        const chunk = pack(items, shard.location);
        clock.parsed((performance.now() - t0) / 1000);
        yield [chunk];
      }
    },
  };
}

/** The worker half of a TFRecord reader: records (or Examples) packed per chunk. */
export function tfRecordPackedFormat(options: TfRecordFormatOptions): StreamFormat<PackedChunk> {
  if (options.decode === 'example') return packed(tfRecordFormat({ ...options, decode: 'example' }), packExamples);
  const verify = options.verify ?? true;
  return { kind: 'tfrecord', streamed: true, parse: (bytes, shard, clock) => packedRecords(bytes, shard, clock, verify) };
}

/**
 * Raw records packed straight from each decompressed chunk: the framer gives the records inside
 * it as ranges, copied out with one copy of the chunk's span (frames' headers and footers
 * included) behind the record that completes across chunks, if any. Framing them as views first
 * and copying each into an arena cost the worker an allocation and a copy per record (measured:
 * the worker's CPU per record was half as much again as framing them on the main thread).
 */
async function* packedRecords(bytes: AsyncIterable<Uint8Array>, shard: Shard, clock: ParseClock, verify: boolean): AsyncGenerator<PackedChunk[]> {
  const framer = new TfRecordFramer(shard.location, verify);
  for await (const chunk of bytes) {
    const t0 = performance.now();
    const found: RecordRanges = { starts: [], ends: [], spanning: null };
    let failed = false;
    let failure: unknown;
    try {
      framer.pushRanges(chunk, found);
    } catch (e) {
      [failed, failure] = [true, e];
    }
    const out = found.starts.length > 0 || found.spanning !== null ? packRanges(chunk, found, shard.location) : null;
    clock.parsed((performance.now() - t0) / 1000);
    // The records before a bad one are delivered before its error.
    if (out !== null) yield [out];
    if (failed) throw failure;
  }
  framer.end();
}

/** One chunk's records packed: the spanning record first, then the span from the first range's start to the last one's end. */
function packRanges(chunk: Uint8Array, r: RecordRanges, location: string): PackedChunk {
  const head = r.spanning?.length ?? 0;
  const ranges = r.starts.length;
  const from = ranges > 0 ? r.starts[0] : 0;
  const to = ranges > 0 ? r.ends[ranges - 1] : 0;
  const n = ranges + (r.spanning !== null ? 1 : 0);
  const bytes = new Uint8Array(head + to - from);
  const offsets = new Int32Array(n);
  const lengths = new Int32Array(n);
  let k = 0;
  if (r.spanning !== null) {
    bytes.set(r.spanning, 0);
    lengths[k++] = head;
  }
  if (ranges > 0) bytes.set(chunk.subarray(from, to), head);
  for (let i = 0; i < ranges; i++, k++) {
    offsets[k] = head + r.starts[i] - from;
    lengths[k] = r.ends[i] - r.starts[i];
  }
  return { what: 'records', location, bytes: bytes.buffer, offsets, lengths, index: [] };
}

/** The worker half of a WebDataset reader: samples packed per chunk. */
export function webDatasetPackedFormat(): StreamFormat<PackedChunk> {
  return packed(webDatasetFormat(), packSamples);
}

/** The reader's half: the records (a range at a time), Examples or samples of a packed chunk. */
export function unpackRecords(c: PackedChunk): Unpacked<Uint8Array | Example | WebDatasetSample> {
  if (c.what === 'examples') return unpackedArray<Uint8Array | Example | WebDatasetSample>(unpackExamples(c));
  if (c.what === 'samples') return unpackedArray<Uint8Array | Example | WebDatasetSample>(unpackSamples(c));
  return {
    count: c.lengths.length,
    take(s, e) {
      const out = new Array<Uint8Array>(e - s);
      for (let i = s; i < e; i++) out[i - s] = new Uint8Array(c.bytes, c.offsets[i], c.lengths[i]);
      return out;
    },
  };
}

/** The buffer a packed chunk moves across. */
export function packedBuffer(c: PackedChunk): ArrayBuffer[] {
  return [c.bytes];
}
