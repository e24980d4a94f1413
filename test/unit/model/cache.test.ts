import * as assert from 'node:assert/strict';
import { changeTitle, plan } from '../../../src/model';
import type { PlanChange } from '../../../src/shared/analysis';
import { ProfileBuilder } from './builder';

const id = ProfileBuilder.id;

function cacheOf(changes: PlanChange[]): Extract<PlanChange, { kind: 'cache' }> | undefined {
  return changes.find((c): c is Extract<PlanChange, { kind: 'cache' }> => c.kind === 'cache');
}

describe('model: cache', () => {
  it('caches after an expensive deterministic decode that repeat() reads again, with its size', () => {
    // 1,000 decoded images of 100 kB: 100 MB, well inside 90% of 0.5 × 4 GB free.
    const profile = new ProfileBuilder().range(1000).map('decode', { self: 10e-3, bytes: 100e3 }).op({ kind: 'repeat', count: -1 }).batch(10).build({ rootElements: 100, rate: 9.8 });
    const p = plan(profile);
    const cache = cacheOf(p.changes);
    assert.ok(cache, 'expected a cache change');
    assert.equal(cache.opId, id(1));
    assert.equal(cache.estimatedBytes, 100e6);
    assert.equal(changeTitle(cache, profile), 'cache after map(decode) (≈ 100 MB)');
    assert.match(cache.reason, /1,000 elements .* × 100 kB ≈ 100 MB/);
    assert.match(cache.reason, /repeat\(\)/);
    // What it saves is per root element, a batch of ten decodes, and says so.
    assert.match(cache.reason, /it saves 100 ms of work per batch\./);
    assert.deepEqual(p.overrides[id(1)], { cache: 'memory' });
    // After the first pass only batch and the cache's reads remain on the main thread.
    assert.ok(p.predictedBound > 100 * 10, `expected a large gain, got ${p.predictedBound}`);
  });

  it("estimates the cardinality below a filter from the source's and the visit ratios", () => {
    const profile = new ProfileBuilder()
      .range(1000)
      .map('decode', { self: 10e-3, bytes: 1e3 })
      .op({ kind: 'filter', fnName: 'valid', keep: 0.5, self: 1e-6, bytes: 1e3 })
      .op({ kind: 'repeat', count: 3 })
      .build({ rootElements: 400, rate: 49 });
    const cache = cacheOf(plan(profile).changes);
    assert.ok(cache);
    assert.equal(cache.opId, id(2));
    assert.equal(cache.estimatedBytes, 500 * 1e3);
  });

  it('never caches at or after a shuffle: the cache goes above it', () => {
    const profile = new ProfileBuilder()
      .range(1000)
      .map('decode', { self: 10e-3, bytes: 1e4 })
      .op({ kind: 'shuffle', bufferSize: 100, bytes: 1e4 })
      .map('normalize', { self: 1e-4, bytes: 1e4 })
      .op({ kind: 'repeat', count: -1 })
      .build({ rootElements: 1000, rate: 95 });
    const cache = cacheOf(plan(profile).changes);
    assert.equal(cache?.opId, id(1));
  });

  it('never caches after a random map, even when it is the expensive one', () => {
    const profile = new ProfileBuilder().range(1000).map('augment', { self: 10e-3, random: true, bytes: 1e4 }).op({ kind: 'repeat', count: -1 }).build({ rootElements: 1000, rate: 95 });
    assert.equal(cacheOf(plan(profile).changes), undefined);
  });

  it('refuses a cache that does not fit in 90% of the memory budget, and says why', () => {
    // 1,000 × 10 MB = 10 GB against a 2 GB budget.
    const profile = new ProfileBuilder({ memoryFreeBytes: 4e9 }).range(1000).map('decode', { self: 10e-3, bytes: 10e6 }).op({ kind: 'repeat', count: -1 }).build({ rootElements: 1000, rate: 95 });
    const p = plan(profile);
    assert.equal(cacheOf(p.changes), undefined);
    assert.match((p.notes ?? []).join(' '), /cache after map\(decode\) would hold ≈ 10 GB .* 2 GB memory budget/);
    // The same data fits a 20 GB budget given explicitly.
    assert.equal(cacheOf(plan(profile, { memoryBudgetBytes: 20e9 }).changes)?.opId, id(1));
  });

  it('does not cache data the pipeline reads only once', () => {
    const profile = new ProfileBuilder().range(1000).map('decode', { self: 10e-3, bytes: 1e3 }).build({ rootElements: 500, rate: 95 });
    assert.equal(cacheOf(plan(profile).changes), undefined);
  });

  it("prices a cache under repeat(n) over the pipeline's whole life: the first of n passes still computes", () => {
    const build = (count: number) => new ProfileBuilder().range(1000).map('decode', { self: 10e-3, bytes: 1e3 }).op({ kind: 'repeat', count }).batch(10).build({ rootElements: 100, rate: 9.8 });
    const finite = plan(build(4));
    assert.equal(cacheOf(finite.changes)?.opId, id(1));
    // 4 passes, the first computing: 2.5 ms of decode per element on average, at most 4× as written.
    const speedup = finite.predictedRate / 9.8;
    assert.ok(speedup > 3 && speedup <= 4.1, `expected ≈ 4× over the life of repeat(4), got ${speedup}`);
    const nested = plan(new ProfileBuilder().range(1000).map('decode', { self: 10e-3, bytes: 1e3 }).op({ kind: 'repeat', count: 2 }).batch(10).op({ kind: 'repeat', count: 3 }).build({ rootElements: 100, rate: 9.8 }));
    const nestedSpeedup = nested.predictedRate / 9.8;
    assert.ok(nestedSpeedup > 4.5 && nestedSpeedup <= 6.1, `expected ≈ 6× for repeat(2) inside repeat(3), got ${nestedSpeedup}`);
    // Repeated forever, the steady state after the first pass serves everything from memory.
    assert.ok(plan(build(-1)).predictedRate / 9.8 > 100);
  });

  it('sizes a cache below take(n) from the count it takes, not from the source', () => {
    const profile = new ProfileBuilder()
      .range(100_000)
      .map('reading', { self: 1e-3, bytes: 1e3 })
      .op({ kind: 'take', count: 5000, bytes: 1e3 })
      .op({ kind: 'batch', batchSize: 8, bytes: 8e3 })
      .op({ kind: 'repeat', count: -1 })
      .build({ rootElements: 100, rate: 120 });
    const cache = cacheOf(plan(profile).changes);
    assert.ok(cache);
    assert.equal(cache.opId, id(3), 'after the batch, the highest point');
    // 5,000 elements a pass, 625 batches of 8 kB: not 100,000 ÷ 8 of them.
    assert.equal(cache.estimatedBytes, 625 * 8e3);
    assert.match(cache.reason, /625 elements \(estimated from take\(5000\) and the visit ratio\)/);
  });

  it('caches each costly input of a random mixture, above the draw, and says where', () => {
    // Two decodes of 1 ms an element each, merged by a seeded draw and read again by repeat():
    // the cache after the mixture would replay its draws, so each input gets its own.
    const profile = new ProfileBuilder()
      .range(1000)
      .map('decodeA', { self: 1e-3, bytes: 1e3 })
      .op({ kind: 'range', inputs: [], cardinality: 1000 })
      .map('decodeB', { self: 1.2e-3, bytes: 1e3, inputs: [2] })
      .op({ kind: 'sampleFromDatasets', inputs: [1, 3], shares: [0.5, 0.5] })
      .batch(10)
      .op({ kind: 'repeat', count: -1 })
      .build({ rootElements: 100, rate: 90 });
    const p = plan(profile);
    const caches = p.changes.filter((c) => c.kind === 'cache').map((c) => c.opId);
    assert.deepEqual(caches.sort(), [id(1), id(3)].sort());
    assert.deepEqual(p.overrides[id(1)], { cache: 'memory' });
    assert.deepEqual(p.overrides[id(3)], { cache: 'memory' });
    assert.ok(!p.changes.some((c) => c.kind === 'placement'), 'nothing left to move once both inputs are cached');
    assert.ok(
      p.notes?.some((n) => /sampleFromDatasets.* is random .* caches after map\(decode[AB]\) and after map\(decode[AB]\), above it/.test(n)),
      `expected the note to name both caches, got ${JSON.stringify(p.notes)}`,
    );
  });

  it('caches one input of a random mixture when only one is costly', () => {
    const profile = new ProfileBuilder()
      .range(1000)
      .map('decodeA', { self: 2e-3, bytes: 1e3 })
      .op({ kind: 'range', inputs: [], cardinality: 1000 })
      .map('cheap', { self: 1e-7, bytes: 1e3, inputs: [2] })
      .op({ kind: 'sampleFromDatasets', inputs: [1, 3], shares: [0.5, 0.5] })
      .batch(10)
      .op({ kind: 'repeat', count: -1 })
      .build({ rootElements: 100, rate: 90 });
    const caches = plan(profile)
      .changes.filter((c) => c.kind === 'cache')
      .map((c) => c.opId);
    assert.deepEqual(caches, [id(1)]);
  });

  it('holds every cache it proposes within the memory budget together', () => {
    // Each input's cache (2 GB) fits in 90% of a 4 GB budget; both (4 GB) do not.
    const profile = new ProfileBuilder()
      .range(1000)
      .map('decodeA', { self: 1e-3, bytes: 2e6 })
      .op({ kind: 'range', inputs: [], cardinality: 1000 })
      .map('decodeB', { self: 1.2e-3, bytes: 2e6, inputs: [2] })
      .op({ kind: 'sampleFromDatasets', inputs: [1, 3], shares: [0.5, 0.5] })
      .batch(10)
      .op({ kind: 'repeat', count: -1 })
      .build({ rootElements: 100, rate: 90 });
    const caches = plan(profile, { memoryBudgetBytes: 4e9 }).changes.filter((c) => c.kind === 'cache');
    assert.equal(caches.length, 1);
    assert.equal(caches[0]!.opId, id(3), 'the one that saves the most');
  });

  it('does not propose a second cache once the first one ran', () => {
    // The re-trace with the cache: decode produced nothing in the window, the cache served it all.
    const profile = new ProfileBuilder()
      .range(1000)
      .map('decode', { self: 10e-3, bytes: 1e3 })
      .op({ kind: 'cache', overridden: true, bytes: 1e3, self: 1e-6 })
      .op({ kind: 'repeat', count: -1 })
      .build({ rootElements: 5000, rate: 90000, overrides: { [id(1)]: { cache: 'memory' } } });
    // The window saw only cache hits: upstream ops produced nothing.
    for (const op of profile.ops.slice(0, 2)) {
      op.counters.produced = 0;
      op.counters.pulled = 0;
      op.counters.calls = 0;
      op.counters.selfSeconds = 0;
      op.counters.bytesProduced = 0;
    }
    const p = plan(profile);
    assert.equal(cacheOf(p.changes), undefined);
    assert.deepEqual(p.overrides[id(1)], { cache: 'memory' });
  });
});

describe('model: a cache sized from what the run measured', () => {
  // Records read line by line (no operator can count them in advance), parsed into objects that
  // hold a Map: the library's byte estimate sees 540 B of each, the heap holds 10.8 kB.
  const records = (spec: { heapBytes?: number; heldSizeBytes?: number; passElements?: number } = {}) =>
    new ProfileBuilder()
      .op({ kind: 'lines' })
      .map('parse', { self: 7e-6, bytes: 850 })
      .map('vectorize', { self: 15e-6, bytes: 540, ...(spec.heapBytes !== undefined ? { heapBytes: spec.heapBytes, heldSizeBytes: spec.heldSizeBytes } : {}) })
      .op({ kind: 'repeat', count: -1, ...(spec.passElements !== undefined ? { passElements: spec.passElements } : {}) })
      .build({ rootElements: 36_992, rate: 36_000 });

  it('counts a pass no operator could count in advance from one the run saw end', () => {
    assert.equal(cacheOf(plan(records()).changes), undefined, 'no pass seen: no size, no cache');
    const cache = cacheOf(plan(records({ passElements: 32_000 })).changes);
    assert.ok(cache, 'expected a cache once a pass was seen');
    assert.equal(cache.opId, id(2));
    assert.equal(cache.estimatedBytes, 32_000 * 540);
    assert.match(cache.reason, /32,000 elements \(counted in a pass of repeat\(\) the run completed\)/);
  });

  it('sizes the cache by what an element holds on the heap when that is more than the estimate', () => {
    const cache = cacheOf(plan(records({ passElements: 32_000, heapBytes: 10_800 })).changes);
    assert.ok(cache);
    assert.equal(cache.estimatedBytes, 32_000 * 10_800);
    assert.match(cache.reason, /× 10\.8 kB \(measured on the heap\) ≈ 346 MB/);
    // A budget the estimate (17 MB) fits and the heap (346 MB) does not: no cache, and a note why.
    const tight = plan(records({ passElements: 32_000, heapBytes: 10_800 }), { memoryBudgetBytes: 300e6 });
    assert.notEqual(cacheOf(tight.changes)?.opId, id(2));
    assert.match((tight.notes ?? []).join(' '), /cache after map\(vectorize\) would hold ≈ 346 MB/);
    assert.equal(cacheOf(plan(records({ passElements: 32_000 }), { memoryBudgetBytes: 300e6 }).changes)?.opId, id(2));
  });

  it('estimates the lines of files from their bytes when the run saw no pass end, once it has read enough of them', () => {
    // 1,500 lines of 600 B (900 kB) out of 19.2 MB of files: 32,000 lines. The window read a
    // block (64 KiB) more than its lines, which the estimate sets aside.
    const profile = (readBytes: number) =>
      new ProfileBuilder()
        .op({ kind: 'lines', sourceBytes: 19.2e6, diskBytes: readBytes / 1_500 })
        .map('vectorize', { self: 15e-6, bytes: 540 })
        .op({ kind: 'repeat', count: -1 })
        .build({ rootElements: 1_500, rate: 36_000 });
    const cache = cacheOf(plan(profile(900e3 + 65_536)).changes);
    assert.ok(cache);
    assert.equal(cache.estimatedBytes, 32_000 * 540);
    assert.match(cache.reason, /32,000 elements \(estimated from the 19\.2 MB of files that lines reads and the bytes per line the run read\)/);
    // 100 kB read: hardly more than the block the source reads ahead of its lines, too little to tell.
    assert.equal(cacheOf(plan(profile(100e3)).changes), undefined);
  });

  it("carries the heap of a few sampled elements to the window's by the estimate of each", () => {
    // The eight sampled records were twice the window's mean by the estimate (1,080 B against
    // 540 B): they held 21.6 kB each, so the window's hold about half that.
    const cache = cacheOf(plan(records({ passElements: 32_000, heapBytes: 21_600, heldSizeBytes: 1_080 })).changes);
    assert.equal(cache?.estimatedBytes, 32_000 * 10_800);
  });

  it('never sizes a cache below the estimate, and carries a measured ratio through a batch', () => {
    // A heap reading under the estimate (a fresh copy of a sliced string is smaller) keeps the estimate.
    assert.equal(cacheOf(plan(records({ passElements: 32_000, heapBytes: 100 })).changes)?.estimatedBytes, 32_000 * 540);
    // Batches of 64 after the measured map: each holds 64 elements' worth of heap.
    const batched = new ProfileBuilder()
      .op({ kind: 'lines' })
      .map('vectorize', { self: 15e-6, bytes: 540, heapBytes: 10_800 })
      .op({ kind: 'batch', batchSize: 64, bytes: 64 * 540 })
      .op({ kind: 'repeat', count: -1, passElements: 500 })
      .build({ rootElements: 578, rate: 560 });
    const cache = cacheOf(plan(batched).changes);
    assert.ok(cache);
    assert.equal(cache.opId, id(2));
    assert.equal(Math.round(cache.estimatedBytes), 500 * 64 * 10_800);
    assert.match(cache.reason, /as measured on the heap after map\(vectorize\)/);
  });
});

describe('model: cache placement above repeat', () => {
  it('never caches below a repeat, even when the run re-read the source', () => {
    // range(1000) was read 5 times in the window; batch after repeat() never ends a pass.
    const profile = new ProfileBuilder().range(1000).map('decode', { self: 10e-3, bytes: 1e3 }).op({ kind: 'repeat', count: -1 }).batch(10).build({ rootElements: 500, rate: 9.5 });
    const cache = cacheOf(plan(profile).changes);
    assert.equal(cache?.opId, id(1));
  });

  it('sizes a cache below files() from the cardinality the source reports, and predicts the cached rate without the old efficiency', () => {
    // Audio: files (256 clips) → decodeWav → logMel (6 ms) → repeat → specAugment → batch(32).
    // Only files() reports a cardinality; logMel produces one element per file, 25,088 bytes each.
    // The run delivered 60% of its 5.17 batches/s bound.
    const profile = new ProfileBuilder()
      .op({ kind: 'files', cardinality: 256, latency: 2e-3, parallelism: 16, bytes: 32e3 })
      .map('decodeWav', { self: 30e-6, bytes: 64e3 })
      .map('logMel', { self: 6e-3, bytes: 25088 })
      .op({ kind: 'repeat', count: -1 })
      .map('specAugment', { self: 10e-6, bytes: 25088 })
      .batch(32)
      .build({ rootElements: 14, rate: 0.6 / (32 * 6.04e-3) });
    const p = plan(profile);
    const cache = cacheOf(p.changes);
    assert.ok(cache, 'expected a cache change');
    assert.equal(cache.opId, id(2));
    assert.equal(cache.estimatedBytes, 256 * 25088);
    assert.match(cache.reason, /estimated from files\S*'s 256 elements/);
    // After the first pass each batch costs 32 × (10 µs specAugment + 1 µs serving a cached element).
    assert.ok(Math.abs(p.predictedBound - 1 / (32 * 11e-6)) < 1e-6 * p.predictedBound, `bound ${p.predictedBound}`);
    // logMel, whose run measured 60% of its bound, no longer binds: that shortfall does not carry over.
    assert.equal(p.predictedRate, p.predictedBound);
  });

  it('carries the measured efficiency over when the same operator still binds', () => {
    // fetch binds at 4 / 10 ms = 400/s and the run delivered 300/s; with more calls in flight it still binds.
    const profile = new ProfileBuilder().range().map('fetch', { latency: 10e-3, self: 2e-6, parallelism: 4 }).build({ rootElements: 1000, rate: 300 });
    const p = plan(profile, { maxConcurrency: 8 });
    assert.equal(p.predictedBound, 800);
    assert.ok(Math.abs(p.predictedRate - 800 * 0.75) < 1e-9);
  });

  it('takes the runtime overhead of the work a cache removes away with it', () => {
    // decode (10 ms) and augment (10 µs) on a busy main thread with 1 s of unclaimed time (GC of
    // what decode allocates) over 100 batches of 10 in 100 / 9 s. Unclaimed after the idle share:
    // 0.889 s; 25 µs on each of the 4,100 produced elements; the busy fraction u = 11.01 s / 11.11 s
    // of the rest goes onto the ops' own time, almost all decode's.
    const seconds = 100 / 9;
    const profile = new ProfileBuilder()
      .range(1000)
      .map('decode', { self: 10e-3 })
      .op({ kind: 'repeat', count: -1 })
      .map('augment', { self: 10e-6 })
      .batch(10)
      .build({ rootElements: 100, rate: 9, unclaimedMainSeconds: 1 });
    const p = plan(profile);
    assert.equal(cacheOf(p.changes)?.opId, id(1));
    const unclaimed = 1 - 0.01 * seconds;
    const perOwnSecond = ((11.01 / seconds) * (unclaimed - 4100 * 25e-6)) / 10.01;
    // Left per batch: repeat and augment 10 elements and batch 1 at 25 µs, augment's 10 × 10 µs
    // with its share, and 10 cache hits at 1 µs. Shared per element as before, the 217 µs per
    // element would leave 4.6 ms per batch: 7× slower.
    const expected = 1 / (21 * 25e-6 + 10 * 10e-6 * (1 + perOwnSecond) + 10 * 1e-6);
    assert.ok(Math.abs(p.predictedBound - expected) < 1e-6 * expected, `bound ${p.predictedBound} vs ${expected}`);
  });

  it("takes the other threads' CPU (GC helpers) of the work a cache removes away with it", () => {
    // decode (10 ms) and augment (10 µs) over 100 batches of 10; 5 s of process CPU ran on other
    // threads. It follows the ops' own CPU: augment's share is 5 s × 0.01 / 10.01 over 100 batches.
    const profile = new ProfileBuilder({ cores: 2 })
      .range(1000)
      .map('decode', { self: 10e-3 })
      .op({ kind: 'repeat', count: -1 })
      .map('augment', { self: 10e-6 })
      .batch(10)
      .build({ rootElements: 100, rate: 9, otherCpuSeconds: 5 });
    const p = plan(profile);
    assert.equal(cacheOf(p.changes)?.opId, id(1));
    // After the cache: main thread 10 × (10 µs augment + 1 µs per cached element) = 110 µs per
    // batch; CPU 110 µs + 49.95 µs on 2 cores allows 12,500/s, so the main thread binds at 9,091/s.
    // Kept per batch as before, the 50 ms of other-thread CPU would cap it at 2 / 50.1 ms = 40/s.
    assert.ok(Math.abs(p.predictedBound - 1 / 110e-6) < 1e-6 * p.predictedBound, `bound ${p.predictedBound}`);
    assert.equal(p.predictedBottleneck.resource, 'main-thread');
  });
});
