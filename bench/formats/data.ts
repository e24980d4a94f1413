/**
 * The data bench:formats reads, generated at run time from a seed into a temporary directory:
 * gzip'd shards of each format, the same rows in every format (an id, four measurements, a
 * category and a label), so the readers are compared on the same content.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** What one format's generated shards hold. */
export interface Generated {
  /** Shard files, in order. */
  shards: string[];
  /** Bytes of the shards as stored (compressed). */
  bytes: number;
  /** Rows across the shards. */
  rows: number;
}

/** A row of the generated table. */
export interface Row {
  id: number;
  a: number;
  b: number;
  c: number;
  d: number;
  category: string;
  label: number;
}

/** Column types of the generated table, as plumber-data's csv schema names them. */
export const SCHEMA = { id: 'int', a: 'number', b: 'number', c: 'number', d: 'number', category: 'string', label: 'int' } as const;
export const COLUMNS = Object.keys(SCHEMA) as Array<keyof Row>;
/** The columns a hand-written loop converts to numbers (every one but the category). */
export const NUMERIC = new Set<string>(COLUMNS.filter((c) => SCHEMA[c] !== 'string'));

const CATEGORIES = ['cat', 'dog', 'bird', 'fish "quoted"', 'horse, comma', 'mouse'];

/** mulberry32: a small seeded generator, the same rows from the same seed on every machine. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function rows(seed: number, n: number, offset: number): Row[] {
  const r = rng(seed);
  const out: Row[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      id: offset + i,
      a: Math.round(r() * 1e6) / 1e3,
      b: Math.round((r() - 0.5) * 1e4) / 1e2,
      c: Math.round(r() * 1e9),
      d: Math.round(r() * 1e5) / 1e5,
      category: CATEGORIES[Math.floor(r() * CATEGORIES.length)]!,
      label: Math.floor(r() * 10),
    });
  }
  return out;
}

function csvField(v: string | number): string {
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * TFRecord shards of the same rows, each a `tf.train.Example` (int64, float and bytes features),
 * written gzip'd by plumber-data's TFRecord writer.
 */
export async function generateRecords(dir: string, shards: number, rowsPerShard: number, seed: number): Promise<Generated> {
  const { encodeExample, writeTfRecord } = await import('plumber-data');
  mkdirSync(dir, { recursive: true });
  const out: Generated = { shards: [], bytes: 0, rows: 0 };
  for (let s = 0; s < shards; s++) {
    const data = rows(seed + s, rowsPerShard, s * rowsPerShard);
    const file = join(dir, `part-${String(s).padStart(3, '0')}.tfrecord.gz`);
    await writeTfRecord(
      file,
      data.map((r) => encodeExample({ id: BigInt64Array.of(BigInt(r.id)), values: Float32Array.of(r.a, r.b, r.c, r.d), category: [r.category], label: BigInt64Array.of(BigInt(r.label)) })),
    );
    out.shards.push(file);
    out.bytes += statSync(file).size;
    out.rows += data.length;
  }
  return out;
}

/** Arrow IPC stream shards of the same rows, record batches of 4,096 rows, gzip'd, written with apache-arrow. */
export async function generateArrow(dir: string, shards: number, rowsPerShard: number, seed: number): Promise<Generated> {
  const arrow = await import('apache-arrow');
  mkdirSync(dir, { recursive: true });
  const out: Generated = { shards: [], bytes: 0, rows: 0 };
  for (let s = 0; s < shards; s++) {
    const data = rows(seed + s, rowsPerShard, s * rowsPerShard);
    const batches = [];
    for (let i = 0; i < data.length; i += 4096) {
      const part = data.slice(i, i + 4096);
      // Plain Utf8 text (not a dictionary, whose ids would differ from batch to batch).
      const table = new arrow.Table({
        id: arrow.makeVector(Int32Array.from(part, (r) => r.id)),
        a: arrow.makeVector(Float64Array.from(part, (r) => r.a)),
        b: arrow.makeVector(Float64Array.from(part, (r) => r.b)),
        c: arrow.makeVector(Float64Array.from(part, (r) => r.c)),
        d: arrow.makeVector(Float64Array.from(part, (r) => r.d)),
        category: arrow.vectorFromArray(
          part.map((r) => r.category),
          new arrow.Utf8(),
        ),
        label: arrow.makeVector(Int32Array.from(part, (r) => r.label)),
      });
      batches.push(...table.batches);
    }
    const file = join(dir, `part-${String(s).padStart(3, '0')}.arrow.gz`);
    const gz = gzipSync(arrow.tableToIPC(new arrow.Table(batches), 'stream'), { level: 6 });
    writeFileSync(file, gz);
    out.shards.push(file);
    out.bytes += gz.length;
    out.rows += data.length;
  }
  return out;
}

/** Parquet shards of the same rows (snappy, row groups of 10,000), written by arrow-rs (parquet-wasm): another implementation than the reader's. */
export async function generateParquet(dir: string, shards: number, rowsPerShard: number, seed: number): Promise<Generated> {
  const arrow = await import('apache-arrow');
  const pw = await import('parquet-wasm');
  mkdirSync(dir, { recursive: true });
  const out: Generated = { shards: [], bytes: 0, rows: 0 };
  for (let s = 0; s < shards; s++) {
    const data = rows(seed + s, rowsPerShard, s * rowsPerShard);
    const table = new arrow.Table({
      id: arrow.makeVector(Int32Array.from(data, (r) => r.id)),
      a: arrow.makeVector(Float64Array.from(data, (r) => r.a)),
      b: arrow.makeVector(Float64Array.from(data, (r) => r.b)),
      c: arrow.makeVector(Float64Array.from(data, (r) => r.c)),
      d: arrow.makeVector(Float64Array.from(data, (r) => r.d)),
      category: arrow.vectorFromArray(
        data.map((r) => r.category),
        new arrow.Utf8(),
      ),
      label: arrow.makeVector(Int32Array.from(data, (r) => r.label)),
    });
    const props = new pw.WriterPropertiesBuilder().setCompression(pw.Compression.SNAPPY).setMaxRowGroupSize(10_000).build();
    const bytes = pw.writeParquet(pw.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')), props);
    const file = join(dir, `part-${String(s).padStart(3, '0')}.parquet`);
    writeFileSync(file, bytes);
    out.shards.push(file);
    out.bytes += bytes.length;
    out.rows += data.length;
  }
  return out;
}

/** Shards of `format` with `rowsPerShard` rows each, written gzip'd under `dir`. */
export function generate(format: 'csv' | 'jsonLines', dir: string, shards: number, rowsPerShard: number, seed: number): Generated {
  mkdirSync(dir, { recursive: true });
  const out: Generated = { shards: [], bytes: 0, rows: 0 };
  for (let s = 0; s < shards; s++) {
    const data = rows(seed + s, rowsPerShard, s * rowsPerShard);
    const text = format === 'csv' ? `${COLUMNS.join(',')}\n${data.map((row) => COLUMNS.map((c) => csvField(row[c])).join(',')).join('\n')}\n` : `${data.map((row) => JSON.stringify(row)).join('\n')}\n`;
    const file = join(dir, `part-${String(s).padStart(3, '0')}.${format === 'csv' ? 'csv' : 'jsonl'}.gz`);
    const gz = gzipSync(text, { level: 6 });
    writeFileSync(file, gz);
    out.shards.push(file);
    out.bytes += gz.length;
    out.rows += data.length;
  }
  return out;
}
