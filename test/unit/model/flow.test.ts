/**
 * The flow levers (issue 54 parts 2 and 3) on hand-built profiles: fusing adjacent worker maps, and
 * letting fast calls pass a slow one where ordered output holds them back.
 */
import * as assert from 'node:assert/strict';
import { plan, predict } from '../../../src/model';
import { latencySpread, orderedShare } from '../../../src/model/tail';
import type { PlanChange } from '../../../src/shared/analysis';
import type { OpProfile, Profile } from '../../../src/shared/profile';
import { addLatency } from '../../../src/data/tracing';
import { ProfileBuilder } from './builder';

const id = ProfileBuilder.id;

function change<K extends PlanChange['kind']>(changes: PlanChange[], kind: K, opId?: string): Extract<PlanChange, { kind: K }> | undefined {
  return changes.find((c): c is Extract<PlanChange, { kind: K }> => c.kind === kind && (opId === undefined || c.opId === opId));
}

/** A histogram of `n` calls: a share `slowShare` of them take `slow` seconds, the rest `fast`. */
function twoLatencies(n: number, fast: number, slow: number, slowShare: number): number[] {
  const nSlow = Math.round(n * slowShare);
  return addLatency(addLatency(undefined, fast, n - nSlow), slow, nSlow);
}

const withHistogram = (op: OpProfile, h: number[]): OpProfile => ({ ...op, counters: { ...op.counters, latencyHistogram: h } });

/**
 * from → map(fetch) awaiting `latency` on average with `parallelism` in flight, its calls spread as
 * `hist`, then `tail` ops (e.g. a zip's stand-in: take). Rate: what ordered output gives.
 */
function fetching(hist: number[], parallelism: number, tail: Array<'take' | 'batch'> = []): Profile {
  const spread = latencySpreadOf(hist);
  let b = new ProfileBuilder().op({ kind: 'from' }).map('fetch', { latency: spread.mean, self: 20e-6, parallelism });
  for (const t of tail) b = t === 'batch' ? b.batch(8) : b.op({ kind: 'take', count: 1_000_000 });
  const rate = (parallelism / spread.mean) * orderedShare(spread, parallelism) * (tail.includes('batch') ? 1 / 8 : 1);
  const p = b.build({ rootElements: 400, rate });
  return { ...p, ops: p.ops.map((op) => (op.id === id(1) ? withHistogram(op, hist) : op)) };
}

function latencySpreadOf(hist: number[]) {
  const op = { counters: { latencyHistogram: hist } } as unknown as OpProfile;
  const s = latencySpread(op);
  assert.ok(s);
  return s;
}

describe('model: head-of-line blocking of ordered maps (tail.ts)', () => {
  it('costs nothing when calls take about the same time, and most of the rate under a long tail', () => {
    const even = latencySpreadOf(twoLatencies(1000, 2e-3, 2.5e-3, 0.5));
    assert.equal(orderedShare(even, 1), 1);
    assert.equal(orderedShare(even, 8), 1);
    // 1 call in 20 is 20× slower: with 4 in flight and 8 held, a window holds a slow call 34% of the time.
    const tail = latencySpreadOf(twoLatencies(1000, 1e-3, 20e-3, 0.05));
    const s4 = orderedShare(tail, 4);
    assert.ok(s4 < 0.6, `share at 4 in flight: ${s4}`);
    // The arithmetic by hand: E[max of 8] = Σ x_b (F_b^8 − F_{b−1}^8) over the two buckets' middles.
    const fast = Math.SQRT2 * 512e-6;
    const slow = Math.SQRT2 * 16384e-6;
    const eMax = fast * 0.95 ** 8 + slow * (1 - 0.95 ** 8);
    const mean = 0.95 * fast + 0.05 * slow;
    assert.ok(Math.abs(s4 - 8 / eMax / (4 / mean)) < 1e-9);
    // More calls in flight raise the ordered rate (k × share ÷ mean), though a share of what the
    // unordered map would reach at as many: its 2k held results wait about as long as the slowest.
    assert.ok(32 * orderedShare(tail, 32) > 2 * 4 * s4);
    assert.ok(orderedShare(tail, 32) < s4);
  });

  it('prices the ordered map at its head-of-line rate, and deterministic: false at the unordered one', () => {
    const hist = twoLatencies(1000, 1e-3, 20e-3, 0.05);
    const profile = fetching(hist, 4);
    const ordered = predict(profile, {}).rate;
    const unordered = predict(profile, { [id(1)]: { deterministic: false } }).rate;
    const spread = latencySpreadOf(hist);
    assert.ok(unordered / ordered > 1.5, `${ordered} → ${unordered}`);
    assert.ok(Math.abs(unordered / ordered - 1 / orderedShare(spread, 4)) < 0.05);
  });

  it('proposes deterministic: false where the calls in flight cannot grow to cover the tail, saying order changes', () => {
    const p = plan(fetching(twoLatencies(1000, 1e-3, 20e-3, 0.05), 4), { maxConcurrency: 4 });
    const d = change(p.changes, 'deterministic', id(1));
    assert.ok(d, JSON.stringify(p.changes));
    assert.equal(d.to, false);
    assert.match(d.reason, /order of its output changes/);
    assert.ok((d.predictedRate ?? 0) > p.currentRate * 1.5);
    assert.equal(p.overrides[id(1)]?.deterministic, false);
  });

  it('covers the tail with more calls in flight when it may, keeping the order', () => {
    const p = plan(fetching(twoLatencies(1000, 1e-3, 20e-3, 0.05), 4));
    const par = change(p.changes, 'parallelism', id(1));
    assert.ok(par && par.to > 4, JSON.stringify(p.changes));
  });

  it('never lets order go where it is observable downstream or pinned in the source', () => {
    const hist = twoLatencies(1000, 1e-3, 20e-3, 0.05);
    const observed = plan(fetching(hist, 4, ['take']), { maxConcurrency: 4 });
    assert.equal(change(observed.changes, 'deterministic'), undefined);
    assert.ok(
      observed.notes?.some((n) => /keeps the order, since take/.test(n)),
      JSON.stringify(observed.notes),
    );
    const pinned = plan(fetching(hist, 4), { maxConcurrency: 4, orderPinned: [id(1)] });
    assert.equal(change(pinned.changes, 'deterministic'), undefined);
    assert.ok(pinned.notes?.some((n) => /pins order/.test(n)));
    // Batching is not observing order: each pass still carries every element once.
    const batched = plan(fetching(hist, 4, ['batch']), { maxConcurrency: 4 });
    assert.ok(change(batched.changes, 'deterministic', id(1)));
  });
});

/**
 * from → map(decode) in workers → map(resize) in workers, elements of `bytes` crossing between
 * them: the main thread pays both maps' dispatch and clones.
 */
function twoWorkerMaps(bytes: number, consumers = 1): Profile {
  let b = new ProfileBuilder()
    .op({ kind: 'from' })
    .map('decode', { placement: 'worker', worker: 2e-3, dispatch: 1e-3, parallelism: 2, bytes })
    .map('resize', { placement: 'worker', worker: 1.5e-3, dispatch: 1e-3, parallelism: 2, bytes: 1000 });
  if (consumers > 1) b = b.map('peek', { self: 1e-6, inputs: [1] });
  return b.build({ rootElements: 300, rate: 450 });
}

describe('model: fusing adjacent worker maps (fuse.ts)', () => {
  it('fuses the later worker map into the earlier one when the crossing between them binds the main thread', () => {
    const profile = twoWorkerMaps(1e6);
    const p = plan(profile);
    const f = change(p.changes, 'fuse', id(2));
    assert.ok(f, JSON.stringify(p.changes));
    assert.equal(f.with, id(1));
    assert.match(f.reason, /once instead of twice/);
    assert.equal(p.overrides[id(2)]?.fuse, true);
    assert.ok(predict(profile, { [id(2)]: { fuse: true } }).rate > predict(profile, {}).rate * 1.2);
  });

  it('fuses a cheap worker map rather than moving it back to the main thread, where its input would still cross back', () => {
    // resize costs 0.1 ms: back on the main thread it would be cheap, but decode's results still
    // cross to the main thread to reach it; fused, they never do.
    const profile = new ProfileBuilder()
      .op({ kind: 'from' })
      .map('decode', { placement: 'worker', worker: 2e-3, dispatch: 50e-6, parallelism: 2, bytes: 1e5 })
      .map('resize', { placement: 'worker', worker: 0.1e-3, dispatch: 1e-3, parallelism: 2, bytes: 1000 })
      .build({ rootElements: 300, rate: 450 });
    const p = plan(profile);
    assert.ok(change(p.changes, 'fuse', id(2)), JSON.stringify(p.changes));
    assert.equal(change(p.changes, 'placement', id(2)), undefined);
    assert.ok(predict(profile, { [id(2)]: { fuse: true } }).rate > predict(profile, { [id(2)]: { placement: 'main', parallelism: 1 } }).rate);
  });

  it('plans knobs alone with reshape: false: no fuse, no deterministic', () => {
    assert.equal(change(plan(twoWorkerMaps(1e6), { reshape: false }).changes, 'fuse'), undefined);
    const tail = fetching(twoLatencies(1000, 1e-3, 20e-3, 0.05), 4);
    assert.equal(change(plan(tail, { maxConcurrency: 4, reshape: false }).changes, 'deterministic'), undefined);
  });

  it('does not fuse when the earlier map has another consumer, nor when the crossing is cheap', () => {
    assert.equal(change(plan(twoWorkerMaps(1e6, 2)).changes, 'fuse'), undefined);
    assert.equal(predict(twoWorkerMaps(1e6, 2), { [id(2)]: { fuse: true } }).rate, predict(twoWorkerMaps(1e6, 2), {}).rate);
    const cheap = new ProfileBuilder()
      .op({ kind: 'from' })
      .map('decode', { placement: 'worker', worker: 20e-3, dispatch: 50e-6, parallelism: 2, bytes: 100 })
      .map('resize', { placement: 'worker', worker: 1e-3, dispatch: 50e-6, parallelism: 2, bytes: 100 })
      .build({ rootElements: 100, rate: 95 });
    assert.equal(change(plan(cheap).changes, 'fuse'), undefined);
  });
});
