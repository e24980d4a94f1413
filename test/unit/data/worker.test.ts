import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { from, PipelineError, range, threadCpuSeconds } from 'plumber-data';
import { liveHandles, traced } from './helpers';

// Worker placement must work for a TypeScript module when the process runs under `node --import tsx`
// (as mocha does here): piscina workers inherit execArgv, and the worker entry require()s the module.
const MODULE = join(__dirname, '../../fixtures/data/cpu-work.ts');
const BROKEN = join(__dirname, '../../fixtures/data/broken-module.ts');

const ports = (): number => liveHandles().filter((h) => h === 'MessagePort' || h === 'Worker').length;

describe('plumber-data worker placement', function () {
  // Starting worker threads that load tsx takes a few hundred ms on a busy machine.
  this.timeout(60_000);

  it('runs a named export of a TypeScript module in worker threads, in order', async () => {
    // 200 elements, about 60 ms of work: the fresh threads' first calls run the fn cold, and on 40
    // (12 ms) that alone once made the workers report 4.1 times the work done warm here.
    const n = 200;
    const { tracer, value } = traced(() => range(n).map((x: number) => x, { placement: 'worker', module: MODULE, exportName: 'hashElement', parallelism: 2 }));
    const out = await value.toArray();
    const { spin } = (await import(MODULE)) as typeof import('../../fixtures/data/cpu-work');
    assert.deepEqual(
      out,
      [...Array(n).keys()].map((x) => spin(x, 200_000)),
    );
    const { info, counters } = tracer.only('map');
    assert.equal(info.placement, 'worker');
    assert.deepEqual(info.fnModule, { file: MODULE, exportName: 'hashElement' });
    assert.equal(counters.calls, n);
    // The same work on this thread, by the same clock: workers must report about as much CPU
    // (a per-task reading alone books ~1/3 of it: the scheduler credits a task's tail later).
    spin(1, 2_000_000);
    const c0 = threadCpuSeconds();
    for (let x = 0; x < n; x++) spin(x, 200_000);
    const here = threadCpuSeconds() - c0;
    assert.ok(counters.workerCpuSeconds > 0.6 * here && counters.workerCpuSeconds < 4 * here, `workers: ${counters.workerCpuSeconds} s, here: ${here} s`);
    assert.ok(counters.inFlightHighWater >= 2, `in flight: ${counters.inFlightHighWater}`);
  });

  it('gives every element its own index when small elements travel several to a task', async () => {
    const { tracer, value } = traced(() => range(5000).map((x: number) => x, { placement: 'worker', module: MODULE, exportName: 'indexOf', parallelism: 2 }));
    assert.deepEqual(await value.toArray(), [...Array(5000).keys()]);
    const { counters } = tracer.only('map');
    assert.equal(counters.calls, 5000);
    assert.equal(counters.produced, 5000);
  });

  it('draws the same numbers from ctx.rng in a worker thread as on the main thread, one generator per call', async () => {
    const { twoDraws } = (await import(MODULE)) as typeof import('../../fixtures/data/cpu-work');
    const here = await range(6).map(twoDraws, { seed: 5 }).toArray();
    const there = await range(6).map(twoDraws, { seed: 5, placement: 'worker', module: MODULE, parallelism: 2 }).toArray();
    assert.deepEqual(there, here);
    assert.ok(
      here.every(([a, b]) => a !== b),
      JSON.stringify(here),
    );
  });

  it('accepts a file: URL, filters and flatMaps in workers', async () => {
    const url = pathToFileURL(MODULE).href;
    const kept = await range(10)
      .filter((x: number) => x, { placement: 'worker', module: url, exportName: 'isMultipleOfThree', parallelism: 1 })
      .toArray();
    assert.deepEqual(kept, [0, 3, 6, 9]);
    const doubled = await range(3)
      .flatMap((x: number) => [x], { placement: 'worker', module: url, exportName: 'twice', parallelism: 1 })
      .toArray();
    assert.deepEqual(doubled, [0, 0, 1, 1, 2, 2]);
  });

  it('brings typed-array results back intact and stacks them', async () => {
    const [b] = await range(4)
      .map((x: number) => new Float32Array([x]), { placement: 'worker', module: MODULE, exportName: 'fill', parallelism: 2 })
      .batch(4)
      .toArray();
    assert.deepEqual(b.shape, [4, 1024]);
    assert.equal(b.data[3 * 1024 + 5], 3);
    // A stacked batch is moved to the worker and summed there.
    const sums = await from([new Float32Array([1, 2]), new Float32Array([3, 4])])
      .batch(2)
      .map((x) => x.length, { placement: 'worker', module: MODULE, exportName: 'total', parallelism: 1 })
      .toArray();
    assert.deepEqual(sums, [10]);
  });

  it('reports an exception inside a worker with the element index', async () => {
    const ds = range(10).map((x: number) => x, { placement: 'worker', module: MODULE, exportName: 'failOnThree', parallelism: 2 });
    await assert.rejects(ds.toArray(), (e: unknown) => e instanceof PipelineError && e.index === 3 && /three is not allowed/.test(e.message));
  });

  it('turns a worker module that fails to load into a clear error, not a crash', async () => {
    const ds = range(5).map((x: number) => x, { placement: 'worker', module: BROKEN, exportName: 'never', parallelism: 2 });
    await assert.rejects(ds.toArray(), (e: unknown) => e instanceof PipelineError && e.message.includes(BROKEN) && /broken-module refuses to load/.test(e.message) && /Check that the file exists/.test(e.message));
    const missing = range(5).map((x: number) => x, { placement: 'worker', module: MODULE, exportName: 'noSuchExport', parallelism: 1 });
    await assert.rejects(missing.toArray(), /no exported function named 'noSuchExport'/);
  });

  it('runs only what the module exports, never a member every object inherits', async () => {
    // Looked up as a plain property, 'constructor' is Object: it would hand every element back unchanged.
    const inherited = range(3).map((x: number) => x + 1, { placement: 'worker', module: MODULE, exportName: 'constructor', parallelism: 1 });
    await assert.rejects(inherited.toArray(), /no exported function named 'constructor'/);
  });

  it('leaves no live worker after the consumer breaks out of the loop', async () => {
    const before = ports();
    let n = 0;
    for await (const x of range(10_000).map((x: number) => x, { placement: 'worker', module: MODULE, exportName: 'hashElement', parallelism: 2 })) {
      assert.equal(typeof x, 'number');
      if (++n === 3) break;
    }
    assert.equal(ports(), before, `handles left: ${liveHandles().join(', ')}`);
  });

  it('keeps the pool warm across the passes of a repeat, and ends it with the iteration', async () => {
    const before = ports();
    const ids = await range(3)
      .map((x: number) => x, { placement: 'worker', module: MODULE, exportName: 'threadOf', parallelism: 1 })
      .repeat(3)
      .toArray();
    assert.equal(ids.length, 9);
    assert.equal(new Set(ids).size, 1, `threads: ${ids.join(', ')}`);
    assert.equal(ports(), before);
  });

  it('ends the pool when take() has what it needs', async () => {
    const before = ports();
    const out = await range(10_000)
      .map((x: number) => x, { placement: 'worker', module: MODULE, exportName: 'double', parallelism: 2 })
      .take(3)
      .toArray();
    assert.deepEqual(out, [0, 2, 4]);
    assert.equal(ports(), before);
  });
});
