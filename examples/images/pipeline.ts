/**
 * ImageNet-style training input: read JPEGs, decode, random crop and flip, resize to 224,
 * normalise, batch. Written the way a first version usually is: every step on the main thread,
 * one at a time, nothing prefetched. `npm start` profiles this file and prints Plumber's plan.
 */
import { files } from 'plumber-data';
import { ensureImages } from './prepare';
import { decode, normalize, randomCropFlip, resize } from './transforms';

export const images = files('*.jpg', { cwd: ensureImages() })
  .map(decode)
  .map(randomCropFlip)
  .map(resize)
  .map(normalize)
  .batch(32);
