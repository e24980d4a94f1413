/**
 * Whether an element crosses to a worker thread as it is. A worker gets a structured clone of
 * each input element and the main thread a clone of each result, and a clone keeps data, not
 * behaviour: a class instance arrives as a plain object (its methods and `instanceof` gone),
 * symbol-keyed properties are dropped, functions cannot be copied at all. (Non-enumerable
 * properties are dropped too, but neither a deep comparison nor a fn that spreads or iterates its
 * element sees them.) plumber-data rebuilds two kinds of value on the far side — Node Buffers
 * (a clone makes plain Uint8Arrays of them) and its own Batches — where plain objects and arrays
 * lead to them (its crossing.ts); inside anything else they arrive plain too. A fn whose elements
 * change across threads cannot move without changing what the pipeline computes — sometimes with
 * an error, sometimes silently — so the model never plans that move.
 */
import { isDeepStrictEqual } from 'node:util';
import type { MoveBlocked } from '../shared/profile';

/** How deep the search for the changed part goes (a record of records of arrays…). */
const DEPTH = 4;
/** Properties or items of one object looked at in that search. */
const WIDTH = 64;

/**
 * What a copy between threads changes in `value`, on the `side` of the fn it is; undefined when a
 * structured clone of it, with what plumber-data rebuilds, is deep-equal to it, prototypes included.
 */
export function copyChange(value: unknown, side: MoveBlocked['side']): MoveBlocked | undefined {
  const copy = crossCopy(value);
  if (!copy.ok) return { side, change: 'uncloneable', what: uncloneablePart(value, DEPTH) ?? 'values' };
  if (isDeepStrictEqual(copy.value, value)) return undefined;
  return { side, ...(changedPart(value, copy.value, DEPTH) ?? { change: 'altered', what: 'values' }) };
}

/**
 * `value` as a worker thread (or, for a result, the main thread) gets it from plumber-data: a
 * structured clone with the Buffers and Batches the library rebuilds rebuilt, around the clone's
 * own bytes (so a fn that changes it changes no original). Not ok when it cannot be cloned.
 */
export function crossCopy(value: unknown): { ok: true; value: unknown } | { ok: false } {
  let copy: unknown;
  try {
    copy = structuredClone(value);
  } catch {
    return { ok: false };
  }
  return { ok: true, value: asRebuilt(value, copy) };
}

/**
 * plumber-data's `Batch` (the output of `batch()`), known by its shape rather than by class: the
 * pipeline's copy of the library is not the runner's.
 */
function isLibraryBatch(v: object): boolean {
  const b = v as { constructor?: { name?: unknown }; data?: unknown; shape?: unknown; row?: unknown };
  return b.constructor?.name === 'Batch' && ArrayBuffer.isView(b.data) && Array.isArray(b.shape) && typeof b.row === 'function';
}

/** A value plumber-data rebuilds after a clone, where plain objects and arrays lead to it. */
function isRebuilt(v: object): boolean {
  return Buffer.isBuffer(v) || isLibraryBatch(v);
}

function isPlainContainer(v: object): boolean {
  if (Array.isArray(v)) return true;
  const p = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

/** Where the Buffers (0) and Batches (1) plain objects and arrays lead to in `value` are: what the library rebuilds after a clone. Null when none. */
export function rebuiltPaths(value: unknown): [(string | number)[], 0 | 1][] | null {
  if (!isObject(value)) return null;
  if (isRebuilt(value)) return [[[], Buffer.isBuffer(value) ? 0 : 1]];
  if (ArrayBuffer.isView(value) || !isPlainContainer(value)) return null;
  let out: [(string | number)[], 0 | 1][] | null = null;
  const seen = new Set<object>();
  const walk = (v: object, path: (string | number)[]): void => {
    if (seen.has(v)) return;
    seen.add(v);
    const keys = Array.isArray(v) ? [...v.keys()] : Object.keys(v);
    for (const k of keys) {
      const child = (v as Record<string | number, unknown>)[k];
      if (!isObject(child)) continue;
      if (isRebuilt(child)) (out ??= []).push([[...path, k], Buffer.isBuffer(child) ? 0 : 1]);
      else if (!ArrayBuffer.isView(child) && isPlainContainer(child)) walk(child, [...path, k]);
    }
  };
  walk(value, []);
  return out;
}

/** `copy`, the clone of `original`, as the library rebuilds it: a Buffer over its bytes, a Batch of the pipeline's own class. */
function rebuilt(original: object, copy: object): unknown {
  if (Buffer.isBuffer(original)) {
    const u = copy as Uint8Array;
    return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
  }
  const c = copy as { data: unknown; shape: unknown };
  return new (original.constructor as new (data: unknown, shape: unknown) => unknown)(c.data, c.shape);
}

/**
 * The clone `copy` of `value` as plumber-data hands it on: each Buffer and Batch that plain
 * objects and arrays lead to (`rebuiltPaths` of the original) rebuilt in the copy.
 */
function asRebuilt(value: unknown, copy: unknown): unknown {
  const paths = rebuiltPaths(value);
  if (paths === null) return copy;
  let out = copy;
  for (const [path] of paths) {
    if (path.length === 0) {
      out = rebuilt(value as object, copy as object);
      continue;
    }
    let original = value as Record<string | number, unknown>;
    let parent = copy as Record<string | number, unknown>;
    for (let i = 0; i < path.length - 1; i++) {
      original = original[path[i]!] as Record<string | number, unknown>;
      parent = parent[path[i]!] as Record<string | number, unknown>;
    }
    const last = path[path.length - 1]!;
    parent[last] = rebuilt(original[last] as object, parent[last] as object);
  }
  return out;
}

function isObject(v: unknown): v is object {
  return v !== null && typeof v === 'object';
}

/** The plural noun for what a class's instances are called in words: "Sample objects". */
function classWords(v: object): string {
  const name = (v as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? `${name} objects` : 'objects made by a class';
}

/** Own values of an object to look inside: array items, Map values, plain properties. */
function children(v: object): unknown[] {
  if (Array.isArray(v)) return v.slice(0, WIDTH);
  if (v instanceof Map) return [...v.values()].slice(0, WIDTH);
  if (v instanceof Set) return [...v].slice(0, WIDTH);
  return Object.keys(v)
    .slice(0, WIDTH)
    .map((k) => (v as Record<string, unknown>)[k]);
}

/** The first part of `value` its clone `copy` (as rebuilt) does not reproduce, described. */
function changedPart(value: unknown, copy: unknown, depth: number): Omit<MoveBlocked, 'side'> | undefined {
  if (!isObject(value) || !isObject(copy)) return undefined;
  if (Buffer.isBuffer(value) && !Buffer.isBuffer(copy)) return { change: 'buffer', what: 'Buffers' };
  if (Object.getPrototypeOf(value) !== Object.getPrototypeOf(copy)) return { change: 'class', what: classWords(value) };
  if (depth === 0 || ArrayBuffer.isView(value)) return undefined;
  const keys = Array.isArray(value) || value instanceof Map || value instanceof Set ? undefined : Object.keys(value).slice(0, WIDTH);
  const vs = children(value);
  const cs = keys ? keys.map((k) => (copy as Record<string, unknown>)[k]) : children(copy);
  for (let i = 0; i < vs.length; i++) {
    const found = changedPart(vs[i], cs[i], depth - 1);
    if (found !== undefined) return found;
  }
  if (Object.getOwnPropertySymbols(value).length > 0) return { change: 'altered', what: 'properties keyed by symbols' };
  return undefined;
}

/** What in `value` a structured clone refuses: "functions", "Promises", "WeakMaps"… */
function uncloneablePart(value: unknown, depth: number): string | undefined {
  if (typeof value === 'function') return 'functions';
  if (typeof value === 'symbol') return 'symbols';
  if (!isObject(value)) return undefined;
  if (typeof (value as { then?: unknown }).then === 'function') return 'promises';
  if (value instanceof WeakMap || value instanceof WeakSet) return `${value.constructor.name}s`;
  if (depth === 0) return undefined;
  for (const c of children(value)) {
    const found = uncloneablePart(c, depth - 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
