/**
 * The trainer-bound case: the same input pipeline feeding a bigger network (a full-resolution
 * convolution, pooling, a hidden layer). Each step costs the trainer far more than the input costs the
 * pipeline, so the loop hardly waits: the right advice is to change nothing, or to give cores back.
 *
 * Training a bigger convolutional network on handwritten digits with TensorFlow.js (the pure-JS CPU
 * backend: no native download), fed by a plumber-data pipeline with augmentation. Written the way a
 * first version usually is: every step of the input on the main thread, one loop, no tuning.
 *
 *   npx tsx examples/train-digits/trainer-bound.ts          trains (prints the loss every 20 steps)
 *   npx plumber plan examples/train-digits/trainer-bound.ts  asks whether the trainer waits for its input
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import * as tfl from '@tensorflow/tfjs-layers';
import { from, type Dataset } from 'plumber-data';
import { loadDigits } from '../digits/data';
import { augment, normalize } from '../digits/transforms';

const BATCH = 64;
const EPOCHS = 3;

// Shuffle, normalise, augment (a random affine warp and an elastic distortion), batch: each batch
// stacks the images into one Float32Array and the labels into another.
const examples: Dataset<{ image: Float32Array; label: number }> = from(loadDigits()).shuffle(2048).map(normalize).map(augment);
const batches = examples.batch(BATCH);

/** A bigger CNN: a 3×3 convolution with 8 filters at full resolution, 2×2 max-pooling, 32 hidden units, a softmax layer. */
function biggerCnn(): tfl.Sequential {
  const model = tfl.sequential();
  model.add(tfl.layers.conv2d({ inputShape: [28, 28, 1], filters: 8, kernelSize: 3, activation: 'relu' }));
  model.add(tfl.layers.maxPooling2d({ poolSize: 2 }));
  model.add(tfl.layers.flatten());
  model.add(tfl.layers.dense({ units: 32, activation: 'relu' }));
  model.add(tfl.layers.dense({ units: 10, activation: 'softmax' }));
  model.compile({ optimizer: 'adam', loss: 'categoricalCrossentropy' });
  return model;
}

async function train(): Promise<void> {
  await tf.setBackend('cpu');
  const model = biggerCnn();
  let step = 0;
  for (let epoch = 0; epoch < EPOCHS; epoch++) {
    for await (const batch of batches) {
      const n = batch.label.length;
      const xs = tf.tensor4d(batch.image.data, [n, 28, 28, 1]);
      const ys = tf.oneHot(tf.tensor1d(Array.from(batch.label.data), 'int32'), 10);
      const loss = await model.trainOnBatch(xs, ys);
      tf.dispose([xs, ys]);
      if (++step % 20 === 0) console.log(`epoch ${epoch + 1} step ${step}: loss ${Number(loss).toFixed(3)}`);
    }
  }
}

train().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
