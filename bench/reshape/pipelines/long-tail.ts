// A long-tailed per-element cost with ordered output (issue 54, let slow elements pass): each
// element awaits a lookup (a remote store, say) that takes 2 ms, but one in twenty takes 40 ms —
// which ones is seeded. In order, the 2 × calls-in-flight results the map holds wait behind the
// slow one; `deterministic: false` hands each on as it finishes (the order of the output changes,
// the elements do not). Finite (a pass of ELEMENTS); the small CPU work is JIT-stable (WORKLOADS.md).
import { range } from 'plumber-data';

const ELEMENTS = 60_000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** int32 multiply-xor steps from a small seed: stays optimised. */
function spin(seed: number, iterations: number): number {
  let h = seed | 0;
  for (let i = 0; i < iterations; i++) h = Math.imul(h ^ i, 0x01000193) | 0;
  return h;
}

/** Whether element i is one of the slow ones: about 1 in 20, scattered by a seeded integer hash (a multiply alone leaves its low bits in runs). */
export function isSlow(i: number): boolean {
  let h = Math.imul(i ^ 0x5bd1e995, 0x01000193);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return (h >>> 0) % 20 === 0;
}

/** The lookup: 2 ms, or 40 ms for the slow elements, then a little work on the answer. */
export async function lookup(i: number): Promise<{ id: number; value: number }> {
  await sleep(isSlow(i) ? 40 : 2);
  return { id: i, value: spin(i, 20_000) };
}

export const pipeline = range(ELEMENTS).map(lookup, { parallelism: 8 }).batch(16);
