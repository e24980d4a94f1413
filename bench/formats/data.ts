/**
 * The data bench:formats reads, generated at run time from a seed into a temporary directory:
 * gzip'd shards of each format, the same rows in every format (an id, four measurements, a
 * category and a label), so the readers are compared on the same content.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
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

/** The rows as an Arrow table (apache-arrow), the source of the Parquet and Arrow shards. */
async function arrowTable(data: Row[]): Promise<import('apache-arrow').Table> {
  const { Float64, Int32, Table, Utf8, vectorFromArray } = await import('apache-arrow');
  const column = <K extends keyof Row>(k: K): Row[K][] => data.map((row) => row[k]);
  return new Table({
    id: vectorFromArray(column('id'), new Int32()),
    a: vectorFromArray(column('a'), new Float64()),
    b: vectorFromArray(column('b'), new Float64()),
    c: vectorFromArray(column('c'), new Float64()),
    d: vectorFromArray(column('d'), new Float64()),
    category: vectorFromArray(column('category'), new Utf8()),
    label: vectorFromArray(column('label'), new Int32()),
  });
}

/** One shard's bytes: CSV and JSON Lines gzip'd; Parquet (snappy, row groups of 10,000) and Arrow IPC streams written by arrow-rs (parquet-wasm). */
async function shardBytes(format: Format, data: Row[]): Promise<Buffer> {
  if (format === 'csv') return gzipSync(`${COLUMNS.join(',')}\n${data.map((row) => COLUMNS.map((c) => csvField(row[c])).join(',')).join('\n')}\n`, { level: 6 });
  if (format === 'jsonLines') return gzipSync(`${data.map((row) => JSON.stringify(row)).join('\n')}\n`, { level: 6 });
  const { tableToIPC } = await import('apache-arrow');
  const pw = await import('parquet-wasm');
  const table = pw.Table.fromIPCStream(tableToIPC(await arrowTable(data), 'stream'));
  const parquet = pw.writeParquet(table, new pw.WriterPropertiesBuilder().setCompression(pw.Compression.SNAPPY).setMaxRowGroupSize(10_000).build());
  if (format === 'parquet') return Buffer.from(parquet);
  return Buffer.from(pw.readParquet(parquet, { batchSize: 10_000 }).intoIPCStream());
}

export type Format = 'csv' | 'jsonLines' | 'parquet' | 'arrow';
const EXTENSIONS: Record<Format, string> = { csv: 'csv.gz', jsonLines: 'jsonl.gz', parquet: 'parquet', arrow: 'arrows' };

/** Shards of `format` with `rowsPerShard` rows each, written under `dir`. */
export async function generate(format: Format, dir: string, shards: number, rowsPerShard: number, seed: number): Promise<Generated> {
  mkdirSync(dir, { recursive: true });
  const out: Generated = { shards: [], bytes: 0, rows: 0 };
  for (let s = 0; s < shards; s++) {
    const data = rows(seed + s, rowsPerShard, s * rowsPerShard);
    const file = join(dir, `part-${String(s).padStart(3, '0')}.${EXTENSIONS[format]}`);
    const bytes = await shardBytes(format, data);
    writeFileSync(file, bytes);
    out.shards.push(file);
    out.bytes += bytes.length;
    out.rows += data.length;
  }
  return out;
}
