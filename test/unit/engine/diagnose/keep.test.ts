/**
 * The plan as verification left it (src/engine/diagnose/keep.ts): its prediction and a training loop's verdict.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { diagnose, type RunPurpose } from '../../../../src/engine/diagnose';
import { overridesFor, overridesReverting, plan as modelPlan, predict as modelPredict } from '../../../../src/model';
import { trainerRate } from '../../../../src/model/trainer';
import { changeKey } from '../../../../src/shared/analysis';
import type { Overrides, Profile } from '../../../../src/shared/profile';
import { formatSpeedup } from '../../../../src/shared/words';
import { ProfileBuilder } from '../../model/builder';
import { trainingProfile } from '../../model/training';
import { twoChangeProfile, fetchDecodeProfile, steadyRun, scripted } from './scripted';

describe('diagnose: the plan verification kept', () => {
  it('predicts a kept part of the plan from the run that measured the plan, with the knobs it leaves out turned back', async () => {
    // The plan raises the fetch's calls in flight and moves the decode to worker threads. The
    // pass's run of it finds the service throttled (latency grows with calls in flight: the fetch
    // binds at 100/s), and verification measures the fetch alone faster than the whole plan.
    const first = fetchDecodeProfile();
    const planned = modelPlan(first).changes;
    const fetch = changeKey(planned.find((c) => c.kind === 'parallelism')!);
    const throttled = 100;
    const base = first.run.elements / first.run.seconds;
    const s = scripted(
      first,
      () => planned,
      (applied) => (applied.length === 0 ? 1 : applied.length === 1 && applied[0] === fetch ? throttled / base : (0.8 * throttled) / base),
    );
    const raise = planned.find((c) => c.kind === 'parallelism')!;
    const run = async (o: Overrides, purpose: RunPurpose): Promise<Profile> => {
      // The throttle holds the fetch at 100/s with any number of calls in flight above one, so a
      // run with fewer than the first pass asked for (the second pass lowers them to where they
      // stop queueing) runs as fast as the script's fetch.
      const k0 = o[raise.opId]?.parallelism;
      const p = await s.run(typeof k0 === 'number' && k0 > 1 && raise.kind === 'parallelism' ? { ...o, [raise.opId]: { ...o[raise.opId], parallelism: raise.to } } : o, purpose);
      if (purpose !== 'replan') return p;
      const k = o[raise.opId]!.parallelism as number;
      const replan = new ProfileBuilder({ cores: 2 })
        .range()
        .map('fetch', { latency: k / throttled, parallelism: k })
        .map('decode', { worker: 1e-3, placement: 'worker', parallelism: 2, module: true })
        .build({ rootElements: 100, rate: 0.8 * throttled, overrides: o as Record<string, never> });
      replan.run.windowSlices = p.run.windowSlices;
      replan.run.seconds = p.run.seconds;
      replan.run.elements = p.run.elements;
      return replan;
    };
    const d = await diagnose({ run, passes: 2, verifyBudgetSeconds: 60 });
    assert.deepEqual(d.plan.changes.map(changeKey), [fetch], 'verification must keep the fetch alone');
    // The pass's run showed the throttle (latency grew with the calls in flight), so the kept
    // fetch asks for fewer than the first pass did, where more mostly wait.
    const kept = d.plan.changes[0]!;
    assert.ok(kept.kind === 'parallelism' && raise.kind === 'parallelism' && kept.to > 1 && kept.to < raise.to, JSON.stringify([kept, raise]));
    assert.match(kept.reason, /Its latency grows with the calls in flight, so past \d+ more calls mostly wait/);
    // From the run as written (20 ms at one call in flight) the fetch alone would bind above what
    // it measured (3 calls of 20 ms); from the run with the plan, the decode back on the main
    // thread, it is priced at the throttle it met.
    const fromFirst = modelPredict(first, overridesFor(first, d.plan.changes)).rate;
    assert.ok(fromFirst > 1.35 * throttled, `the scenario needs the run as written to mislead: ${fromFirst}`);
    assert.ok(Math.abs(d.plan.predictedRate - throttled) / throttled < 0.25, `predicted ${d.plan.predictedRate}/s for the fetch alone, measured ${throttled}/s`);
    assert.equal(
      Object.values(d.plan.overrides).some((o) => o.placement === 'worker'),
      false,
    );
  });

  it('keeping the pipeline as written, predicts what every run as written measured, not the first run alone', async () => {
    // The first run caught a quiet moment: every later run, as written or with any change,
    // measures 0.7× its rate.
    const first = steadyRun(twoChangeProfile(), 2);
    const planned = modelPlan(first).changes;
    const s = scripted(
      first,
      () => planned,
      () => 0.7,
      0.04,
    );
    const d = await diagnose({ run: s.run, passes: 1 });
    const v = d.plan.verification!;
    assert.notEqual(v.verdict, 'gain', v.summary);
    assert.deepEqual(d.plan.changes, []);
    assert.ok(s.calls.filter((c) => c.applied.length === 0).length >= 2, 'as written ran again during verification');
    const firstRate = first.run.elements / first.run.seconds;
    assert.equal(d.plan.predictedRate, v.asWritten.rate);
    assert.equal(d.plan.currentRate, v.asWritten.rate);
    assert.ok(d.plan.predictedRate < 0.95 * firstRate && d.plan.predictedRate > 0.7 * firstRate, `predicted ${d.plan.predictedRate}/s; first run ${firstRate}/s`);
  });
});

describe('diagnose: a training loop', () => {
  it('says of the loop as written what verification kept: no change, and why, when the plan measured no faster', async () => {
    const first = trainingProfile({ pipe: 3e-3, step: 1e-3 });
    const model = modelPlan(first);
    assert.ok(model.trainer?.changed, 'the scenario needs a plan for the trainer');
    const s = scripted(
      first,
      () => model.changes,
      () => 1.0,
      0.06,
    );
    const d = await diagnose({ run: s.run, passes: 1, userOverrides: {} });
    assert.equal(d.plan.verification?.verdict, 'no-gain');
    assert.deepEqual(d.plan.changes, []);
    assert.equal(d.plan.trainer?.changed, false);
    assert.equal(d.plan.trainer?.predictedStepsPerSec, d.plan.trainer?.asWrittenPredictedStepsPerSec);
    assert.match(d.plan.trainer!.summary, /^the trainer waited 75% of its time for input .*; no reliable gain on this machine right now: .*, so no change\.$/);
    // The notes carry the verdict once, as verification left it.
    assert.deepEqual(
      d.plan.notes?.filter((n) => /trainer waited/.test(n)),
      [d.plan.trainer!.summary],
    );
  });

  it('prices the kept plan for the loop as written when verification kept it', async () => {
    const first = trainingProfile({ pipe: 3e-3, step: 1e-3 });
    const model = modelPlan(first);
    const s = scripted(
      first,
      () => model.changes,
      (applied) => (applied.length > 0 ? 1.6 : 1),
    );
    const d = await diagnose({ run: s.run, passes: 1, userOverrides: {} });
    assert.equal(d.plan.verification?.verdict, 'gain');
    assert.equal(d.plan.trainer?.changed, true);
    assert.equal(d.plan.trainer?.predictedStepsPerSec, model.trainer?.predictedStepsPerSec);
    // It says what verification measured, and the model's figure beside it.
    const measured = formatSpeedup(d.plan.verification!.speedup, d.plan.verification!.speedupHalfWidth);
    assert.ok(d.plan.trainer!.summary.includes(`worker thread`) && d.plan.trainer!.summary.includes(`the plan measured ${measured} its steps per second as written (the model predicted `), d.plan.trainer!.summary);
  });

  it('prices the kept plan from the pass that ran the map in worker threads, which measured the tasks the loop gets', async () => {
    // train-digits as written, then with augment in 4 worker threads. In a training loop the
    // library sends about 27 elements a task (a reply waits out the step holding the main thread,
    // and that counts as the task's fixed cost), not the 3 it would send a free main thread; those
    // tasks are what keep a pool busy through a step, and only the second run measured them.
    const fixture = (name: string): Profile => JSON.parse(readFileSync(resolve(__dirname, '../../../fixtures/train', name), 'utf8')) as Profile;
    const first = fixture('digits-as-written.profile.json');
    const last = fixture('digits-augment-4-workers.profile.json');
    const base = (first.run.elements + first.run.warmupElements) / (first.run.seconds + first.run.warmupSeconds);
    const run = async (overrides: Overrides, purpose: RunPurpose): Promise<Profile> => {
      if (purpose === 'profile') return first;
      if (purpose === 'replan') return { ...last, run: { ...last.run, overrides } };
      const changed = Object.keys(overrides).length > 0;
      const p = structuredClone(first);
      const rate = base * (changed ? 1.5 : 1);
      p.run.overrides = overrides;
      p.run.windowSlices = [-2, -1, 0, 1, 2].map((k) => ({ elements: rate * (1 + k * 0.01), seconds: 1 }));
      p.run.seconds = 1;
      p.run.elements = rate;
      return p;
    };
    const d = await diagnose({ run, passes: 2, userOverrides: {} });
    assert.equal(d.plan.verification?.verdict, 'gain');
    assert.ok(d.plan.changes.length > 0);
    const fromLast = overridesReverting(last, first, d.plan.changes);
    assert.ok(fromLast, 'the kept changes can be set from the second run');
    const priced = trainerRate(last, fromLast).rate;
    const fromFirst = trainerRate(first, d.plan.overrides).rate;
    assert.equal(d.plan.trainer?.predictedStepsPerSec, priced);
    // Priced from the run as written, the same configuration reads far slower (its tasks of 3).
    assert.ok(priced > 1.2 * fromFirst, `from the worker run ${priced} steps/s, from the run as written ${fromFirst}`);
  });
});
