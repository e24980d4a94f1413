/**
 * The generators example as an expert would write it by hand: the same reader, parser and batcher,
 * with the augmentation converted to a plumber-data worker map (a thread per core), in order.
 * Yields the same batches as the example. Used only by `npm run bench:dialects`.
 */
import { availableParallelism } from 'node:os';
import { from } from 'plumber-data';
import { batch, parse, readLines } from '../../../examples/generators/stages';
import { augmentRecording, type Example } from '../../../examples/generators/transforms';

export function trainingBatches(): AsyncGenerator<Example[]> {
  const examples = from(() => parse(readLines())).map(augmentRecording, {
    parallelism: availableParallelism(),
    placement: 'worker',
    module: require.resolve('../../../examples/generators/transforms'),
  });
  return batch(examples, 32);
}
