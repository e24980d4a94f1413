/**
 * What plumber-data's `cache(path)` would pay per element after an operator, measured on the
 * elements the operator handed on for the sample: the file stores each element as
 * `v8.serialize(element)` (src/data/internal/ops/cache.ts), so the first pass serialises every
 * element and each later pass deserialises it. Timed in rounds over the sample until a budget is
 * spent, the fastest round kept (as the move probe times its clones): a round that a collection
 * or another thread interrupted says nothing about the work. The disk's own time is not measured
 * here (the model divides the bytes by the machine's measured read bandwidth).
 */
import { deserialize, serialize } from 'node:v8';
import type { DiskCacheCost } from '../shared/profile';

/** Rounds over the sample, at least, and the most wall time the timing may take per operator. */
const MIN_ROUNDS = 3;
const BUDGET_MS = 60;

/** Per-element cost of writing and reading `values` through a disk cache; undefined when any cannot be serialised. */
export function diskCacheCost(values: readonly unknown[]): DiskCacheCost | undefined {
  if (values.length === 0) return undefined;
  let bodies: Buffer[];
  try {
    bodies = values.map((v) => serialize(v));
  } catch {
    // cache(path) would fail on these elements: no disk cost to price.
    return undefined;
  }
  let bytes = 0;
  for (const b of bodies) bytes += b.length;
  let write = Infinity;
  let read = Infinity;
  const start = performance.now();
  for (let round = 0; round < MIN_ROUNDS || performance.now() - start < BUDGET_MS; round++) {
    let t0 = performance.now();
    for (const v of values) serialize(v);
    write = Math.min(write, performance.now() - t0);
    t0 = performance.now();
    for (const b of bodies) deserialize(b);
    read = Math.min(read, performance.now() - t0);
    if (round > 1000) break;
  }
  const n = values.length;
  return { samples: n, serializedBytes: Math.round(bytes / n), writeSeconds: write / 1000 / n, readSeconds: read / 1000 / n };
}
