/**
 * TensorFlow.js tensors through worker-thread maps, with the real tfjs-core and CPU backend: they
 * cross as dtype, shape and values, arrive as tensors on each side, in order, and what the
 * crossing makes is disposed where it is not handed on.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import * as tfd from '@tensorflow/tfjs-data';
import { from, fromTfDataset, PipelineError } from 'plumber-data';
import run from '../../../src/data/worker';
import { encodeAll, restoreAll } from '../../../src/data/internal/crossing';
import { tensorMakerFor } from '../../../src/data/internal/tensors';
import type { Example } from '../../fixtures/data/tensor-work';

const MODULE = join(__dirname, '../../fixtures/data/tensor-work.ts');
const VALUE = Symbol.for('Piscina.valueOf');

function example(i: number): Example {
  return { x: tf.tensor2d([i, i + 0.5, -i, 1 / (i + 1), 0, -0], [2, 3]), mask: tf.tensor1d([i % 2, 1, 0], 'int32'), label: i };
}

describe('plumber-data tensors crossing worker threads', function () {
  this.timeout(60_000);
  before(async () => {
    await tf.setBackend('cpu');
  });

  it('a worker map gets tensors and hands tensors back: same dtype, shape and values, in order', async () => {
    const n = 40;
    const inputs = [...Array(n).keys()].map(example);
    const before = tf.memory().numTensors;
    const out = (await from(inputs)
      .map((e: Example) => e, { placement: 'worker', module: MODULE, exportName: 'scale', parallelism: 2 })
      .toArray()) as unknown as ReturnType<typeof import('../../fixtures/data/tensor-work').scale>[];
    assert.equal(out.length, n);
    for (let i = 0; i < n; i++) {
      const o = out[i]!;
      assert.equal(o.label, i);
      // What the fn was given in the worker: a tensor of its own tfjs, as sent.
      assert.deepEqual(o.given, { tensor: true, dtype: 'float32', shape: [2, 3] });
      assert.ok(o.x instanceof tf.Tensor && o.mask instanceof tf.Tensor);
      assert.equal(o.x.dtype, 'float32');
      assert.deepEqual(o.x.shape, [2, 3]);
      assert.deepEqual(
        Array.from(o.x.dataSync()),
        Array.from(inputs[i]!.x.dataSync()).map((v) => v * 2),
      );
      assert.equal(o.mask.dtype, 'int32');
      assert.deepEqual(Array.from(o.mask.dataSync()), [i % 2, 1, 0]);
    }
    // The inputs are untouched, and the only new tensors here are the results handed on.
    for (let i = 0; i < n; i++) assert.deepEqual(Array.from(inputs[i]!.mask.dataSync()), [i % 2, 1, 0]);
    assert.equal(tf.memory().numTensors, before + 2 * n);
    tf.dispose(out.flatMap((o) => [o.x, o.mask]));
    tf.dispose(inputs.flatMap((e) => [e.x, e.mask]));
  });

  it('string, int32 and bool tensors made in the worker arrive whole', async () => {
    const out = (await from([
      { words: ['a', 'bé', ''], n: 5 },
      { words: ['x'], n: -2 },
    ])
      .map((x: { words: string[]; n: number }) => x, { placement: 'worker', module: MODULE, exportName: 'tensorsFromPlain' })
      .toArray()) as unknown as { words: tf.Tensor; ids: tf.Tensor }[];
    assert.deepEqual(
      out.map((o) => [o.words.dtype, o.words.shape, Array.from(o.words.dataSync() as unknown as string[])]),
      [
        ['string', [3], ['a', 'bé', '']],
        ['string', [1], ['x']],
      ],
    );
    assert.deepEqual(
      out.map((o) => [o.ids.dtype, Array.from(o.ids.dataSync())]),
      [
        ['int32', [5, 6, 7]],
        ['int32', [-2, -1, 0]],
      ],
    );
    const b = tf.tensor1d([true, false, true], 'bool');
    const sent = encodeAll([{ b }]);
    const copy = structuredClone(sent.items);
    restoreAll(copy, sent.marks, undefined, { tensor: tensorMakerFor(MODULE) });
    const back = (copy[0] as { b: tf.Tensor }).b;
    assert.equal(back.dtype, 'bool');
    assert.deepEqual(Array.from(back.dataSync()), [1, 0, 1]);
    tf.dispose([b, back, ...out.flatMap((o) => [o.words, o.ids])]);
  });

  it('a worker filter hands on the very tensors it was given', async () => {
    const inputs = [1, 2, 3, 4, 5, 6].map((k) => ({ t: tf.tensor1d([k, k]) }));
    const out = await from(inputs)
      .filter((e: { t: tf.Tensor }) => e, { placement: 'worker', module: MODULE, exportName: 'evenSum' })
      .toArray();
    // Sums 2, 4, …, 12 are all even: everything kept, and the same objects (a filter does not copy).
    assert.equal(out.length, 6);
    for (let i = 0; i < 6; i++) assert.equal(out[i], inputs[i]);
    tf.dispose(inputs.map((e) => e.t));
  });

  it('the worker side disposes the tensors it rebuilt and the results it sent', async () => {
    // The worker entry run on this thread: the same tfjs engine counts what it leaves behind.
    const inputs = [0, 1, 2].map(example);
    const sent = encodeAll(inputs);
    const items = structuredClone(sent.items);
    const before = tf.memory().numTensors;
    const r = (await run({ module: MODULE, exportName: 'scale', mode: 'map', items, marks: sent.marks, base: 0, seed: 1, epoch: 0 })) as Record<symbol, unknown>;
    assert.equal(tf.memory().numTensors, before);
    const result = (r[VALUE] ?? r) as { out: unknown[]; marks: Parameters<typeof restoreAll>[1]; numbers?: Float64Array };
    // The results went as plain data, rebuilt here into tensors with the right values.
    restoreAll(result.out, result.marks, undefined, { tensor: tensorMakerFor(MODULE), numbers: result.numbers });
    const first = result.out[2] as { x: tf.Tensor; mask: tf.Tensor };
    assert.deepEqual(
      Array.from(first.x.dataSync()),
      Array.from(inputs[2]!.x.dataSync()).map((v) => v * 2),
    );
    assert.equal(tf.memory().numTensors, before + 6);
    tf.dispose(result.out.flatMap((o) => [(o as Example).x, (o as Example).mask]));
    tf.dispose(inputs.flatMap((e) => [e.x, e.mask]));
  });

  it("a worker map disposes a tfjs dataset's tensors once their copies were used, as a tfjs map does; a filter and a cached input keep them", async () => {
    const source = (): tfd.Dataset<tf.TensorContainer> => tfd.array([...Array(12).keys()]).map((i) => example(i as number) as unknown as tf.TensorContainer);
    const before = tf.memory().numTensors;
    const out = (await fromTfDataset(source())
      .map((e: unknown) => e, { placement: 'worker', module: MODULE, exportName: 'scale' })
      .toArray()) as unknown as Example[];
    assert.deepEqual(
      out.map((o) => o.label),
      [...Array(12).keys()],
    );
    // Only the results are left: the source's tensors went with the map.
    assert.equal(tf.memory().numTensors, before + 2 * 12);
    tf.dispose(out.flatMap((o) => [o.x, o.mask]));
    assert.equal(tf.memory().numTensors, before);

    // A filter hands its inputs on: they stay alive, and are the consumer's.
    const kept = (await fromTfDataset(tfd.array([1, 2]).map((k) => ({ t: tf.tensor1d([k as number, k as number]) })))
      .filter((e: { t: tf.Tensor }) => e, { placement: 'worker', module: MODULE, exportName: 'evenSum' })
      .toArray()) as { t: tf.Tensor }[];
    assert.deepEqual(
      kept.map((e) => Array.from(e.t.dataSync())),
      [
        [1, 1],
        [2, 2],
      ],
    );
    tf.dispose(kept.map((e) => e.t));

    // An in-memory cache replays the same elements next pass: nothing is disposed under it.
    const cached = fromTfDataset(source())
      .cache()
      .map((e: unknown) => e, { placement: 'worker', module: MODULE, exportName: 'scale' });
    const first = (await cached.toArray()) as unknown as Example[];
    const second = (await cached.toArray()) as unknown as Example[];
    assert.deepEqual(Array.from(second[5]!.x.dataSync()), Array.from(first[5]!.x.dataSync()));
    tf.dispose([...first, ...second].flatMap((o) => [o.x, o.mask]));
  });

  it('a disposed tensor in an element is an error naming the element', async () => {
    const inputs = [0, 1, 2].map(example);
    inputs[1]!.x.dispose();
    await assert.rejects(
      from(inputs)
        .map((e: Example) => e, { placement: 'worker', module: MODULE, exportName: 'scale' })
        .toArray(),
      (e: unknown) => e instanceof PipelineError && /element 1/.test((e as Error).message) && /disposed/i.test((e as Error).message),
    );
    tf.dispose(inputs.flatMap((e) => [e.x, e.mask]));
  });
});
