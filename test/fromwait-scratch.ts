import { from } from '/work/wt-trace/src/data/index';
import { TRACER_KEY } from '/work/wt-trace/src/data/tracing';
import { RunnerTracer } from '/work/wt-trace/src/runner/tracer';

async function* source(n: number): AsyncGenerator<number> {
  for (let i = 0; i < n; i++) {
    if (i % 100 === 99) await new Promise((r) => setTimeout(r, 10));
    yield i;
  }
}
(async () => {
  for (let round = 0; round < 4; round++) {
    const tracer = new RunnerTracer();
    (globalThis as any)[TRACER_KEY] = tracer;
    const ds = from(() => source(3000)).map((x) => x + 1).batch(10);
    const t0 = performance.now();
    let n = 0;
    for await (const b of ds) n += b.length;
    const elapsed = (performance.now() - t0) / 1000;
    const ops = tracer.ops(__filename, new Map());
    console.log(n, elapsed.toFixed(3), ops.map((o) => `${o.kind}: wait ${o.counters.waitSeconds.toFixed(3)} self ${o.counters.selfSeconds.toFixed(3)}`).join(' | '));
  }
})();
