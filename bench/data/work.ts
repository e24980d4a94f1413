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

/** A parsed CSV row of a few hundred bytes, as the small-element worker-map benchmark sends. */
export interface Row {
  id: number;
  name: string;
  email: string;
  city: string;
  country: string;
  createdAt: string;
  label: string;
  values: number[];
  /** Rounds of work the row costs (set once from a calibration). */
  rounds: number;
}

/** Row i: strings and eight numbers, about 300 bytes when cloned. */
export function makeRow(i: number, rounds: number): Row {
  return {
    id: i,
    name: `customer-${i}`,
    email: `customer-${i}@example.com`,
    city: ['Lisbon', 'Porto', 'Braga', 'Faro'][i & 3],
    country: 'Portugal',
    createdAt: new Date(Date.UTC(2024, 0, 1 + (i % 365))).toISOString(),
    label: i % 3 === 0 ? 'churned' : 'active',
    values: Array.from({ length: 8 }, (_, k) => ((i * 7 + k * 13) % 101) / 10),
    rounds,
  };
}

/** A feature step on a row: int32 work seeded by its id, then a small result object. */
export function scoreRow(row: Row): { id: number; score: number; label: string } {
  let h = row.id & 0xff;
  for (let i = 0; i < row.rounds; i++) h = Math.imul(h ^ i, 0x01000193) | 0;
  return { id: row.id, score: (h & 0xffff) + row.values[0], label: row.label };
}
