// The shape is the problem: a heavy tokenizer that belongs in worker threads runs on documents that
// still carry a 4 MB scan, which a later resize cuts to 1 kB; in worker threads each document's
// scan is cloned there and back. The tokenizer reads only `text` and writes `tokens`, the resize
// reads and writes only `image`: moving the resize above the tokenizer yields the same documents,
// and the tokenizer's clones carry 1 kB instead of 4 MB. The tokenizer is JIT-stable int32 work
// (WORKLOADS.md).
import { range } from 'plumber-data';

export interface Doc {
  id: number;
  text: Int32Array;
  tokens?: Int32Array;
  image: Uint8Array;
}

/** A document with a 4 MB scan (zero-filled but for a stamp). */
export function load(i: number): Doc {
  const image = new Uint8Array(1 << 22);
  image[0] = i & 0xff;
  return { id: i, text: Int32Array.of(i, i * 7, i * 13), image };
}

/** About 2 ms of int32 work per document, reading only its text. */
export function tokenize(x: Doc): Doc {
  const tokens = new Int32Array(32);
  let h = x.text[0]! | 0;
  for (let i = 0; i < 2_000_000; i++) {
    h = Math.imul(h ^ i, 0x01000193) | 0;
    if ((i & 0xffff) === 0) tokens[(i >>> 16) & 31] = h;
  }
  return { ...x, tokens };
}

/** Keeps the scan's first 1 kB. */
export function resize(x: Doc): Doc {
  return { ...x, image: x.image.slice(0, 1024) };
}

export const train = range(Infinity).map(load).map(tokenize).map(resize).batch(8);
