import * as assert from 'node:assert/strict';
import { analyze, plan, projectPeakMemory } from '../../../src/model';
import type { Profile } from '../../../src/shared/profile';
import { ProfileBuilder } from './builder';
import { applyOverrides, configFromProfile } from '../../../src/model/config';
import { measure } from '../../../src/model/measure';
import { projectMemory } from '../../../src/model/memory';

const id = ProfileBuilder.id;
const MB = 1e6;

/** The memory the runner measures, set on a constructed profile: the process's base and its largest resident set in the run. */
function measured(p: Profile, baseBytes: number, windowPeakBytes: number): Profile {
  p.run.baseRssBytes = baseBytes;
  p.run.windowPeakRssBytes = windowPeakBytes;
  p.machine.heapLimitBytes = 4e9;
  return p;
}

describe('model: peak memory', () => {
  it('projects a full shuffle buffer of measured heap elements on top of the base and the working memory the run measured', () => {
    // decode hands on 100 kB by the byte counters, 200 kB on the heap as measured; the shuffle
    // buffer had not filled in the window (its high-water mark is 0), the batch of 10 had.
    const p = measured(
      new ProfileBuilder()
        .range(1000)
        .map('decode', { self: 1e-3, bytes: 100e3, heapBytes: 200e3, heldSizeBytes: 100e3, cardinality: 1000 })
        .op({ kind: 'shuffle', bufferSize: 500, bytes: 100e3, cardinality: 1000 })
        .batch(10)
        .build({ rootElements: 100, rate: 90 }),
      100 * MB,
      150 * MB,
    );
    const m = analyze(p).memory;
    assert.ok(m, 'expected a memory projection');
    // Working memory: 150 − 100 − the batch's 10 × 200 kB = 48 MB.
    assert.equal(m.baseBytes, 100 * MB);
    assert.equal(m.workingBytes, 48 * MB);
    assert.deepEqual(
      m.parts.map((x) => [x.opId, x.what, x.bytes, x.elements]),
      [
        [id(2), 'shuffle buffer', 100 * MB, 500],
        [id(3), 'batch', 2 * MB, 10],
      ],
    );
    assert.equal(m.peakBytes, 250 * MB);
    assert.equal(m.summary, '≈ 250 MB at peak: shuffle buffer 100 MB, batch 2 MB');
  });

  it('holds no more in a shuffle buffer than one pass of its input', () => {
    const p = measured(
      new ProfileBuilder().range(100).map('decode', { self: 1e-3, bytes: 1e3, cardinality: 100 }).op({ kind: 'shuffle', bufferSize: 10_000, bytes: 1e3 }).build({ rootElements: 100, rate: 900 }),
      50 * MB,
      50 * MB,
    );
    const part = analyze(p).memory?.parts.find((x) => x.what === 'shuffle buffer');
    assert.equal(part?.elements, 100);
  });

  /** 6,000 elements of 1 kB made by a map, a shuffle of 3,000, batches of 32. */
  const finiteShuffle = () =>
    measured(
      new ProfileBuilder()
        .range(6000)
        .map('make', { self: 1e-5, bytes: 1e3, cardinality: 6000 })
        .op({ kind: 'shuffle', bufferSize: 3000, bytes: 1e3, cardinality: 6000 })
        .batch(32)
        .build({ rootElements: 100, rate: 900 }),
      50 * MB,
      60 * MB,
    );

  it('fills the buffers of one chain with no more than one pass of a finite dataset', () => {
    // 6,000 elements, a shuffle of 3,000: a prefetch of 5,000 after it holds the other 3,000 at most.
    const p = finiteShuffle();
    const m = projectPeakMemory(p, { [id(2)]: { prefetch: 5000 } });
    assert.deepEqual(
      m?.parts.filter((x) => x.what !== 'batch').map((x) => [x.what, x.elements]),
      [
        ['shuffle buffer', 3000],
        ['prefetch buffer', 3000],
      ],
    );
  });

  it('counts a cached element once: a shuffle buffer below a cache holds the objects the cache holds', () => {
    const p = finiteShuffle();
    const m = projectPeakMemory(p, { [id(1)]: { cache: 'memory' } });
    assert.deepEqual(
      m?.parts.filter((x) => x.what !== 'batch').map((x) => [x.what, x.bytes]),
      [['cache', 6000 * 1e3]],
    );
  });

  /** 6,000 elements of 1 kB made by a map, batches of 32 collated into new 32 kB arrays, with or without a shuffle of 3,000 between (which filled in the run). */
  const madeAndBatched = (shuffle: boolean) => {
    const b = new ProfileBuilder().range(6000).map('make', { self: 1e-5, bytes: 1e3, cardinality: 6000 });
    if (shuffle) b.op({ kind: 'shuffle', bufferSize: 3000, bytes: 1e3, cardinality: 6000 });
    const p = measured(b.op({ kind: 'batch', batchSize: 32, bytes: 32e3 }).build({ rootElements: 100, rate: 900 }), 50 * MB, 100 * MB);
    const s = p.ops.find((o) => o.kind === 'shuffle');
    if (s) s.counters.bufferHighWater = 3000;
    return p;
  };

  it("takes from the working memory the garbage of the elements a new cache keeps, where a buffer held them (they died old): the made elements' share of what the pipeline allocates", () => {
    const p = madeAndBatched(true);
    const asWritten = projectPeakMemory(p, {});
    const cached = projectPeakMemory(p, { [id(1)]: { cache: 'memory' } });
    assert.ok(asWritten && cached);
    // Working memory as it ran: 100 − 50 − the shuffle's 3,000 × 1 kB − the batch's 32 × 1 kB.
    const working = 100 * MB - 50 * MB - 3000 * 1e3 - 32 * 1e3;
    assert.equal(asWritten.workingBytes, working);
    // Per batch the pipeline allocates 32 made elements (32 kB) and one batch (32 kB): half of the
    // garbage was made elements, which the cache now keeps.
    assert.equal(cached.workingBytes, working / 2);
    assert.equal(cached.peakBytes, 50 * MB + working / 2 + 6000 * 1e3 + 32 * 1e3);
  });

  it('leaves the working memory as it was for a cache of elements no buffer held (they died young), and for a cache on disk (it hands on fresh copies)', () => {
    const straight = madeAndBatched(false);
    const working = 100 * MB - 50 * MB - 32 * 1e3;
    assert.equal(projectPeakMemory(straight, { [id(1)]: { cache: 'memory' } })?.workingBytes, working);
    const shuffled = madeAndBatched(true);
    shuffled.ops[1]!.diskCacheCost = { samples: 16, serializedBytes: 1e3, writeSeconds: 1e-5, readSeconds: 1e-5 };
    assert.equal(projectPeakMemory(shuffled, { [id(1)]: { cache: '.cache/made' } })?.workingBytes, projectPeakMemory(shuffled, {})?.workingBytes);
  });

  it('counts a cache in memory at its full size, and a cache on disk as nothing', () => {
    const build = () =>
      measured(
        new ProfileBuilder().range(1000).map('decode', { self: 1e-3, bytes: 100e3, cardinality: 1000 }).op({ kind: 'cache', bytes: 100e3 }).op({ kind: 'repeat', count: -1 }).build({ rootElements: 1000, rate: 900 }),
        100 * MB,
        300 * MB,
      );
    const inMemory = build();
    assert.deepEqual(
      analyze(inMemory).memory?.parts.map((x) => [x.what, x.bytes]),
      [['cache', 100 * MB]],
    );
    const onDisk = build();
    const cacheOp = onDisk.ops.find((o) => o.kind === 'cache')!;
    cacheOp.knobs = { cachePath: '.cache/decoded' };
    assert.deepEqual(analyze(onDisk).memory?.parts, []);
  });

  it('answers a what-if: a prefetch of 1,000 after the decode adds 1,000 of its elements', () => {
    const p = measured(new ProfileBuilder().range(1000).map('decode', { self: 1e-3, bytes: 100e3, cardinality: 1000 }).batch(10).build({ rootElements: 100, rate: 90 }), 100 * MB, 101 * MB);
    const before = projectPeakMemory(p, {});
    const after = projectPeakMemory(p, { [id(1)]: { prefetch: 1000 } });
    assert.ok(before && after);
    assert.equal(after.peakBytes - before.peakBytes, 1000 * 100e3);
    assert.equal(after.parts[0]?.what, 'prefetch buffer');
  });

  it('counts worker threads at their measured resident cost, with their tasks in flight', () => {
    const b = new ProfileBuilder({ workerThreadRssBytes: 30 * MB });
    const p = measured(b.range(1000).map('augment', { self: 1e-3, placement: 'worker', parallelism: 4, module: true, bytes: 10e3 }).build({ rootElements: 1000, rate: 900 }), 100 * MB, 300 * MB);
    const m = analyze(p).memory;
    const threads = m?.parts.find((x) => x.what === 'worker threads');
    assert.equal(threads?.bytes, 4 * 30 * MB);
    assert.ok(m?.parts.some((x) => x.what === 'calls in flight'));
    // Back on the main thread: one isolate's working memory of the five (main + 4 workers) the run measured, and no threads.
    const main = projectPeakMemory(p, { [id(1)]: { placement: 'main' } });
    assert.ok(m?.workingBytes && main?.workingBytes !== undefined);
    assert.ok(Math.abs(main.workingBytes - m.workingBytes / 5) < 1, `${main.workingBytes} vs ${m.workingBytes} / 5`);
    assert.equal(
      main.parts.some((x) => x.what === 'worker threads'),
      false,
    );
  });

  it("counts a worker thread the runner measured running the op's fn at that figure, not at the main thread's working memory", () => {
    // The main thread's working memory is 150 MB (garbage of large results between collections); a
    // thread measured running `make` holds 12 MB: moved to 2 threads, the fn adds 2 × 12 MB, and the
    // main thread's working memory is carried to no other isolate.
    const moveCost = { samples: 8, cloneInSeconds: 1e-6, cloneOutSeconds: 1e-6, inBytes: 8, outBytes: 32e3, mainCpuSeconds: 1e-3, workerCpuSeconds: 1e-3, workerRssBytes: 12 * MB };
    const build = (cost: typeof moveCost | undefined) =>
      measured(
        new ProfileBuilder({ workerThreadRssBytes: 8 * MB }).range(6000).map('make', { self: 1e-3, bytes: 32e3, cardinality: 6000, module: true, moveCost: cost }).batch(10).build({ rootElements: 600, rate: 90 }),
        100 * MB,
        250 * MB + 10 * 32e3,
      );
    const measuredThread = build(moveCost);
    const asRan = projectPeakMemory(measuredThread, {});
    const moved = projectPeakMemory(measuredThread, { [id(1)]: { placement: 'worker', parallelism: 2 } });
    assert.ok(asRan && moved);
    assert.equal(asRan.workingBytes, 150 * MB);
    assert.equal(moved.workingBytes, 150 * MB);
    assert.equal(moved.parts.find((x) => x.what === 'worker threads')?.bytes, 2 * 12 * MB);
    // Unmeasured, each thread is an idle thread's 8 MB and carries the main thread's 150 MB.
    const carried = projectPeakMemory(build({ ...moveCost, workerRssBytes: undefined as unknown as number }), { [id(1)]: { placement: 'worker', parallelism: 2 } });
    assert.equal(carried?.workingBytes, 3 * 150 * MB);
    assert.equal(carried?.parts.find((x) => x.what === 'worker threads')?.bytes, 2 * 8 * MB);
  });

  it('sizes a cache right after a reader by its rows as the map after the repeat sampled them, and by the pass the run saw end', () => {
    // A csv reader (no count before it reads) of rows the byte counters put at 200 B, measured at
    // 600 B on the heap where the map after the repeat takes them in; the run saw a pass of 80,000 end.
    const p = measured(
      new ProfileBuilder()
        .op({ kind: 'csv', bytes: 200 })
        .op({ kind: 'repeat', count: -1, bytes: 200, passElements: 80_000 })
        .map('toExample', { self: 1e-5, bytes: 100 })
        .batch(256)
        .build({ rootElements: 400, rate: 90 }),
      100 * MB,
      110 * MB,
    );
    p.ops[2]!.inputHeld = { heapBytes: 600, sizeBytes: 200 };
    const m = projectPeakMemory(p, { [id(0)]: { cache: 'memory' } });
    const cache = m?.parts.find((x) => x.what === 'cache');
    assert.deepEqual([cache?.opId, cache?.elements, cache?.bytes], [id(0), 80_000, 80_000 * 600]);
  });

  it('expects a prefetch its consumer drains to hold one burst of its producer, and a prefetch above the bottleneck to fill; the budget checks it full', () => {
    // 4 worker threads making 64 kB elements (the cores' bound, the workers' CPU) feed a prefetch of
    // 2,000, then batches of 8 on the main thread: the prefetch is drained as the results arrive.
    const workers = measured(
      new ProfileBuilder({ cores: 2 }).range().map('expand', { placement: 'worker', worker: 2e-3, dispatch: 20e-6, parallelism: 4, bytes: 64e3, module: true }).batch(8).build({ rootElements: 200, rate: 120 }),
      100 * MB,
      200 * MB,
    );
    const what = { [id(1)]: { prefetch: 2000 } };
    const drained = projectPeakMemory(workers, what)?.parts.find((x) => x.what === 'prefetch buffer');
    const inFlight = projectPeakMemory(workers, what)?.parts.find((x) => x.what === 'calls in flight');
    assert.ok(drained && inFlight, 'expected a prefetch buffer and calls in flight');
    // One burst: the tasks in flight on every thread, landing together.
    assert.equal(drained.elements, inFlight.elements);
    assert.ok(drained.elements! < 2000 / 10, `${drained.elements}`);
    // The upper bound the memory budget is checked against counts it full.
    const m = measure(workers);
    const ran = configFromProfile(m);
    const full = projectMemory(m, applyOverrides(m, ran, what), ran, 1e12, 'full');
    assert.equal(full?.parts.find((x) => x.what === 'prefetch buffer')?.elements, 2000);

    // A slow main-thread map below the prefetch is the bottleneck: the prefetch above it fills.
    const slowBelow = measured(new ProfileBuilder().range().map('make', { self: 10e-6, bytes: 1e3 }).map('train', { self: 5e-3, bytes: 10 }).build({ rootElements: 200, rate: 190 }), 100 * MB, 110 * MB);
    assert.equal(projectPeakMemory(slowBelow, { [id(1)]: { prefetch: 500 } })?.parts.find((x) => x.what === 'prefetch buffer')?.elements, 500);
  });

  it('starts from the base less what the runner’s own probes left resident, which a run without them does not hold', () => {
    const build = () => measured(new ProfileBuilder().range(1000).map('decode', { self: 1e-3, bytes: 1e3 }).build({ rootElements: 100, rate: 900 }), 120 * MB, 170 * MB);
    const plain = analyze(build()).memory!;
    const probed = build();
    probed.run.probesRssBytes = 10 * MB;
    const m = analyze(probed).memory!;
    assert.equal(m.baseBytes, 110 * MB);
    // The working memory is the window's, measured from the base as it was.
    assert.equal(m.workingBytes, plain.workingBytes);
    assert.equal(plain.peakBytes - m.peakBytes, 10 * MB);
  });

  it("sizes a reader's rows by the batches of them the root hands on, where no fn below them sampled them", () => {
    // csv → repeat → batch(256): the runner measured the root's batches at 3× their estimate on the heap.
    const p = measured(new ProfileBuilder().op({ kind: 'csv', bytes: 200 }).op({ kind: 'repeat', count: -1, bytes: 200, passElements: 10_000 }).batch(256).build({ rootElements: 40, rate: 90 }), 100 * MB, 110 * MB);
    p.ops[2]!.held = { heapBytes: 3 * 256 * 200, sizeBytes: 256 * 200 };
    const cache = projectPeakMemory(p, { [id(0)]: { cache: 'memory' } })?.parts.find((x) => x.what === 'cache');
    assert.deepEqual([cache?.elements, cache?.bytes], [10_000, 10_000 * 600]);
  });

  it('says nothing where the run did not measure the base (an older runner)', () => {
    const p = new ProfileBuilder().range(1000).map('decode', { self: 1e-3, bytes: 1e3 }).build({ rootElements: 100, rate: 900 });
    assert.equal(analyze(p).memory, undefined);
    assert.equal(plan(p).memory, undefined);
  });
});

describe('model: plans within the memory budget', () => {
  // 1,000 decoded images of 100 kB that repeat() reads again: a cache of 100 MB pays.
  const cached = () =>
    measured(new ProfileBuilder().range(1000).map('decode', { self: 10e-3, bytes: 100e3, cardinality: 1000 }).op({ kind: 'repeat', count: -1 }).batch(10).build({ rootElements: 100, rate: 9.8 }), 100 * MB, 110 * MB);

  it('proposes the cache where its projected peak fits the budget, and projects the plan with it', () => {
    const p = plan(cached(), { memoryBudgetBytes: 1e9 });
    assert.ok(p.changes.some((c) => c.kind === 'cache'));
    assert.ok(p.memory);
    assert.equal(p.memory.parts[0]?.what, 'cache');
    assert.equal(p.memory.parts[0]?.bytes, 100 * MB);
    assert.ok(p.memory.peakBytes <= 1e9);
  });

  it('leaves out a cache that would take the peak past the budget, and says so', () => {
    // The base and working memory take 110 MB: a 150 MB budget leaves 40 MB, not enough for 100 MB.
    const p = plan(cached(), { memoryBudgetBytes: 150 * MB });
    assert.equal(
      p.changes.find((c) => c.kind === 'cache'),
      undefined,
    );
    assert.ok(p.memory && p.memory.peakBytes <= 150 * MB, `planned peak ${p.memory?.peakBytes}`);
    assert.ok(
      p.notes?.some((n) => /cache after map\(decode\).*past the 150 MB memory budget, so the plan leaves it out/.test(n)),
      p.notes?.join('\n'),
    );
  });

  it('lowers calls in flight to the most the budget holds rather than dropping the change', () => {
    // An async fetch of 1 MB elements whose calls mostly wait: the plan wants more in flight, each holding its element.
    const p0 = measured(
      new ProfileBuilder().range(100_000).map('fetch', { latency: 20e-3, parallelism: 8, bytes: 1e6, cardinality: 100_000 }).map('train', { self: 2e-3, bytes: 1e3 }).build({ rootElements: 1000, rate: 300 }),
      100 * MB,
      120 * MB,
    );
    const free = plan(p0, { memoryBudgetBytes: 1e12 });
    const grow = free.memory!.peakBytes;
    // A budget between the plan as it ran and the plan's own peak.
    const asRan = analyze(p0).memory!.peakBytes;
    if (!(grow > asRan + 4 * MB)) return assert.fail(`expected the unbounded plan to add memory: ${grow} vs ${asRan}; ${free.changes.map((c) => c.kind).join(', ')}`);
    const budget = asRan + (grow - asRan) / 2;
    const bounded = plan(p0, { memoryBudgetBytes: budget });
    assert.ok(bounded.memory!.peakBytes <= budget, `${bounded.memory!.peakBytes} > ${budget}`);
    const wanted = free.changes.find((c) => c.kind === 'parallelism');
    const lowered = bounded.changes.find((c) => c.kind === 'parallelism');
    assert.ok(wanted?.kind === 'parallelism' && lowered?.kind === 'parallelism', 'expected a parallelism change in both plans');
    assert.ok(lowered.to > 8 && lowered.to < wanted.to, `lowered to ${lowered.to}, wanted ${wanted.to}`);
    assert.ok(
      bounded.notes?.some((n) => n.includes(`so the plan lowers it: set parallelism of map(fetch) to ${lowered.to}`)),
      bounded.notes?.join('\n'),
    );
  });
});
