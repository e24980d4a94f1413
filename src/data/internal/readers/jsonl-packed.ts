/**
 * JSON Lines values packed for a worker crossing. A chunk whose values are all objects with the
 * same keys in the same order (a table exported as JSON Lines, the common case) crosses by column
 * (columns-packed.ts) and the reader's thread rebuilds the objects with a compiled builder
 * (row-builder.ts); cloning them instead cost the reader's thread about as much as JSON.parse did.
 * Any other chunk crosses as its values, cloned. Either way the reader gets what JSON.parse gave:
 * plain objects, keys in the same order, the same values.
 */
import { columnBuffers, columnSlice, packColumn, unpackedArray, unpackedRows, type Unpacked, type ValueColumn } from './columns-packed';
import type { ParseClock, Shard, StreamFormat } from './format';
import { jsonLinesFormat, type JsonLinesFormatOptions } from './jsonl';

export type PackedJson = { keys: string[]; count: number; columns: ValueColumn[] } | { values: unknown[] };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The keys every value has, in the same order, or null. `__proto__` (an own key from JSON.parse, a setter to a builder) is never packed. */
function sharedKeys(values: unknown[]): string[] | null {
  const first = values[0];
  if (!isRecord(first)) return null;
  const keys = Object.keys(first);
  if (keys.length === 0 || keys.includes('__proto__')) return null;
  for (let r = 1; r < values.length; r++) {
    const v = values[r];
    if (!isRecord(v)) return null;
    let k = 0;
    for (const key in v) {
      if (key !== keys[k++]) return null;
    }
    if (k !== keys.length) return null;
  }
  return keys;
}

export function packJson(values: unknown[]): PackedJson {
  const keys = sharedKeys(values);
  if (keys === null) return { values };
  const columns = keys.map((k) => packColumn(values.map((v) => (v as Record<string, unknown>)[k])));
  return { keys, count: values.length, columns };
}

export function jsonBuffers(p: PackedJson): ArrayBuffer[] {
  return 'values' in p ? [] : p.columns.flatMap(columnBuffers);
}

export function unpackJson(p: PackedJson): Unpacked {
  if ('values' in p) return unpackedArray(p.values);
  return unpackedRows(p.keys, p.columns.map(columnSlice), p.count);
}

/** The JSON Lines format as a worker thread runs it: one packed chunk per chunk of values. */
export function jsonLinesPackedFormat(options: JsonLinesFormatOptions): StreamFormat<PackedJson> {
  const inner = jsonLinesFormat(options);
  return {
    kind: 'jsonLines',
    streamed: true,
    async *parse(bytes: AsyncIterable<Uint8Array>, shard: Shard, clock: ParseClock): AsyncGenerator<PackedJson[]> {
      for await (const values of inner.parse(bytes, shard, clock)) {
        const t0 = performance.now();
        const p = packJson(values);
        clock.parsed((performance.now() - t0) / 1000);
        yield [p];
      }
    },
  };
}
