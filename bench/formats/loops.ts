/**
 * What bench:formats reads, per reader: plumber-data's reader (one shard at a time on the main
 * thread, or the planned shards at once), and the best loop a user would write by hand over the
 * same library without plumber-data — a stream of each shard through Node's zlib into csv-parse's
 * streaming parser, or `readline` over `createGunzip` with `JSON.parse` per line — reading the
 * shards one after another. Each yields every row; the runner counts them.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { parse } from 'csv-parse';
import { NUMERIC, SCHEMA } from './data';

/** How plumber-data reads: shards at once and where decompression and parsing run. */
export interface Knobs {
  parallelism: number;
  placement: 'main' | 'worker';
}

export interface ReaderBench {
  name: 'csv' | 'jsonLines';
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
];
