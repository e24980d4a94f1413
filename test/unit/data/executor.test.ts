import assert from 'node:assert/strict';
import { Batch, concatenate, from, range, zip } from 'plumber-data';

describe('plumber-data executor', () => {
  it('reads arrays, iterables, async iterables and generator functions with from()', async () => {
    assert.deepEqual(await from([1, 2, 3]).toArray(), [1, 2, 3]);
    assert.deepEqual(await from(new Set(['a', 'b'])).toArray(), ['a', 'b']);
    async function* agen(): AsyncGenerator<number> {
      yield 1;
      yield 2;
    }
    assert.deepEqual(await from(agen()).toArray(), [1, 2]);
    function* gen(): Generator<number> {
      yield 7;
      yield 8;
    }
    const ds = from(gen);
    // A function source is called once per epoch, so a generator restarts.
    assert.deepEqual(await ds.toArray(), [7, 8]);
    assert.deepEqual(await ds.toArray(), [7, 8]);
  });

  it('counts with range() forwards, backwards and by steps', async () => {
    assert.deepEqual(await range(4).toArray(), [0, 1, 2, 3]);
    assert.deepEqual(await range(2, 8, 3).toArray(), [2, 5]);
    assert.deepEqual(await range(3, 0, -1).toArray(), [3, 2, 1]);
    assert.deepEqual(await range(Infinity).take(3).toArray(), [0, 1, 2]);
  });

  it('maps, filters and flatMaps in one chain', async () => {
    const out = await range(6)
      .map((x) => x * 10)
      .filter((x) => x % 20 === 0)
      .flatMap((x) => [x, x + 1])
      .toArray();
    assert.deepEqual(out, [0, 1, 20, 21, 40, 41]);
  });

  it('flatMaps into async iterables and datasets, in order', async () => {
    async function* twice(x: number): AsyncGenerator<number> {
      yield x;
      yield x;
    }
    assert.deepEqual(
      await range(3)
        .flatMap((x) => twice(x))
        .toArray(),
      [0, 0, 1, 1, 2, 2],
    );
    assert.deepEqual(
      await range(3)
        .flatMap((x) => range(x))
        .toArray(),
      [0, 0, 1],
    );
  });

  it('keeps the last short batch unless dropRemainder is set', async () => {
    assert.deepEqual(await range(7).batch(3).toArray(), [[0, 1, 2], [3, 4, 5], [6]]);
    assert.deepEqual(await range(7).batch(3, { dropRemainder: true }).toArray(), [
      [0, 1, 2],
      [3, 4, 5],
    ]);
    assert.deepEqual(await range(6).batch(3, { dropRemainder: true }).toArray(), [
      [0, 1, 2],
      [3, 4, 5],
    ]);
    assert.deepEqual(await range(2).batch(3, { dropRemainder: true }).toArray(), []);
    assert.deepEqual(await range(0).batch(3).toArray(), []);
  });

  it('stacks typed arrays of one type and length into one buffer', async () => {
    const rows = [new Float32Array([1, 2]), new Float32Array([3, 4]), new Float32Array([5, 6])];
    const [b] = await from(rows).batch(3).toArray();
    assert.ok(b instanceof Batch);
    assert.deepEqual(b.shape, [3, 2]);
    assert.equal(b.length, 3);
    assert.ok(b.data instanceof Float32Array);
    assert.deepEqual([...b.data], [1, 2, 3, 4, 5, 6]);
  });

  it('stacks objects of typed arrays and numbers field by field', async () => {
    const els = [0, 1, 2].map((i) => ({ img: new Uint8Array([i, i + 1, i + 2]), label: i * 1.5 }));
    const [b] = await from(els).batch(3).toArray();
    assert.ok(b.img instanceof Batch && b.label instanceof Batch);
    assert.deepEqual(b.img.shape, [3, 3]);
    assert.deepEqual([...b.img.data], [0, 1, 2, 1, 2, 3, 2, 3, 4]);
    assert.deepEqual([...b.label.data], [0, 1.5, 3]);
  });

  it('falls back to arrays when elements differ in type or length', async () => {
    const mixed = [new Float32Array([1, 2]), new Float32Array([3])];
    const [b] = await from<Float32Array>(mixed).batch(2).toArray();
    assert.ok(Array.isArray(b));
    assert.equal((b as unknown as Float32Array[])[1], mixed[1]);
  });

  it('unbatch() inverts batch() for numbers, typed arrays and objects', async () => {
    const nums = await range(5).batch(2).unbatch().toArray();
    assert.deepEqual(nums, [0, 1, 2, 3, 4]);
    const rows = [new Int16Array([1, -1]), new Int16Array([2, -2]), new Int16Array([3, -3])];
    const back = (await from(rows).batch(2).unbatch().toArray()) as Int16Array[];
    assert.deepEqual(
      back.map((r) => [...r]),
      [
        [1, -1],
        [2, -2],
        [3, -3],
      ],
    );
    const objs = [0, 1, 2].map((i) => ({ x: new Float64Array([i]), y: i }));
    const again = (await from(objs).batch(2).unbatch().toArray()) as { x: Float64Array; y: number }[];
    assert.deepEqual(
      again.map((o) => [o.x[0], o.y]),
      [
        [0, 0],
        [1, 1],
        [2, 2],
      ],
    );
  });

  it('repeats, takes and skips', async () => {
    assert.deepEqual(await range(3).repeat(2).toArray(), [0, 1, 2, 0, 1, 2]);
    assert.deepEqual(await range(3).repeat().take(7).toArray(), [0, 1, 2, 0, 1, 2, 0]);
    assert.deepEqual(await range(10).skip(7).toArray(), [7, 8, 9]);
    assert.deepEqual(await range(10).skip(20).toArray(), []);
    assert.deepEqual(await range(10).take(0).toArray(), []);
    // An empty dataset repeated forever ends instead of spinning.
    assert.deepEqual(await range(0).repeat().toArray(), []);
  });

  it('zips to the shortest and concatenates in order', async () => {
    assert.deepEqual(await zip(range(3), from(['a', 'b', 'c', 'd'])).toArray(), [
      [0, 'a'],
      [1, 'b'],
      [2, 'c'],
    ]);
    assert.deepEqual(await range(2).zip(range(5, 9)).toArray(), [
      [0, 5],
      [1, 6],
    ]);
    assert.deepEqual(await concatenate(range(2), range(10, 12)).toArray(), [0, 1, 10, 11]);
    assert.deepEqual(await range(1).concatenate(range(5, 6)).toArray(), [0, 5]);
  });

  it('prefetches without changing the elements or their order', async () => {
    assert.deepEqual(await range(100).prefetch(8).batch(30).prefetch(2).unbatch().toArray(), [...Array(100).keys()]);
  });

  it('iterates with for await, iterator() and forEach', async () => {
    const seen: number[] = [];
    for await (const x of range(3)) seen.push(x);
    const it = range(10).iterator();
    seen.push((await it.next()).value as number);
    await it.return?.();
    assert.equal((await it.next()).done, true);
    await range(2).forEach(async (x) => {
      seen.push(x * 100);
    });
    assert.deepEqual(seen, [0, 1, 2, 0, 0, 100]);
  });

  it('queues next() calls made before the previous one settled', async () => {
    const it = range(6)
      .map(async (x) => x * 2, { parallelism: 3 })
      .prefetch(2)
      .iterator();
    const all = await Promise.all([it.next(), it.next(), it.next(), it.next()]);
    assert.deepEqual(
      all.map((r) => r.value),
      [0, 2, 4, 6],
    );
    assert.deepEqual(await Promise.all([it.next(), it.next(), it.next()]), [
      { value: 8, done: false },
      { value: 10, done: false },
      { value: undefined, done: true },
    ]);
  });

  it('gives each element a seeded RNG that differs between elements and repeats with the seed', async () => {
    const draw = () =>
      range(4)
        .map((_x, ctx) => ctx.rng.float(), { seed: 9 })
        .toArray();
    const a = await draw();
    assert.deepEqual(await draw(), a);
    assert.equal(new Set(a).size, 4);
    assert.ok(a.every((v) => v >= 0 && v < 1));
  });

  it('gives each call one generator: successive draws go on, and repeat in the next run', async () => {
    const draw = () =>
      range(3)
        .map((_x, ctx) => [ctx.rng.float(), ctx.rng.float(), ctx.rng.int(1000)] as const, { seed: 9 })
        .toArray();
    const a = await draw();
    // Three draws of one element are three different numbers, not the first one three times.
    for (const [x, y, k] of a) assert.ok(x !== y && k !== Math.floor(x * 1000), JSON.stringify(a));
    assert.deepEqual(await draw(), a);
  });

  it('asks upstream only for what is needed: take(1) after a map computes few elements', async () => {
    let calls = 0;
    const first = await range(1000)
      .map((x) => {
        calls++;
        return x;
      })
      .batch(4)
      .take(1)
      .toArray();
    assert.deepEqual(first, [[0, 1, 2, 3]]);
    assert.equal(calls, 4);
  });

  it('bounds a filter’s read-ahead: take(1) after map and filter computes a handful of elements', async () => {
    let calls = 0;
    const ds = range(100_000)
      .map((x) => {
        calls++;
        return x;
      })
      .filter((x) => x % 2 === 1);
    assert.deepEqual(await ds.take(1).toArray(), [1]);
    assert.ok(calls <= 4, `computed ${calls} elements`);
    calls = 0;
    // After a long pass the filter knows its selectivity (1/2) and asks for about twice the request.
    const it = ds.batch(64).iterator();
    await it.next();
    await it.next();
    await it.return?.();
    assert.ok(calls >= 256 && calls <= 256 + 4 * 64, `computed ${calls} elements for two batches of 64`);
  });

  it('keeps `parallelism` calls running while finished results wait for the consumer, and holds at most as many again', async () => {
    const started: number[] = [];
    const finish = new Map<number, () => void>();
    /** Once set, calls finish as they start. */
    let released = false;
    const ds = range(1000).map(
      async (x) => {
        started.push(x);
        if (!released) await new Promise<void>((resolve) => finish.set(x, resolve));
        return x;
      },
      { parallelism: 4 },
    );
    // Turns of the event loop for the engine to launch what it may; no clock involved.
    const settle = async (): Promise<void> => {
      for (let i = 0; i < 20; i++) await new Promise<void>((r) => setImmediate(r));
    };
    const it = ds.iterator();
    const head = it.next();
    await settle();
    assert.deepEqual(started, [0, 1, 2, 3]);
    // Calls 1–3 finish while call 0, first in the order, still runs: their results wait for the
    // consumer, and three more calls start, so four run again.
    for (const x of [1, 2, 3]) finish.get(x)!();
    await settle();
    assert.deepEqual(started, [0, 1, 2, 3, 4, 5, 6]);
    // With those finished too, seven results wait behind call 0: one more call starts (eight held,
    // twice the parallelism), and no other.
    for (const x of [4, 5, 6]) finish.get(x)!();
    await settle();
    assert.deepEqual(started, [0, 1, 2, 3, 4, 5, 6, 7]);
    // The head finishes: every element comes out once, in order, as calls go on finishing. (Calls
    // finish as they start from here: the source may take a turn of the event loop before it
    // hands on its next elements, so a call can start after the loop below last looked.)
    finish.get(0)!();
    const got = [(await head).value as number];
    released = true;
    for (const done of finish.values()) done();
    while (got.length < 40) got.push((await it.next()).value as number);
    await it.return?.();
    assert.deepEqual(
      got,
      Array.from({ length: 40 }, (_, i) => i),
    );
  });
});
