import * as assert from 'node:assert/strict';
import { analyze, changeTitle, plan } from '../../../src/model';
import type { PlanChange } from '../../../src/shared/analysis';
import type { Profile } from '../../../src/shared/profile';
import { ProfileBuilder } from './builder';

const id = ProfileBuilder.id;

function near(actual: number, expected: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= 1e-6 * Math.max(1, Math.abs(expected)), `${what}: expected ${expected}, got ${actual}`);
}

function cacheOf(changes: PlanChange[]): Extract<PlanChange, { kind: 'cache' }> | undefined {
  return changes.find((c): c is Extract<PlanChange, { kind: 'cache' }> => c.kind === 'cache');
}

/** range(10,000) → map(decode) 4 ms → shuffle(1,000) → batch(10): 1,000 batches an epoch, 25 batches/s. */
function shuffled(first?: number): Profile {
  const p = new ProfileBuilder()
    .range(10000)
    .map('decode', { self: 4e-3, bytes: 100 })
    .op({ kind: 'shuffle', bufferSize: 1000, bytes: 100 })
    .op({ kind: 'batch', batchSize: 10, cardinality: 1000 })
    .build({ rootElements: 250, rate: 25 });
  if (first !== undefined) p.run.firstElementSeconds = first;
  return p;
}

describe('model: first batch and epochs', () => {
  it('a shuffle after an expensive map: its buffer fills at the map’s rate and dominates the first batch', () => {
    const t = analyze(shuffled()).time;
    assert.ok(t);
    // 1,000 elements behind 4 ms each on one main thread: 4 s; then one batch at 25 batches/s.
    const fill = t.firstBatchParts.find((p) => p.what === 'shuffle fill');
    assert.ok(fill);
    assert.equal(fill.opId, id(2));
    near(fill.seconds, 4, 'shuffle fill');
    near(t.firstBatchSeconds, 4 + 1 / 25, 'first batch');
    assert.equal(t.firstBatchParts[0], fill, 'largest first');
    assert.match(t.firstBatchSummary, /^the shuffle buffer of 1,000 fills behind map\(decode\): ≈ 4 s of ≈ 4\.04 s; move shuffle\(1000\) before map\(decode\) or shrink its buffer$/);
    // An epoch is the root's 1,000 batches at 25 batches/s; the shuffle's fill overlaps it.
    assert.deepEqual(t.epochSeconds?.length, 2);
    near(t.epochSeconds![0]!, 40, 'first epoch');
    near(t.epochSeconds![1]!, 40, 'later epoch');
    assert.match(t.epochSummary ?? '', /1,000 batches an epoch .*each starts after its shuffle buffer refills/);
  });

  it('a shuffle right after a slow source: only its buffer can shrink, nothing moves ahead of the source', () => {
    // An async source keeping its consumer 4 ms per element, the shuffle straight after it.
    const p = new ProfileBuilder().op({ kind: 'from', wait: 4e-3 }).op({ kind: 'shuffle', bufferSize: 1000, bytes: 100 }).op({ kind: 'batch', batchSize: 10 }).build({ rootElements: 250, rate: 25 });
    const t = analyze(p).time;
    assert.ok(t);
    assert.match(t.firstBatchSummary, /^the shuffle buffer of 1,000 fills behind from: ≈ 4 s of ≈ [\d.]+ s; shrink its buffer$/);
  });

  it('a buffer larger than the pass fills with the pass only', () => {
    const p = new ProfileBuilder().range(200).map('decode', { self: 4e-3 }).op({ kind: 'shuffle', bufferSize: 1000, cardinality: 200 }).build({ rootElements: 100, rate: 250 });
    const fill = analyze(p).time?.firstBatchParts.find((x) => x.what === 'shuffle fill');
    near(fill?.seconds ?? NaN, 200 * 4e-3, 'fill of 200 elements');
  });

  it('the start is what the run measured to its first element less the fill the model accounts for', () => {
    const t = analyze(shuffled(5)).time;
    assert.ok(t);
    const start = t.firstBatchParts.find((p) => p.what === 'start');
    near(start?.seconds ?? NaN, 5 - 4.04, 'start');
    near(t.firstBatchSeconds, 5, 'first batch as it ran');
    // The first epoch pays the start; later ones do not.
    near(t.epochSeconds![0]!, 40 + 0.96, 'first epoch');
    near(t.epochSeconds![1]!, 40, 'later epoch');
  });

  it('a window that caught a shuffle draining still gives the pass its work: each op’s elements per pass from the cardinalities', () => {
    // 1,500 elements decoded at 4 ms, shuffled in 750, batches of 10: 150 batches, 6 s of decoding a pass.
    const p = new ProfileBuilder()
      .range(1500)
      .map('decode', { self: 4e-3, cardinality: 1500 })
      .op({ kind: 'shuffle', bufferSize: 750, cardinality: 1500 })
      .op({ kind: 'batch', batchSize: 10, cardinality: 150 })
      .build({ rootElements: 100, rate: 125 });
    // The window saw the buffer drain: a fifth of the decodes its 100 batches needed, and 125 batches/s, its bound at that share.
    const decode = p.ops[1]!.counters;
    decode.produced /= 5;
    decode.pulled /= 5;
    decode.calls /= 5;
    const missed = decode.selfSeconds * 0.8;
    decode.selfSeconds -= missed;
    p.run.mainThreadCpuSeconds -= missed;
    p.run.processCpuSeconds -= missed;
    p.ops[0]!.counters.produced /= 5;
    const t = analyze(p).time;
    assert.ok(t?.epochSeconds);
    near(t.epochSeconds[0]!, 150 * 10 * 4e-3, 'an epoch decodes all 1,500 elements');
  });

  it('an endless pipeline has a first batch but no epochs', () => {
    const p = new ProfileBuilder().range().map('decode', { self: 1e-3 }).build({ rootElements: 100, rate: 1000 });
    const t = analyze(p).time;
    assert.ok(t);
    assert.equal(t.epochSeconds, undefined);
    near(t.firstBatchSeconds, 1e-3, 'first element');
    assert.match(t.firstBatchSummary, /first element's own work/);
  });

  it('an epoch of a repeat is one of its passes: a memory cache makes later ones near free', () => {
    // 1,000 images decoded at 10 ms, batches of 10 after repeat(): an epoch is 100 batches, 10 s.
    const profile = new ProfileBuilder().range(1000).map('decode', { self: 10e-3, bytes: 100e3 }).op({ kind: 'repeat', count: -1, passElements: 1000 }).batch(10).build({ rootElements: 100, rate: 10 });
    const p = plan(profile);
    assert.ok(cacheOf(p.changes));
    assert.ok(p.time?.epochSeconds);
    const [first, later] = p.time.epochSeconds;
    near(first!, 10, 'first epoch fills the cache at the uncached rate');
    assert.ok(later! < 0.01, `later epochs read memory: ${later}`);
    assert.match(p.time.epochSummary ?? '', /100 batches an epoch \(a pass of repeat\(\) the run completed\): the first ≈ 10 s \(the cache fills\)/);
  });

  it('a later epoch of repeat(3) reads its cache whole: none of the work above it runs, only what is below', () => {
    // 1,000 decodes of 10 ms, repeat(3), an augmentation of 2 ms after it, batches of 10.
    const profile = new ProfileBuilder()
      .range(1000)
      .map('decode', { self: 10e-3, bytes: 1e3, cardinality: 1000 })
      .op({ kind: 'repeat', count: 3, cardinality: 3000 })
      .map('augment', { self: 2e-3, random: true, cardinality: 3000 })
      .op({ kind: 'batch', batchSize: 10, cardinality: 300 })
      .build({ rootElements: 100, rate: 1 / 0.12 });
    const p = plan(profile);
    assert.ok(cacheOf(p.changes));
    const [first, later] = p.time!.epochSeconds!;
    near(first!, 100 * 0.12, 'the first epoch decodes and augments');
    // 100 batches of ten 2 ms augmentations, and ten cache hits of 1 µs each.
    near(later!, 100 * (10 * 2e-3 + 10 * 1e-6), 'later epochs only augment');
  });
});

describe('model: a cache on disk when memory will not hold it', () => {
  /** 1,000 elements of 1 MB decoded at 10 ms, read again by repeat(); serialise 0.5 ms, deserialise 1 ms, 1 GB/s disk. */
  function big(read = 1e-3): Profile {
    const profile = new ProfileBuilder({ diskReadBytesPerSec: 1e9 })
      .range(1000)
      .map('decode', { self: 10e-3, bytes: 1e6, cardinality: 1000 })
      .op({ kind: 'repeat', count: -1, passElements: 1000 })
      .batch(10)
      .build({ rootElements: 100, rate: 10 });
    profile.ops[1]!.diskCacheCost = { samples: 8, serializedBytes: 1e6, writeSeconds: 0.5e-3, readSeconds: read };
    // What the runner measures of memory: a 40 MB process, 60 MB at the window's peak.
    profile.run.baseRssBytes = 40e6;
    profile.run.windowPeakRssBytes = 60e6;
    profile.machine.heapLimitBytes = 4e9;
    return profile;
  }

  it('proposes cache(path) under the cache dir, with its size, when the budget is too small and the disk pays', () => {
    const profile = big();
    // 1 GB of cache against a 100 MB budget.
    const p = plan(profile, { memoryBudgetBytes: 100e6 });
    const cache = cacheOf(p.changes);
    assert.ok(cache, `expected a disk cache; notes: ${p.notes?.join(' | ')}`);
    assert.equal(cache.opId, id(1));
    assert.equal(cache.path, '.cache/plumber/train-11_4.plumbercache');
    assert.equal(cache.estimatedBytes, 1e9);
    assert.match(cache.reason, /goes on disk at \.cache\/plumber\/train-11_4\.plumbercache/);
    assert.equal(changeTitle(cache, profile), 'cache after map(decode) (≈ 1 GB, on disk at .cache/plumber/train-11_4.plumbercache)');
    // The override is the absolute path beside the pipeline file.
    assert.deepEqual(p.overrides[id(1)], { cache: `${profile.pipeline.file.slice(0, profile.pipeline.file.lastIndexOf('/'))}/.cache/plumber/train-11_4.plumbercache` });
    // A later pass reads 10 MB per batch at 1 GB/s (10 ms) and deserialises ten elements (10 ms) on the main thread: ≈ 100 batches/s at most.
    assert.ok(p.predictedBound <= 100 && p.predictedBound > 99, `bound ${p.predictedBound}`);
    // On disk, it holds nothing in memory: the plan's projected peak has no cache in it, and stays within the budget.
    assert.ok(p.memory);
    assert.equal(p.memory.parts.filter((part) => part.what === 'cache').length, 0, JSON.stringify(p.memory.parts));
    assert.ok(p.memory.peakBytes <= 100e6, p.memory.summary);
    // Its epochs: the first writes (10 ms + 0.5 ms per element), later ones read.
    const [first, later] = p.time!.epochSeconds!;
    near(first!, 100 * (0.1 + 10 * 0.5e-3), 'first epoch with the serialising');
    assert.ok(Math.abs(later! - 100 * 0.01) < 1e-3, `later epochs read at the disk’s bandwidth: ${later}`);
  });

  it('a disk cache’s first batch waits for its file to be created and its first record written, later epochs for its opening, as the runner measured them', () => {
    const profile = big();
    const without = plan(profile, { memoryBudgetBytes: 100e6 }).time!;
    profile.ops[1]!.diskCacheCost = { ...profile.ops[1]!.diskCacheCost!, startSeconds: 12e-3, openSeconds: 3e-3 };
    const p = plan(profile, { memoryBudgetBytes: 100e6 });
    const time = p.time!;
    assert.deepEqual(
      time.firstBatchParts.filter((x) => x.what === 'cache fill'),
      [{ what: 'cache fill', opId: id(1), seconds: 12e-3 }],
    );
    near(time.firstBatchSeconds - without.firstBatchSeconds, 12e-3, 'first batch');
    near(time.epochSeconds![0]! - without.epochSeconds![0]!, 12e-3, 'first epoch');
    near(time.epochSeconds![1]! - without.epochSeconds![1]!, 3e-3, 'later epoch');
  });

  it('the cache dir is the user’s choice', () => {
    const cache = cacheOf(plan(big(), { memoryBudgetBytes: 100e6, cacheDir: 'tmp/caches/' }).changes);
    assert.equal(cache?.path, 'tmp/caches/train-11_4.plumbercache');
  });

  it('no disk cache where reading it back costs more than recomputing, nor without its measurement', () => {
    assert.equal(cacheOf(plan(big(20e-3), { memoryBudgetBytes: 100e6 }).changes), undefined);
    const unmeasured = big();
    delete unmeasured.ops[1]!.diskCacheCost;
    assert.equal(cacheOf(plan(unmeasured, { memoryBudgetBytes: 100e6 }).changes), undefined);
  });

  it('a cache that fits in memory stays in memory', () => {
    const cache = cacheOf(plan(big()).changes);
    assert.ok(cache);
    assert.equal(cache.path, undefined);
  });
});
