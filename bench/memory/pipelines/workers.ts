/**
 * A worker map with high parallelism: 8 worker threads each turning an index into 64 kB of
 * doubles (a fixed xorshift, the same work and values every call), batched by 8. What it holds is
 * mostly the threads themselves and the elements of their tasks in flight.
 */
import { range } from 'plumber-data';

export function expand(i: number): Float64Array {
  const out = new Float64Array(8192);
  let x = (i % 100_000) + 1;
  for (let k = 0; k < out.length; k++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[k] = (x >>> 0) / 4294967296;
  }
  return out;
}

export const expanded = range(Infinity).map(expand, { placement: 'worker', module: __filename, parallelism: 8 }).batch(8);
