/**
 * Taxi trips read from an object store into a TensorFlow.js model: a `tf.data.generator` over the
 * objects' URLs (the remote example's local object server, 20–40 ms a request), `mapAsync` to GET
 * each one, `map` to parse it into features, `filter` for broken fares, `batch`. tfjs-data's
 * `mapAsync` awaits one call at a time, so the pipeline waits on one request after another.
 */
import * as tf from '@tensorflow/tfjs';
import { objectUrls } from '../remote/server';
import { fetchObject, parseTrip } from '../remote/transforms';

export const trips = tf.data
  .generator(objectUrls)
  .mapAsync(fetchObject) // bottleneck
  .map((json) => {
    const trip = parseTrip(json);
    return { xs: trip.features, ys: trip.fareUsd };
  })
  .filter((example) => example.ys > 0)
  .batch(16);
