/**
 * The formats by kind, each made from its reader's options: the one table the reader op and the
 * reader worker thread (reader-worker.ts) look formats up in, so a worker needs no user module —
 * it gets the kind's name and the options, which are plain data. A new format is one row here.
 */
import type { OpKind } from '../../tracing';
import type { Format } from './format';
import { csvFormat, type CsvFormatOptions } from './csv';
import { jsonLinesFormat, type JsonLinesFormatOptions } from './jsonl';

type FormatFactory = (options: Record<string, unknown>) => Format<unknown>;

const FORMATS: Partial<Record<OpKind, FormatFactory>> = {
  csv: (o) => csvFormat(o as CsvFormatOptions) as Format<unknown>,
  jsonLines: (o) => jsonLinesFormat(o as JsonLinesFormatOptions),
};

/** The format of a reader kind, built from the format's own options (those that cross to workers). */
export function formatFor(kind: OpKind, options: Record<string, unknown>): Format<unknown> {
  const make = FORMATS[kind];
  if (make === undefined) throw new Error(`no reader format for '${kind}'`);
  return make(options);
}
