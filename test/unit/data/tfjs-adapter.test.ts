/**
 * fromTfDataset / toTfDataset with the real TensorFlow.js packages (tfjs-core on the CPU backend,
 * tfjs-data, tfjs-layers): elements in order, errors through, tensors as tensors, and a model
 * trained with fitDataset from a plumber-data pipeline.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as tfc from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import * as tfd from '@tensorflow/tfjs-data';
import * as tfl from '@tensorflow/tfjs-layers';
import { from, fromTfDataset, PipelineError, range, toTfDataset } from 'plumber-data';
import { traced } from './helpers';

const TENSOR_MODULE = join(__dirname, '../../fixtures/data/tensor-work.ts');
const CPU_MODULE = join(__dirname, '../../fixtures/data/cpu-work.ts');

/** The user's tf namespace, as `import * as tf from '@tensorflow/tfjs'` would give it. */
const tf = { data: tfd, tensor: tfc.tensor };

describe('plumber-data tfjs adapter', function () {
  this.timeout(60_000);
  before(async () => {
    await tfc.setBackend('cpu');
  });

  it('fromTfDataset yields the tfjs dataset elements in order, every pass', async () => {
    const src = tfd.array([...Array(50).keys()]).map((x) => (x as number) * 3);
    const ds = fromTfDataset(src).map((x) => x + 1);
    const want = [...Array(50).keys()].map((x) => x * 3 + 1);
    assert.deepEqual(await ds.toArray(), want);
    assert.deepEqual(await ds.toArray(), want);
  });

  it('fromTfDataset is a from operator at the fromTfDataset call, with the tfjs size as cardinality', () => {
    const { tracer } = traced(() => fromTfDataset(tfd.array([1, 2, 3])));
    const { info } = tracer.only('from');
    assert.equal(info.cardinality, 3);
    assert.ok(info.site !== undefined);
    // The site is the name written at the call (the op id the graph joins on).
    const line = require('node:fs').readFileSync(info.site.file, 'utf8').split('\n')[info.site.line - 1] as string;
    assert.equal(line.slice(info.site.column - 1, info.site.column - 1 + 'fromTfDataset'.length), 'fromTfDataset');
  });

  it('fromTfDataset hands tensors on as tensors, with their values', async () => {
    const before = tfc.memory().numTensors;
    const src = tfd.array([0, 1, 2, 3]).map((x) => ({ x: tfc.fill([2, 2], x as number), label: x }));
    const out = (await fromTfDataset(src).toArray()) as { x: tfc.Tensor; label: number }[];
    assert.deepEqual(
      out.map((e) => e.label),
      [0, 1, 2, 3],
    );
    for (const e of out) {
      assert.ok(e.x instanceof tfc.Tensor);
      assert.deepEqual(e.x.shape, [2, 2]);
      assert.deepEqual(Array.from(e.x.dataSync()), [e.label, e.label, e.label, e.label]);
      e.x.dispose();
    }
    assert.equal(tfc.memory().numTensors, before);
  });

  it("fromTfDataset passes the tfjs iterator's error on, after the elements before it", async () => {
    const src = tfd.generator(function* () {
      yield 1;
      yield 2;
      throw new Error('bad record 3');
    });
    const seen: unknown[] = [];
    await assert.rejects(
      fromTfDataset(src).forEach((x) => void seen.push(x)),
      (e: unknown) => e instanceof PipelineError && /bad record 3/.test(String((e as Error).message) + String((e as { cause?: Error }).cause?.message)),
    );
    assert.deepEqual(seen, [1, 2]);
  });

  it('toTfDataset makes tensors of Batches and typed arrays, and keeps other values', async () => {
    const ds = from([...Array(6).keys()])
      .map((i) => ({ xs: new Float32Array([i, -i]), ys: i }))
      .batch(4);
    const it = await toTfDataset(ds, tf).iterator();
    const first = (await it.next()).value as { xs: tfc.Tensor; ys: tfc.Tensor };
    assert.ok(first.xs instanceof tfc.Tensor);
    assert.deepEqual(first.xs.shape, [4, 2]);
    assert.deepEqual(Array.from(first.xs.dataSync()), [0, -0, 1, -1, 2, -2, 3, -3]);
    assert.deepEqual(Array.from(first.ys.dataSync()), [0, 1, 2, 3]);
    const second = (await it.next()).value as { xs: tfc.Tensor; ys: tfc.Tensor };
    assert.deepEqual(second.xs.shape, [2, 2]);
    assert.equal((await it.next()).done, true);
    tfc.dispose([first.xs, first.ys, second.xs, second.ys]);

    const plain = await toTfDataset(from([{ a: 'text', n: [1, 2], v: new Int32Array([7, 8]) }]), tf).toArray();
    const e = plain[0] as unknown as { a: string; n: number[]; v: tfc.Tensor };
    assert.equal(e.a, 'text');
    assert.deepEqual(e.n, [1, 2]);
    assert.equal(e.v.dtype, 'int32');
    assert.deepEqual(Array.from(e.v.dataSync()), [7, 8]);
    e.v.dispose();
  });

  it('toTfDataset: each tfjs iterator is a pass of the pipeline, and errors reach tfjs', async () => {
    const tds = toTfDataset(range(5), tf);
    assert.deepEqual(await tds.toArray(), [0, 1, 2, 3, 4]);
    assert.deepEqual(await tds.toArray(), [0, 1, 2, 3, 4]);
    const failing = toTfDataset(
      range(5).map((x) => {
        if (x === 3) throw new Error('fn failed on 3');
        return x;
      }),
      tf,
    );
    await assert.rejects(failing.toArray(), /fn failed on 3/);
  });

  it('trains a tfjs-layers model with fitDataset from a plumber-data pipeline, leaking no tensors', async () => {
    // y = 2a - b + 1, learnt by one dense unit: the loss must fall over the epochs.
    const rows = [...Array(64).keys()].map((i) => ({ a: ((i * 7) % 16) / 16, b: ((i * 3) % 8) / 8 }));
    const ds = from(rows)
      .map((r) => ({ xs: new Float32Array([r.a, r.b]), ys: new Float32Array([2 * r.a - r.b + 1]) }))
      .batch(16);
    const model = tfl.sequential({ layers: [tfl.layers.dense({ units: 1, inputShape: [2] })] });
    model.compile({ optimizer: tfc.train.sgd(0.3), loss: 'meanSquaredError' });
    const before = tfc.memory().numTensors;
    const h = await model.fitDataset(toTfDataset(ds, tf), { epochs: 8, verbose: 0 });
    const loss = h.history.loss as number[];
    assert.equal(loss.length, 8);
    assert.ok(loss[7]! < loss[0]! / 2, `loss ${loss.join(', ')}`);
    // fitDataset disposed every batch the adapter made.
    assert.equal(tfc.memory().numTensors, before);
    model.dispose();
  });

  it('a converted tfjs chain trains: tfjs source, worker-thread map making tensors, back to tfjs for batch and fitDataset', async () => {
    const rows = tfd.array([...Array(64).keys()].map((i) => ({ a: ((i * 7) % 16) / 16, b: ((i * 3) % 8) / 8 })));
    const ds = fromTfDataset(rows).map((r: { a: number; b: number }) => r, { placement: 'worker', module: TENSOR_MODULE, exportName: 'features', parallelism: 2 });
    const model = tfl.sequential({ layers: [tfl.layers.dense({ units: 1, inputShape: [2] })] });
    model.compile({ optimizer: tfc.train.sgd(0.3), loss: 'meanSquaredError' });
    const h = await model.fitDataset(toTfDataset(ds, tf).batch(16), { epochs: 6, verbose: 0 });
    const loss = h.history.loss as number[];
    assert.equal(loss.length, 6);
    assert.ok(loss[5]! < loss[0]! / 2, `loss ${loss.join(', ')}`);
    model.dispose();
  });

  it('toTfDataset keeps the worker threads of one epoch for the next (fitDataset asks for an iterator per epoch)', async () => {
    const tds = toTfDataset(
      range(40).map((x: number) => x, { placement: 'worker', module: CPU_MODULE, exportName: 'threadOf', parallelism: 2 }),
      tf,
    );
    const first = new Set((await tds.toArray()) as number[]);
    const second = new Set((await tds.toArray()) as number[]);
    assert.ok(first.size >= 1 && second.size >= 1);
    // New pools would start new threads, with new ids.
    for (const id of second) assert.ok(first.has(id), `thread ${id} of the second epoch is not one of the first's (${[...first].join(', ')})`);
  });

  it('refuses what is not a tfjs dataset or a tf namespace, saying what it needs', () => {
    assert.throws(() => fromTfDataset([1, 2] as never), /needs a tfjs Dataset/);
    assert.throws(() => toTfDataset(range(2), { data: {} } as never), /tf namespace/);
    assert.throws(() => toTfDataset([1] as never, tf), /plumber-data Dataset/);
  });
});
