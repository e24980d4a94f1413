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
  const columns = columnPacker(keys, values[0] as Record<string, unknown>)(values) ?? keys.map((k) => packColumn(values.map((v) => (v as Record<string, unknown>)[k])));
  return { keys, count: values.length, columns };
}

/** Packs a chunk's objects into columns in one pass, or returns null when a value's kind differs from the first row's (packColumn then packs it). */
type ColumnPacker = (values: unknown[]) => ValueColumn[] | null;

const packers = new Map<string, ColumnPacker>();
/** Packers compiled at most (a reader sees one or a few shapes; see row-builder.ts). */
const MAX_PACKERS = 64;

/**
 * The packer for objects with these keys whose values are of the first row's kinds: a function
 * compiled once per keys and kinds, reading each key by name (one shape, so each read is a fast
 * named load) straight into the column's typed array; a read of a key by a variable, and an array
 * of values per column before it, cost the worker about a third as much again as JSON.parse did.
 * Columns are what packColumn makes of the same values.
 */
function columnPacker(keys: readonly string[], first: Record<string, unknown>): ColumnPacker {
  const kinds = keys.map((k) => {
    const t = typeof first[k];
    return t === 'number' ? 'n' : t === 'boolean' ? 'b' : t === 'string' ? 's' : 'a';
  });
  const id = JSON.stringify([keys, kinds]);
  let p = packers.get(id);
  if (p !== undefined) return p;
  const make: string[] = [];
  const put: string[] = [];
  const out: string[] = [];
  kinds.forEach((t, j) => {
    // Keys are written as JSON string literals, so no key can be read as code.
    const read = `const x${j} = o[${JSON.stringify(keys[j])}];`;
    if (t === 'n') {
      make.push(`const c${j} = new Float64Array(n);`);
      put.push(read, `if (typeof x${j} !== 'number') return null;`, `c${j}[i] = x${j};`);
      out.push(`{ t: 'n', v: c${j} }`);
    } else if (t === 'b') {
      make.push(`const c${j} = new Uint8Array(n);`);
      put.push(read, `if (typeof x${j} !== 'boolean') return null;`, `c${j}[i] = x${j} ? 1 : 0;`);
      out.push(`{ t: 'b', v: c${j} }`);
    } else if (t === 's') {
      make.push(`const c${j} = new Array(n);`, `const l${j} = new Int32Array(n);`);
      put.push(read, `if (typeof x${j} !== 'string') return null;`, `c${j}[i] = x${j};`, `l${j}[i] = x${j}.length;`);
      out.push(`{ t: 's', text: c${j}.join(''), lengths: l${j} }`);
    } else {
      make.push(`const c${j} = new Array(n);`);
      put.push(`c${j}[i] = o[${JSON.stringify(keys[j])}];`);
      out.push(`{ t: 'a', v: c${j} }`);
    }
  });
  const body = `const n = values.length;\n${make.join('\n')}\nfor (let i = 0; i < n; i++) {\nconst o = values[i];\n${put.join('\n')}\n}\nreturn [${out.join(', ')}];`;
  p = new Function('values', body) as ColumnPacker;
  if (packers.size >= MAX_PACKERS) packers.clear();
  packers.set(id, p);
  return p;
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
