import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { files, from, PipelineError, range, type Batch } from 'plumber-data';
import { ChunkSizer } from '../../../src/data/internal/ops/worker-map';
import { liveHandles, traced } from './helpers';

// Worker maps send small elements several to a task (a chunk sized from the measured cost of a
// task). These tests check what chunking must not change (order, every element once, error
// indices, cancellation) and what it must do (adapt to the fn's cost, move buffers it may move).
const MODULE = join(__dirname, '../../fixtures/data/cpu-work.ts');

const threads = (): number => liveHandles().filter((h) => h === 'MessagePort' || h === 'Worker').length;

describe('plumber-data worker maps in chunks', function () {
  // Each case starts worker threads that load tsx: a few hundred ms on a busy machine.
  this.timeout(120_000);

  it('keeps every element exactly once, in order unless told otherwise, whatever the size and threads', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 1, max: 3 }), fc.boolean(), fc.constantFrom('map' as const, 'filter' as const), async (n, parallelism, deterministic, mode) => {
        const xs = Array.from({ length: n }, (_, i) => i * 3 + 1);
        const ds =
          mode === 'map'
            ? from(xs).map((x: number) => x, { placement: 'worker', module: MODULE, exportName: 'double', parallelism, deterministic })
            : from(xs).filter((x: number) => x, { placement: 'worker', module: MODULE, exportName: 'isMultipleOfThree', parallelism, deterministic });
        const out = await ds.toArray();
        const expected = mode === 'map' ? xs.map((x) => x * 2) : xs.filter((x) => x % 3 === 0);
        if (deterministic) assert.deepEqual(out, expected);
        else
          assert.deepEqual(
            [...out].sort((a, b) => a - b),
            expected,
          );
      }),
      { numRuns: 12 },
    );
  });

  it('names the element whose call failed inside a chunk of many', async () => {
    // Element 1700 is the only 3: the fixture throws on it, deep inside a task of many elements.
    const { tracer, value } = traced(() =>
      range(3000)
        .map((x) => (x === 1700 ? 3 : x + 10))
        .map((x: number) => x, { placement: 'worker', module: MODULE, exportName: 'failOnThree', parallelism: 2 }),
    );
    await assert.rejects(value.toArray(), (e: unknown) => e instanceof PipelineError && e.index === 1700 && /three is not allowed/.test(e.message) && /map/.test(e.message));
    const { counters } = tracer.infos.filter((i) => i.placement === 'worker').map((i) => ({ counters: tracer.counters.get(i.key) }))[0];
    assert.ok(counters !== undefined && counters.workerTasks > 0);
    // The elements before the failure went out in far fewer tasks than elements: they were chunked.
    assert.ok(counters.workerTasks * 4 < 1700, `${counters.workerTasks} tasks for 1700 elements`);
  });

  it('ends every thread when the consumer breaks out while chunks are running', async () => {
    const before = threads();
    const { tracer, value } = traced(() => range(1_000_000).map((x: number) => x, { placement: 'worker', module: MODULE, exportName: 'hashElement', parallelism: 2 }));
    let n = 0;
    for await (const x of value) {
      assert.equal(typeof x, 'number');
      if (++n === 300) break;
    }
    assert.equal(threads(), before, `handles left: ${liveHandles().join(', ')}`);
    const { counters } = tracer.only('map');
    // Tasks of several elements were in flight when the loop broke (more elements posted than consumed).
    assert.ok(counters.calls > counters.workerTasks, `${counters.calls} elements in ${counters.workerTasks} tasks`);
  });

  it('gives a cheap fn bigger chunks than an expensive one, from what it measured', async () => {
    const perTask = async (exportName: string): Promise<number> => {
      const { tracer, value } = traced(() => range(200).map((x: number) => x, { placement: 'worker', module: MODULE, exportName, parallelism: 2 }));
      assert.equal((await value.toArray()).length, 200);
      const { counters } = tracer.only('map');
      assert.equal(counters.calls, 200);
      return counters.calls / counters.workerTasks;
    };
    const cheap = await perTask('double');
    const expensive = await perTask('heavy');
    assert.ok(cheap > expensive, `cheap: ${cheap} elements per task, expensive: ${expensive}`);
  });

  it("sizes chunks from the fixed cost of one-element tasks and the fn's time per element", () => {
    // One-element tasks measure 200 µs of messaging, some delayed by load; fns of 1 µs and of 1 ms.
    const feed = (fnPerElement: number): ChunkSizer => {
      const s = new ChunkSizer(2);
      for (const m of [900e-6, 200e-6, 450e-6, 200e-6]) s.record({ elements: 1, messagingSeconds: m, fnSeconds: fnPerElement, bytesPerElement: 30 });
      for (const k of [8, 16, 32]) s.record({ elements: k, messagingSeconds: 200e-6 + 2e-6 * k, fnSeconds: fnPerElement * k, bytesPerElement: 30 });
      return s;
    };
    const cheap = feed(1e-6);
    const expensive = feed(1e-3);
    // Load only adds delay: the least probe is the cost.
    assert.equal(cheap.fixedSeconds, 200e-6);
    // Cheap: 200 µs is 5% of a task of 4000 elements of 1 µs. Expensive: 5% of 4 elements of 1 ms.
    assert.equal(cheap.next(undefined), 4000);
    assert.equal(expensive.next(undefined), 4);
    // What is left is shared between the threads rather than sent as one task.
    assert.equal(cheap.next(100), 50);
  });

  it('keeps a task within its time and bytes bounds however large the fixed cost', () => {
    const s = new ChunkSizer(2);
    s.record({ elements: 1, messagingSeconds: 0.5, fnSeconds: 1e-3, bytesPerElement: 100 });
    assert.equal(s.next(undefined), 25, 'a 1 ms fn: at most 25 ms of work per task');
    const big = new ChunkSizer(2);
    big.record({ elements: 1, messagingSeconds: 0.5, fnSeconds: 1e-7, bytesPerElement: 256 * 1024 });
    assert.equal(big.next(undefined), 4, '256 KB elements: at most 1 MB per task');
  });

  it('sends one element in a task now and then, to measure the fixed cost as the machine changes', () => {
    const s = new ChunkSizer(2);
    s.record({ elements: 1, messagingSeconds: 100e-6, fnSeconds: 1e-6, bytesPerElement: 8 });
    const sizes = Array.from({ length: 64 }, () => s.next(undefined));
    assert.equal(sizes.filter((k) => k === 1).length, 2);
    assert.ok(
      sizes.filter((k) => k > 1).every((k) => k === 2000),
      sizes.join(' '),
    );
  });

  it('moves the buffers of batches it stacked, and leaves the caller’s own arrays whole', async () => {
    const rows = [new Float32Array([1, 2]), new Float32Array([3, 4]), new Float32Array([5, 6])];
    // The caller's arrays go to the worker as copies: they must still be readable afterwards.
    const sums = await from(rows)
      .map((x) => x.length, { placement: 'worker', module: MODULE, exportName: 'total', parallelism: 1 })
      .toArray();
    assert.deepEqual(sums, [3, 7, 11]);
    assert.deepEqual(
      rows.map((r) => [...r]),
      [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
    );
    // A stacked batch arrives whole (its buffer moved, not a copy of part of it) and the new array
    // made in the worker comes back intact.
    const bytes = await from(rows)
      .batch(3)
      .map((x) => x.data.length, { placement: 'worker', module: MODULE, exportName: 'bufferBytes', parallelism: 1 })
      .toArray();
    assert.deepEqual(bytes, [24]);
    const doubled = await from(rows)
      .batch(2)
      .map((x) => x.data, { placement: 'worker', module: MODULE, exportName: 'timesTwo', parallelism: 1 })
      .toArray();
    assert.deepEqual(
      doubled.map((d) => [...d]),
      [
        [2, 4, 6, 8],
        [10, 12],
      ],
    );
  });

  it('copies a batch a user fn has seen, so the batch the fn kept stays readable', async () => {
    const rows = [new Float32Array([1, 2]), new Float32Array([3, 4])];
    const seen: Batch<Float32Array>[] = [];
    const doubled = await from(rows)
      .batch(2)
      .map((b) => {
        seen.push(b);
        return b;
      })
      .map((b) => b.data, { placement: 'worker', module: MODULE, exportName: 'timesTwo', parallelism: 1 })
      .toArray();
    assert.deepEqual([...doubled[0]], [2, 4, 6, 8]);
    assert.deepEqual([...seen[0].data], [1, 2, 3, 4]);
  });

  it('moves the bytes files() read to the workers, and they arrive intact', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plumber-worker-files-'));
    try {
      const contents = Array.from({ length: 12 }, (_, i) => Buffer.from(Array.from({ length: 100 + i * 37 }, (_, k) => (k * 7 + i) & 0xff)));
      contents.forEach((b, i) => writeFileSync(join(dir, `f${String(i).padStart(2, '0')}.bin`), b));
      const sums = await files('*.bin', { cwd: dir })
        .map((f) => f.bytes.length, { placement: 'worker', module: MODULE, exportName: 'byteSum', parallelism: 2 })
        .toArray();
      assert.deepEqual(
        sums,
        contents.map((b) => b.reduce((a, x) => a + x, 0)),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('starts its threads when the pass opens, before the input has made an element', async () => {
    const before = threads();
    let sawThreads = false;
    // The source waits (up to 10 s) for the map's threads before making its first element: threads
    // started on the first task would never appear in that time.
    const source = async function* (): AsyncGenerator<number> {
      const until = Date.now() + 10_000;
      while (!sawThreads && Date.now() < until) {
        sawThreads = threads() > before;
        await new Promise((r) => setTimeout(r, 5));
      }
      yield 1;
      yield 2;
    };
    const out = await from(source)
      .map((x: number) => x, { placement: 'worker', module: MODULE, exportName: 'double', parallelism: 2 })
      .toArray();
    assert.deepEqual(out, [2, 4]);
    assert.ok(sawThreads, 'no worker thread existed before the first element');
    assert.equal(threads(), before);
  });

  it('starts its threads when the iterator is created, before the first pull, and ends them with it', async () => {
    const before = threads();
    const it = range(10)
      .map((x: number) => x, { placement: 'worker', module: MODULE, exportName: 'double', parallelism: 2 })
      [Symbol.asyncIterator]();
    const until = Date.now() + 10_000;
    while (threads() === before && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    assert.ok(threads() > before, 'no worker thread started before the first pull');
    assert.deepEqual(await it.next(), { value: 0, done: false });
    await it.return?.();
    assert.equal(threads(), before, `handles left: ${liveHandles().join(', ')}`);
  });
});
