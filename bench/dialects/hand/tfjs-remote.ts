/**
 * tfjs-remote as an expert would write it by hand: converted to plumber-data with 32 requests in
 * flight (about the 20–40 ms latency times the rate wanted), parsed and batched there, and handed
 * to tfjs as tensors through a `tf.data.generator`. Yields the same batches as the example. Used
 * only by `npm run bench:dialects`.
 */
import * as tf from '@tensorflow/tfjs';
import { from } from 'plumber-data';
import { objectUrls } from '../../../examples/remote/server';
import { fetchObject, parseTrip } from '../../../examples/remote/transforms';

const batches = from(objectUrls)
  .map(fetchObject, { parallelism: 32 })
  .map((json: string) => {
    const trip = parseTrip(json);
    return { xs: trip.features, ys: trip.fareUsd };
  })
  .filter((example) => example.ys > 0)
  .batch(16);

export const trips = tf.data.generator(async function* () {
  for await (const b of batches) yield { xs: tf.tensor2d(b.xs.data, [b.xs.length, 7]), ys: tf.tensor1d(Float32Array.from(b.ys.data)) };
});
