/**
 * Runs over a corpus whose elements differ in cost by stretches (as the text example's emails do),
 * for the tests of comparisons on the same elements.
 */
import type { WindowSlice } from '../../../src/shared/profile';

/** Seconds element n costs at speed 1: stretches of 60 cheap elements and 60 four times dearer. */
export const stretches = (n: number): number => (Math.floor(n / 60) % 2 === 0 ? 1e-3 : 4e-3);

/**
 * A run that starts its window at element `from` and goes `speed` times as fast as speed 1 for
 * `seconds`, sliced every `slice` seconds (as the runner slices a window), with every element's
 * time off by up to ±`jitter` of itself, drawn from `seed`; element n costs `cost(n)` at speed 1.
 */
export function simulate(from: number, speed: number, seconds: number, slice: number, jitter = 0, seed = 1, cost = stretches): WindowSlice[] {
  let x = seed;
  const rand = (): number => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
  const out: WindowSlice[] = [];
  let t = 0;
  let n = from;
  let sliceStart = 0;
  let sliceElements = 0;
  while (t < seconds) {
    t += (cost(n) / speed) * (1 + jitter * (2 * rand() - 1));
    n++;
    sliceElements++;
    if (t - sliceStart >= slice) {
      out.push({ elements: sliceElements, seconds: t - sliceStart });
      sliceStart = t;
      sliceElements = 0;
    }
  }
  return out;
}
