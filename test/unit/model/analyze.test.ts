import * as assert from 'node:assert/strict';
import { analyze, MODEL_CONSTANTS, plan } from '../../../src/model';
import { rootRateOf } from '../../../src/shared/units';
import { ProfileBuilder } from './builder';

const id = ProfileBuilder.id;

/** a ≈ b to a relative tolerance (model numbers are sums of floating-point counters). */
function near(actual: number, expected: number, rel = 1e-6): void {
  assert.ok(Math.abs(actual - expected) <= rel * Math.abs(expected), `expected ${actual} to be ≈ ${expected}`);
}

describe('model: analyze', () => {
  it('computes visit ratios through filter, flatMap and batch from produced counts', () => {
    // 10 batches of 32 ← 320 from flatMap(×4) ← 80 kept by filter(½) ← 160 mapped ← 160 from range.
    const profile = new ProfileBuilder()
      .range()
      .map('parse', { self: 1e-4 })
      .op({ kind: 'filter', fnName: 'valid', keep: 0.5, self: 1e-5 })
      .op({ kind: 'flatMap', fnName: 'split', out: 4, self: 1e-5 })
      .batch(32)
      .build({ rootElements: 10, rate: 5 });
    const a = analyze(profile);
    assert.deepEqual(
      a.ops.map((o) => o.visitRatio),
      [16, 16, 8, 32, 1],
    );
    // map(parse) is called 16 times per batch at 0.1 ms: 1.6 ms of main thread per root element.
    near(a.ops[1].mainThreadPerRootElement, 16 * 1e-4);
    // filter is called for every input (16 per batch), flatMap for every kept one (8).
    near(a.ops[2].mainThreadPerRootElement, 16 * 1e-5);
    near(a.ops[3].mainThreadPerRootElement, 8 * 1e-5);
  });

  it('counts the batch in progress when the window ended for the operators that worked on it, not for the batch', () => {
    // Five batches of 32, then 20 images of the sixth when the budget ended the window: the
    // runner reports 5.625 elements; the map and the source counted 180 calls, the batch 5.
    const profile = new ProfileBuilder().range().map('decode', { self: 1e-3 }).batch(32).build({ rootElements: 5, rate: 1 });
    for (const op of profile.ops.slice(0, 2)) {
      op.counters.produced += 20;
      op.counters.calls += op.kind === 'map' ? 20 : 0;
      op.counters.selfSeconds += op.kind === 'map' ? 20 * 1e-3 : 0;
    }
    profile.ops[2]!.counters.pulled += 20;
    profile.run.partialElement = 0.625;
    profile.run.elements = 5.625;
    const a = analyze(profile);
    assert.deepEqual(
      a.ops.map((o) => o.visitRatio),
      [32, 32, 1],
    );
    near(a.ops[1].mainThreadPerRootElement, 32 * 1e-3, 0.02);
    // In the pipeline's unit every operator runs at the run's 5.625 batches in 5 s, the batch too.
    for (const o of a.ops) near(rootRateOf(o), 5.625 / 5);
  });

  it('finds the main thread as the bound of two sync maps: 1 / (sum of their times)', () => {
    const profile = new ProfileBuilder().range().map('a', { self: 2e-3 }).map('b', { self: 3e-3 }).build({ rootElements: 1000, rate: 190 });
    const a = analyze(profile);
    near(a.bound, 1 / 5e-3);
    assert.equal(a.bottleneck.resource, 'main-thread');
    assert.equal(a.bottleneck.opId, id(2));
    assert.match(a.bottleneck.reason, /map\(b\) runs on the main thread and needs 3 ms per element/);
    assert.match(a.bottleneck.reason, /at most 200 el\/s/);
    assert.equal(a.measuredRate, 190);
    assert.ok(a.ops[2].isBottleneck && !a.ops[1].isBottleneck);
  });

  it('says what a bottleneck above a batch costs per call, beside its cost per batch', () => {
    // 16 calls of 0.5 ms per batch of 16: 8 ms of the main thread per batch.
    const profile = new ProfileBuilder({ cores: 2 }).range().map('embed', { self: 5e-4, module: true }).batch(16).build({ rootElements: 100, rate: 120 });
    const a = analyze(profile);
    assert.equal(a.bottleneck.resource, 'main-thread');
    assert.match(a.bottleneck.reason, /map\(embed\) runs on the main thread and needs 8 ms per batch \(500 µs per call × 16 calls\); the main thread can give at most 125 batches\/s/);
    const move = plan(profile).changes.find((c) => c.kind === 'placement');
    assert.ok(move, 'the plan moves map(embed) to worker threads');
    assert.match(move.reason, /keeps the main thread busy 8 ms per batch \(500 µs per call × 16 calls\); in 2 worker threads/);
    // Once per root element, no per-call words.
    const once = analyze(new ProfileBuilder().range().map('a', { self: 2e-3 }).map('b', { self: 3e-3 }).build({ rootElements: 1000, rate: 190 }));
    assert.doesNotMatch(once.bottleneck.reason, /per call/);
    // A pipeline that does not batch counts elements, in the sentence as in the table.
    assert.match(once.bottleneck.reason, /needs 3 ms per element \(60% of the main thread's 5 ms\); the main thread can give at most 200 el\/s/);
  });

  it('says how to make a main-thread fn movable when other cores are idle and no worker can load it', () => {
    const heavy = (cores: number, module: boolean) => analyze(new ProfileBuilder({ cores }).range().map('heavy', { self: 10e-3, module }).batch(16).build({ rootElements: 100, rate: 6 })).bottleneck;
    const named = heavy(2, false);
    assert.equal(named.resource, 'main-thread');
    assert.match(
      named.reason,
      /map\(heavy\) runs on the main thread .* Worker threads could run it beside the main thread \(all cores together allow about \d.* batches\/s\), but heavy is not exported, so they cannot load it: export it \(`export function heavy`\)/,
    );
    // An inline arrow has no name to export.
    const inline = analyze(new ProfileBuilder({ cores: 2 }).range().map('', { self: 10e-3 }).batch(16).build({ rootElements: 100, rate: 6 })).bottleneck;
    assert.match(inline.reason, /its fn is not an exported function, so they cannot load it: write it as an exported function/);
    // Exported, the plan moves it itself; on one core there is nowhere to move it to.
    assert.doesNotMatch(heavy(2, true).reason, /not an exported function/);
    assert.doesNotMatch(heavy(1, false).reason, /not an exported function/);
    // A generator source that computes each element: the work must leave the source first.
    const source = analyze(new ProfileBuilder({ cores: 2 }).op({ kind: 'from', ownPerElement: 8e-3 }).map('scale', { self: 1e-4, module: true }).batch(32).build({ rootElements: 100, rate: 3.5 })).bottleneck;
    assert.equal(source.opId, id(0));
    assert.match(
      source.reason,
      /The other cores could share this work \(all cores together allow about \d.* batches\/s\), but it runs inside the source, which only the main thread runs: have the source yield what each element is made from/,
    );
  });

  it("counts every operator's bookkeeping and unclaimed main-thread time in the main-thread bound", () => {
    // 10 µs of bookkeeping per element in each of 3 ops, plus 1 s of main-thread CPU no op claimed
    // over 1,000 root elements in 1000 / 150 s. The runtime's idle share (10 ms per second) is not
    // per element. Of the rest, 25 µs goes on each of the 3,000 produced elements; of what is left,
    // the busy fraction u = 6.03 s / 6.67 s goes to the ops in proportion to their own time.
    const profile = new ProfileBuilder({}, 10e-6).range().map('a', { self: 2e-3 }).map('b', { self: 3e-3 }).build({ rootElements: 1000, rate: 150, unclaimedMainSeconds: 1 });
    const a = analyze(profile);
    const seconds = 1000 / 150;
    const unclaimed = 1 - MODEL_CONSTANTS.idleMainOverheadPerSecond * seconds;
    const u = 6.03 / seconds;
    const byWork = u * (unclaimed - 3000 * 25e-6);
    near(a.bound, 1 / (5.03e-3 + 3 * 25e-6 + byWork / 1000));
    assert.match(a.bounds[0].detail, /of runtime overhead no operator claimed/);
  });

  it('says the runtime overhead is all the main thread does when no operator claimed any of it', () => {
    // A pipeline served from a cache: no op's own code runs, the main thread only settles promises.
    const profile = new ProfileBuilder({}, 0).range().op({ kind: 'cache' }).build({ rootElements: 100_000, rate: 250_000, unclaimedMainSeconds: 0.3 });
    const main = analyze(profile).bounds.find((b) => b.resource === 'main-thread');
    assert.ok(main, JSON.stringify(analyze(profile).bounds));
    assert.match(main.detail, /^The main thread is busy [\d.]+ µs per element \([\d.]+ µs of runtime overhead no operator claimed \(promises, timers, GC\)\); one thread gives at most/);
  });

  it("does not let an idle main thread's wakeups make it look like the bottleneck", () => {
    // One fetch at a time (30 ms) over 100 root elements in 4 s: the ops claim 2 ms of main thread
    // and 0.2 s more went unclaimed (timers, wakeups, an in-process server). After the 10 ms/s idle
    // share, 0.16 s over 200 produced elements: 25 µs each (5 ms), and of the other 0.155 s only
    // the busy fraction u = 0.202 / 4 goes onto fetch's own 2 ms.
    const profile = new ProfileBuilder().range().map('fetch', { latency: 30e-3, self: 20e-6, parallelism: 1 }).build({ rootElements: 100, rate: 25, unclaimedMainSeconds: 0.2 });
    const a = analyze(profile);
    const main = a.bounds.find((b) => b.resource === 'main-thread');
    assert.ok(main);
    const mainPerRoot = 20e-6 + 2 * 25e-6 + ((0.202 / 4) * 0.155) / 100;
    near(main.rate, 1 / mainPerRoot);
    // Charged per element as measured (800 µs), the main thread would allow 617/s and cap the plan
    // at 19 calls in flight. Here: the 6,744/s of the main thread takes ⌈6,744 × 30 ms⌉ = 203
    // calls, and 25% headroom ⌈203 × 1.25 × 6,744 / 6,767⌉ = 253.
    const p = plan(profile);
    const par = p.changes.find((c) => c.kind === 'parallelism');
    assert.equal(par?.kind === 'parallelism' ? par.to : undefined, 253);
  });

  it("charges a busy main thread its unclaimed time, 25 µs per element and the rest by each op's own time", () => {
    // 1 s unclaimed over 1,000 root elements in 1.1 s: busy u = 1.04 / 1.1.
    const profile = new ProfileBuilder()
      .range()
      .map('a', { self: 40e-6 })
      .build({ rootElements: 1000, rate: 1000 / 1.1, unclaimedMainSeconds: 1 });
    const unclaimed = 1 - MODEL_CONSTANTS.idleMainOverheadPerSecond * 1.1;
    const byWork = (1.04 / 1.1) * (unclaimed - 2000 * 25e-6);
    near(analyze(profile).bound, 1 / (40e-6 + 2 * 25e-6 + byWork / 1000));
  });

  it('ignores the main-thread total when it comes from a wall clock (it includes idle time)', () => {
    const profile = new ProfileBuilder({ cpuClock: 'wall' }).range().map('a', { self: 2e-3 }).map('b', { self: 3e-3 }).build({ rootElements: 1000, rate: 100, unclaimedMainSeconds: 5 });
    near(analyze(profile).bound, 1 / 5e-3);
  });

  it('bounds a worker map by its threads, and by the cores when it has more threads than cores', () => {
    const one = new ProfileBuilder({ cores: 2 }).range().map('decode', { placement: 'worker', worker: 8e-3, dispatch: 50e-6, parallelism: 1 }).build({ rootElements: 500, rate: 120 });
    const a1 = analyze(one);
    assert.equal(a1.bottleneck.resource, 'parallel-op');
    assert.equal(a1.bottleneck.opId, id(1));
    near(a1.bound, 1 / 8e-3);

    const four = new ProfileBuilder({ cores: 2 }).range().map('decode', { placement: 'worker', worker: 8e-3, dispatch: 50e-6, parallelism: 4 }).build({ rootElements: 500, rate: 240 });
    const a4 = analyze(four);
    // Worker threads: min(4, 2 cores) / 8 ms = 250; all CPU: 2 cores / (8 ms + 0.05 ms) ≈ 248.4.
    assert.equal(a4.bottleneck.resource, 'cpu');
    near(a4.bound, 2 / 8.05e-3);
    near(a4.bounds.find((b) => b.resource === 'parallel-op')?.rate ?? 0, 250);
  });

  it('charges worker ops with the process CPU their per-task clock missed', () => {
    // The workers report 0.5 ms per call, but the process used 1.5 ms more per call on threads
    // that are neither the main thread nor measured by any op. 10% of the measured CPU (0.05 ms)
    // is the runtime's own threads; the other 1.45 ms goes to the worker op: 1.95 ms per call.
    const profile = new ProfileBuilder({ cores: 2 })
      .range()
      .map('decode', { placement: 'worker', worker: 0.5e-3, dispatch: 0, parallelism: 1 })
      .build({ rootElements: 400, rate: 480, otherCpuSeconds: 400 * 1.5e-3 });
    const a = analyze(profile);
    near(a.bound, 1 / 1.95e-3);
    assert.match(a.bottleneck.reason, /1\.45 ms of it process CPU that the per-task clock missed/);
  });

  it('charges worker ops nothing extra when their clock accounts for the process CPU', () => {
    // 2 ms of worker CPU per call and 0.1 ms per call on other threads (5%, the runtime's GC and
    // compiler threads): one thread allows 500/s; the 0.1 ms still counts against the cores.
    const profile = new ProfileBuilder({ cores: 2 })
      .range()
      .map('decode', { placement: 'worker', worker: 2e-3, dispatch: 0, parallelism: 1 })
      .build({ rootElements: 400, rate: 480, otherCpuSeconds: 400 * 0.1e-3 });
    const a = analyze(profile);
    near(a.bound, 1 / 2e-3);
    assert.doesNotMatch(a.bottleneck.reason, /per-task clock missed/);
    near(a.bounds.find((b) => b.resource === 'cpu')?.rate ?? 0, 2 / 2.1e-3);
  });

  it("bounds an awaiting map by calls in flight over latency (Little's law)", () => {
    const profile = new ProfileBuilder().range().map('fetch', { latency: 10e-3, self: 20e-6, parallelism: 4 }).build({ rootElements: 1000, rate: 390 });
    const a = analyze(profile);
    assert.equal(a.bottleneck.resource, 'latency');
    assert.equal(a.bottleneck.opId, id(1));
    near(a.bound, 4 / 10e-3);
    assert.match(a.bottleneck.reason, /waits 10 ms per call/);
    assert.match(a.bottleneck.reason, /4 calls in flight/);
  });

  it('bounds a file source by the measured disk bandwidth', () => {
    const profile = new ProfileBuilder({ diskReadBytesPerSec: 100e6 })
      .op({ kind: 'files', latency: 1e-3, parallelism: 16, diskBytes: 1e6, bytes: 1e6 })
      .map('decode', { self: 1e-4 })
      .build({ rootElements: 500, rate: 95 });
    const a = analyze(profile);
    assert.equal(a.bottleneck.resource, 'disk');
    assert.equal(a.bottleneck.opId, id(0));
    near(a.bound, 100);
  });

  it('bounds libuv work by the pool size, using the service time without queueing', () => {
    // 16 reads in flight at 400 el/s with 40 ms latency: 16 in flight on average (Little), 4 pool
    // threads, so each read holds a thread 40 ms × 4/16 = 10 ms; 4 threads / 10 ms = 400 el/s.
    const profile = new ProfileBuilder({ libuvThreads: 4 }).op({ kind: 'files', latency: 40e-3, parallelism: 16 }).build({ rootElements: 4000, rate: 400 });
    const a = analyze(profile);
    const libuv = a.bounds.find((b) => b.resource === 'libuv');
    near(libuv?.rate ?? 0, 400);
    near(a.bounds.find((b) => b.resource === 'latency')?.rate ?? 0, 1600);
  });

  it('adds up waits and work that run in series when nothing decouples them', () => {
    // An async-iterable source keeps its consumer waiting 5 ms per element, then decode works 5 ms
    // on the main thread; nothing pulls ahead, so each element takes 10 ms: 100 el/s.
    const profile = new ProfileBuilder().op({ kind: 'from', wait: 5e-3 }).map('decode', { self: 5e-3 }).build({ rootElements: 500, rate: 98 });
    const a = analyze(profile);
    assert.equal(a.bottleneck.resource, 'sequential-op');
    near(a.bound, 100);
    assert.match(a.bottleneck.reason, /in series/);
  });

  it('reads no latency into an array source: its consumer waited on the event loop, not on it', () => {
    // The same waits on an array (its length known): the library yields a turn now and then, which
    // another holder of the thread (a training step) delays, but the array itself awaits nothing.
    const a = analyze(new ProfileBuilder().op({ kind: 'from', wait: 5e-3, cardinality: 10_000 }).map('decode', { self: 5e-3 }).build({ rootElements: 500, rate: 98 }));
    assert.notEqual(a.bottleneck.resource, 'sequential-op');
    assert.ok(!a.bounds.some((b) => b.opId === a.ops[0]?.opId && Number.isFinite(b.rate)), JSON.stringify(a.bounds));
    near(a.bound, 200);
  });

  it('says a series bound waits when its operator spends most of its time waiting, and works when it does not', () => {
    // A source that keeps its consumer waiting 8 ms ahead of 2 ms of decode: the elements pass
    // through in series, and the time that binds is mostly the source's wait.
    const waits = analyze(new ProfileBuilder().op({ kind: 'from', wait: 8e-3 }).map('decode', { self: 2e-3 }).build({ rootElements: 500, rate: 98 }));
    assert.equal(waits.bottleneck.resource, 'sequential-op');
    assert.equal(waits.bottleneck.waiting, true);
    // The same chain whose decode works 8 ms after a 2 ms wait: the operator in series works.
    const works = analyze(new ProfileBuilder().op({ kind: 'from', wait: 2e-3 }).map('decode', { self: 8e-3 }).build({ rootElements: 500, rate: 98 }));
    assert.notEqual(works.bottleneck.waiting, true);
  });

  it('overlaps an awaiting map with the work after it, even with one call in flight', () => {
    // The engine starts the next fetch while decode works on the previous result: the bound is
    // min(1 / 5 ms, 1 / 2 ms) = 200 el/s, not 1 / 7 ms.
    const profile = new ProfileBuilder().range().map('fetch', { latency: 5e-3, parallelism: 1 }).map('decode', { self: 2e-3 }).build({ rootElements: 500, rate: 195 });
    const a = analyze(profile);
    assert.equal(a.bottleneck.resource, 'latency');
    near(a.bound, 200);
  });

  it('reports a run that produced nothing with a sentence instead of numbers', () => {
    const profile = new ProfileBuilder().range().map('a', { self: 1e-3 }).build({ rootElements: 0, rate: 1 });
    const a = analyze(profile);
    assert.equal(a.bound, 0);
    assert.match(a.bottleneck.reason, /produced no elements/);
  });
});
