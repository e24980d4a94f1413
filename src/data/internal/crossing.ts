/**
 * What a structured clone would change in an element crossing to or from a worker thread, and
 * undoes: a Node `Buffer` arrives as a plain `Uint8Array` (same bytes, but `toString('base64')`
 * prints numbers), a `Batch` as a plain `{ data, shape, length }` object. Both are found where
 * plain objects and arrays lead to them (at any depth, each container once), recorded as paths,
 * and rebuilt on the other side around the same memory (no copy). Other class instances cannot be
 * rebuilt and arrive as plain objects (see the README's round-trip rules).
 *
 * Two more kinds are changed before the clone (`encodeAll`), in copies of the containers that
 * lead to them (the sender's element is never changed):
 * - a TensorFlow.js tensor, whose values a clone would not carry, crosses as `{ dtype, shape,
 *   data }` (its values copied once and transferred) and is rebuilt as a tensor (tensors.ts);
 * - a plain array of numbers with some non-integer among them (V8 keeps it as unboxed doubles)
 *   crosses inside one Float64Array shared by all such arrays of the elements sent together
 *   (a typed array and a transfer each cost about a µs, more than a short row's clone), and is
 *   rebuilt as an array of unboxed doubles: a clone would give the fn an array of boxed numbers,
 *   which makes every read of it slower. Exact: -0 and NaN
 *   survive. Only dense arrays with no other own properties qualify; holes, extra properties and
 *   mixed types are left to the clone, as are arrays of small integers (their clone keeps them
 *   unboxed).
 */
import { Batch } from './batch-class';
import { isTensor, tensorData, type TensorData, type TensorLike, type TensorMaker } from './tensors';

/** Key path from the element to a value: [] is the element itself. */
export type Path = (string | number)[];
/**
 * What to rebuild where: 0 a Buffer, 1 a Batch, 2 a tensor, 3 an array of numbers (its length
 * third; the value at the path is its offset in the crossing's one Float64Array, see `Encoded`).
 */
export type Marks = ([Path, 0 | 1 | 2] | [Path, 3, number])[];
export type MarkKind = 0 | 1 | 2 | 3;
/**
 * Makes a Batch around a clone's data and shape. The library rebuilds with its own class; a
 * tracer's worker thread rebuilds with the class of the copy of plumber-data the user's fn loads,
 * which is the one its `instanceof` checks see.
 */
export type BatchMaker = (data: Batch['data'], shape: number[]) => unknown;

const ownBatch: BatchMaker = (data, shape) => new Batch(data, shape);

function isPlain(x: object): boolean {
  const p = Object.getPrototypeOf(x);
  return p === Object.prototype || p === null;
}

/** The Buffers and Batches in `x` a clone would turn into plain values, or null when it holds none. */
export function crossingMarks(x: unknown): Marks | null {
  if (x === null || typeof x !== 'object') return null;
  if (Buffer.isBuffer(x)) return [[[], 0]];
  if (x instanceof Batch) return [[[], 1]];
  if (ArrayBuffer.isView(x) || !(Array.isArray(x) || isPlain(x))) return null;
  let found: Marks | null = null;
  // Allocated only for elements with nested containers: most elements are flat records.
  let seen: Set<object> | null = null;
  const walk = (v: object, path: Path): void => {
    const visit = (child: unknown, key: string | number): void => {
      if (child === null || typeof child !== 'object') return;
      if (Buffer.isBuffer(child)) (found ??= []).push([[...path, key], 0]);
      else if (child instanceof Batch) (found ??= []).push([[...path, key], 1]);
      else if (!ArrayBuffer.isView(child) && (Array.isArray(child) || isPlain(child))) {
        seen ??= new Set([x]);
        if (seen.has(child)) return;
        seen.add(child);
        walk(child, [...path, key]);
      }
    };
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) visit(v[i], i);
    else for (const k in v) if (Object.prototype.hasOwnProperty.call(v, k)) visit((v as Record<string, unknown>)[k], k);
  };
  walk(x, []);
  return found;
}

/** Fewest numbers in an array sent as a Float64Array: for shorter ones the mark and the typed array cost more than the clone's boxes. */
const MIN_NUMBERS = 8;

/**
 * A plain, dense array of numbers with no own property besides its indices, holding a value V8
 * stores as a double rather than a small integer (a fraction, -0, NaN, ±Infinity, beyond int32).
 * A hole reads as undefined and fails the number test.
 */
function isDoubleArray(v: unknown[]): boolean {
  const n = v.length;
  if (n < MIN_NUMBERS || Object.getPrototypeOf(v) !== Array.prototype) return false;
  let double = false;
  for (let i = 0; i < n; i++) {
    const x = v[i];
    if (typeof x !== 'number') return false;
    if (!double && ((x | 0) !== x || Object.is(x, -0))) double = true;
  }
  return double && Object.keys(v).length === n;
}

/** Elements ready to send, and what the receiver needs to rebuild them. */
export interface Encoded {
  /** The elements as they go: the originals, or copies of the containers where something was replaced. */
  items: unknown[];
  /** Per element, what to rebuild where (see `restoreAll`); undefined when nothing is. */
  marks?: (Marks | null)[];
  /** The values of the number arrays, one after another (marks of kind 3 say where). */
  numbers?: Float64Array;
  /** Buffers made here (tensor values, number arrays): the sender moves them. */
  transfer: ArrayBuffer[];
  /** The tensors encoded, for a sender that owns them to dispose once they are sent. */
  tensors: TensorLike[];
}

const CYCLE = Symbol('cycle');

/**
 * `x` ready to cross (see the file's comment), or its marks alone when it holds a cycle (the clone
 * keeps cycles; replacing inside one would break it).
 */
/** Number arrays found so far in one `encodeAll`, and the total of their lengths. */
interface Packing {
  arrays: number[][];
  length: number;
}

function encodeOne(x: unknown, transfer: ArrayBuffer[], tensors: TensorLike[], pack: Packing): { value: unknown; marks: Marks | null } {
  if (x === null || typeof x !== 'object') return { value: x, marks: null };
  let marks: Marks | null = null;
  // Allocated only for elements with nested containers or replacements: most elements are flat records.
  let done: Map<object, unknown> | null = null;
  let active: Set<object> | null = null;
  const transferAt = transfer.length;
  const tensorsAt = tensors.length;
  const packedAt = pack.arrays.length;
  const packedLength = pack.length;
  const enc = (v: object, path: Path): unknown => {
    if (Buffer.isBuffer(v)) {
      (marks ??= []).push([path, 0]);
      return v;
    }
    if (v instanceof Batch) {
      (marks ??= []).push([path, 1]);
      return v;
    }
    if (ArrayBuffer.isView(v)) return v;
    const isArray = Array.isArray(v);
    if (!isArray && !isPlain(v)) {
      if (!isTensor(v)) return v;
      let d = done?.get(v);
      if (d === undefined) {
        d = tensorData(v, transfer);
        tensors.push(v);
        (done ??= new Map()).set(v, d);
      }
      (marks ??= []).push([path, 2]);
      return d;
    }
    if (isArray && isDoubleArray(v)) {
      let offset = done?.get(v);
      if (offset === undefined) {
        offset = pack.length;
        pack.arrays.push(v as number[]);
        pack.length += (v as number[]).length;
        (done ??= new Map()).set(v, offset);
      }
      (marks ??= []).push([path, 3, (v as number[]).length]);
      return offset;
    }
    if (done?.has(v)) return done.get(v);
    if (path.length > 0) {
      active ??= new Set([x]);
      if (active.has(v)) throw CYCLE;
      active.add(v);
    }
    let copy: unknown[] | Record<string, unknown> | undefined;
    if (isArray) {
      let ac: unknown[] | undefined;
      const a = v as unknown[];
      for (let i = 0; i < a.length; i++) {
        const c = a[i];
        if (c === null || typeof c !== 'object') continue;
        const r = enc(c, [...path, i]);
        if (r !== c) (ac ??= a.slice())[i] = r;
      }
      copy = ac;
    } else {
      let oc: Record<string, unknown> | undefined;
      const o = v as Record<string, unknown>;
      for (const k in o) {
        if (!Object.prototype.hasOwnProperty.call(o, k)) continue;
        const c = o[k];
        if (c === null || typeof c !== 'object') continue;
        const r = enc(c, [...path, k]);
        if (r !== c) (oc ??= { ...o })[k] = r;
      }
      copy = oc;
    }
    active?.delete(v);
    const out = copy ?? v;
    if (path.length > 0) (done ??= new Map()).set(v, out);
    return out;
  };
  try {
    const value = enc(x, []);
    return { value, marks };
  } catch (e) {
    if (e !== CYCLE) throw e;
    transfer.length = transferAt;
    tensors.length = tensorsAt;
    pack.arrays.length = packedAt;
    pack.length = packedLength;
    return { value: x, marks: crossingMarks(x) };
  }
}

/** The elements `xs` ready to cross to another thread, never changing them (see the file's comment). */
export function encodeAll(xs: readonly unknown[]): Encoded {
  const transfer: ArrayBuffer[] = [];
  const tensors: TensorLike[] = [];
  const pack: Packing = { arrays: [], length: 0 };
  let items: unknown[] | undefined;
  let marks: (Marks | null)[] | undefined;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    if (x === null || typeof x !== 'object') continue;
    const e = encodeOne(x, transfer, tensors, pack);
    if (e.value !== x) (items ??= xs.slice())[i] = e.value;
    if (e.marks !== null) (marks ??= new Array<Marks | null>(xs.length).fill(null))[i] = e.marks;
  }
  const out: Encoded = { items: items ?? (xs as unknown[]), transfer, tensors };
  if (marks !== undefined) out.marks = marks;
  if (pack.arrays.length > 0) {
    const numbers = new Float64Array(pack.length);
    let o = 0;
    for (const a of pack.arrays) for (let i = 0; i < a.length; i++) numbers[o++] = a[i]!;
    out.numbers = numbers;
    transfer.push(numbers.buffer);
  }
  return out;
}

/** Rebuilds a value of each kind; the tensor maker is needed only when a tensor crossed. */
export interface Rebuilders {
  batch: BatchMaker;
  tensor?: TensorMaker;
  /** The crossing's `Encoded.numbers`, needed when a number array crossed. */
  numbers?: Float64Array;
}

/** Past this length an array rebuilt from `new Array(n)` would start in dictionary mode: grow it by push instead. */
const PREALLOCATE_MAX = 50_000;

/** A plain array of `n` values of `f` from `at`, stored by V8 as unboxed doubles. */
function numberArray(f: Float64Array, at: number, n: number): number[] {
  if (n > PREALLOCATE_MAX) {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push(f[at + i]!);
    return out;
  }
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = f[at + i]!;
  return out;
}

function rebuild(v: unknown, kind: MarkKind, length: number, r: Rebuilders): unknown {
  if (kind === 0) {
    const u = v as Uint8Array;
    return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
  }
  if (kind === 3) {
    if (r.numbers === undefined) throw new Error('an array of numbers crossed without its values');
    return numberArray(r.numbers, v as number, length);
  }
  if (kind === 2) {
    const t = v as TensorData;
    if (r.tensor === undefined) throw new Error('a tensor crossed, but no TensorFlow.js is known on this side to rebuild it');
    return r.tensor(t.data, t.shape, t.dtype);
  }
  const o = v as { data: Batch['data']; shape: number[] };
  return r.batch(o.data, o.shape);
}

/**
 * The clone `x` with the values `marks` names rebuilt (in place where they are nested). A value
 * the clone shares between two paths is rebuilt once, and shared as it was.
 */
export function restoreMarks(x: unknown, marks: Marks, r: Rebuilders = { batch: ownBatch }): unknown {
  // Keyed by the clone's value: a shared object, or a number array's offset.
  const done = marks.length > 1 ? new Map<unknown, unknown>() : undefined;
  const once = (v: unknown, kind: MarkKind, length: number): unknown => {
    if (done === undefined) return rebuild(v, kind, length, r);
    const key = kind === 3 ? `n${v as number}` : v;
    if (!done.has(key)) done.set(key, rebuild(v, kind, length, r));
    return done.get(key);
  };
  let out = x;
  for (const m of marks) {
    const [path, kind] = m;
    const length = m[1] === 3 ? m[2] : 0;
    if (path.length === 0) {
      out = once(x, kind, length);
      continue;
    }
    let parent = x as Record<string | number, unknown>;
    for (let i = 0; i < path.length - 1; i++) parent = parent[path[i]!] as Record<string | number, unknown>;
    const last = path[path.length - 1]!;
    parent[last] = once(parent[last], kind, length);
  }
  return out;
}

/** Marks of each element, or undefined when none holds anything to rebuild (the common case: no array is sent). */
export function marksOf(xs: readonly unknown[]): (Marks | null)[] | undefined {
  let out: (Marks | null)[] | undefined;
  for (let i = 0; i < xs.length; i++) {
    const m = crossingMarks(xs[i]);
    if (m === null) continue;
    out ??= new Array<Marks | null>(xs.length).fill(null);
    out[i] = m;
  }
  return out;
}

/**
 * Rebuilds each element of `xs` in place by its marks: Batches with `makeBatch`, tensors with
 * `more.tensor`, number arrays from `more.numbers` (the sender's `Encoded.numbers`).
 */
export function restoreAll(xs: unknown[], marks: readonly (Marks | null)[] | undefined, makeBatch: BatchMaker = ownBatch, more: Omit<Rebuilders, 'batch'> = {}): void {
  if (marks === undefined) return;
  const r: Rebuilders = { batch: makeBatch, ...more };
  for (let i = 0; i < xs.length; i++) {
    const m = marks[i];
    if (m) xs[i] = restoreMarks(xs[i], m, r);
  }
}

/**
 * The buffers a worker's results move to the main thread instead of copying (worker.ts): whole,
 * unshared ArrayBuffers, each once, where plain objects and arrays (three levels below the
 * results' array) or the `data` of another object (a Batch) lead to them. A view over part of a
 * buffer is copied by the clone, with the whole buffer behind it.
 */
export function movableBuffers(x: unknown, into: Set<ArrayBuffer>, depth = 0): void {
  if (x === null || typeof x !== 'object') return;
  if (ArrayBuffer.isView(x)) {
    const b = x.buffer;
    if (b instanceof ArrayBuffer && x.byteOffset === 0 && x.byteLength === b.byteLength) into.add(b);
    return;
  }
  if (x instanceof ArrayBuffer) {
    into.add(x);
    return;
  }
  if (depth >= 3) return;
  if (Array.isArray(x)) for (const v of x) movableBuffers(v, into, depth + 1);
  else if (Object.getPrototypeOf(x) === Object.prototype) for (const k in x) movableBuffers((x as Record<string, unknown>)[k], into, depth + 1);
  else {
    const data = (x as { data?: unknown }).data;
    if (data !== undefined) movableBuffers(data, into, depth + 1);
  }
}

type ViewClass = new (length: number) => ArrayBufferView;

/**
 * What a structured clone copies of `x` once the `moved` buffers are transferred: `x` with every
 * typed array, DataView or ArrayBuffer over a moved buffer made empty (a transfer copies none of
 * its bytes), in copies of the containers leading to them; other objects are spread into plain
 * ones, as a clone makes them. For pricing a crossing by what it copies (the runner's move probe).
 */
export function withoutMoved(x: unknown, moved: ReadonlySet<ArrayBuffer>, seen = new Map<object, unknown>()): unknown {
  if (moved.size === 0 || x === null || typeof x !== 'object') return x;
  if (x instanceof ArrayBuffer) return moved.has(x) ? new ArrayBuffer(0) : x;
  if (ArrayBuffer.isView(x)) {
    if (!(x.buffer instanceof ArrayBuffer) || !moved.has(x.buffer)) return x;
    return x instanceof DataView ? new DataView(new ArrayBuffer(0)) : new (x.constructor as ViewClass)(0);
  }
  if (x instanceof Map || x instanceof Set || x instanceof Date || x instanceof RegExp) return x;
  // A value reached twice (or a cycle) is one object in the clone: keep it one here.
  if (seen.has(x)) return seen.get(x);
  if (Array.isArray(x)) {
    const a: unknown[] = [];
    seen.set(x, a);
    for (const v of x) a.push(withoutMoved(v, moved, seen));
    return a;
  }
  const out: Record<string, unknown> = {};
  seen.set(x, out);
  for (const k in x) if (Object.prototype.hasOwnProperty.call(x, k)) out[k] = withoutMoved((x as Record<string, unknown>)[k], moved, seen);
  return out;
}

/**
 * The index of the element of `xs` that `encodeAll` cannot send (a disposed tensor), for an error
 * that names it; the last index when none fails alone.
 */
export function failingElement(xs: readonly unknown[]): number {
  const throws = (x: unknown): boolean => {
    try {
      encodeAll([x]);
      return false;
    } catch {
      return true;
    }
  };
  let i = 0;
  while (i < xs.length - 1 && !throws(xs[i])) i++;
  return i;
}
