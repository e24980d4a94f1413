/**
 * Handwritten digits for a TensorFlow.js model, the way the tfjs-data guides write it: a
 * `tf.data.generator` over the records, a `map` that normalises and distorts each digit, `batch`
 * for `model.fitDataset`. tfjs-data runs every `map` on the main thread, one element at a time.
 */
import * as tf from '@tensorflow/tfjs';
import { loadDigits } from '../digits/data';
import { toExample } from './transforms';

const digits = loadDigits();

export const BATCH = 64;

export const trainingData = tf.data
  .generator(function* () {
    for (let index = 0; index < digits.length; index++) yield { index, ...digits[index] };
  })
  .map(toExample) // bottleneck
  .batch(BATCH);
