/**
 * Trains a small dense network on `trainingData` with `model.fitDataset`, on the pure-JS CPU
 * backend (no native download). The input's augmentation shares the main thread with the step.
 *
 *   npx tsx examples/tfjs-digits/train.ts           trains, printing the loss after each epoch
 *   npx plumber plan examples/tfjs-digits/train.ts   asks whether the model waits for its input
 */
import * as tf from '@tensorflow/tfjs';
import { trainingData } from './pipeline';

async function train(): Promise<void> {
  await tf.setBackend('cpu');
  const model = tf.sequential({
    layers: [tf.layers.dense({ inputShape: [784], units: 64, activation: 'relu' }), tf.layers.dense({ units: 10, activation: 'softmax' })],
  });
  model.compile({ optimizer: 'adam', loss: 'categoricalCrossentropy', metrics: ['accuracy'] });
  await model.fitDataset(trainingData, {
    epochs: 3,
    batchesPerEpoch: 50,
    callbacks: { onEpochEnd: (epoch, logs) => console.log(`epoch ${epoch + 1}: loss ${logs?.loss.toFixed(3)}`) },
  });
}

train().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
