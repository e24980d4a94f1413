/**
 * A training loop's plan verified over its neighbours (src/engine/diagnose/trainer.ts): the pool
 * the model chose, then one thread more and one fewer, each beside a run as written; a neighbour
 * replaces the pool only when it measured reliably faster. Scripted runs: each configuration
 * measures a rate the test sets by the pool's size.
 */
import * as assert from 'node:assert/strict';
import { diagnose, type RunPurpose } from '../../../../src/engine/diagnose';
import { plan as modelPlan } from '../../../../src/model';
import type { Overrides, Profile } from '../../../../src/shared/profile';
import { trainingProfile } from '../../model/training';

const MAP = '3:20';

/** The pool's threads in `o` (0: the map on the main thread, as written). */
function threadsOf(o: Overrides): number {
  const k = o[MAP];
  return k?.placement === 'worker' && typeof k.parallelism === 'number' ? k.parallelism : 0;
}

/**
 * A runner whose first call returns `first` and every later one `first` measured at `gain(threads)`
 * × its rate, five windows spread ±`noise` (in an order that turns from run to run); `runs` records each run's pool size and purpose.
 */
function byThreads(first: Profile, gain: (threads: number) => number, noise = 0.02) {
  const runs: Array<{ threads: number; purpose: RunPurpose }> = [];
  const run = async (overrides: Overrides, purpose: RunPurpose): Promise<Profile> => {
    runs.push({ threads: threadsOf(overrides), purpose });
    if (runs.length === 1) return first;
    const rate = (first.run.elements / first.run.seconds) * gain(threadsOf(overrides));
    const p = structuredClone(first);
    p.run.overrides = overrides;
    // The windows' order turns with each run, so runs of two configurations differ window by window.
    const turn = runs.length % 5;
    p.run.windowSlices = [-2, -1, 0, 1, 2].map((_, i, ks) => ({ elements: rate * (1 + (ks[(i + turn) % 5]! * noise) / 2), seconds: 1 }));
    p.run.seconds = 1;
    p.run.elements = rate;
    return p;
  };
  return { run, runs };
}

/** The scenario: an input-bound loop the model feeds with a pool of `picked` threads. */
function scenario(cores = 2): { first: Profile; picked: number } {
  const first = trainingProfile({ pipe: 3e-3, step: 1e-3, cores });
  const p = modelPlan(first);
  const picked = threadsOf(p.overrides);
  assert.ok(p.trainer?.changed && picked >= 2, 'the scenario needs a plan that moves the map to a pool of two threads or more');
  return { first, picked };
}

function keptThreads(d: Awaited<ReturnType<typeof diagnose>>): number {
  return threadsOf(d.plan.overrides);
}

describe('diagnose: a training loop’s pool verified over its neighbours', () => {
  it('moves to a larger pool that measured reliably faster, climbing while it wins, and says what it measured', async () => {
    // Four cores: pools of up to eight threads are tried.
    const { first, picked } = scenario(4);
    // Each thread up to picked + 2 adds a fifth; beyond that, nothing.
    const s = byThreads(first, (k) => (k === 0 ? 1 : 1 + 0.2 * Math.min(k, picked + 2)));
    const d = await diagnose({ run: s.run, passes: 1, userOverrides: {}, budgetSeconds: 1e9 });
    assert.equal(d.plan.verification?.verdict, 'gain');
    assert.equal(keptThreads(d), picked + 2);
    // It tried one beyond the best, which did not win, and stopped there.
    const tried = new Set(s.runs.filter((r) => r.purpose === 'verify').map((r) => r.threads));
    assert.ok(tried.has(picked + 3), `tried ${[...tried].join(', ')}`);
    assert.ok(!tried.has(picked + 4), `tried ${[...tried].join(', ')}`);
    const pool = d.plan.changes.find((c) => c.opId === MAP);
    assert.equal(pool?.kind === 'placement' ? pool.parallelism : undefined, picked + 2);
    assert.match(pool!.reason, new RegExp(`Verification measured .* with ${picked + 2} worker threads against .* with ${picked + 1}`));
    assert.equal(d.plan.trainer?.workers, picked + 2);
    assert.equal(d.plan.trainer?.changed, true);
  });

  it('alternates every neighbour’s run with a run as written', async () => {
    const { first, picked } = scenario();
    const s = byThreads(first, (k) => (k === 0 ? 1 : 1 + 0.2 * Math.min(k, picked + 1)));
    await diagnose({ run: s.run, passes: 1, userOverrides: {}, budgetSeconds: 1e9 });
    const verify = s.runs.filter((r) => r.purpose === 'verify');
    for (let i = 0; i < verify.length; i++) {
      const r = verify[i]!;
      if (r.threads === picked || r.threads === 0) continue;
      assert.equal(verify[i + 1]?.threads, 0, `the run of ${r.threads} threads is followed by one as written: ${verify.map((x) => x.threads).join(' ')}`);
    }
  });

  it('keeps the model’s pool when no neighbour measured reliably faster (within the noise)', async () => {
    const { first, picked } = scenario();
    const s = byThreads(first, (k) => (k === 0 ? 1 : k === picked ? 1.5 : 1.52), 0.06);
    const d = await diagnose({ run: s.run, passes: 1, userOverrides: {}, budgetSeconds: 1e9 });
    assert.equal(d.plan.verification?.verdict, 'gain');
    assert.equal(keptThreads(d), picked);
    const tried = new Set(s.runs.map((r) => r.threads));
    assert.ok(tried.has(picked + 1) && tried.has(picked - 1), `both neighbours measured: ${[...tried].join(', ')}`);
  });

  it('measures an undecided neighbour again beside the pool it would replace, and moves when the runs together decide', async () => {
    const { first, picked } = scenario();
    // One thread more gains 6%: within one run's spread here, beyond the spread of three.
    const s = byThreads(first, (k) => (k === 0 ? 1 : k === picked ? 1.5 : k === picked + 1 ? 1.59 : 1.5), 0.05);
    const d = await diagnose({ run: s.run, passes: 1, userOverrides: {}, budgetSeconds: 1e9 });
    const verify = s.runs.filter((r) => r.purpose === 'verify').map((r) => r.threads);
    assert.equal(keptThreads(d), picked + 1, `verify runs: ${verify.join(' ')}`);
    const firstTry = verify.indexOf(picked + 1);
    const after = verify.slice(firstTry + 1);
    // After the neighbour's first run (and its run as written), the pool and the neighbour run again, in turn.
    assert.ok(after.filter((t) => t === picked).length >= 1 && after.filter((t) => t === picked + 1).length >= 1, `verify runs: ${verify.join(' ')}`);
    assert.ok(after.indexOf(picked) < after.indexOf(picked + 1), `the pool runs before the neighbour again: ${verify.join(' ')}`);
  });

  it('moves to a smaller pool that measured reliably faster (threads that starve the trainer)', async () => {
    const { first, picked } = scenario();
    const s = byThreads(first, (k) => (k === 0 ? 1 : 1.6 - 0.2 * k));
    const d = await diagnose({ run: s.run, passes: 1, userOverrides: {}, budgetSeconds: 1e9 });
    assert.equal(d.plan.verification?.verdict, 'gain');
    assert.equal(keptThreads(d), 1);
    assert.ok(picked > 1);
  });

  it('keeps a neighbour that gains when the model’s own pool measured no gain', async () => {
    const { first, picked } = scenario();
    const s = byThreads(first, (k) => (k === picked + 1 ? 1.3 : 1));
    const d = await diagnose({ run: s.run, passes: 1, userOverrides: {}, budgetSeconds: 1e9 });
    assert.equal(d.plan.verification?.verdict, 'gain');
    assert.equal(keptThreads(d), picked + 1);
    assert.equal(d.plan.trainer?.changed, true);
  });

  it('keeps nothing when neither the pool nor a neighbour beat the loop as written', async () => {
    const { first } = scenario();
    const s = byThreads(first, () => 1, 0.06);
    const d = await diagnose({ run: s.run, passes: 1, userOverrides: {}, budgetSeconds: 1e9 });
    assert.equal(d.plan.verification?.verdict, 'no-gain');
    assert.deepEqual(d.plan.changes, []);
    assert.equal(d.plan.trainer?.changed, false);
  });

  it('tries no neighbour for a pipeline that is not a training loop', async () => {
    const first = trainingProfile({ pipe: 3e-3, step: 1e-3 });
    delete first.trainer;
    const s = byThreads(first, (k) => (k === 0 ? 1 : 1 + 0.2 * k));
    const d = await diagnose({ run: s.run, passes: 1, userOverrides: {}, budgetSeconds: 1e9 });
    const planned = threadsOf(modelPlan(first).overrides);
    assert.ok(
      s.runs.every((r) => r.threads === 0 || r.threads === planned),
      `runs: ${s.runs.map((r) => r.threads).join(' ')}`,
    );
    assert.equal(keptThreads(d), planned);
  });
});
