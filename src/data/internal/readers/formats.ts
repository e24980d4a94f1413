/**
 * The formats by kind, each made from its reader's options: the one table the reader op and the
 * reader worker thread (reader-worker.ts) look formats up in, so a worker needs no user module —
 * it gets the kind's name and the options, which are plain data. A new format is one row here.
 */
import type { OpKind } from '../../tracing';
import type { Format } from './format';
import type { Unpacked } from './columns-packed';
import { csvFormat, csvPackedFormat, packedBuffers, unpackRows, type CsvFormatOptions, type PackedRows } from './csv';
import { jsonLinesFormat, type JsonLinesFormatOptions } from './jsonl';
import { jsonBuffers, jsonLinesPackedFormat, unpackJson, type PackedJson } from './jsonl-packed';
import { tfRecordFormat, type TfRecordFormatOptions } from './tfrecord';
import { webDatasetFormat } from './webdataset';
import { parquetFormat } from './parquet';
import { arrowFormat } from './arrow';
import { packedTableFormat, tableBuffers, unpackTable, type PackedTable, type TableFormatOptions } from './table';
import { packedBuffer, tfRecordPackedFormat, unpackRecords, webDatasetPackedFormat, type PackedChunk } from './records-packed';

type FormatFactory = (options: Record<string, unknown>) => Format<unknown>;

const FORMATS: Partial<Record<OpKind, FormatFactory>> = {
  csv: (o) => csvFormat(o as CsvFormatOptions) as Format<unknown>,
  jsonLines: (o) => jsonLinesFormat(o as JsonLinesFormatOptions),
  tfrecord: (o) => tfRecordFormat(o as TfRecordFormatOptions),
  webdataset: () => webDatasetFormat(),
  parquet: (o) => parquetFormat(o as TableFormatOptions),
  arrow: (o) => arrowFormat(o as TableFormatOptions),
};

/**
 * How a kind's elements cross from a worker thread when posting them as they are costs the
 * reader more than making them (a structured clone rebuilds every object): the worker runs the
 * `packed` format, whose elements are packed chunks, posted with `transfer`'s buffers moved, and
 * the reader's thread rebuilds the elements with `unpack`, a range at a time as it takes them.
 */
export interface WorkerPacking {
  packed(options: Record<string, unknown>): Format<unknown>;
  transfer(packed: unknown): ArrayBuffer[];
  unpack(packed: unknown): Unpacked;
}

const PACKINGS: Partial<Record<OpKind, WorkerPacking>> = {
  tfrecord: {
    packed: (o) => tfRecordPackedFormat(o as TfRecordFormatOptions),
    transfer: (p) => packedBuffer(p as PackedChunk),
    unpack: (p) => unpackRecords(p as PackedChunk),
  },
  webdataset: {
    packed: () => webDatasetPackedFormat(),
    transfer: (p) => packedBuffer(p as PackedChunk),
    unpack: (p) => unpackRecords(p as PackedChunk),
  },
  jsonLines: {
    packed: (o) => jsonLinesPackedFormat(o as JsonLinesFormatOptions) as Format<unknown>,
    transfer: (p) => jsonBuffers(p as PackedJson),
    unpack: (p) => unpackJson(p as PackedJson),
  },
  csv: {
    packed: (o) => csvPackedFormat(o as CsvFormatOptions) as Format<unknown>,
    transfer: (p) => packedBuffers(p as PackedRows),
    unpack: (p) => unpackRows(p as PackedRows),
  },
  parquet: {
    packed: (o) => packedTableFormat(parquetFormat, o as TableFormatOptions),
    transfer: (p) => tableBuffers(p as PackedTable),
    unpack: (p) => unpackTable(p as PackedTable),
  },
  arrow: {
    packed: (o) => packedTableFormat(arrowFormat, o as TableFormatOptions),
    transfer: (p) => tableBuffers(p as PackedTable),
    unpack: (p) => unpackTable(p as PackedTable),
  },
};

/** The kind's packing for worker placement, if it has one. */
export function workerPackingFor(kind: OpKind): WorkerPacking | undefined {
  return PACKINGS[kind];
}

/** The format of a reader kind, built from the format's own options (those that cross to workers). */
export function formatFor(kind: OpKind, options: Record<string, unknown>): Format<unknown> {
  const make = FORMATS[kind];
  if (make === undefined) throw new Error(`no reader format for '${kind}'`);
  return make(options);
}
