/**
 * A canonical digest of one pipeline element, for the equivalence check (sample.ts): two elements
 * get the same digest exactly when their structured serialisations are equal. Object keys are
 * sorted, Map entries and Set members are compared as sorted multisets, Buffers, typed arrays and
 * ArrayBuffers are compared by their bytes (and their kind), and -0, NaN and undefined are kept
 * apart from 0, null and a missing key only where a structured clone keeps them apart.
 */
import { createHash, type Hash } from 'node:crypto';

/** Thrown when an element holds what has no structured serialisation (a function, a symbol). */
export class NotComparable extends Error {}

/** The digest of one element (hex sha-256 of its canonical serialisation). */
export function elementDigest(value: unknown): string {
  const h = createHash('sha256');
  write(h, value, new Set());
  return h.digest('hex');
}

function write(h: Hash, v: unknown, seen: Set<object>): void {
  switch (typeof v) {
    case 'undefined':
      return void h.update('u;');
    case 'boolean':
      return void h.update(v ? 't;' : 'f;');
    case 'number':
      return void h.update(`n${Object.is(v, -0) ? '-0' : String(v)};`);
    case 'bigint':
      return void h.update(`b${v.toString()};`);
    case 'string':
      return void h.update(`s${v.length}:${v};`);
    case 'function':
    case 'symbol':
      throw new NotComparable(`an element holds a ${typeof v}, which has no structured serialisation`);
  }
  if (v === null) return void h.update('z;');
  const o = v as object;
  // A cycle is written by its position, not followed.
  if (seen.has(o)) return void h.update('cycle;');
  seen.add(o);
  try {
    writeObject(h, o, seen);
  } finally {
    seen.delete(o);
  }
}

function writeBytes(h: Hash, tag: string, bytes: Uint8Array): void {
  h.update(`${tag}${bytes.byteLength}:`);
  h.update(bytes);
  h.update(';');
}

function writeObject(h: Hash, o: object, seen: Set<object>): void {
  if (ArrayBuffer.isView(o)) return writeBytes(h, `v${o.constructor.name}`, new Uint8Array(o.buffer, o.byteOffset, o.byteLength));
  if (o instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && o instanceof SharedArrayBuffer)) return writeBytes(h, 'ab', new Uint8Array(o));
  if (o instanceof Date) return void h.update(`d${o.getTime()};`);
  if (o instanceof RegExp) return void h.update(`r${String(o)};`);
  if (Array.isArray(o)) {
    h.update(`a${o.length}[`);
    for (let i = 0; i < o.length; i++) write(h, o[i], seen);
    return void h.update(']');
  }
  if (o instanceof Map)
    return writeSorted(
      h,
      'm',
      [...o].map(([k, val]) => digestOf([k, val], seen)),
    );
  if (o instanceof Set)
    return writeSorted(
      h,
      'S',
      [...o].map((val) => digestOf(val, seen)),
    );
  if (o instanceof Error) return void h.update(`e${o.name}:${o.message};`);
  const keys = Object.keys(o).sort();
  h.update(`o${keys.length}{`);
  for (const k of keys) {
    h.update(`${k.length}:${k}=`);
    write(h, (o as Record<string, unknown>)[k], seen);
  }
  h.update('}');
}

/** plumber-data's Batch, known by its shape (the runner does not import the library's internals). */
interface BatchLike {
  data: ArrayBufferView;
  shape: number[];
  length: number;
  row(i: number): unknown;
}

function isBatch(v: unknown): v is BatchLike {
  const b = v as Partial<BatchLike> | null;
  return typeof b === 'object' && b !== null && typeof b.row === 'function' && Array.isArray(b.shape) && ArrayBuffer.isView(b.data) && typeof b.length === 'number';
}

/**
 * The rows a root element groups, as `batch()` stacked them: an array's items, a Batch's rows, an
 * object of equally long Batches as one object per row (plumber-data's `unstack`); any other
 * element is its own one row. Elements a change of order regroups (a batch after a map whose fast
 * calls pass slow ones) are then compared by their rows, which no regrouping changes.
 */
export function rowsOf(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (isBatch(v)) return Array.from({ length: v.length }, (_, i) => v.row(i));
  if (typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype) {
    const entries = Object.entries(v);
    const n = entries.length > 0 && entries.every(([, b]) => isBatch(b)) ? (entries[0]![1] as BatchLike).length : -1;
    if (n >= 0 && entries.every(([, b]) => (b as BatchLike).length === n)) {
      return Array.from({ length: n }, (_, i) => Object.fromEntries(entries.map(([k, b]) => [k, (b as BatchLike).row(i)])));
    }
  }
  return [v];
}

function digestOf(v: unknown, seen: Set<object>): string {
  const h = createHash('sha256');
  write(h, v, seen);
  return h.digest('hex');
}

function writeSorted(h: Hash, tag: string, digests: string[]): void {
  h.update(`${tag}${digests.length}{${digests.sort().join(',')}}`);
}
