/**
 * The model on profiles the runner recorded from the synthetic pipelines in
 * test/fixtures/pipelines (re-capture with test/fixtures/model/capture.ts). The numbers depend on
 * the machine that recorded them, so these tests check what must hold on any machine: which
 * resource binds, which operator, and which changes the plan proposes.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { analyze, changeTitle, plan, predict } from '../../../src/model';
import type { Plan, PlanChange } from '../../../src/shared/analysis';
import type { Profile } from '../../../src/shared/profile';

const DIR = path.resolve(__dirname, '../../fixtures/model');

function load(name: string): Profile {
  return JSON.parse(readFileSync(path.join(DIR, `${name}.profile.json`), 'utf8')) as Profile;
}

function opId(profile: Profile, fnName: string): string {
  const op = profile.ops.find((o) => o.fnName === fnName);
  assert.ok(op, `the profile has no op with fn ${fnName}`);
  return op.id;
}

function kinds(p: Plan): string[] {
  return p.changes.map((c: PlanChange) => `${c.kind}@${c.opId}`);
}

describe('model on recorded profiles', () => {
  it('latency-bound: the one-at-a-time fetch binds, and the plan puts many calls in flight', () => {
    const profile = load('latency-bound');
    const fetch = opId(profile, 'fetchLabel');
    const a = analyze(profile);
    assert.equal(a.bottleneck.resource, 'latency');
    assert.equal(a.bottleneck.opId, fetch);
    const p = plan(profile);
    const par = p.changes.find((c) => c.kind === 'parallelism' && c.opId === fetch);
    assert.ok(par && par.kind === 'parallelism' && par.to >= 16, `expected many calls in flight, got ${JSON.stringify(p.changes)}`);
    assert.ok(p.predictedRate > 10 * a.measuredRate);
  });

  it('mixed: lookup binds first; the plan raises it and moves the decode to workers', () => {
    const profile = load('mixed');
    const lookup = opId(profile, 'lookup');
    const decode = opId(profile, 'decode');
    assert.equal(analyze(profile).bottleneck.opId, lookup);
    const p = plan(profile);
    assert.ok(kinds(p).includes(`parallelism@${lookup}`));
    assert.ok(kinds(p).includes(`placement@${decode}`));
    assert.equal(p.overrides[decode]?.exportName, 'decode');
    assert.match(p.overrides[decode]?.module ?? '', /mixed\.ts$/);
  });

  it('cacheable: caches right after the deterministic decode, never after the random augment', () => {
    const profile = load('cacheable');
    const decode = opId(profile, 'decode');
    const decodeOp = profile.ops.find((o) => o.id === decode);
    assert.ok(decodeOp);
    const p = plan(profile);
    const cache = p.changes.find((c) => c.kind === 'cache');
    assert.ok(cache && cache.kind === 'cache', `expected a cache, got ${JSON.stringify(kinds(p))}`);
    assert.equal(cache.opId, decode);
    // 200 samples × the measured bytes per decoded sample.
    assert.equal(cache.estimatedBytes, 200 * (decodeOp.counters.bytesProduced / decodeOp.counters.produced));
    assert.match(changeTitle(cache, profile), /^cache after map\(decode\) \(≈ \d+ kB\)$/);
    assert.ok(p.predictedRate > 5 * p.currentRate);
  });

  it('main-thread-bound: the sync decode holds the main thread; the plan moves it to worker threads', () => {
    const profile = load('main-thread-bound');
    const decode = opId(profile, 'decode');
    const a = analyze(profile);
    assert.equal(a.bottleneck.resource, 'main-thread');
    assert.equal(a.bottleneck.opId, decode);
    const p = plan(profile);
    assert.deepEqual(p.overrides[decode], {
      placement: 'worker',
      parallelism: profile.machine.cores,
      module: '/repo/test/fixtures/pipelines/main-thread-bound.ts',
      exportName: 'decode',
    });
  });

  it("worker-bound: one worker thread binds; planned for the machine's cores, it gets one per core", () => {
    const profile = load('worker-bound');
    const decode = opId(profile, 'decode');
    assert.equal(analyze(profile).bottleneck.opId, decode);
    const p = plan(profile, { cores: profile.machine.cores });
    const par = p.changes.find((c) => c.kind === 'parallelism' && c.opId === decode);
    assert.ok(par && par.kind === 'parallelism');
    assert.equal(par.to, profile.machine.cores);
  });

  it('worker-bound: recorded with 0.76 of 2 cores free, the plan is for 1 core and adds no thread', () => {
    const profile = load('worker-bound');
    assert.equal(profile.machine.availableCores, 0.76);
    const p = plan(profile);
    assert.equal(p.coresNote, '0.8 of 2 cores free: planning for 1');
    assert.equal(analyze(profile).coresNote, '0.8 of 2 cores free: planning for 1');
    assert.deepEqual(p.changes, []);
  });

  it('disk-bound: the throttled read is one call at a time; the plan puts reads in flight', () => {
    const profile = load('disk-bound');
    const read = opId(profile, 'readRecord');
    assert.equal(analyze(profile).bottleneck.opId, read);
    assert.ok(kinds(plan(profile)).includes(`parallelism@${read}`));
  });

  it('predicts each recorded plan the same way twice, and the same as the plan says', () => {
    for (const name of ['latency-bound', 'mixed', 'cacheable', 'main-thread-bound', 'worker-bound', 'disk-bound']) {
      const profile = load(name);
      const p = plan(profile);
      const once = predict(profile, p.overrides);
      assert.deepEqual(predict(profile, p.overrides), once);
      assert.ok(Math.abs(once.bound - p.predictedBound) <= 1e-9 * p.predictedBound, `${name}: ${once.bound} vs ${p.predictedBound}`);
    }
  });
});
