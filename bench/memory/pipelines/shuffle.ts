/**
 * A big shuffle buffer of large elements: 6,000 records of 32 kB (a Float64Array of 4,096 values
 * made from the index, so the data is the same every run), shuffled through a buffer of 3,000
 * (≈ 100 MB once full), batched by 32.
 */
import { range } from 'plumber-data';

export function makeRecord(i: number): { id: number; values: Float64Array } {
  const values = new Float64Array(4096);
  let x = i + 1;
  // A fixed xorshift per element: the same work and the same values every call.
  for (let k = 0; k < values.length; k++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    values[k] = (x >>> 0) / 4294967296;
  }
  return { id: i, values };
}

export const shuffled = range(6000).map(makeRecord).shuffle(3000, { seed: 7 }).batch(32);
