/**
 * CPU work for the worker-map benchmark, in a module so worker threads can import it. int32
 * arithmetic from a small seed stays optimised in any thread (WORKLOADS.md's benchmark trap).
 */

/** An element: a small-int seed and how many rounds to spin. */
export interface WorkItem {
  seed: number;
  rounds: number;
}

/** Spins `rounds` multiply-xor steps; returns the hash. */
export function spinWork(item: WorkItem): number {
  let h = item.seed | 0;
  for (let i = 0; i < item.rounds; i++) h = Math.imul(h ^ i, 0x01000193) | 0;
  return h;
}

/** Rounds of spinWork that take about `ms` on this thread, measured after warm-up. */
export function calibrate(ms: number): number {
  spinWork({ seed: 1, rounds: 5_000_000 });
  let best = Infinity;
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    spinWork({ seed: 2, rounds: 1_000_000 });
    best = Math.min(best, performance.now() - t0);
  }
  return Math.round((1_000_000 * ms) / best);
}
