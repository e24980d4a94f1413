/**
 * streams-transform as an expert would write it by hand: the same file, gunzip and line splitter,
 * with the Transform's work (`featurize`) moved to a worker thread per core by converting the
 * stage to a plumber-data worker map. Yields the same features, in order, as the example. Used
 * only by `npm run bench:dialects`.
 */
import { createReadStream } from 'node:fs';
import { availableParallelism } from 'node:os';
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { from } from 'plumber-data';
import { ensureReviews } from '../../../examples/streams-transform/data';
import { featurize, splitLines } from '../../../examples/streams-transform/transforms';

export function reviewFeatures() {
  return from(() => splitLines(pipeline(createReadStream(ensureReviews()), createGunzip(), () => {}))).map(featurize, {
    parallelism: availableParallelism(),
    placement: 'worker',
    module: require.resolve('../../../examples/streams-transform/transforms'),
  });
}
