import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { FIXTURES, assertFiguresAddUp, drain, idOf, op, profile } from './dialects-helpers';

const F = 'streams.ts';

describe('runner profiles of Node-streams pipelines', function () {
  this.timeout(60_000);

  it('records each stream operator at its source position, with the chain as run, and times the heavy map above the trivial one', async () => {
    const p = await profile(F, 'heavyThenLight');
    const from = idOf(F, 'Readable.from(numbers(100_000))\n    .map((x: number) => spin', 'from');
    const heavy = idOf(F, '.map((x: number) => spin', 'map');
    const light = idOf(F, '.map((x: number) => x + 1)', 'map');
    const filter = idOf(F, '.filter((x: number) => x % 2', 'filter');
    assert.deepEqual(
      p.ops.map((o) => [o.id, o.kind, o.inputs]),
      [
        [from, 'from', []],
        [heavy, 'map', [from]],
        [light, 'map', [heavy]],
        [filter, 'filter', [light]],
      ],
    );
    assert.equal(p.pipeline.rootId, filter);
    for (const o of p.ops) assert.equal(o.dialect, 'node-streams');
    // A sync fn: only its buffer can change.
    assert.deepEqual(op(p, heavy).levers, ['prefetch']);
    assert.ok(op(p, heavy).counters.selfSeconds > 10 * op(p, light).counters.selfSeconds, `heavy ${op(p, heavy).counters.selfSeconds} s, light ${op(p, light).counters.selfSeconds} s`);
    // The filter keeps every other element, and the run counted what the root handed on.
    const root = op(p, filter);
    assert.ok(Math.abs(root.counters.produced - p.run.elements) <= 1, `${root.counters.produced} produced, ${p.run.elements} consumed`);
    assert.ok(Math.abs(root.counters.pulled - 2 * root.counters.produced) <= 2, `${root.counters.pulled} pulled for ${root.counters.produced}`);
    assert.ok(op(p, heavy).counters.calls >= op(p, heavy).counters.produced);
    assertFiguresAddUp(p);
  });

  it('profiles a stream exported as it is, which it reads once', async () => {
    const p = await profile(F, 'once');
    const map = idOf(F, 'Readable.from(numbers(100_000)).map((x: number) => spin(x, 40_000))', 'map');
    assert.equal(p.pipeline.rootId, map);
    assert.equal(p.pipeline.exportName, 'once');
    // A stream pushes ahead of its reader, up to its buffer (16 objects): the window's two ends hold about as many.
    assert.ok(Math.abs(op(p, map).counters.produced - p.run.elements) <= 17, `${op(p, map).counters.produced} produced, ${p.run.elements} consumed`);
  });

  it('applies a concurrency override to an async map: 4 calls are seen in flight at once, as 1 without it', async () => {
    const map = idOf(F, '.map(async (x: number) => {\n      await sleep(4)', 'map');
    const asWritten = await profile(F, 'lookups');
    assert.deepEqual(op(asWritten, map).levers, ['parallelism', 'prefetch']);
    assert.equal(op(asWritten, map).counters.inFlightHighWater, 1);
    assert.equal(op(asWritten, map).knobs.parallelism, 1);
    const tuned = await profile(F, 'lookups', { overrides: { [map]: { parallelism: 4, prefetch: 8 } } });
    const m = op(tuned, map);
    assert.equal(m.counters.inFlightHighWater, 4);
    assert.equal(m.knobs.parallelism, 4);
    assert.equal(m.knobs.bufferSize, 8);
    assert.equal(m.overridden, true);
    assert.ok(m.counters.asyncCalls > 0 && m.counters.asyncLatencySeconds > 0);
    assertFiguresAddUp(tuned);
  });

  it('yields the same elements in the same order with and without tracing, and passes errors on unchanged', async () => {
    const [plain, traced] = await Promise.all([drain(F, 'finite', 'plain'), drain(F, 'finite', 'traced')]);
    assert.equal(plain.out.length, 150);
    assert.deepEqual(traced.out, plain.out);
    assert.equal(traced.error, undefined);
    assert.deepEqual(
      traced.ops.map((o) => o.kind),
      ['from', 'map', 'filter', 'flatMap', 'skip', 'take'],
    );
    assert.equal(traced.ops.at(-1)!.produced, 150);
    const [plainFail, tracedFail] = await Promise.all([drain(F, 'failing', 'plain'), drain(F, 'failing', 'traced')]);
    assert.equal(tracedFail.error, 'bad element 7');
    assert.equal(tracedFail.error, plainFail.error);
    // Node streams may drop what is buffered when a stage fails: what does arrive is in order.
    assert.deepEqual(tracedFail.out, [0, 1, 2, 3, 4, 5, 6].slice(0, tracedFail.out.length));
  });

  it('makes the arguments of compose() stages where the engine located them: a Transform object and a generator function', async () => {
    const C = 'streams-compose.ts';
    const call = idOf(C, 'compose(Readable.from', 'compose');
    const [line, column] = call.split(':').map(Number) as [number, number];
    const from = idOf(C, 'compose(Readable.from', 'from');
    const heavy = idOf(C, 'new Heavy()', 'new');
    const addOne = idOf(C, 'addOne) as', 'addOne');
    const args = [idOf(C, 'compose(Readable.from', 'Readable'), heavy, addOne];
    const p = await profile(C, 'composed', { argSites: [{ site: { file: path.join(FIXTURES, C), line, column }, args }] });
    assert.deepEqual(
      p.ops.map((o) => [o.id, o.kind, o.inputs]),
      [
        [from, 'from', []],
        [heavy, 'flatMap', [from]],
        [addOne, 'flatMap', [heavy]],
      ],
    );
    assert.equal(p.pipeline.rootId, addOne);
    assert.ok(op(p, heavy).counters.selfSeconds > 10 * op(p, addOne).counters.selfSeconds, `Transform ${op(p, heavy).counters.selfSeconds} s, generator ${op(p, addOne).counters.selfSeconds} s`);
    assert.ok(Math.abs(op(p, addOne).counters.produced - p.run.elements) <= 1, `${op(p, addOne).counters.produced} produced, ${p.run.elements} consumed`);
    assertFiguresAddUp(p);
  });
});
