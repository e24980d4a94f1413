/**
 * What a structured clone would change in an element crossing to or from a worker thread, and
 * undoes: a Node `Buffer` arrives as a plain `Uint8Array` (same bytes, but `toString('base64')`
 * prints numbers), a `Batch` as a plain `{ data, shape, length }` object. Both are found where
 * plain objects and arrays lead to them (at any depth, each container once), recorded as paths,
 * and rebuilt on the other side around the same memory (no copy). Other class instances cannot be
 * rebuilt and arrive as plain objects (see the README's round-trip rules).
 */
import { Batch } from './batch-class';

/** Key path from the element to a value: [] is the element itself. */
export type Path = (string | number)[];
/** What to rebuild where: 0 a Buffer, 1 a Batch. */
export type Marks = [Path, 0 | 1][];
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

function rebuild(v: unknown, kind: 0 | 1, makeBatch: BatchMaker): unknown {
  if (kind === 0) {
    const u = v as Uint8Array;
    return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
  }
  const o = v as { data: Batch['data']; shape: number[] };
  return makeBatch(o.data, o.shape);
}

/** The clone `x` with the values `marks` names rebuilt (in place where they are nested). */
export function restoreMarks(x: unknown, marks: Marks, makeBatch: BatchMaker = ownBatch): unknown {
  let out = x;
  for (const [path, kind] of marks) {
    if (path.length === 0) {
      out = rebuild(x, kind, makeBatch);
      continue;
    }
    let parent = x as Record<string | number, unknown>;
    for (let i = 0; i < path.length - 1; i++) parent = parent[path[i]!] as Record<string | number, unknown>;
    const last = path[path.length - 1]!;
    parent[last] = rebuild(parent[last], kind, makeBatch);
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

/** Rebuilds each element of `xs` in place by its marks. */
export function restoreAll(xs: unknown[], marks: readonly (Marks | null)[] | undefined, makeBatch: BatchMaker = ownBatch): void {
  if (marks === undefined) return;
  for (let i = 0; i < xs.length; i++) {
    const m = marks[i];
    if (m) xs[i] = restoreMarks(xs[i], m, makeBatch);
  }
}
