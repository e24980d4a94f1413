/**
 * What an element keeps alive in memory, measured: the growth of the heap (V8's and the array
 * buffers' backing stores) from holding structured clones of sampled elements, between full
 * garbage collections. The library's byte counters are a cheap estimate made for throughput (a
 * typed array's bytes, a string's length, objects one level deep) and see nothing inside a Map or
 * a Set; what a cache holds must be known better than that, or a cache "of 17 MB" takes 480.
 *
 * Copies, not the elements themselves: the sampled elements are shared with whatever else holds
 * them (the tracer's reservoir), so only fresh copies show their own size. A copy flattens a
 * string sliced from a larger one, which the original would keep alive whole: an element can only
 * hold more than this, never less, for that reason.
 */
import * as v8 from 'node:v8';
import * as vm from 'node:vm';

/** Heap growth a group's copies aim for: below a few MB allocation granularity dominates (4 copies of a 16 KiB array read 51 KiB each). */
const TARGET_BYTES = 4 * 1024 * 1024;
/** Copies of a group's values, at least and at most, whatever their size. */
const MIN_COPIES = 256;
const MAX_COPIES = 4096;
/** The most a group's copies may take by their serialised size (the heap holds more: a Map 7x). */
const MAX_SERIALISED_BYTES = 16 * 1024 * 1024;

let collect: (() => void) | undefined | null = null;

/** A full garbage collection, where V8 lets the process ask for one. */
export function gc(): (() => void) | undefined {
  if (collect === null) {
    try {
      v8.setFlagsFromString('--expose-gc');
      const fn: unknown = vm.runInNewContext('gc');
      collect = typeof fn === 'function' ? (fn as () => void) : undefined;
    } catch {
      collect = undefined;
    }
  }
  return collect;
}

/**
 * Bytes held once garbage is gone. Collected twice: V8 frees array buffers' backing stores on a
 * background thread after a collection, and the next collection finishes that sweep; read after
 * one, buffers that earlier work left behind could still count, and vanish between two readings.
 */
function settledBytes(collectNow: () => void): number {
  collectNow();
  collectNow();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/**
 * Copies of a group to hold: enough to grow the heap by about TARGET_BYTES, judged by serialised
 * size, at least MIN_COPIES of small values, never more than MAX_SERIALISED_BYTES of them (16
 * copies of a 1 MB image), and each value at least once.
 */
export function copiesFor(values: readonly unknown[]): number {
  let bytes = 0;
  for (const v of values) bytes += v8.serialize(v).length;
  const each = Math.max(64, bytes / values.length);
  const wanted = Math.min(MAX_COPIES, Math.max(MIN_COPIES, Math.ceil(TARGET_BYTES / each)));
  return Math.max(values.length, Math.min(wanted, Math.floor(MAX_SERIALISED_BYTES / each)));
}

/**
 * Bytes of memory one value of each group keeps alive, on average, in one series of readings
 * (each a pair of full collections, the costly part): undefined for a group that is empty or
 * cannot be copied, and for all when the runtime gives no way to collect garbage on demand.
 */
export function heapBytesPerElement(groups: readonly (readonly unknown[])[]): (number | undefined)[] {
  const out: (number | undefined)[] = groups.map(() => undefined);
  const collectNow = gc();
  if (collectNow === undefined || groups.every((g) => g.length === 0)) return out;
  // Every group's copies stay alive until the last reading: each reading counts only its own.
  const held: unknown[][] = [];
  let before = settledBytes(collectNow);
  groups.forEach((values, k) => {
    if (values.length === 0) return;
    let copies: unknown[];
    try {
      const n = copiesFor(values);
      copies = new Array(n);
      for (let i = 0; i < n; i++) copies[i] = structuredClone(values[i % values.length]);
    } catch {
      return;
    }
    held.push(copies);
    const after = settledBytes(collectNow);
    out[k] = Math.max(0, Math.round((after - before) / copies.length));
    before = after;
  });
  return out;
}
