import assert from 'node:assert/strict';
import { from, range, TRACER_KEY, type Tracer } from 'plumber-data';
import { RecordingTracer, whileTraced } from './helpers';

/** A tracer that also takes element samples: it asks for every `skip`-th element until it holds `limit`. */
class SamplingTracer extends RecordingTracer {
  readonly offered: { key: string; element: unknown; index: number }[] = [];
  constructor(
    private readonly skip: number,
    private readonly limit: number,
  ) {
    super();
  }
  sample(key: string, element: unknown, index: number): number {
    this.offered.push({ key, element, index });
    return this.offered.length >= this.limit ? 0 : this.skip;
  }
}

type Globals = { [TRACER_KEY]?: Tracer };

/** Runs `body` with `tracer` installed while the pipeline is built and run. */
async function withTracer(tracer: Tracer, body: () => Promise<void>): Promise<void> {
  const g = globalThis as Globals;
  g[TRACER_KEY] = tracer;
  try {
    await body();
  } finally {
    delete g[TRACER_KEY];
  }
}

describe('plumber-data element sampling for tracers', () => {
  it('offers a map’s input elements, before its fn replaces them, at the indices the tracer asks for', async () => {
    const tracer = new SamplingTracer(3, 100);
    const seenByFn: number[] = [];
    await withTracer(tracer, async () => {
      const out = await range(20)
        .map((x) => {
          seenByFn.push(x);
          return { doubled: x * 2 };
        })
        .toArray();
      assert.equal(out.length, 20);
    });
    const map = tracer.only('map').info;
    assert.deepEqual(
      tracer.offered.map((o) => o.index),
      [0, 3, 6, 9, 12, 15, 18],
    );
    // Inputs (numbers), not the objects the fn made of them.
    assert.deepEqual(
      tracer.offered.map((o) => o.element),
      [0, 3, 6, 9, 12, 15, 18],
    );
    assert.ok(tracer.offered.every((o) => o.key === map.key));
    assert.equal(seenByFn.length, 20);
  });

  it('stops offering once the tracer says it has enough', async () => {
    const tracer = new SamplingTracer(1, 4);
    await withTracer(tracer, async () => {
      await range(1000)
        .filter((x) => x % 2 === 0)
        .toArray();
    });
    assert.deepEqual(
      tracer.offered.map((o) => o.element),
      [0, 1, 2, 3],
    );
  });

  it('offers an async fn its elements one per call, before the call, and a tracer without `sample` still counts every call', async () => {
    const sampling = new SamplingTracer(1, 100);
    const seen: number[] = [];
    await withTracer(sampling, async () => {
      const out = await from([1, 2, 3])
        .map(
          async (x) => {
            seen.push(sampling.offered.length);
            return x + 1;
          },
          { parallelism: 2 },
        )
        .toArray();
      assert.deepEqual(out, [2, 3, 4]);
    });
    assert.deepEqual(
      sampling.offered.map((o) => [o.element, o.index]),
      [
        [1, 0],
        [2, 1],
        [3, 2],
      ],
    );
    // Each call found its own element offered already (a chunk is offered whole before its first call).
    assert.ok(seen.length === 3 && seen.every((offered, i) => offered >= i + 1), JSON.stringify(seen));
    // Past its first chunk an async map runs its calls one by one, and still offers every element the tracer asks for.
    const every = new SamplingTracer(1, 1000);
    await withTracer(every, async () => {
      await range(300)
        .map(async (x) => x, { parallelism: 4 })
        .toArray();
    });
    assert.deepEqual(
      every.offered.map((o) => o.index),
      Array.from({ length: 300 }, (_, i) => i),
    );
    const plain = await whileTraced(async () => {
      assert.deepEqual(
        await range(5)
          .map((x) => x + 1)
          .toArray(),
        [1, 2, 3, 4, 5],
      );
    });
    assert.equal(plain.only('map').counters.calls, 5);
  });

  it('counts the skip across the passes of a repeat: a short pass read many times is sampled throughout, not at its first element', async () => {
    const tracer = new SamplingTracer(7, 100);
    await withTracer(tracer, async () => {
      assert.equal(
        (
          await range(5)
            .map((x) => x * 10)
            .repeat(8)
            .toArray()
        ).length,
        40,
      );
    });
    // Every 7th of the 40 elements the map saw, whichever pass each fell in.
    assert.deepEqual(
      tracer.offered.map((o) => o.element),
      [0, 7, 14, 21, 28, 35].map((k) => k % 5),
    );
    // Each offer carries its index within its own pass (the element's context is built from it).
    assert.deepEqual(
      tracer.offered.map((o) => o.index),
      [0, 2, 4, 1, 3, 0],
    );
  });

  it('counts the skip across the inner datasets an interleave builds at one call site, async fns too', async () => {
    const tracer = new SamplingTracer(4, 100);
    await withTracer(tracer, async () => {
      const inner = (base: number) => range(3).map(async (x) => base + x);
      const out = await from([0, 100, 200, 300]).interleave(inner, { cycleLength: 1 }).toArray();
      assert.deepEqual(out, [0, 1, 2, 100, 101, 102, 200, 201, 202, 300, 301, 302]);
    });
    // One element in four of the twelve, across the four datasets: 0, 101, 202 by position.
    assert.deepEqual(
      tracer.offered.map((o) => o.index),
      [0, 1, 2],
    );
  });
});

describe('plumber-data nesting for tracers', () => {
  it('records operators built inside an interleave’s fn as nested in that interleave', async () => {
    const tracer = await whileTraced(async () => {
      const ds = range(3).interleave((i) => range(i * 10, i * 10 + 2).map((x) => x + 1), { cycleLength: 2 });
      assert.deepEqual(
        (await ds.toArray()).sort((a, b) => a - b),
        [1, 2, 11, 12, 21, 22],
      );
    });
    const interleave = tracer.only('interleave').info;
    const ranges = tracer.infos.filter((i) => i.kind === 'range');
    const outer = ranges.filter((i) => i.parent === undefined);
    const inner = ranges.filter((i) => i.parent !== undefined);
    assert.equal(outer.length, 1);
    assert.ok(inner.length >= 1);
    assert.ok(inner.every((i) => i.parent === interleave.key));
    assert.ok(tracer.infos.filter((i) => i.kind === 'map').every((i) => i.parent === interleave.key));
    assert.equal(interleave.parent, undefined);
  });

  it('records operators built inside a flatMap’s fn as nested in that flatMap', async () => {
    const tracer = await whileTraced(async () => {
      const ds = range(2).flatMap((i) => range(2).map((k) => i * 2 + k));
      assert.deepEqual(await ds.toArray(), [0, 1, 2, 3]);
    });
    const flatMap = tracer.only('flatMap').info;
    const maps = tracer.infos.filter((i) => i.kind === 'map');
    assert.ok(maps.length >= 1);
    assert.ok(maps.every((i) => i.parent === flatMap.key));
    assert.equal(flatMap.parent, undefined);
  });
});
