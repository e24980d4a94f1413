/**
 * Whether an element crosses to a worker thread as it is. A worker gets a structured clone of
 * each input element and the main thread a clone of each result, and a clone keeps data, not
 * behaviour: a class instance arrives as a plain object (its methods and `instanceof` gone), a
 * Node Buffer as a plain Uint8Array (`toString()` then prints numbers), symbol-keyed properties
 * are dropped; functions cannot be copied at all. (Non-enumerable properties are dropped too, but
 * neither a deep comparison nor a fn that spreads or iterates its element sees them.) A fn whose elements change that way cannot move without changing what the pipeline
 * computes — sometimes with an error, sometimes silently — so the model never plans that move.
 */
import { isDeepStrictEqual } from 'node:util';
import type { MoveBlocked } from '../shared/profile';

/** How deep the search for the changed part goes (a record of records of arrays…). */
const DEPTH = 4;
/** Properties or items of one object looked at in that search. */
const WIDTH = 64;

/**
 * What a copy between threads changes in `value`, on the `side` of the fn it is; undefined when a
 * structured clone of it is deep-equal to it, prototypes included.
 */
export function copyChange(value: unknown, side: MoveBlocked['side'], options: { plainBatches?: boolean } = {}): MoveBlocked | undefined {
  let copy: unknown;
  try {
    copy = structuredClone(value);
  } catch {
    return { side, change: 'uncloneable', what: uncloneablePart(value, DEPTH) ?? 'values' };
  }
  if (isDeepStrictEqual(copy, value)) return undefined;
  return { side, ...(changedPart(value, copy, DEPTH, options.plainBatches === true) ?? { change: 'altered', what: 'values' }) };
}

/**
 * plumber-data's `Batch` (the output of `batch()`), known by its shape rather than by class: the
 * pipeline's copy of the library is not the runner's. A worker fn gets one as the plain
 * `{ data, shape, length }` object the library documents.
 */
function isLibraryBatch(v: object): boolean {
  const b = v as { constructor?: { name?: unknown }; data?: unknown; shape?: unknown; row?: unknown };
  return b.constructor?.name === 'Batch' && ArrayBuffer.isView(b.data) && Array.isArray(b.shape) && typeof b.row === 'function';
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

/**
 * The first part of `value` its clone `copy` does not reproduce, described. With `plainBatches`,
 * a library Batch arriving as its plain object is no change: the fn was seen to work on such copies.
 */
function changedPart(value: unknown, copy: unknown, depth: number, plainBatches: boolean): Omit<MoveBlocked, 'side'> | undefined {
  if (!isObject(value) || !isObject(copy)) return undefined;
  if (Buffer.isBuffer(value) && !Buffer.isBuffer(copy)) return { change: 'buffer', what: 'Buffers' };
  if (plainBatches && isLibraryBatch(value)) return undefined;
  if (Object.getPrototypeOf(value) !== Object.getPrototypeOf(copy)) return { change: 'class', what: classWords(value) };
  if (depth === 0 || ArrayBuffer.isView(value)) return undefined;
  const keys = Array.isArray(value) || value instanceof Map || value instanceof Set ? undefined : Object.keys(value).slice(0, WIDTH);
  const vs = children(value);
  const cs = keys ? keys.map((k) => (copy as Record<string, unknown>)[k]) : children(copy);
  for (let i = 0; i < vs.length; i++) {
    const found = changedPart(vs[i], cs[i], depth - 1, plainBatches);
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
