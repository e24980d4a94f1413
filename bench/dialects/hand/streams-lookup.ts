/**
 * streams-lookup as an expert would write it by hand, in its own dialect: the same stream
 * operators with 16 lookups in flight (Node's `map` keeps the order). Yields the same rows as the
 * example. Used only by `npm run bench:dialects`.
 */
import { Readable } from 'node:stream';
import { ID_COUNT, lookup, type Profile } from '../../../examples/streams-lookup/lookup';
import { toRow } from '../../../examples/streams-lookup/features';

export function userRows(): Readable {
  const ids = Array.from({ length: ID_COUNT }, (_, i) => i);
  return Readable.from(ids)
    .map(lookup, { concurrency: 16 })
    .filter((p: Profile) => p.sessions > 0)
    .map(toRow);
}
