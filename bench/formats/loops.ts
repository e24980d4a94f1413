/**
 * What bench:formats reads, per reader: the shards it generates, plumber-data's reader (one shard
 * at a time on the main thread, or the planned shards at once), and the best loop a user would
 * write by hand over the same library without plumber-data — a stream of each shard through Node's
 * zlib into csv-parse's streaming parser; `readline` over `createGunzip` with `JSON.parse` per
 * line; TFRecord frames cut from the gunzipped stream, both CRCs checked with @node-rs/crc32 (the
 * library plumber-data checks them with); apache-arrow's RecordBatchReader over the gunzipped
 * stream, each batch's rows as objects; hyparquet's `parquetReadObjects` a row group at a time — reading the shards one after another. Each yields
 * every row or record; the runner counts them.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { crc32c } from '@node-rs/crc32';
import { parse } from 'csv-parse';
import { open } from 'node:fs/promises';
import { generate, generateArrow, generateParquet, generateRecords, NUMERIC, SCHEMA, type Generated } from './data';

/** How plumber-data reads: shards at once and where decompression and parsing run. */
export interface Knobs {
  parallelism: number;
  placement: 'main' | 'worker';
}

export interface ReaderBench {
  name: 'csv' | 'jsonLines' | 'tfrecord' | 'arrow' | 'parquet';
  /** Writes `shards` gzip'd shards of `rows` rows each under `dir`, from `seed`. */
  generate(dir: string, shards: number, rows: number, seed: number): Promise<Generated>;
  /** plumber-data's reader over the shards, with these knobs. */
  plumber(shards: string[], knobs: Knobs): Promise<AsyncIterable<unknown>>;
  /** The hand-written loop over the same shards. */
  hand(shards: string[]): AsyncIterable<unknown>;
}

async function* handCsv(shards: string[]): AsyncIterable<unknown> {
  for (const file of shards) {
    // Typed as plumber-data's schema types them: numbers for the numeric columns, converted in the
    // loop (csv-parse's per-field `cast` callback costs several times more).
    const parser = createReadStream(file)
      .pipe(createGunzip())
      .pipe(parse({ columns: true }));
    for await (const row of parser as AsyncIterable<Record<string, string | number>>) {
      for (const k of NUMERIC) row[k] = Number(row[k]);
      yield row;
    }
  }
}

async function* handJsonLines(shards: string[]): AsyncIterable<unknown> {
  for (const file of shards) {
    const lines = createInterface({ input: createReadStream(file).pipe(createGunzip()), crlfDelay: Infinity });
    for await (const line of lines) if (line.length > 0) yield JSON.parse(line);
  }
}

/** TFRecord's masked CRC-32C. */
function masked(crc: number): number {
  return (((crc >>> 15) | (crc << 17)) + 0xa282ead8) >>> 0;
}

async function* handTfRecord(shards: string[]): AsyncIterable<unknown> {
  for (const file of shards) {
    let buf: Buffer = Buffer.alloc(0);
    for await (const chunk of createReadStream(file).pipe(createGunzip()) as AsyncIterable<Buffer>) {
      buf = buf.length > 0 ? Buffer.concat([buf, chunk]) : chunk;
      let at = 0;
      for (;;) {
        if (buf.length - at < 12) break;
        const length = Number(buf.readBigUInt64LE(at));
        if (buf.length - at < 16 + length) break;
        if (masked(crc32c(buf.subarray(at, at + 8))) !== buf.readUInt32LE(at + 8)) throw new Error(`${file}: bad length checksum at ${at}`);
        const data = buf.subarray(at + 12, at + 12 + length);
        if (masked(crc32c(data)) !== buf.readUInt32LE(at + 12 + length)) throw new Error(`${file}: bad data checksum at ${at}`);
        yield new Uint8Array(data);
        at += 16 + length;
      }
      buf = buf.subarray(at);
    }
    if (buf.length > 0) throw new Error(`${file}: ${buf.length} bytes after the last record`);
  }
}

async function* handArrow(shards: string[]): AsyncIterable<unknown> {
  const { RecordBatchReader } = await import('apache-arrow');
  for (const file of shards) {
    const reader = await RecordBatchReader.from(createReadStream(file).pipe(createGunzip()));
    for await (const batch of reader) {
      const names = batch.schema.fields.map((f) => f.name);
      const columns = names.map((_, j) => batch.getChildAt(j)!);
      for (let i = 0; i < batch.numRows; i++) {
        const row: Record<string, unknown> = {};
        for (let j = 0; j < names.length; j++) row[names[j]!] = columns[j]!.get(i);
        yield row;
      }
    }
  }
}

/** hyparquet over a file handle, a row group at a time, rows as objects (`parquetReadObjects`). */
async function* handParquet(shards: string[]): AsyncIterable<unknown> {
  const { parquetMetadataAsync, parquetReadObjects } = await import('hyparquet');
  const { compressors } = await import('hyparquet-compressors');
  for (const path of shards) {
    const fh = await open(path);
    try {
      const size = (await fh.stat()).size;
      const file = {
        byteLength: size,
        slice: async (start: number, end = size): Promise<ArrayBuffer> => {
          const buf = Buffer.allocUnsafe(end - start);
          await fh.read(buf, 0, buf.length, start);
          return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length) as ArrayBuffer;
        },
      };
      const metadata = await parquetMetadataAsync(file);
      let rowStart = 0;
      for (const group of metadata.row_groups) {
        const rowEnd = rowStart + Number(group.num_rows);
        yield* await parquetReadObjects({ file, metadata, rowStart, rowEnd, compressors });
        rowStart = rowEnd;
      }
    } finally {
      await fh.close();
    }
  }
}

export const READERS: ReaderBench[] = [
  {
    name: 'csv',
    generate: async (dir, shards, rows, seed) => generate('csv', dir, shards, rows, seed),
    plumber: async (shards, knobs) => {
      const { csv } = await import('plumber-data');
      return csv(shards, { header: true, schema: SCHEMA, ...knobs });
    },
    hand: handCsv,
  },
  {
    name: 'jsonLines',
    generate: async (dir, shards, rows, seed) => generate('jsonLines', dir, shards, rows, seed),
    plumber: async (shards, knobs) => {
      const { jsonLines } = await import('plumber-data');
      return jsonLines(shards, knobs);
    },
    hand: handJsonLines,
  },
  {
    name: 'tfrecord',
    generate: generateRecords,
    plumber: async (shards, knobs) => {
      const { tfrecord } = await import('plumber-data');
      return tfrecord(shards, { verify: true, ...knobs });
    },
    hand: handTfRecord,
  },
  {
    name: 'arrow',
    generate: generateArrow,
    plumber: async (shards, knobs) => {
      const { arrow } = await import('plumber-data');
      return arrow(shards, knobs);
    },
    hand: handArrow,
  },
  {
    name: 'parquet',
    generate: generateParquet,
    plumber: async (shards, knobs) => {
      const { parquet } = await import('plumber-data');
      return parquet(shards, knobs);
    },
    hand: handParquet,
  },
];
