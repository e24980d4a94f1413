/**
 * The tfjs-digits example's per-digit work, as named exports of their own module (where people put
 * helpers, and where a worker thread can import them from). The augmentation is the digits
 * example's: a random affine warp plus an elastic distortion (Simard et al., 2003), drawn from a
 * generator seeded by the digit's index, so a digit gets the same distortion on every run.
 */
import type { Digit } from '../digits/data';
import { augment, normalize } from '../digits/transforms';

/** The seed of the example's augmentation; change it for other distortions. */
export const SEED = 49;

/** A digit as the generator yields it: its position in the data set, its pixels and its label. */
export interface IndexedDigit extends Digit {
  index: number;
}

/** What the model is fed: 784 normalised, distorted grey levels and a one-hot label (a type, not an interface: tfjs-data's element type takes only what has an index signature). */
export type Example = {
  xs: Float32Array;
  ys: Float32Array;
};

/** Small, fast, 32-bit integer generator (mulberry32), seeded per digit. */
export function seededRandom(seed: number): { float(): number } {
  let s = seed | 0;
  return {
    float(): number {
      s = (s + 0x6d2b79f5) | 0;
      let t = Math.imul(s ^ (s >>> 15), 1 | s);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}

/** Normalises and distorts one digit and one-hot encodes its label: about 0.3 ms of arithmetic. */
export function toExample(d: IndexedDigit): Example {
  const { image } = augment(normalize(d), { rng: seededRandom(Math.imul(SEED, 0x9e3779b1) ^ d.index) });
  const ys = new Float32Array(10);
  ys[d.label] = 1;
  return { xs: image, ys };
}
