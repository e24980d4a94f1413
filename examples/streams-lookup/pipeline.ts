/**
 * Churn-model rows from a user-profile service, written with Node's stream operators:
 * `Readable.from(ids)`, `.map(lookup, { concurrency: 1 })` for the service call, `.filter` for
 * users who never came back, `.map` into features. A stream is used once, so the module exports a
 * factory that builds a fresh one.
 */
import { Readable } from 'node:stream';
import { ID_COUNT, lookup, type Profile } from './lookup';

/** A user's features: log sessions, log spend, a country code, and the label. */
export interface Row {
  features: Float32Array;
  churned: number;
}

const COUNTRY_CODES: Record<string, number> = { DE: 0, FR: 1, GB: 2, IN: 3, JP: 4, US: 5, BR: 6, NG: 7 };

export function toRow(p: Profile): Row {
  return { features: new Float32Array([Math.log1p(p.sessions), Math.log1p(p.spendCents / 100), COUNTRY_CODES[p.country] ?? -1]), churned: p.churned ? 1 : 0 };
}

export function userRows(): Readable {
  const ids = Array.from({ length: ID_COUNT }, (_, i) => i);
  return Readable.from(ids)
    .map(lookup, { concurrency: 1 }) // bottleneck
    .filter((p: Profile) => p.sessions > 0)
    .map(toRow);
}
