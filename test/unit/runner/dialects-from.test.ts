import { strict as assert } from 'node:assert';
import { from } from '../../../src/data/index';
import { TRACER_KEY } from '../../../src/data/tracing';
import { RunnerTracer } from '../../../src/runner/tracer';

/** Elements, and every `every`-th awaits a timer of `ms`: waits of very different lengths, as a source reading files or a network yields them. */
async function* source(n: number, every: number, ms: number): AsyncGenerator<number> {
  for (let i = 0; i < n; i++) {
    if (i % every === every - 1) await new Promise((r) => setTimeout(r, ms));
    yield i;
  }
}

describe('plumber-data from() over an async generator, traced (the dialect runs rely on its figures)', function () {
  this.timeout(30_000);
  afterEach(() => {
    delete (globalThis as Record<symbol, unknown>)[TRACER_KEY];
  });

  it('records the waits the source really had: never more than the run lasted, and the same each run', async () => {
    const n = 3000;
    const every = 100;
    const ms = 10;
    // Timers never fire early: the source waited at least this long, whatever the machine's load.
    const slept = (Math.floor(n / every) * ms) / 1000;
    for (let round = 0; round < 4; round++) {
      const tracer = new RunnerTracer();
      (globalThis as Record<symbol, unknown>)[TRACER_KEY] = tracer;
      const ds = from(() => source(n, every, ms))
        .map((x) => x + 1)
        .batch(10);
      const t0 = performance.now();
      let count = 0;
      for await (const b of ds) count += b.length;
      const elapsed = (performance.now() - t0) / 1000;
      assert.equal(count, n);
      const ops = tracer.ops(__filename, new Map());
      for (const o of ops) assert.ok(o.counters.waitSeconds <= elapsed * 1.02 + 0.005, `round ${round}: ${o.kind} waited ${o.counters.waitSeconds} s in a ${elapsed} s run`);
      const src = ops.find((o) => o.kind === 'from')!;
      assert.ok(src.counters.waitSeconds >= 0.9 * slept, `round ${round}: from waited ${src.counters.waitSeconds} s of the ${slept} s it slept`);
      const map = ops.find((o) => o.kind === 'map')!;
      assert.ok(map.counters.waitSeconds >= 0.9 * slept, `round ${round}: the map was waited on ${map.counters.waitSeconds} s of the ${slept} s its source slept`);
    }
  });
});
