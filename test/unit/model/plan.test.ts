import * as assert from 'node:assert/strict';
import { analyze, changeTitle, overridesReverting, plan, predict } from '../../../src/model';
import type { PlanChange } from '../../../src/shared/analysis';
import { ProfileBuilder } from './builder';

const id = ProfileBuilder.id;

function near(actual: number, expected: number, rel = 1e-6): void {
  assert.ok(Math.abs(actual - expected) <= rel * Math.abs(expected), `expected ${actual} to be ≈ ${expected}`);
}

function change<K extends PlanChange['kind']>(changes: PlanChange[], kind: K, opId?: string): Extract<PlanChange, { kind: K }> | undefined {
  return changes.find((c): c is Extract<PlanChange, { kind: K }> => c.kind === kind && (opId === undefined || c.opId === opId));
}

describe('model: plan', () => {
  it('moves a CPU-heavy importable sync map to worker threads, paying dispatch on the main thread', () => {
    const profile = new ProfileBuilder({ cores: 2 }).range().map('decodeJpeg', { self: 12e-3, module: true }).batch(32).build({ rootElements: 20, rate: 2.5 });
    const p = plan(profile);
    const move = change(p.changes, 'placement', id(1));
    assert.ok(move, 'expected a placement change');
    assert.equal(move.parallelism, 2);
    assert.equal(changeTitle(move, profile), 'run map(decodeJpeg) in worker threads');
    assert.deepEqual(p.overrides[id(1)], { placement: 'worker', parallelism: 2, module: '/work/transforms.ts', exportName: 'decodeJpeg' });
    // Per call: the worker does 12 ms − 2 µs bookkeeping + 40 µs overhead; the main thread keeps
    // 2 µs + 60 µs dispatch. CPU: 2 cores / (32 × (12.038 ms + 0.062 ms)) per batch.
    near(p.predictedBound, 2 / (32 * (12.038e-3 + 62e-6)));
    assert.equal(p.predictedBottleneck.resource, 'cpu');
    // Measured efficiency 2.5 / (1 / 384 ms) carries over to the prediction.
    near(p.predictedRate, p.predictedBound * (2.5 * 32 * 12e-3));
  });

  it('sends small elements several to a worker task, so dispatch is paid per task', () => {
    // 0.5 ms per call: plumber-data gives a task the elements that make its fixed cost (60 µs
    // dispatch + 40 µs overhead) 5% of it, ⌈100 µs ÷ (5% × 498 µs)⌉ = 5. Per element the main
    // thread keeps 2 µs + 60 µs / 5; the workers do 0.5 ms − 2 µs + 40 µs / 5.
    const profile = new ProfileBuilder({ cores: 2 }).range().map('tokenize', { self: 0.5e-3, module: true }).build({ rootElements: 4000, rate: 1900 });
    const p = plan(profile);
    assert.equal(change(p.changes, 'placement', id(1))?.parallelism, 2);
    near(p.predictedBound, 2 / (2e-6 + 12e-6 + 0.5e-3 - 2e-6 + 8e-6));
  });

  it('leaves a tiny sync map (10 µs) on the main thread, below the floor where its dispatch estimate is least certain', () => {
    const profile = new ProfileBuilder().range().map('scale', { self: 10e-6, module: true }).build({ rootElements: 10000, rate: 90000 });
    const p = plan(profile);
    assert.equal(change(p.changes, 'placement'), undefined);
  });

  it('moves a 50 µs sync map that binds the main thread to workers: elements travel ~40 to a task', () => {
    // A 50 µs fn that holds the main thread: in worker threads its tasks carry ⌈100 µs ÷ (5% ×
    // 48 µs)⌉ = 42 elements, so the dispatch left on the main thread is small.
    const profile = new ProfileBuilder({ cores: 2 }).range().map('scale', { self: 50e-6, module: true }).build({ rootElements: 10000, rate: 19000 });
    const p = plan(profile);
    assert.equal(change(p.changes, 'placement', id(1))?.parallelism, 2);
    assert.ok(p.predictedBound > 1.5 * 19000, `predicted bound ${p.predictedBound}`);
  });

  it('raises the concurrency of a latency-bound async map up to maxConcurrency', () => {
    const profile = new ProfileBuilder().range().map('fetch', { latency: 10e-3, self: 20e-6, parallelism: 4 }).build({ rootElements: 1000, rate: 390 });
    const p = plan(profile);
    const par = change(p.changes, 'parallelism', id(1));
    assert.ok(par);
    assert.equal(par.from, 4);
    // The default limit is 256 calls in flight; the main thread (20 µs per element) allows 50,000/s.
    assert.equal(par.to, 256);
    near(p.predictedBound, 256 / 10e-3);
    assert.equal(changeTitle(par, profile), 'set parallelism of map(fetch) to 256');
  });

  it('gives a latency-bound map just enough calls in flight to pass the next bound, plus headroom', () => {
    // fetch: 4 / 10 ms = 400 el/s; the main thread allows 1 / 2 ms = 500 el/s. Reaching 500 takes
    // 5 calls; the 25% hedge asks for 500 × 1.25 × 10 ms = 6.25, so 7.
    const profile = new ProfileBuilder().range().map('fetch', { latency: 10e-3, parallelism: 4 }).map('decode', { self: 2e-3 }).build({ rootElements: 1000, rate: 380 });
    const p = plan(profile);
    assert.equal(change(p.changes, 'parallelism', id(1))?.to, 7);
    near(p.predictedBound, 500);
    assert.equal(p.predictedBottleneck.resource, 'main-thread');
  });

  it("raises a one-at-a-time awaiting map past the main thread's bound, with headroom", () => {
    // fetch: 1 / 5 ms = 200 el/s; decode on the main thread: 500 el/s. 3 calls reach 500; the hedge
    // asks for 500 × 1.25 × 5 ms = 3.125, so 4.
    const profile = new ProfileBuilder().range().map('fetch', { latency: 5e-3, parallelism: 1 }).map('decode', { self: 2e-3 }).build({ rootElements: 500, rate: 195 });
    const p = plan(profile);
    assert.equal(change(p.changes, 'parallelism', id(1))?.to, 4);
    near(p.predictedBound, 500);
  });

  it('inserts a prefetch after an awaiting source whose concurrency is not a knob', () => {
    const profile = new ProfileBuilder().op({ kind: 'from', wait: 5e-3 }).map('decode', { self: 5e-3 }).build({ rootElements: 500, rate: 98 });
    const p = plan(profile);
    const pf = change(p.changes, 'prefetch', id(0));
    assert.ok(pf && !pf.existing);
    assert.equal(pf.size, 2);
    assert.equal(p.overrides[id(0)]?.prefetch, 2);
    near(p.predictedBound, 200);
  });

  it('gives worker threads to both maps instead of starving the cheap one', () => {
    // 6 cores; a needs 6 ms, b 3 ms of worker CPU per element. All to a (5, 1) gives 333 el/s;
    // the greedy reaches (4, 2): 667 el/s per map, and 6 cores / (9 ms + 2 × 60 µs dispatch)
    // ≈ 658 el/s binds. The hedge then keeps each map 25% above that: a ⌈1.25 × 658 × 6 ms⌉ = 5
    // threads, b ⌈1.25 × 658 × 3 ms⌉ = 3.
    const profile = new ProfileBuilder({ cores: 6 })
      .range()
      .map('a', { placement: 'worker', worker: 6e-3, parallelism: 1, module: true })
      .map('b', { placement: 'worker', worker: 3e-3, parallelism: 1, module: true })
      .build({ rootElements: 1000, rate: 160 });
    const p = plan(profile);
    assert.equal(change(p.changes, 'parallelism', id(1))?.to, 5);
    assert.equal(change(p.changes, 'parallelism', id(2))?.to, 3);
    near(p.predictedBound, 6 / (9e-3 + 120e-6));
  });

  it('proposes no prefetch at the end: it does not change what the model predicts, so it is noise', () => {
    // fetch gets 8 calls in flight (the cap): 800 el/s. A prefetch after it would only overlap a
    // consumer the model does not see.
    const profile = new ProfileBuilder().range().map('fetch', { latency: 10e-3, parallelism: 2 }).build({ rootElements: 1000, rate: 190 });
    const p = plan(profile, { maxConcurrency: 8 });
    assert.deepEqual(
      p.changes.map((c) => changeTitle(c, profile)),
      ['set parallelism of map(fetch) to 8'],
    );
  });

  it('proposes nothing for a main-thread-bound pipeline it cannot speed up, and predicts what it measured', () => {
    const profile = new ProfileBuilder().range().map('a', { self: 2e-3 }).map('b', { self: 3e-3 }).batch(32).build({ rootElements: 100, rate: 6 });
    const p = plan(profile);
    assert.deepEqual(p.changes, []);
    assert.equal(p.predictedRate, 6);
  });

  it('leaves an existing prefetch at the end alone', () => {
    const build = (size: number) => new ProfileBuilder().range().map('fetch', { latency: 10e-3, parallelism: 8 }).prefetch(size).build({ rootElements: 1000, rate: 780 });
    assert.deepEqual(plan(build(1), { maxConcurrency: 8 }).changes, []);
    assert.deepEqual(plan(build(8), { maxConcurrency: 8 }).changes, []);
  });
});

describe('model: plan on a planned run', () => {
  it("proposes nothing more after its own latency plan ran, and keeps the first pass's overrides", () => {
    const first = new ProfileBuilder().range().map('fetch', { latency: 10e-3, parallelism: 4 }).map('decode', { self: 2e-3 }).build({ rootElements: 1000, rate: 380 });
    const p1 = plan(first);
    const k = change(p1.changes, 'parallelism', id(1))?.to ?? 0;
    assert.ok(k > 4);
    // The re-trace: the same ops with the plan's knobs.
    const second = new ProfileBuilder().range().map('fetch', { latency: 10e-3, parallelism: k }).map('decode', { self: 2e-3 }).build({ rootElements: 1000, rate: 480, overrides: p1.overrides });
    const p2 = plan(second);
    assert.deepEqual(p2.changes, []);
    assert.deepEqual(p2.overrides, p1.overrides);
    near(p2.predictedRate, 480);
  });

  it('moves a worker-placed fn back to the main thread when the run measured its dispatch costing more than the fn', () => {
    // augment: 20 µs of worker CPU per call, while handing each element over and taking it back
    // kept the main thread busy 45 µs: on the main thread the fn itself needs less than that.
    const profile = new ProfileBuilder({ cores: 2 })
      .range()
      .map('augment', { placement: 'worker', worker: 20e-6, dispatch: 45e-6, parallelism: 2, module: true })
      .batch(32)
      .build({ rootElements: 500, rate: 600, overrides: { [id(1)]: { placement: 'worker', parallelism: 2, module: '/work/transforms.ts', exportName: 'augment' } } });
    const p = plan(profile);
    const back = change(p.changes, 'placement', id(1));
    assert.ok(back, JSON.stringify(p.changes));
    assert.equal(back.to, 'main');
    assert.equal(changeTitle(back, profile), 'run map(augment) on the main thread');
    assert.deepEqual(p.overrides[id(1)], { placement: 'main', parallelism: 1 });
    assert.ok(p.predictedRate > 600 * 1.05, String(p.predictedRate));
  });

  it('keeps a worker pool whose fn costs far more than its dispatch', () => {
    const profile = new ProfileBuilder({ cores: 2 }).range().map('augment', { placement: 'worker', worker: 400e-6, dispatch: 45e-6, parallelism: 2, module: true }).batch(32).build({ rootElements: 500, rate: 140 });
    assert.equal(change(plan(profile).changes, 'placement', id(1)), undefined);
  });

  it('proposes nothing more after its own worker plan ran', () => {
    const first = new ProfileBuilder({ cores: 2 }).range().map('decodeJpeg', { self: 12e-3, module: true }).batch(32).build({ rootElements: 20, rate: 2.5 });
    const p1 = plan(first);
    const second = new ProfileBuilder({ cores: 2 })
      .range()
      .map('decodeJpeg', { placement: 'worker', worker: 12.2e-3, dispatch: 70e-6, parallelism: 2, module: true })
      .batch(32)
      .prefetch(2)
      .build({ rootElements: 40, rate: 4.9, overrides: p1.overrides });
    const p2 = plan(second);
    assert.deepEqual(p2.changes, []);
  });
});

describe('model: predict', () => {
  it("moves the runtime overhead that follows a fn's own time (its GC) to the workers with it", () => {
    // decode: 2 ms per element on a saturated main thread with 0.5 s unclaimed over 1,000 elements
    // in 2.5 s. After the 25 ms idle share: 25 µs on each of 2,000 produced elements, and the other
    // 0.425 s (busy fraction 1) onto decode's own 2 s: 425 µs per element.
    const profile = new ProfileBuilder({ cores: 8 }).range().map('decode', { self: 2e-3, module: true }).build({ rootElements: 1000, rate: 400, unclaimedMainSeconds: 0.5 });
    const r = predict(profile, { [id(1)]: { placement: 'worker', parallelism: 8 } });
    // Workers: 2 ms − 2 µs bookkeeping + 40 µs task overhead + 425 µs = 2.463 ms; the main thread
    // keeps 2 µs + 60 µs dispatch + 2 × 25 µs = 112 µs. All CPU: 8 cores / 2.575 ms.
    near(r.bound, 8 / 2.575e-3);
    assert.equal(r.bottleneck.resource, 'cpu');
  });

  it("is deterministic and agrees with the plan about the plan's own overrides", () => {
    const profile = new ProfileBuilder().range().map('fetch', { latency: 10e-3, parallelism: 4 }).map('decode', { self: 2e-3 }).build({ rootElements: 1000, rate: 380 });
    const p = plan(profile);
    const a = predict(profile, p.overrides);
    const b = predict(profile, p.overrides);
    assert.deepEqual(a, b);
    assert.deepEqual(plan(profile), p);
    near(a.bound, p.predictedBound);
    near(a.rate, p.predictedRate);
  });

  it('predicts any configuration, including a worse one', () => {
    const profile = new ProfileBuilder().range().map('fetch', { latency: 10e-3, parallelism: 4 }).build({ rootElements: 1000, rate: 400 });
    near(predict(profile, { [id(1)]: { parallelism: 2 } }).bound, 200);
    near(predict(profile, { [id(1)]: { parallelism: 16 } }).bound, 1600);
    near(predict(profile, {}).bound, 400);
    assert.equal(predict(profile, {}).rate, 400);
  });
});

describe("model: overrides that turn a later run's knobs back", () => {
  const first = new ProfileBuilder({ cores: 2 }).range().map('fetch', { latency: 10e-3, parallelism: 1 }).map('decode', { self: 2e-3, module: true }).build({ rootElements: 500, rate: 90 });

  it('applies the kept changes and turns back the knobs of the ones left out, so the later run prices the part', () => {
    const p = plan(first);
    const fetch = change(p.changes, 'parallelism', id(1))!;
    const move = change(p.changes, 'placement', id(2))!;
    assert.ok(fetch && move, 'the scenario needs a plan that raises the fetch and moves the decode');
    const later = new ProfileBuilder({ cores: 2 })
      .range()
      .map('fetch', { latency: 10e-3, parallelism: fetch.to })
      .map('decode', { worker: 2e-3, placement: 'worker', parallelism: move.parallelism, module: true })
      .build({ rootElements: 500, rate: 400, overrides: p.overrides });
    const o = overridesReverting(later, first, [fetch])!;
    assert.equal(o[id(1)]!.parallelism, fetch.to);
    assert.deepEqual(o[id(2)], { placement: 'main', parallelism: 1 });
    // Priced from the later run, the decode is back on the main thread: 2 ms a call binds.
    assert.ok(predict(later, o, { history: [first] }).bound <= 500);
    assert.ok(predict(later, {}).bound > 500, 'the run as it ran must bind above the decode on the main thread');
    // Keeping both changes turns nothing back.
    assert.deepEqual(overridesReverting(later, first, [fetch, move]), p.overrides);
  });

  it('cannot turn back a cache the later run inserted', () => {
    const later = new ProfileBuilder({ cores: 2 })
      .range()
      .map('fetch', { latency: 10e-3, parallelism: 1 })
      .map('decode', { self: 2e-3, module: true })
      .build({ rootElements: 500, rate: 90, overrides: { [id(2)]: { cache: 'memory' } } });
    assert.equal(overridesReverting(later, first, []), undefined);
  });
});

describe('model: predict with placement overrides', () => {
  it('predicts a move to worker threads named by the override when the profile found no module', () => {
    const profile = new ProfileBuilder({ cores: 2 }).range().map('decode', { self: 4e-3 }).build({ rootElements: 500, rate: 240 });
    const moved = predict(profile, { [id(1)]: { placement: 'worker', parallelism: 2, module: '/work/decode.ts' } });
    // 4 ms per call is one element per task: main 2 µs + 60 µs, workers 4 ms − 2 µs + 40 µs.
    near(moved.bound, 2 / (62e-6 + 4.038e-3));
    // Without a module the fn cannot move, and the prediction stays what it was.
    near(predict(profile, { [id(1)]: { placement: 'worker', parallelism: 2 } }).bound, 250);
  });
});

describe('model: history of earlier runs', () => {
  // A throttled read: 13 ms one at a time; at 43 in flight the device's byte rate (128 records/s)
  // makes each read wait 43 / 128 s ≈ 336 ms. Batches of 8.
  const build = (k: number, latency: number, rate: number, overrides = {}) =>
    new ProfileBuilder().range().map('readRecord', { latency, parallelism: k, self: 20e-6 }).batch(8).build({ rootElements: 40, rate, overrides });
  const first = build(1, 13e-3, 9.6);
  const second = build(43, 43 / 128, 16, { [id(1)]: { parallelism: 43 } });

  it('without history, trusts the latency to stay the same and asks for more calls in flight', () => {
    const p = plan(second);
    assert.equal(change(p.changes, 'parallelism', id(1))?.to, 256);
  });

  it('with history, sees the latency grow with calls in flight, proposes no more, and lowers what the earlier pass set to where more mostly wait', () => {
    const p = plan(second, { history: [first] });
    // On the line through both runs, latency(k) = 5.33 ms + 7.69 ms × k: k reads a second complete
    // k / latency(k), 128 at 43 in flight. The fewest within 5% of that are 10 (122 a second),
    // and 13 with the 1.25 hedge.
    const lowered = change(p.changes, 'parallelism', id(1));
    assert.ok(lowered?.kind === 'parallelism', JSON.stringify(p.changes));
    assert.equal(lowered.to, 13);
    assert.match(lowered.reason, /Its latency grows with the calls in flight, so past 13 more calls mostly wait: with 13 the op allows at most 15\.\d batches\/s, with 43 at most 16 batches\/s\./);
    const slope = (43 / 128 - 13e-3) / 42;
    const at = (k: number) => 43 / 128 + slope * (k - 43);
    near(predict(second, { [id(1)]: { parallelism: 13 } }, { history: [first] }).bound, 13 / (8 * at(13)));
    // From the run at 1 in flight, with the run at 43 as history: raised, but lowered back to the
    // fewest within 5% of the most it may ask for, not left at the most.
    const raised = change(plan(first, { history: [second] }).changes, 'parallelism', id(1));
    assert.ok(raised?.kind === 'parallelism' && raised.to > 1 && raised.to < 256, JSON.stringify(raised));
    // Above the most calls in flight measured the fitted line stays:
    // latency(k) = 336 ms + (336 ms − 13 ms) / 42 × (k − 43): at 64 in flight, 16.1 batches/s.
    near(predict(second, { [id(1)]: { parallelism: 64 } }, { history: [first] }).bound, 64 / (8 * (43 / 128 + slope * 21)));
    // 43 in flight written in the source is the user's: the plan does not lower it for no gain.
    const written = build(43, 43 / 128, 16);
    assert.deepEqual(plan(written, { history: [first] }).changes, []);
    assert.match(analyze(second, { history: [first] }).bottleneck.reason, /latency grew from 13 ms at 1 in flight to 336 ms at 43/);
  });
});
