// The shape is the problem: a cheap random augmentation (ctx.rng) runs above an expensive
// deterministic decode, so nothing after the augmentation may be cached and the decode is paid
// again every epoch. The decode reads only `bytes` and the augmentation only sets `flip`: moving
// the decode above the augmentation yields the same elements and lets a cache keep the decoded
// records across epochs. The decode is JIT-stable int32 work (WORKLOADS.md).
import { range, type ElementContext } from 'plumber-data';

export interface Rec {
  id: number;
  bytes: Int32Array;
  flip?: boolean;
  image?: Int32Array;
}

export function record(i: number): Rec {
  return { id: i, bytes: Int32Array.of(i, i * 7, i * 13) };
}

/** Sets a random horizontal flip: cheap, and random. */
export function augment(x: Rec, ctx: ElementContext): Rec {
  return { ...x, flip: ctx.rng.float() < 0.5 };
}

/** About 2 ms of int32 work per record, reading only its bytes. */
export function decode(x: Rec): Rec {
  const image = new Int32Array(32);
  let h = x.bytes[0]! | 0;
  for (let i = 0; i < 2_000_000; i++) {
    h = Math.imul(h ^ i, 0x01000193) | 0;
    if ((i & 0xffff) === 0) image[(i >>> 16) & 31] = h;
  }
  return { ...x, image };
}

export const train = range(400).map(record).map(augment).map(decode).repeat().batch(8);
