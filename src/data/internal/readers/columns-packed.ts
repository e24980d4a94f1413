/**
 * A column of plain values packed for a worker crossing: numbers and booleans in typed arrays
 * (moved, not copied), strings as one text with their lengths (one string cloned instead of one per
 * row), anything else (nulls, mixed kinds, nested values) as the array it is (cloned). Unpacked, a
 * column gives the same values in the same order: numbers as doubles (−0 and NaN kept), strings
 * with the same UTF-16 code units.
 */
import { rowBuilder } from './row-builder';

export type ValueColumn = { t: 'n'; v: Float64Array } | { t: 'b'; v: Uint8Array } | { t: 's'; text: string; lengths: Int32Array } | { t: 'a'; v: unknown[] };

/** The kind every value shares ('n', 'b' or 's'), or 'a'. */
function kindOf(values: ArrayLike<unknown>): ValueColumn['t'] {
  if (values.length === 0) return 'a';
  const first = typeof values[0];
  const t = first === 'number' ? 'n' : first === 'boolean' ? 'b' : first === 'string' ? 's' : 'a';
  if (t === 'a') return t;
  for (let i = 1; i < values.length; i++) if (typeof values[i] !== first) return 'a';
  return t;
}

export function packColumn(values: unknown[]): ValueColumn {
  const n = values.length;
  switch (kindOf(values)) {
    case 'n': {
      const v = new Float64Array(n);
      for (let i = 0; i < n; i++) v[i] = values[i] as number;
      return { t: 'n', v };
    }
    case 'b': {
      const v = new Uint8Array(n);
      for (let i = 0; i < n; i++) v[i] = values[i] === true ? 1 : 0;
      return { t: 'b', v };
    }
    case 's': {
      const lengths = new Int32Array(n);
      for (let i = 0; i < n; i++) lengths[i] = (values[i] as string).length;
      return { t: 's', text: (values as string[]).join(''), lengths };
    }
    default:
      return { t: 'a', v: values };
  }
}

/** The buffers a packed column moves. */
export function columnBuffers(c: ValueColumn): ArrayBuffer[] {
  if (c.t === 'n' || c.t === 'b') return [c.v.buffer as ArrayBuffer];
  if (c.t === 's') return [c.lengths.buffer as ArrayBuffer];
  return [];
}

/** A column's values from row `start` to `end` (not included), indexed from 0. */
export type ColumnSlice = (start: number, end: number) => ArrayLike<unknown>;

/** Slices of a column as it arrived: a typed array's are views, an array's are copies of the range. */
export function arraySlice(col: ArrayLike<unknown>): ColumnSlice {
  if (ArrayBuffer.isView(col)) return (s, e) => (col as unknown as Uint8Array).subarray(s, e);
  if (Array.isArray(col)) return (s, e) => col.slice(s, e);
  return (s, e) => Array.prototype.slice.call(col, s, e);
}

/** Slices of a packed column (strings cut from the text only for the rows asked for). */
export function columnSlice(c: ValueColumn): ColumnSlice {
  if (c.t === 'n' || c.t === 'a') return arraySlice(c.v);
  if (c.t === 'b') {
    const v = c.v;
    return (s, e) => {
      const out = new Array<boolean>(e - s);
      for (let i = s; i < e; i++) out[i - s] = v[i] === 1;
      return out;
    };
  }
  // Where each string starts in the text, once per column.
  const lengths = c.lengths;
  const starts = new Int32Array(lengths.length + 1);
  for (let i = 0; i < lengths.length; i++) starts[i + 1] = starts[i] + lengths[i];
  const text = c.text;
  return (s, e) => {
    const out = new Array<string>(e - s);
    for (let i = s; i < e; i++) out[i - s] = text.slice(starts[i], starts[i + 1]);
    return out;
  };
}

/**
 * A packed chunk's elements, made a range at a time when the reader takes them: made all at once,
 * a row group's 10,000 rows outlived the young generation (they wait their turn) and the reader's
 * thread spent longer collecting them than making them.
 */
export interface Unpacked<T = unknown> {
  count: number;
  take(start: number, end: number): T[];
}

/** Every element at once (formats whose packing is read front to back), handed out a range at a time. */
export function unpackedArray<T>(items: T[]): Unpacked<T> {
  return { count: items.length, take: (s, e) => (s === 0 && e === items.length ? items : items.slice(s, e)) };
}

/** Rows keyed by `keys` (or arrays when null) from column slices. */
export function unpackedRows(keys: readonly string[] | null, columns: ColumnSlice[], count: number): Unpacked {
  const build = keys === null ? null : rowBuilder(keys);
  const width = columns.length;
  return {
    count,
    take(s, e) {
      const cols = columns.map((f) => f(s, e));
      const out = new Array<unknown>(e - s);
      for (let r = 0; r < out.length; r++) {
        if (build !== null) out[r] = build(cols, r);
        else {
          const a = new Array<unknown>(width);
          for (let k = 0; k < width; k++) a[k] = cols[k][r];
          out[r] = a;
        }
      }
      return out;
    },
  };
}
