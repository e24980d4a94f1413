/**
 * What bench:formats reads, per reader: plumber-data's reader (one shard at a time on the main
 * thread, or the planned shards at once), and the best loop a user would write by hand over the
 * same library without plumber-data — a stream of each shard through Node's zlib into csv-parse's
 * streaming parser, `readline` over `createGunzip` with `JSON.parse` per line, hyparquet's
 * `parquetReadObjects` a row group at a time, apache-arrow's `RecordBatchReader` — reading the
 * shards one after another. Each yields every row; the runner counts them.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { parse } from 'csv-parse';
import { open } from 'node:fs/promises';
import { NUMERIC, SCHEMA, type Format } from './data';

/** How plumber-data reads: shards at once and where decompression and parsing run. */
export interface Knobs {
  parallelism: number;
  placement: 'main' | 'worker';
}

export interface ReaderBench {
  name: Format;
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

/** hyparquet over a file handle, a row group at a time, rows as objects: the loop its README suggests. */
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

/** apache-arrow's RecordBatchReader over a file stream, rows built from each batch's columns. */
async function* handArrow(shards: string[]): AsyncIterable<unknown> {
  const { RecordBatchReader } = await import('apache-arrow');
  for (const path of shards) {
    const reader = await RecordBatchReader.from(createReadStream(path) as unknown as AsyncIterable<Uint8Array>);
    for await (const batch of reader) {
      const names = batch.schema.fields.map((f) => f.name);
      const columns = names.map((n) => Array.from(batch.getChild(n) as Iterable<unknown>));
      for (let i = 0; i < batch.numRows; i++) {
        const row: Record<string, unknown> = {};
        for (let j = 0; j < names.length; j++) row[names[j]] = columns[j][i];
        yield row;
      }
    }
  }
}

export const READERS: ReaderBench[] = [
  {
    name: 'csv',
    plumber: async (shards, knobs) => {
      const { csv } = await import('plumber-data');
      return csv(shards, { header: true, schema: SCHEMA, ...knobs });
    },
    hand: handCsv,
  },
  {
    name: 'jsonLines',
    plumber: async (shards, knobs) => {
      const { jsonLines } = await import('plumber-data');
      return jsonLines(shards, knobs);
    },
    hand: handJsonLines,
  },
  {
    name: 'parquet',
    plumber: async (shards, knobs) => {
      const { parquet } = await import('plumber-data');
      return parquet(shards, knobs);
    },
    hand: handParquet,
  },
  {
    name: 'arrow',
    plumber: async (shards, knobs) => {
      const { arrow } = await import('plumber-data');
      return arrow(shards, knobs);
    },
    hand: handArrow,
  },
];
