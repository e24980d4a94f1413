/**
 * tf.data's documented examples, reproduced exactly by plumber-data's operators (one block per
 * operator). The expected values are the outputs tf.data's API documentation prints.
 */
import assert from 'node:assert/strict';
import { Batch, chooseFromDatasets, from, PipelineError, range, sampleFromDatasets, type Dataset } from 'plumber-data';

/** The elements of every window, as tf.data's examples print them. */
async function windows<T>(ds: Dataset<Dataset<T>>): Promise<T[][]> {
  const out: T[][] = [];
  for await (const w of ds) out.push(await w.toArray());
  return out;
}

/** tf.fill([x], x) for x in range(1, 5): [1], [2, 2], [3, 3, 3], [4, 4, 4, 4]. */
const A = (): Dataset<number[]> => range(1, 5).map((x) => new Array<number>(x).fill(x));

/** The elements of tf.data's bucket_by_sequence_length examples. */
const SEQUENCES = [[0], [1, 2, 3, 4], [5, 6, 7], [7, 8, 9, 10, 11], [13, 14, 15, 16, 19, 20], [21, 22]];

describe('tf.data documented examples', () => {
  describe('shard', () => {
    it('range(10).shard(3, i) gives every third element starting at i', async () => {
      assert.deepEqual(await range(10).shard(3, 0).toArray(), [0, 3, 6, 9]);
      assert.deepEqual(await range(10).shard(3, 1).toArray(), [1, 4, 7]);
      assert.deepEqual(await range(10).shard(3, 2).toArray(), [2, 5, 8]);
    });
    it('rejects an index outside [0, numShards) when built', () => {
      assert.throws(() => range(10).shard(3, 3), /shard\(\) needs index to be an integer in \[0, 3\), not 3/);
    });
  });

  describe('enumerate', () => {
    it('from([1, 2, 3]).enumerate(5) pairs each element with its position from 5', async () => {
      assert.deepEqual(await from([1, 2, 3]).enumerate(5).toArray(), [
        [5, 1],
        [6, 2],
        [7, 3],
      ]);
    });
    it('enumerates nested elements whole', async () => {
      assert.deepEqual(
        await from([
          [7, 8],
          [9, 10],
        ])
          .enumerate()
          .toArray(),
        [
          [0, [7, 8]],
          [1, [9, 10]],
        ],
      );
    });
  });

  describe('window', () => {
    it('range(7).window(2) keeps the short last window', async () => {
      assert.deepEqual(await windows(range(7).window(2)), [[0, 1], [2, 3], [4, 5], [6]]);
    });
    it('range(7).window(3, shift 2, stride 1, dropRemainder) overlaps windows by one', async () => {
      assert.deepEqual(await windows(range(7).window(3, { shift: 2, stride: 1, dropRemainder: true })), [
        [0, 1, 2],
        [2, 3, 4],
        [4, 5, 6],
      ]);
    });
    it('range(7).window(3, shift 1, stride 2, dropRemainder) takes every second element', async () => {
      assert.deepEqual(await windows(range(7).window(3, { shift: 1, stride: 2, dropRemainder: true })), [
        [0, 2, 4],
        [1, 3, 5],
        [2, 4, 6],
      ]);
    });
    it('range(7).window(3) and window(3, dropRemainder) as in the Dataset.window examples', async () => {
      assert.deepEqual(await windows(range(7).window(3)), [[0, 1, 2], [3, 4, 5], [6]]);
      assert.deepEqual(await windows(range(7).window(3, { dropRemainder: true })), [
        [0, 1, 2],
        [3, 4, 5],
      ]);
    });
    it('windows tuples whole (tf.data would give a tuple of windows)', async () => {
      assert.deepEqual(
        await windows(
          range(4)
            .map((i) => [i, i] as const)
            .window(2),
        ),
        [
          [
            [0, 0],
            [1, 1],
          ],
          [
            [2, 2],
            [3, 3],
          ],
        ],
      );
    });
    it('flattens windows into batches with flatMap, tf.data’s idiom window(n).flat_map(lambda w: w.batch(n))', async () => {
      assert.deepEqual(
        await range(7)
          .window(3, { shift: 1, dropRemainder: true })
          .flatMap((w) => w.batch(3))
          .toArray(),
        [
          [0, 1, 2],
          [1, 2, 3],
          [2, 3, 4],
          [3, 4, 5],
          [4, 5, 6],
        ],
      );
    });
    it('states its cardinality as tf.data counts windows', () => {
      assert.equal(range(7).window(2).node.cardinality, 4);
      assert.equal(range(7).window(3, { shift: 2, dropRemainder: true }).node.cardinality, 3);
      assert.equal(range(7).window(3, { shift: 1, stride: 2, dropRemainder: true }).node.cardinality, 3);
    });
  });

  describe('paddedBatch', () => {
    it('pads to the smallest per-batch size that fits all elements', async () => {
      assert.deepEqual(await A().paddedBatch(2).toArray(), [
        [
          [1, 0],
          [2, 2],
        ],
        [
          [3, 3, 3, 0],
          [4, 4, 4, 4],
        ],
      ]);
    });
    it('pads to a fixed size', async () => {
      assert.deepEqual(await A().paddedBatch(2, { paddedShapes: 5 }).toArray(), [
        [
          [1, 0, 0, 0, 0],
          [2, 2, 0, 0, 0],
        ],
        [
          [3, 3, 3, 0, 0],
          [4, 4, 4, 4, 0],
        ],
      ]);
    });
    it('pads with a custom value', async () => {
      assert.deepEqual(await A().paddedBatch(2, { paddedShapes: 5, paddingValues: -1 }).toArray(), [
        [
          [1, -1, -1, -1, -1],
          [2, 2, -1, -1, -1],
        ],
        [
          [3, 3, 3, -1, -1],
          [4, 4, 4, 4, -1],
        ],
      ]);
    });
    it('pads the components of tuples independently', async () => {
      const elements: [number[], number[]][] = [
        [[1, 2, 3], [10]],
        [
          [4, 5],
          [11, 12],
        ],
      ];
      const out = await from(elements)
        .paddedBatch(2, { paddedShapes: [[4], [null]], paddingValues: [-1, 100] })
        .toArray();
      assert.deepEqual(out, [
        [
          [
            [1, 2, 3, -1],
            [4, 5, -1, -1],
          ],
          [
            [10, 100],
            [11, 12],
          ],
        ],
      ]);
    });
    it('pads every component with a single value', async () => {
      const E = await A()
        .map((x) => [x, x] as [number[], number[]])
        .paddedBatch(2, { paddingValues: -1 })
        .toArray();
      const first = [
        [1, -1],
        [2, 2],
      ];
      const second = [
        [3, 3, 3, -1],
        [4, 4, 4, 4],
      ];
      assert.deepEqual(E, [
        [first, first],
        [second, second],
      ]);
    });
    it('stacks typed arrays into one Batch of shape [n, longest]', async () => {
      const [b] = await from([Int32Array.of(1), Int32Array.of(2, 2)])
        .paddedBatch(2)
        .toArray();
      assert.ok(b instanceof Batch);
      assert.deepEqual(b.shape, [2, 2]);
      assert.deepEqual(Array.from(b.data), [1, 0, 2, 2]);
    });
    it('fails naming the operator when an element is longer than its padded shape', async () => {
      await assert.rejects(A().paddedBatch(2, { paddedShapes: 3 }).toArray(), (e: unknown) => e instanceof PipelineError && /paddedBatch failed: .*length 4 does not fit the padded length 3/.test(e.message));
    });
  });

  describe('bucketBySequenceLength', () => {
    it('buckets [0, 3), [3, 5), [5, inf) with batch size 2, padding to the longest in each batch', async () => {
      const out = await from(SEQUENCES)
        .bucketBySequenceLength((e) => e.length, [3, 5], [2, 2, 2])
        .toArray();
      assert.deepEqual(out, [
        [
          [1, 2, 3, 4],
          [5, 6, 7, 0],
        ],
        [
          [7, 8, 9, 10, 11, 0],
          [13, 14, 15, 16, 19, 20],
        ],
        [
          [0, 0],
          [21, 22],
        ],
      ]);
    });
    it('pads to the bucket boundary with -1 and flushes partial buckets in bucket order', async () => {
      const out = await from(SEQUENCES)
        .bucketBySequenceLength((e) => e.length, [4, 7], [2, 2, 2], { padToBucketBoundary: true, paddingValues: -1 })
        .toArray();
      assert.deepEqual(out, [
        [
          [0, -1, -1],
          [5, 6, 7],
        ],
        [
          [1, 2, 3, 4, -1, -1],
          [7, 8, 9, 10, 11, -1],
        ],
        [[21, 22, -1]],
        [[13, 14, 15, 16, 19, 20]],
      ]);
    });
    it('drops partial buckets at the end with dropRemainder', async () => {
      const out = await from(SEQUENCES)
        .bucketBySequenceLength((e) => e.length, [4, 7], [2, 2, 2], { dropRemainder: true })
        .toArray();
      assert.equal(out.length, 2);
    });
  });

  describe('groupByWindow', () => {
    it('groups range(10) by parity into windows of 5, each batched', async () => {
      const out = await range(10)
        .groupByWindow(
          (x) => x % 2,
          (_key, ds) => ds.batch(5),
          { windowSize: 5 },
        )
        .toArray();
      assert.deepEqual(out, [
        [0, 2, 4, 6, 8],
        [1, 3, 5, 7, 9],
      ]);
    });
    it('reduces the partial windows at the end in ascending key order', async () => {
      const out = await from([5, 2, 9, 1])
        .groupByWindow(
          (x) => (x > 4 ? 1 : 0),
          (key, ds) => ds.map((x) => `${key}:${x}`),
          { windowSize: 3 },
        )
        .toArray();
      assert.deepEqual(out, ['0:2', '0:1', '1:5', '1:9']);
    });
  });

  describe('rebatch', () => {
    it('range(8).batch(4).rebatch(2) splits each batch in two', async () => {
      assert.deepEqual(await range(8).batch(4).rebatch(2).toArray(), [
        [0, 1],
        [2, 3],
        [4, 5],
        [6, 7],
      ]);
    });
    it('rebatches across batch boundaries like unbatch().batch(n)', async () => {
      assert.deepEqual(await range(8).batch(4).rebatch(3).toArray(), [
        [0, 1, 2],
        [3, 4, 5],
        [6, 7],
      ]);
      assert.deepEqual(await range(8).batch(4).rebatch(3, { dropRemainder: true }).toArray(), [
        [0, 1, 2],
        [3, 4, 5],
      ]);
    });
    it('keeps typed batches typed', async () => {
      const out = await range(6)
        .map((i) => Float32Array.of(i, -i))
        .batch(4)
        .rebatch(3)
        .toArray();
      assert.ok(out[0] instanceof Batch);
      assert.deepEqual(out[0].shape, [3, 2]);
      assert.deepEqual(Array.from(out[1].data), [3, -3, 4, -4, 5, -5]);
    });
  });

  describe('scan', () => {
    it('range(10).scan(0, running sum) gives the running sums', async () => {
      assert.deepEqual(
        await range(10)
          .scan(0, (state, i) => [state + i, state + i] as const)
          .toArray(),
        [0, 1, 3, 6, 10, 15, 21, 28, 36, 45],
      );
    });
    it('starts each pass from the initial state', async () => {
      assert.deepEqual(
        await range(3)
          .scan(0, (s, i) => [s + i, s + i] as const)
          .repeat(2)
          .toArray(),
        [0, 1, 3, 0, 1, 3],
      );
    });
  });

  describe('reduce', () => {
    it('range(5).reduce counts 5 elements and sums to 10', async () => {
      assert.equal(await range(5).reduce(0, (x) => x + 1), 5);
      assert.equal(await range(5).reduce(0, (x, y) => x + y), 10);
    });
  });

  describe('sampleFromDatasets', () => {
    it('mixes range(0, 3) and range(100, 103), each in its own order, every element once', async () => {
      const out = await sampleFromDatasets([range(0, 3), range(100, 103)], { weights: [0.5, 0.5], seed: 7 }).toArray();
      assert.deepEqual(
        out.filter((x) => x < 100),
        [0, 1, 2],
      );
      assert.deepEqual(
        out.filter((x) => x >= 100),
        [100, 101, 102],
      );
    });
    it('stops when a dataset ends with stopOnEmptyDataset', async () => {
      const out = await sampleFromDatasets([from([1]), range(100, 200)], { seed: 3, stopOnEmptyDataset: true }).toArray();
      assert.ok(out.length < 101 && out.includes(1), `got ${out.length} elements`);
    });
    it('never picks a dataset of weight 0', async () => {
      assert.deepEqual(await sampleFromDatasets([range(3), range(100, 103)], { weights: [1, 0], seed: 1 }).toArray(), [0, 1, 2]);
    });
  });

  describe('chooseFromDatasets', () => {
    it('follows the choice dataset [0, 1, 2] × 3 over "foo", "bar", "baz"', async () => {
      const datasets = [from(['foo']).repeat(), from(['bar']).repeat(), from(['baz']).repeat()];
      const out = await chooseFromDatasets(datasets, range(3).repeat(3)).toArray();
      assert.deepEqual(out, ['foo', 'bar', 'baz', 'foo', 'bar', 'baz', 'foo', 'bar', 'baz']);
    });
    it('ends at an empty chosen dataset by default, and skips the choice without stopOnEmptyDataset', async () => {
      const choices = from([0, 1, 0, 1, 1]);
      assert.deepEqual(await chooseFromDatasets([from(['a']), from(['b', 'c', 'd'])], choices).toArray(), ['a', 'b']);
      assert.deepEqual(await chooseFromDatasets([from(['a']), from(['b', 'c', 'd'])], choices, { stopOnEmptyDataset: false }).toArray(), ['a', 'b', 'c', 'd']);
    });
    it('fails naming the choice when it is not an input index', async () => {
      await assert.rejects(chooseFromDatasets([from(['a'])], from([0, 2])).toArray(), (e: unknown) => e instanceof PipelineError && e.index === 1 && /choice dataset gave 2/.test(e.message));
    });
  });

  describe('ignoreErrors', () => {
    it('drops the element whose map threw (1 / 0 checked): [1, 0.5, 0.25]', async () => {
      const out = await from([1, 2, 0, 4])
        .map((x) => {
          const y = 1 / x;
          if (!Number.isFinite(y)) throw new RangeError('error: Tensor had Inf values');
          return y;
        })
        .ignoreErrors()
        .toArray();
      assert.deepEqual(out, [1, 0.5, 0.25]);
    });
  });

  describe('interleave', () => {
    it('takes blockLength 4 consecutive elements from each of cycleLength 2 inner datasets', async () => {
      const out = await range(1, 6)
        .interleave((x) => from([x]).repeat(6), { cycleLength: 2, blockLength: 4 })
        .toArray();
      assert.deepEqual(out, [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5]);
    });
  });
});
