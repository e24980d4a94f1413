import { strict as assert } from 'node:assert';
import { assertFiguresAddUp, drain, idOf, op, profile } from './dialects-helpers';

const F = 'tfjs.ts';

describe('runner profiles of tfjs-data pipelines', function () {
  this.timeout(90_000);

  it('records each tfjs-data operator at its source position, with the chain as run, and times the heavy map above the trivial one', async () => {
    const p = await profile(F, 'heavyThenLight');
    const gen = idOf(F, '.generator(function* () {\n      for (let i = 0; ; i++) yield i;\n    })\n    .map((x) => spin', 'generator');
    const heavy = idOf(F, '.map((x) => spin', 'map');
    const light = idOf(F, '.map((x) => (x as number) + 1)', 'map');
    const batch = idOf(F, '.batch(8)', 'batch');
    const prefetch = idOf(F, '.prefetch(2)', 'prefetch');
    assert.deepEqual(
      p.ops.map((o) => [o.id, o.kind, o.inputs]),
      [
        [gen, 'from', []],
        [heavy, 'map', [gen]],
        [light, 'map', [heavy]],
        [batch, 'batch', [light]],
        [prefetch, 'prefetch', [batch]],
      ],
    );
    assert.equal(p.pipeline.rootId, prefetch);
    for (const o of p.ops) {
      assert.equal(o.dialect, 'tfjs-data');
      assert.deepEqual(o.levers, ['prefetch']);
    }
    assert.equal(op(p, batch).knobs.batchSize, 8);
    assert.equal(op(p, prefetch).knobs.bufferSize, 2);
    assert.ok(op(p, heavy).counters.selfSeconds > 10 * op(p, light).counters.selfSeconds, `heavy ${op(p, heavy).counters.selfSeconds} s, light ${op(p, light).counters.selfSeconds} s`);
    // Batches of 8: the root handed on what the run consumed, the batch pulled 8 for each.
    const root = op(p, prefetch);
    assert.ok(Math.abs(root.counters.produced - p.run.elements) <= 1, `${root.counters.produced} produced, ${p.run.elements} consumed`);
    assert.ok(Math.abs(op(p, batch).counters.pulled - 8 * op(p, batch).counters.produced) <= 16 + 8 * 2, `${op(p, batch).counters.pulled} pulled for ${op(p, batch).counters.produced} batches`);
    assertFiguresAddUp(p);
  });

  it('applies a prefetch override after a mapAsync: its calls, one at a time as written, are pulled 4 at once', async () => {
    const map = idOf(F, '.mapAsync(async (x) => {', 'mapAsync');
    const asWritten = await profile(F, 'lookups');
    assert.equal(op(asWritten, map).counters.inFlightHighWater, 1);
    const p = await profile(F, 'lookups', { overrides: { [map]: { prefetch: 4 } } });
    const m = op(p, map);
    assert.equal(m.kind, 'map');
    // tfjs-data's only concurrency: a prefetch asks for its input's next elements before they are ready.
    assert.equal(m.counters.inFlightHighWater, 4);
    assert.ok(m.counters.asyncCalls > 0 && m.counters.asyncLatencySeconds > 0);
    const inserted = p.ops.find((o) => o.kind === 'prefetch');
    assert.ok(inserted, 'no prefetch was inserted');
    assert.equal(inserted.knobs.bufferSize, 4);
    assert.equal(inserted.overridden, true);
    assert.deepEqual(inserted.inputs, [map]);
    assert.equal(p.pipeline.rootId, inserted.id);
    assertFiguresAddUp(p);
  });

  it('yields the same elements in the same order with and without tracing, and passes errors on unchanged', async () => {
    const [plain, traced] = await Promise.all([drain(F, 'finite', 'plain'), drain(F, 'finite', 'traced')]);
    assert.equal(plain.out.length, 60);
    assert.deepEqual(traced.out, plain.out);
    assert.deepEqual(
      traced.ops.map((o) => o.kind),
      ['from', 'from', 'zip', 'map', 'filter', 'shuffle', 'skip', 'take', 'repeat'],
    );
    assert.equal(traced.ops.at(-1)!.produced, 60);
    const [plainFail, tracedFail] = await Promise.all([drain(F, 'failing', 'plain'), drain(F, 'failing', 'traced')]);
    assert.equal(tracedFail.error, 'bad element 7');
    assert.deepEqual([tracedFail.out, tracedFail.error], [plainFail.out, plainFail.error]);
  });

  it('watches a script that trains with model.fitDataset as a training script: waits and steps, and the pipeline it pulls', async () => {
    const p = await profile('tfjs-train.ts', '', { exportName: undefined, seconds: 0.8 });
    const t = p.trainer;
    assert.ok(t, 'the profile has no trainer section');
    assert.ok(t.steps > 0 && t.warmupSteps >= 3, JSON.stringify(t));
    assert.equal(p.run.elements, t.steps);
    const batch = idOf('tfjs-train.ts', '.batch(16)', 'batch');
    const map = idOf('tfjs-train.ts', '.map((i) =>', 'map');
    assert.equal(p.pipeline.rootId, batch);
    assert.deepEqual(op(p, batch).inputs, [map]);
    // The map's per-element work dwarfs a 4→1 dense layer's step: the loop mostly waits for input.
    assert.ok(t.waitSeconds > t.stepSeconds, JSON.stringify(t));
    assert.ok(Math.abs(op(p, batch).counters.produced - t.steps) <= 1, `${op(p, batch).counters.produced} batches for ${t.steps} steps`);
  });
});
