/**
 * The formats by kind, each made from its reader's options: the one table the reader op and the
 * reader worker thread (reader-worker.ts) look formats up in, so a worker needs no user module —
 * it gets the kind's name and the options, which are plain data. A new format is one row here.
 */
import type { OpKind } from '../../tracing';
import type { Format } from './format';
import { csvFormat, csvPackedFormat, csvUnpacker, type CsvFormatOptions, type PackedRecords } from './csv';
import { jsonLinesFormat, type JsonLinesFormatOptions } from './jsonl';

type FormatFactory = (options: Record<string, unknown>) => Format<unknown>;

const FORMATS: Partial<Record<OpKind, FormatFactory>> = {
  csv: (o) => csvFormat(o as CsvFormatOptions) as Format<unknown>,
  jsonLines: (o) => jsonLinesFormat(o as JsonLinesFormatOptions),
};

/**
 * A format split in two for worker placement, where posting its elements costs more than making
 * them: the worker runs `packed` (its chunks are one packed value each, posted with `transfer`'s
 * buffers moved) and the reader rebuilds the elements with an `unpacker` made per shard.
 */
export interface WorkerSplit {
  packed(options: Record<string, unknown>): Format<unknown>;
  transfer(packed: unknown): ArrayBuffer[];
  unpacker(options: Record<string, unknown>, location: string): (packed: unknown) => unknown[];
}

const SPLITS: Partial<Record<OpKind, WorkerSplit>> = {
  csv: {
    packed: (o) => csvPackedFormat(o as CsvFormatOptions) as Format<unknown>,
    transfer: (p) => {
      const r = p as PackedRecords;
      return [r.lengths.buffer, r.widths.buffer, r.lines.buffer] as ArrayBuffer[];
    },
    unpacker: (o, location) => csvUnpacker(o as CsvFormatOptions, location) as (p: unknown) => unknown[],
  },
};

/** The kind's split for worker placement, if it has one. */
export function workerSplitFor(kind: OpKind): WorkerSplit | undefined {
  return SPLITS[kind];
}

/** The format of a reader kind, built from the format's own options (those that cross to workers). */
export function formatFor(kind: OpKind, options: Record<string, unknown>): Format<unknown> {
  const make = FORMATS[kind];
  if (make === undefined) throw new Error(`no reader format for '${kind}'`);
  return make(options);
}
