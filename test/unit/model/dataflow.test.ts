/**
 * The model on issue 11's operators: mixtures whose branches are bounded by their share, shards
 * that throw away the work done before them, operators that change element counts, ignoreErrors,
 * padding, old profiles without the new counters, and kinds the model does not know.
 */
import * as assert from 'node:assert/strict';
import { analyze, describeOp, plan } from '../../../src/model';
import { mixtures, paddingOf } from '../../../src/model/dataflow';
import type { OpKind } from '../../../src/data/tracing';
import type { Profile } from '../../../src/shared/profile';
import { ProfileBuilder } from './builder';

const id = ProfileBuilder.id;

function near(actual: number, expected: number, rel = 1e-6): void {
  assert.ok(Math.abs(actual - expected) <= rel * Math.abs(expected), `expected ${actual} to be ≈ ${expected}`);
}

/**
 * Two sources, each through an awaiting map with one call in flight, mixed by sampleFromDatasets
 * (80% from the first, 20% from the second), then batch(4).
 */
function mixture(latencyA: number, latencyB: number, shares = [0.8, 0.2], weights: number[] | null = shares): Profile {
  return new ProfileBuilder()
    .range()
    .map('fast', { latency: latencyA, parallelism: 1 })
    .op({ kind: 'range', inputs: [] })
    .map('slow', { latency: latencyB, parallelism: 1 })
    .op({ kind: 'sampleFromDatasets', inputs: [1, 3], shares, weights: weights ?? undefined })
    .batch(4)
    .build({ rootElements: 1000, rate: 100 });
}

describe('model: DAGs, shards and the operators that change element counts', () => {
  it('bounds each branch of a mixture by its own bound divided by its share: the 20% branch binds only when that is the minimum', () => {
    // Per batch of 4: the first input supplies 3.2 elements at 1 ms each, one in flight (312.5
    // batches/s); the second 0.8 at 3 ms (416.7/s). The second is slower per element, yet binds later.
    const slowButRare = analyze(mixture(1e-3, 3e-3));
    near(slowButRare.bound, 1 / (4 * 0.8 * 1e-3));
    assert.equal(slowButRare.bottleneck.opId, id(1));
    assert.match(
      slowButRare.bottleneck.reason,
      /feeds input 1 of sampleFromDatasets, which takes 80% of its elements from there \(its weight\): that input keeps up with 1,000 el\/s of its own, so the mixture gets at most 1,250 el\/s/,
    );
    // At 6 ms the rare branch allows 0.8 × 6 ms per batch: 208 batches/s, now the minimum.
    const slower = analyze(mixture(1e-3, 6e-3));
    near(slower.bound, 1 / (4 * 0.2 * 6e-3));
    assert.equal(slower.bottleneck.opId, id(3));
    assert.match(slower.bottleneck.reason, /input 2 of sampleFromDatasets, which takes 20% of its elements/);
    // The same slow branch with half the elements binds at once: the share, not the speed alone, decides.
    const even = analyze(mixture(1e-3, 3e-3, [0.5, 0.5]));
    near(even.bound, 1 / (4 * 0.5 * 3e-3));
    assert.equal(even.bottleneck.opId, id(3));
  });

  it("takes a sampling mixture's shares from its weights, else from what each input handed over, else equal", () => {
    const p = mixture(1e-3, 3e-3, [0.75, 0.25], [0.7, 0.3]);
    const weighted = mixtures(p).get(id(4))!;
    assert.equal(weighted.basis, 'weights');
    assert.deepEqual(
      weighted.branches.map((b) => b.share),
      [0.7, 0.3],
    );
    assert.deepEqual(weighted.counted, [0.75, 0.25]);
    const unweighted = mixtures(mixture(1e-3, 3e-3, [0.75, 0.25], null)).get(id(4))!;
    assert.equal(unweighted.basis, 'counts');
    assert.deepEqual(
      unweighted.branches.map((b) => b.share),
      [0.75, 0.25],
    );
    const unrun = structuredClone(mixture(1e-3, 3e-3, [0.75, 0.25], null));
    for (const op of unrun.ops) op.counters.produced = 0;
    assert.equal(mixtures(unrun).get(id(4))!.basis, 'equal');
  });

  it('prices a rare branch at its weight, not at the elements read ahead for it, unless an input ended', () => {
    // The counters say 20% came from the slow input (6 ms, one in flight): 208 batches/s. Its weight
    // is 10%: 417/s, and the common input (90% at 1 ms: 278/s) binds instead.
    const p = mixture(1e-3, 6e-3, [0.8, 0.2], [0.9, 0.1]);
    const a = analyze(p);
    near(a.bound, 1 / (4 * 0.9 * 1e-3));
    assert.equal(a.bottleneck.opId, id(1));
    near(a.ops[3]!.visitRatio, 4 * 0.1);
    // When the common input ran out in the window the library drew only from the other: the counts hold.
    const ended = structuredClone(p);
    ended.ops[1]!.cardinality = ended.ops[1]!.counters.produced;
    const b = analyze(ended);
    near(b.bound, 1 / (4 * 0.2 * 6e-3));
    assert.equal(b.bottleneck.opId, id(3));
  });

  it("does not count chooseFromDatasets' choice dataset as a branch", () => {
    const p = new ProfileBuilder()
      .range()
      .op({ kind: 'range', inputs: [] })
      .op({ kind: 'range', inputs: [] })
      .op({ kind: 'chooseFromDatasets', inputs: [0, 1, 2], shares: [0.25, 0.75] })
      .build({ rootElements: 400, rate: 100 });
    const m = mixtures(p).get(id(3))!;
    assert.deepEqual(
      m.branches.map((b) => [b.inputId, b.share]),
      [
        [id(0), 0.25],
        [id(1), 0.75],
      ],
    );
    assert.deepEqual(
      analyze(p).ops.map((o) => o.visitRatio),
      [0.25, 0.75, 1, 1],
    );
  });

  it('charges work before a shard for every element it pulls and says how much the shard throws away', () => {
    // shard(4) after map(decode): map runs 4 × 2 times per batch of 2 at 1 ms: 8 ms, 125 batches/s.
    const late = new ProfileBuilder().range().map('decode', { self: 1e-3 }).op({ kind: 'shard', numShards: 4 }).batch(2).build({ rootElements: 100, rate: 100 });
    const a = analyze(late);
    assert.deepEqual(
      a.ops.map((o) => o.visitRatio),
      [8, 8, 2, 1],
    );
    near(a.bound, 1 / 8e-3);
    assert.equal(a.bottleneck.opId, id(1));
    assert.match(a.bottleneck.reason, /shard\(4, 0\) after it keeps 25% of the elements, so 75% of this work is thrown away/);
    assert.ok(plan(late).notes?.some((n) => /^shard\(4, 0\) keeps 25% of what it pulls, after work that costs 8 ms of CPU per batch: 6 ms of it \(75%\)/.test(n)));
    // Shard first: the map sees only this worker's share, four times the bound, and nothing is said.
    const early = new ProfileBuilder().range().op({ kind: 'shard', numShards: 4 }).map('decode', { self: 1e-3 }).batch(2).build({ rootElements: 100, rate: 100 });
    const b = analyze(early);
    near(b.bound, 1 / 2e-3);
    assert.doesNotMatch(b.bottleneck.reason, /shard/);
    assert.equal(plan(early).notes?.some((n) => n.startsWith('shard')) ?? false, false);
  });

  it('follows window, flatMap and rebatch through their measured produced/pulled counts', () => {
    // 10 batches ← rebatch pulls 2 per output ← flatMap gives 5 per window ← window takes 2 per window ← map.
    const p = new ProfileBuilder()
      .range()
      .map('tok', { self: 1e-4 })
      .op({ kind: 'window', batchSize: 4, pullsPerOutput: 2 })
      .op({ kind: 'flatMap', fnName: 'flat', out: 5 })
      .op({ kind: 'rebatch', batchSize: 64, pullsPerOutput: 2 })
      .build({ rootElements: 10, rate: 5 });
    const a = analyze(p);
    assert.deepEqual(
      a.ops.map((o) => o.visitRatio),
      [0.8, 0.8, 0.4, 2, 1],
    );
    near(a.ops[1]!.mainThreadPerRootElement, 0.8 * 1e-4);
    assert.equal(describeOp(p.ops[4]!), 'rebatch(64)');
  });

  it("charges a bucketing's input for each element of its uneven batches, as counted", () => {
    // Buckets of 32, 16 and 8 averaged 21.5 elements per batch in the run.
    const p = new ProfileBuilder()
      .range()
      .map('tokenize', { self: 1e-4 })
      .op({ kind: 'bucketBySequenceLength', fnName: 'lengthOf', pullsPerOutput: 21.5, positionsPerElement: 40, paddedShare: 0.1 })
      .build({ rootElements: 200, rate: 10 });
    const a = analyze(p);
    near(a.ops[1]!.visitRatio, 21.5);
    near(a.bound, 1 / (21.5 * 1e-4));
  });

  it("lets ignoreErrors pass elements through, its skips lowering its visit ratio below its input's", () => {
    const p = new ProfileBuilder().range().map('parse', { self: 1e-3 }).op({ kind: 'ignoreErrors', keep: 0.8 }).batch(10).build({ rootElements: 100, rate: 50 });
    assert.equal(p.ops[2]!.counters.errorsSkipped, 250);
    const a = analyze(p);
    assert.deepEqual(
      a.ops.map((o) => o.visitRatio),
      [12.5, 12.5, 10, 1],
    );
    // Every parse is paid for, including the ones that threw.
    near(a.bound, 1 / 12.5e-3);
  });

  it('measures the padding share and mean lengths of a padded batch, and reads profiles without the new counters', () => {
    const p = new ProfileBuilder().range().op({ kind: 'paddedBatch', batchSize: 8, positionsPerElement: 50, paddedShare: 0.38 }).build({ rootElements: 100, rate: 10 });
    const [pad] = paddingOf(p);
    assert.equal(pad!.opId, id(1));
    near(pad!.share, 0.38);
    near(pad!.meanLength!, 31);
    near(pad!.meanPaddedLength!, 50);
    const old = structuredClone(p) as Profile;
    for (const op of old.ops) {
      const c = op.counters as unknown as Record<string, unknown>;
      delete c['paddedPositions'];
      delete c['totalPositions'];
      delete c['errorsSkipped'];
    }
    assert.deepEqual(paddingOf(old), []);
    assert.doesNotThrow(() => analyze(old));
  });

  it('never crashes on an operator kind it does not know', () => {
    const p = new ProfileBuilder()
      .range()
      .op({ kind: 'someFutureOp' as OpKind, self: 1e-3 })
      .map('f', { self: 1e-3 })
      .build({ rootElements: 100, rate: 10 });
    const a = analyze(p);
    assert.equal(a.ops.length, 3);
    assert.ok(Number.isFinite(a.bound));
    assert.doesNotThrow(() => plan(p));
    assert.equal(describeOp(p.ops[1]!), 'someFutureOp');
  });

  it('never proposes a cache after a sampling mixture, which would replay one draw every epoch', () => {
    const p = new ProfileBuilder()
      .range(100)
      .map('a', { self: 1e-3, bytes: 10 })
      .op({ kind: 'range', inputs: [], cardinality: 100 })
      .map('b', { self: 1e-3, bytes: 10, inputs: [2] })
      .op({ kind: 'sampleFromDatasets', inputs: [1, 3], shares: [0.5, 0.5] })
      .op({ kind: 'repeat', count: -1 })
      .build({ rootElements: 1000, rate: 100 });
    const cache = plan(p).changes.filter((c) => c.kind === 'cache');
    assert.equal(
      cache.some((c) => c.opId === id(4)),
      false,
    );
  });
});
