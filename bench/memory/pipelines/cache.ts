/**
 * A finite set read again every epoch: 1,500 decoded elements of 32 kB (≈ 48 MB in all) behind an
 * expensive deterministic decode, repeated: a cache after the decode pays, and holds them all.
 */
import { range } from 'plumber-data';

export function decode(i: number): Float64Array {
  const out = new Float64Array(4096);
  let x = i + 1;
  // Fixed rounds of xorshift per value: the same work every call (JIT-stable), no allocation inside.
  for (let round = 0; round < 8; round++) {
    for (let k = 0; k < out.length; k++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      out[k] = (out[k] + (x >>> 0) / 4294967296) / 2;
    }
  }
  return out;
}

export const epochs = range(1500).map(decode).repeat().batch(16);
