// A pipeline with a plain bottleneck for `plumber plan`: slowSquare spins for a millisecond per
// element on the main thread, and everything else is cheap.
import { range } from 'plumber-data';

export function slowSquare(x: number): number {
  const until = performance.now() + 1;
  while (performance.now() < until) {
    // CPU work.
  }
  return x * x;
}

export const squares = range(0, 1_000_000).map(slowSquare).batch(16);
