/**
 * Review features for a sentiment model, written with Node's streams: the gzipped export is read,
 * gunzipped, split into lines, and each line featurised by a Transform (hashed word bigrams and a
 * MinHash signature), joined by `stream.pipeline`, which returns the last stream: its readable end
 * yields the features. A stream is used once, so the module exports a factory that builds a fresh one.
 */
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { ensureReviews } from './data';
import { Featurize, splitLines } from './transforms';

export function reviewFeatures(): Featurize {
  return pipeline(
    createReadStream(ensureReviews()),
    createGunzip(),
    splitLines,
    new Featurize(), // bottleneck
    // A failing stage destroys the last stream with its error, so the consumer's loop throws it.
    () => {},
  );
}
