/**
 * Pipelines for `bench:runner`: what tracing costs, per shape of element. No synthetic CPU work:
 * each case is all allocation and hand-over, where the runner's own per-element work would show.
 */
import { range } from 'plumber-data';

/** Tiny elements: the runner's per-element cost against almost none of the pipeline's. */
export const numbers = range(Infinity).batch(32);

/** 25 kB Float32Arrays stacked into 800 kB batches (an audio or image pipeline's shape). */
export const arrays = range(Infinity)
  .map(() => new Float32Array(6272))
  .batch(32);

/** Parsed records of a few hundred bytes (a CSV or JSON-lines pipeline's shape). */
export const records = range(Infinity)
  .map((i) => ({ id: i, text: `record ${i} `.repeat(20), tags: ['a', 'b', String(i % 7)], score: i / 3 }))
  .batch(64);

/** A cached epoch replayed: 256 spectrogram-sized arrays, a copying map per element, batch(32) (the audio example once cached). */
export const replayed = range(256)
  .map(() => new Float32Array(4040))
  .cache()
  .repeat()
  .map((a) => a.slice())
  .batch(32);
