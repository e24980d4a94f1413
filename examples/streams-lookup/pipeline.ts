/**
 * Churn-model rows from a user-profile service, written with Node's stream operators:
 * `Readable.from(ids)`, `.map(lookup, { concurrency: 1 })` for the service call, `.filter` for
 * users who never came back, `.map` into features. A stream is used once, so the module exports a
 * factory that builds a fresh one.
 */
import { Readable } from 'node:stream';
import { toRow } from './features';
import { ID_COUNT, lookup, type Profile } from './lookup';

export function userRows(): Readable {
  const ids = Array.from({ length: ID_COUNT }, (_, i) => i);
  return Readable.from(ids)
    .map(lookup, { concurrency: 1 }) // bottleneck
    .filter((p: Profile) => p.sessions > 0)
    .map(toRow);
}
