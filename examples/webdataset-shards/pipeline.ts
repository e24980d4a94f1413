/**
 * Labelled pictures from WebDataset tar shards: interleave the shards, decode each sample's JPEG,
 * batch. Written the way a first version usually is: four shards interleaved but read one at a
 * time, every decode on the main thread, nothing prefetched. `npx plumber plan` on this file
 * profiles it and prints Plumber's plan.
 */
import { from, webdataset } from 'plumber-data';
import { ensureShards } from './prepare';
import { decodeSample } from './transforms';

export const training = from(ensureShards())
  .interleave((shard) => webdataset(shard), { cycleLength: 4 })
  .map(decodeSample)
  .batch(32);
