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

  it('gives the same elements the same stage times from run to run', async () => {
    const a = await profile(F, 'chain', { maxElements: 40, seconds: 30 });
    const b = await profile(F, 'chain', { maxElements: 40, seconds: 30 });
    const decode = idOf(F, 'decode(numbers(1e9))', 'decode');
    const [x, y] = [op(a, decode).counters, op(b, decode).counters];
    assert.equal(x.produced, y.produced);
    // Same elements, same work: the self times agree far better than the 10× between stages.
    assert.ok(Math.max(x.selfSeconds, y.selfSeconds) < 2 * Math.min(x.selfSeconds, y.selfSeconds), `${x.selfSeconds} s vs ${y.selfSeconds} s`);
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
    assert.deepEqual(tracedFail, { ...plainFail, ops: tracedFail.ops });
  });
});
