/**
 * The routine (src/engine/diagnose/index.ts): its passes, progress, failures and the plan it offers unverified.
 */
import * as assert from 'node:assert/strict';
import { diagnose, type RunPurpose } from '../../../../src/engine/diagnose';
import { plan as modelPlan } from '../../../../src/model';
import type { Overrides, Profile } from '../../../../src/shared/profile';
import { ProfileBuilder } from '../../model/builder';
import { id, threeChangeProfile, asPredicted, scripted } from './scripted';

describe('diagnose: the routine', () => {
  it('reports progress per step, naming the phase and the run', async () => {
    const first = threeChangeProfile();
    const planned = modelPlan(first).changes;
    const gain = asPredicted(first);
    const s = scripted(
      first,
      () => planned,
      (applied) => (applied.length === planned.length ? gain : 1),
    );
    const steps: string[] = [];
    await diagnose({ run: s.run, passes: 1, onStep: (st) => steps.push(`${st.run} ${st.phase}: ${st.message}`) });
    assert.deepEqual(steps.slice(0, 4), ['1 profile: profiling as written', '2 verify: verifying: the plan (1)', '3 verify: verifying: the plan (2)', '4 verify: verifying: as written (2)']);
    assert.match(steps[4]!, /^5 verify: verifying: the plan, doubling what it keeps in flight \(set parallelism of map\(fetch\) to \d+, set parallelism of map\(lookup\) to \d+\)$/);
    assert.match(steps[5]!, /^6 verify: verifying: the plan, with .*prefetch\(2\)/);
    assert.equal(steps.length, 6);
  });

  it("returns the first run's error with an empty plan and runs nothing else", async () => {
    const first = threeChangeProfile();
    first.error = { kind: 'throw', message: 'decode threw' };
    first.run.elements = 0;
    const s = scripted(
      first,
      () => [],
      () => 1,
    );
    const d = await diagnose({ run: s.run });
    assert.equal(d.error?.message, 'decode threw');
    assert.deepEqual(d.plan.changes, []);
    assert.equal(s.calls.length, 1);
  });

  it('plans without verifying when asked, keeping every change', async () => {
    const first = threeChangeProfile();
    const s = scripted(
      first,
      () => [],
      () => 1,
    );
    const d = await diagnose({ run: s.run, passes: 1, verify: false });
    assert.equal(s.calls.length, 1);
    assert.equal(d.plan.verification, undefined);
    assert.equal(d.plan.changes.length, modelPlan(first).changes.length);
  });
});

describe('diagnose: a plan the run with it measured slower', () => {
  // As written: a 50 µs fn on the main thread at 19,000/s; the run with it in two worker threads
  // measured 16,000/s, and the model still prefers the pool by its bounds.
  const first = new ProfileBuilder({ cores: 2 }).range().map('scale', { self: 50e-6, module: true }).build({ rootElements: 10000, rate: 19000 });
  const pooled = (o: Overrides): Profile =>
    new ProfileBuilder({ cores: 2 }).range().map('scale', { placement: 'worker', worker: 20e-6, dispatch: 45e-6, parallelism: 2, module: true }).build({ rootElements: 10000, rate: 16000, overrides: o });
  const run = async (o: Overrides, purpose: RunPurpose): Promise<Profile> => (purpose === 'profile' ? first : pooled(o));

  it('offers no change unverified, and says what the run measured', async () => {
    const d = await diagnose({ run, passes: 2, verify: false });
    assert.deepEqual(d.plan.changes, []);
    assert.ok(
      d.plan.notes?.some((n) => n.includes('no more than the 19,000 el/s measured as written')),
      JSON.stringify(d.plan.notes),
    );
  });

  it('leaves the decision to verification when it runs', async () => {
    const d = await diagnose({ run, passes: 2 });
    assert.ok(d.plan.verification, 'the plan was verified');
    assert.equal(d.plan.notes?.some((n) => n.includes('measured as written, so the model proposes no change')) ?? false, false);
  });
});

describe('diagnose: randomness', () => {
  it('never caches after an operator the source shows is random, though the runner did not mark it', async () => {
    const first = new ProfileBuilder().range(1000).map('augment', { self: 10e-3, bytes: 100e3 }).op({ kind: 'repeat', count: -1 }).batch(10).build({ rootElements: 100, rate: 9.8 });
    assert.ok(
      modelPlan(first).changes.some((c) => c.kind === 'cache' && c.opId === id(1)),
      'without the static randomness the model caches after augment',
    );
    const d = await diagnose({ run: async () => first, passes: 1, verify: false, options: { randomOps: [id(1)] } as never });
    assert.equal(
      d.plan.changes.some((c) => c.kind === 'cache'),
      false,
    );
    assert.equal(
      Object.values(d.plan.overrides).some((o) => o.cache !== undefined),
      false,
    );
    assert.ok(
      d.plan.notes?.some((n) => /map\(augment\) is random/.test(n)),
      JSON.stringify(d.plan.notes),
    );
  });

  it('notes a cache the source already has after a random operator, from the source or from the run', async () => {
    const build = (random: { static?: boolean; observed?: boolean }): Profile =>
      new ProfileBuilder()
        .range(1000)
        .map('load', { self: 1e-3 })
        .map('jitter', { self: 1e-4, randomObserved: random.observed })
        .op({ kind: 'cache' })
        .op({ kind: 'repeat', count: -1 })
        .batch(10)
        .build({ rootElements: 100, rate: 900 });
    const notes = async (random: { static?: boolean; observed?: boolean }): Promise<string[]> =>
      (await diagnose({ run: async () => build(random), passes: 1, verify: false, options: { randomOps: random.static ? [id(2)] : [] } })).plan.notes ?? [];
    const frozen = `cache() at ${id(3)} comes after map(jitter), which is random: it stores the first epoch's draws and replays them every epoch. Move cache() above map(jitter).`;
    assert.ok((await notes({ static: true })).includes(frozen), JSON.stringify(await notes({ static: true })));
    assert.ok((await notes({ observed: true })).includes(frozen));
    // A cache after deterministic work is what a cache is for: nothing to say.
    assert.equal(
      (await notes({})).some((n) => n.startsWith('cache() at')),
      false,
    );
  });

  it('tells a cache after a shuffle and a random map to go above the shuffle, the first of them', async () => {
    const first = new ProfileBuilder()
      .range(1000)
      .map('load', { self: 1e-3 })
      .op({ kind: 'shuffle' })
      .map('augment', { self: 1e-4, randomObserved: true })
      .op({ kind: 'cache' })
      .op({ kind: 'repeat', count: -1 })
      .build({ rootElements: 100, rate: 900 });
    const d = await diagnose({ run: async () => first, passes: 1, verify: false });
    const note = d.plan.notes?.find((n) => n.startsWith('cache() at'));
    assert.equal(
      note,
      `cache() at ${id(4)} comes after shuffle and map(augment), which are random: it stores the first epoch's draws and replays them every epoch. Move cache() above shuffle.`,
      JSON.stringify(d.plan.notes),
    );
  });
});
