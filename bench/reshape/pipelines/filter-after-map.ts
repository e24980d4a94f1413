// The shape is the problem: an expensive decode runs on every record, then a filter that reads
// only the label drops most of them. Moving the filter ahead of the decode saves the decode of
// every dropped record; no knob does as much. The decode is JIT-stable int32 work (WORKLOADS.md).
import { range } from 'plumber-data';

export interface Row {
  id: number;
  label: number;
  image?: Int32Array;
}

/** A record: its id and a label in 0..9 (0–6 are "unlabelled" and dropped). */
export function record(i: number): Row {
  return { id: i, label: (Math.imul(i, 0x9e3779b1) >>> 0) % 10 };
}

/** About 2 ms of int32 work per record. */
export function decode(x: Row): Row {
  const image = new Int32Array(64);
  let h = x.id | 0;
  for (let i = 0; i < 2_000_000; i++) {
    h = Math.imul(h ^ i, 0x01000193) | 0;
    if ((i & 0x7fff) === 0) image[(i >>> 15) & 63] = h;
  }
  return { ...x, image };
}

export function isLabelled(x: Row): boolean {
  return x.label >= 7;
}

export const train = range(Infinity).map(record).map(decode).filter(isLabelled).batch(8);
