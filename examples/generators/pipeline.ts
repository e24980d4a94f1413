/**
 * Activity-recognition input written as a chain of async generators: read CSV lines, parse them,
 * augment each recording (a random shift and gain, then its spectrum), batch by 32. A generator is
 * used once, so the module exports a factory that builds a fresh chain.
 */
import { augment, batch, parse, readLines } from './stages';
import type { Example } from './transforms';

export function trainingBatches(): AsyncGenerator<Example[]> {
  const lines = readLines();
  const recordings = parse(lines);
  const examples = augment(recordings); // bottleneck
  return batch(examples, 32);
}
