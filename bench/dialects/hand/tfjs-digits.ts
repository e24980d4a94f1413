/**
 * tfjs-digits as an expert would write it by hand: the same digits and the same `toExample`,
 * converted to plumber-data so that the augmentation runs in a worker thread per core, batched
 * there, and handed to tfjs as tensors through a `tf.data.generator` (what `model.fitDataset`
 * takes). Yields the same batches as the example. Used only by `npm run bench:dialects`.
 */
import { availableParallelism } from 'node:os';
import * as tf from '@tensorflow/tfjs';
import { from } from 'plumber-data';
import { loadDigits } from '../../../examples/digits/data';
import { BATCH } from '../../../examples/tfjs-digits/pipeline';
import { toExample } from '../../../examples/tfjs-digits/transforms';

const digits = loadDigits();

const examples = from(function* () {
  for (let index = 0; index < digits.length; index++) yield { index, ...digits[index]! };
})
  .map(toExample, { parallelism: availableParallelism(), placement: 'worker', module: require.resolve('../../../examples/tfjs-digits/transforms') })
  .batch(BATCH)
  .prefetch(2);

export const trainingData = tf.data.generator(async function* () {
  for await (const b of examples) yield { xs: tf.tensor2d(b.xs.data, [b.xs.length, 784]), ys: tf.tensor2d(b.ys.data, [b.ys.length, 10]) };
});
