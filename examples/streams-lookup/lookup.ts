/**
 * A stand-in for a feature store or a user-profile service: `lookup(id)` answers after 2–6 ms (a
 * timer, as a network round trip on the same rack would take) with a record derived from the id
 * alone, so every run sees the same data. Timers cost no CPU: what helps a caller is more lookups in
 * flight.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** How many ids the example's source yields. */
export const ID_COUNT = 5000;

/** The seed of the example's data; change it for other records. */
export const SEED = 49;

/** A deterministic 32-bit hash (int32 arithmetic only). */
export function hash(n: number): number {
  let h = (n ^ Math.imul(SEED, 0x9e3779b1)) | 0;
  for (let i = 0; i < 3; i++) h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) | 0;
  return h >>> 0;
}

/** What the service knows about a user. */
export interface Profile {
  id: number;
  country: string;
  sessions: number;
  spendCents: number;
  churned: boolean;
}

const COUNTRIES = ['DE', 'FR', 'GB', 'IN', 'JP', 'US', 'BR', 'NG'];

/** Looks up one user: 2–6 ms, as a service call on the same rack. */
export async function lookup(id: number): Promise<Profile> {
  const h = hash(id);
  await sleep(2 + (h % 5));
  return { id, country: COUNTRIES[h % COUNTRIES.length]!, sessions: (h >>> 3) % 200, spendCents: (h >>> 11) % 100_000, churned: (h >>> 7) % 9 === 0 };
}
