import { strict as assert } from 'node:assert';
import { assertFiguresAddUp, drain, idOf, op, profile } from './dialects-helpers';

const F = 'asyncgen.ts';

describe('runner profiles of async-generator chains', function () {
  this.timeout(60_000);

  it('records each stage at the call that builds it, with the chain as run, and times the heavy stage above the trivial one', async () => {
    const p = await profile(F, 'chain');
    const numbers = idOf(F, 'decode(numbers(1e9))', 'numbers');
    const decode = idOf(F, 'decode(numbers(1e9))', 'decode');
    const increment = idOf(F, 'batches(increment(decoded), 8)', 'increment');
    const batches = idOf(F, 'batches(increment(decoded), 8)', 'batches');
    assert.deepEqual(
      p.ops.map((o) => [o.id, o.kind, o.inputs]),
      [
        [numbers, 'from', []],
        [decode, 'flatMap', [numbers]],
        [increment, 'flatMap', [decode]],
        [batches, 'flatMap', [increment]],
      ],
    );
    assert.equal(p.pipeline.rootId, batches);
    for (const o of p.ops) {
      assert.equal(o.dialect, 'async-generator');
      assert.deepEqual(o.levers, []);
    }
    assert.ok(op(p, decode).counters.selfSeconds > 10 * op(p, increment).counters.selfSeconds, `decode ${op(p, decode).counters.selfSeconds} s, increment ${op(p, increment).counters.selfSeconds} s`);
    const root = op(p, batches);
    assert.ok(Math.abs(root.counters.produced - p.run.elements) <= 1, `${root.counters.produced} produced, ${p.run.elements} consumed`);
    assert.ok(Math.abs(root.counters.pulled - 8 * root.counters.produced) <= 16, `${root.counters.pulled} pulled for ${root.counters.produced} batches`);
    assertFiguresAddUp(p);
  });

  it('counts what a stage awaits besides its input as latency its consumer waits for, not as its own work', async () => {
    const p = await profile(F, 'sleepy');
    const lookup = op(p, idOf(F, 'increment(lookup(numbers(1e9)))', 'lookup'));
    const slept = (lookup.counters.produced * 3) / 1000;
    // Timers never fire early: each element cost its consumer at least 3 ms of waiting.
    assert.ok(lookup.counters.waitSeconds >= 0.9 * slept, `waited ${lookup.counters.waitSeconds} s for ${lookup.counters.produced} elements of 3 ms`);
    assert.ok(lookup.counters.selfSeconds < 0.3 * slept, `self ${lookup.counters.selfSeconds} s for ${lookup.counters.produced} elements of 3 ms asleep`);
    // The model prices the sleep as a wait, one call at a time: each step is an awaited call whose latency holds it.
    assert.ok(lookup.counters.asyncCalls >= lookup.counters.produced, `${lookup.counters.asyncCalls} awaited steps for ${lookup.counters.produced} elements`);
    assert.ok(lookup.counters.asyncLatencySeconds >= 0.9 * slept, `latency ${lookup.counters.asyncLatencySeconds} s for ${lookup.counters.produced} elements of 3 ms`);
    assert.equal(lookup.counters.inFlightHighWater, 1);
    const increment = op(p, idOf(F, 'increment(lookup(numbers(1e9)))', 'increment'));
    assert.ok(increment.counters.asyncLatencySeconds < 0.3 * slept, `the stage after it does not count its wait as its own latency: ${increment.counters.asyncLatencySeconds} s`);
    assertFiguresAddUp(p);
  });

  it('finds the stages of an ES module as of a CommonJS one, at the same positions', async () => {
    const p = await profile('asyncgen-esm.mts', 'chain');
    assert.deepEqual(
      p.ops.map((o) => [o.id, o.kind]),
      [
        [idOf('asyncgen-esm.mts', 'decode(numbers(1e9))', 'numbers'), 'from'],
        [idOf('asyncgen-esm.mts', 'decode(numbers(1e9))', 'decode'), 'flatMap'],
        [idOf('asyncgen-esm.mts', 'batches(increment(decoded), 8)', 'increment'), 'flatMap'],
        [idOf('asyncgen-esm.mts', 'batches(increment(decoded), 8)', 'batches'), 'flatMap'],
      ],
    );
  });

  it('leaves an async generator function that plumber-data calls (from(gen)) to plumber-data: no stage of its own', async () => {
    const p = await profile('asyncgen-in-plumber.ts', 'pipeline');
    assert.deepEqual(
      p.ops.map((o) => [o.kind, o.dialect]),
      [
        ['from', undefined],
        ['map', undefined],
        ['batch', undefined],
      ],
    );
    // Not even registered off the chain: plumber-data times its source itself.
    const traced = await drain('asyncgen-in-plumber.ts', 'finite', 'traced');
    assert.deepEqual(traced.out, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual(traced.ops, []);
  });

  it('gives the same elements the same split of the stages’ time from run to run', async () => {
    // A shared machine stretches every clock of a run alike; what the same elements must keep is
    // each stage's share of the time, and the counts.
    const a = await profile(F, 'chain', { maxElements: 40, seconds: 30 });
    const b = await profile(F, 'chain', { maxElements: 40, seconds: 30 });
    const decode = idOf(F, 'decode(numbers(1e9))', 'decode');
    const share = (p: typeof a): number => op(p, decode).counters.selfSeconds / p.ops.reduce((t, o) => t + o.counters.selfSeconds, 0);
    assert.deepEqual(
      a.ops.map((o) => [o.id, o.counters.produced]),
      b.ops.map((o) => [o.id, o.counters.produced]),
    );
    assert.ok(share(a) > 0.8 && share(b) > 0.8 && Math.abs(share(a) - share(b)) < 0.1, `decode's share of the stages' time: ${share(a)} and ${share(b)}`);
  });

  it('yields the same elements in the same order with and without tracing, and passes errors on unchanged', async () => {
    const [plain, traced] = await Promise.all([drain(F, 'finite', 'plain'), drain(F, 'finite', 'traced')]);
    assert.equal(plain.out.length, 11);
    assert.deepEqual(traced.out, plain.out);
    assert.deepEqual(
      traced.ops.map((o) => o.kind),
      ['from', 'flatMap', 'flatMap'],
    );
    const [plainFail, tracedFail] = await Promise.all([drain(F, 'failing', 'plain'), drain(F, 'failing', 'traced')]);
    assert.equal(tracedFail.error, 'bad element 7');
    assert.deepEqual([tracedFail.out, tracedFail.error], [plainFail.out, plainFail.error]);
  });
});
