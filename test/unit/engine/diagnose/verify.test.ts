/**
 * Finding the change that hurts and keeping the best measured configuration (src/engine/diagnose/verify.ts
 * phases 2-3, decide.ts), through scripted runs.
 */
import * as assert from 'node:assert/strict';
import { measuredSlower, reliablyFaster } from '../../../../src/engine/stats';
import { compareSides, sideOf } from '../../../../src/engine/paired';
import { diagnose, type RunPurpose } from '../../../../src/engine/diagnose';
import { plan as modelPlan } from '../../../../src/model';
import { changeKey, type PlanChange } from '../../../../src/shared/analysis';
import type { Overrides, Profile, WindowSlice } from '../../../../src/shared/profile';
import { ProfileBuilder } from '../../model/builder';
import { simulate } from '../contentRuns';
import { threeChangeProfile, twoChangeProfile, moveOnTopOfParallelism, asPredicted, scripted } from './scripted';

describe('diagnose: verification, finding what hurts and keeping the best', () => {
  it('measures a plan that gained as predicted without a change that may not pay, and drops it when the plan measured reliably faster without it', async () => {
    // The fetch's parallelism carries the gain; the move is predicted to add 1.9× to it. The plan
    // measures what the model predicted, far beyond as written; without the move it measures 1.5
    // times that (the move costs the main thread more than it saves).
    const { placement, parallelism, s } = moveOnTopOfParallelism(1.5);
    const steps: string[] = [];
    const d = await diagnose({ run: s.run, passes: 1, verifyBudgetSeconds: 60, onStep: (st) => steps.push(st.message) });
    const v = d.plan.verification!;
    assert.equal(v.verdict, 'gain');
    assert.deepEqual(d.plan.changes.map(changeKey), [parallelism]);
    assert.equal(v.dropped.length, 1);
    assert.equal(changeKey(v.dropped[0]!.change), placement);
    assert.match(v.dropped[0]!.why, /^the plan measured [\d.]+× with it and [\d.]+× without$/);
    // After A B B A, the plan without the move was measured — and not the plan without the
    // parallelism, which the model puts at the pipeline's rate as written.
    const after = s.calls.slice(4);
    assert.deepEqual(
      after.map((c) => c.applied),
      [[parallelism]],
    );
    assert.equal(steps.length, 7);
    assert.match(steps[4]!, /^verifying: set parallelism of map\(fetch\) to \d+$/);
    assert.match(steps[6]!, /, with .*prefetch\(2\)/);
    // Then the kept part with twice its calls in flight, which the script measures as written.
    assert.match(steps[5]!, /^verifying: set parallelism of map\(fetch\) to \d+, doubling what it keeps in flight \(set parallelism of map\(fetch\) to \d+\)$/);
  });

  it('drops a change the plan measured no faster with than without, and keeps one that measured faster', async () => {
    // The parallelism carries the gain; without the move the plan measures `without` × its rate.
    const keptWith = async (without: number) => {
      const { placement, parallelism, s } = moveOnTopOfParallelism(without);
      const d = await diagnose({ run: s.run, passes: 1, verifyBudgetSeconds: 60 });
      // The plan without the move was measured after A B B A in both cases.
      assert.deepEqual(
        s.calls.slice(4).map((c) => c.applied),
        [[parallelism]],
      );
      return { plan: d.plan, placement, parallelism };
    };
    // The same rate without the move: the move was not measured to help, and goes.
    const same = await keptWith(1);
    assert.equal(same.plan.verification!.verdict, 'gain');
    assert.deepEqual(same.plan.changes.map(changeKey), [same.parallelism]);
    assert.deepEqual(
      same.plan.verification!.dropped.map((x) => changeKey(x.change)),
      [same.placement],
    );
    assert.match(same.plan.verification!.dropped[0]!.why, /^not measured to help: the plan measured [\d.]+× with it and [\d.]+× without$/);
    // A fifth slower without it: the move helped beyond the spread, and the whole plan stays.
    const slower = await keptWith(0.8);
    assert.deepEqual(slower.plan.changes.map(changeKey).sort(), [slower.parallelism, slower.placement].sort());
    assert.equal(slower.plan.verification!.dropped.length, 0);
  });

  /**
   * The first pass raises the fetch's parallelism; run so, the decode costs 4 ms an element and
   * the second pass adds its move to worker threads. The pass's run measured the fetch alone 5×
   * as written; the plan with the move measures `whole` × as written.
   */
  const partRunByPass = async (whole: number) => {
    const profile = (decode: number, overrides?: Overrides): Profile =>
      new ProfileBuilder({ cores: 2 })
        .range()
        .map('fetch', { latency: 20e-3, parallelism: overrides ? 256 : 1 })
        .map('decode', { self: decode, module: true })
        .build({ rootElements: 100, rate: overrides ? 1 / (decode + 1e-4) : 1 / 21e-3, ...(overrides ? { overrides } : {}) });
    const first = profile(10e-6);
    const firstPlan = modelPlan(first).changes;
    assert.deepEqual(
      firstPlan.map((c) => c.kind),
      ['parallelism'],
      'the first pass must raise the fetch alone',
    );
    const fetch = changeKey(firstPlan[0]!);
    const planned: PlanChange[] = [...firstPlan];
    const s = scripted(
      first,
      () => planned,
      (applied) => (applied.length === 1 && applied[0] === fetch ? 5 : applied.length === 2 ? whole : 1),
    );
    const run = async (o: Overrides, purpose: RunPurpose): Promise<Profile> => {
      const p = await s.run(o, purpose);
      if (purpose !== 'replan') return p;
      // What the pass saw: the decode heavier, so the second plan moves it.
      const replan = profile(4e-3, o as Record<string, never>);
      replan.run.windowSlices = p.run.windowSlices;
      replan.run.seconds = p.run.seconds;
      replan.run.elements = p.run.elements;
      const more = modelPlan(replan, { history: [first] }).changes.filter((c) => !planned.some((x) => changeKey(x) === changeKey(c)));
      planned.push(...more);
      return replan;
    };
    const d = await diagnose({ run, passes: 2, verifyBudgetSeconds: 60 });
    assert.equal(planned.length, 2, 'the second pass must add the decode move');
    return { d, s, fetch, planned };
  };

  it('counts a part of the plan a pass ran as measured, and keeps it when the whole plan shows no gain', async () => {
    const { d, s, fetch } = await partRunByPass(1);
    const v = d.plan.verification!;
    assert.equal(v.verdict, 'gain');
    assert.deepEqual(d.plan.changes.map(changeKey), [fetch]);
    // The fetch alone was not run again: its measurement is the pass's (five windows).
    assert.deepEqual(
      s.calls.filter((c) => c.purpose === 'verify' && c.applied.join() === fetch),
      [],
    );
    assert.deepEqual(v.kept.changes, [fetch]);
    assert.equal(v.kept.measured.windows, 5);
    assert.match(v.summary, /^verified 5\.\d+× ± /);
  });

  it('keeps the part of the plan a pass ran when the whole plan, itself a gain, measured no faster than it: what the later pass added was not measured to help', async () => {
    // The whole plan as fast as the fetch alone (5×): the move goes, though the plan is a gain.
    const same = await partRunByPass(5);
    assert.equal(same.d.plan.verification!.verdict, 'gain');
    assert.deepEqual(same.d.plan.changes.map(changeKey), [same.fetch]);
    const move = same.planned.find((c) => changeKey(c) !== same.fetch)!;
    assert.deepEqual(
      same.d.plan.verification!.dropped.map((x) => changeKey(x.change)),
      [changeKey(move)],
    );
    // Its part was the pass's run, not run again by verification.
    assert.deepEqual(
      same.s.calls.filter((c) => c.purpose === 'verify' && c.applied.join() === same.fetch),
      [],
    );
    // Measured beyond the spread faster with the move (6× against 5×), the whole plan stays.
    const faster = await partRunByPass(6);
    assert.deepEqual(faster.d.plan.changes.map(changeKey).sort(), faster.planned.map(changeKey).sort());
    assert.equal(faster.d.plan.verification!.dropped.length, 0);
  });

  it('says a "no reliable gain" speed-up was measured on the elements both runs covered, where the rates beside it were not', async () => {
    const first = twoChangeProfile();
    const planned = modelPlan(first).changes;
    let seed = 7;
    const slicesOf = (): WindowSlice[] => simulate(200, 1, 1.2, 0.1, 0.05, seed++);
    first.run.warmupElements = 200;
    first.run.windowSlices = slicesOf();
    const runs: Profile[] = [];
    const run = async (overrides: Overrides): Promise<Profile> => {
      if (runs.length === 0) {
        runs.push(first);
        return first;
      }
      const p = structuredClone(first);
      p.run.overrides = overrides;
      // Nothing gains: every configuration runs as fast as written on every element.
      p.run.windowSlices = slicesOf();
      runs.push(p);
      return p;
    };
    const d = await diagnose({ run, passes: 1, verifyBudgetSeconds: 0 });
    const v = d.plan.verification!;
    assert.equal(v.verdict, 'no-gain', v.summary);
    const paired = compareSides(sideOf(runs[1]!, 1), sideOf(first, 0));
    assert.equal(paired.paired, true, 'the scenario needs the pair compared on shared elements');
    assert.match(v.summary, /as written \(1\.0\d?× ± [\d.]+ on the elements both ran\)$/);

    // Runs without slices cannot be paired: the speed-up is their pooled rates', and says nothing more.
    const bare = twoChangeProfile();
    const s = scripted(
      bare,
      () => planned,
      () => 1.01,
      0.06,
    );
    const d2 = await diagnose({
      run: async (o, p) => {
        const out = await s.run(o, p);
        out.run.windowSlices = undefined;
        return out;
      },
      passes: 1,
      verifyBudgetSeconds: 0,
    });
    assert.match(d2.plan.verification!.summary, /as written \(1\.0\d?× ± [\d.]+\)$/);
  });

  it('keeps no change and says "no reliable gain" when the plan and each change alone measure within the spread', async () => {
    const first = twoChangeProfile();
    const planned = modelPlan(first).changes;
    assert.equal(planned.length, 2);
    const s = scripted(
      first,
      () => planned,
      () => 1.01,
      0.06,
    );
    const d = await diagnose({ run: s.run, passes: 1, userOverrides: {} });
    const v = d.plan.verification!;
    assert.equal(v.verdict, 'no-gain');
    assert.deepEqual(d.plan.changes, []);
    assert.deepEqual(d.plan.overrides, {});
    assert.equal(d.plan.predictedRate, d.plan.currentRate);
    assert.match(v.summary, /^no reliable gain on this machine right now: the plan measured .* as written \(1\.0\d× ± /);
    // Each change was tried alone, each followed by a run as written.
    const singles = s.calls.filter((c) => c.applied.length === 1).map((c) => c.applied[0]);
    assert.deepEqual([...singles].sort(), planned.map(changeKey).sort());
    assert.equal(v.dropped.length, 2);
    for (const d2 of v.dropped) assert.match(d2.why, /measured 1\.0× alone/);
  });

  it('finds the change that hurts, drops it with what it measured, and keeps the rest', async () => {
    const first = threeChangeProfile();
    const planned = modelPlan(first).changes;
    const placement = changeKey(planned.find((c) => c.kind === 'placement')!);
    // The worker move loses 40% wherever it goes; the other two changes gain 25% each.
    const factor = (applied: string[]): number => applied.reduce((f, k) => f * (k === placement ? 0.6 : 1.25), 1);
    const s = scripted(first, () => planned, factor);
    const d = await diagnose({ run: s.run, passes: 1, verifyBudgetSeconds: 60 });
    const v = d.plan.verification!;
    assert.equal(v.verdict, 'gain');
    assert.deepEqual(
      d.plan.changes.map(changeKey).sort(),
      planned
        .map(changeKey)
        .filter((k) => k !== placement)
        .sort(),
    );
    assert.equal(v.dropped.length, 1);
    assert.equal(changeKey(v.dropped[0]!.change), placement);
    assert.equal(v.dropped[0]!.why, 'measured 0.6× alone');
    assert.match(v.summary, /^verified 1\.5\d× ± /);
    // The kept plan's overrides carry no worker placement.
    assert.equal(
      Object.values(d.plan.overrides).some((o) => o.placement === 'worker'),
      false,
    );
    // Every configuration measured had a run as written (the profile's, or a verification run) right before or after it.
    const runs = s.calls;
    for (let i = 1; i < runs.length; i++) {
      if (runs[i]!.applied.length === 0) continue;
      assert.ok(runs[i - 1]?.applied.length === 0 || runs[i + 1]?.applied.length === 0, `run ${i} has no run as written beside it`);
    }
  });

  it('finds the change that holds back a plan that gained but fell well short of its prediction, and keeps the plan without it', async () => {
    const first = threeChangeProfile();
    const planned = modelPlan(first).changes;
    const gain = asPredicted(first);
    const placement = changeKey(planned.find((c) => c.kind === 'placement')!);
    // The whole plan gains, but half what was predicted; without the worker move it gains 90% of it.
    const factor = (applied: string[]): number => (applied.length === 0 ? 1 : applied.includes(placement) ? gain / 2 : 0.9 * gain);
    const s = scripted(first, () => planned, factor);
    const d = await diagnose({ run: s.run, passes: 1, verifyBudgetSeconds: 60 });
    const v = d.plan.verification!;
    assert.equal(v.verdict, 'gain');
    assert.deepEqual(
      d.plan.changes.map(changeKey).sort(),
      planned
        .map(changeKey)
        .filter((k) => k !== placement)
        .sort(),
    );
    assert.equal(changeKey(v.dropped[0]!.change), placement);
    assert.match(v.dropped[0]!.why, /^the plan measured .* with it and .* without$/);

    // A plan that measures what was predicted, no part of which the model puts near it, is kept
    // whole with no runs beyond A B B A.
    const exact = scripted(
      first,
      () => planned,
      (applied) => (applied.length === planned.length ? gain : 1),
    );
    const kept = await diagnose({ run: exact.run, passes: 1, verifyBudgetSeconds: 60 });
    assert.equal(kept.plan.changes.length, planned.length);
    assert.equal(exact.calls.length, 4);
  });

  it('never keeps a change that measured slower, and keeps only a configuration that measured reliably faster', async () => {
    const first = threeChangeProfile();
    const planned = modelPlan(first).changes;
    const keys = planned.map(changeKey);
    const effects = [0.5, 0.9, 1, 1.02, 1.1, 1.6];
    let scripts = 0;
    for (const a of effects) {
      for (const b of effects) {
        for (const c of [0.7, 1.3]) {
          const factors: Record<string, number> = { [keys[0]!]: a, [keys[1]!]: b, [keys[2]!]: c };
          const s = scripted(
            first,
            () => planned,
            (applied) => applied.reduce((f, k) => f * factors[k]!, 1),
            0.04,
          );
          const d = await diagnose({ run: s.run, passes: 1, verifyBudgetSeconds: 60 });
          const v = d.plan.verification!;
          const kept = new Set(d.plan.changes.map(changeKey));
          const asWritten = v.tried.find((t) => t.changes.length === 0)!.measured;
          for (const t of v.tried) {
            if (t.changes.length === 1 && kept.has(t.changes[0]!)) assert.ok(!measuredSlower(t.measured, asWritten), `${t.changes[0]} measured slower alone yet was kept (${JSON.stringify(factors)})`);
          }
          if (v.verdict === 'gain') {
            assert.ok(kept.size > 0);
            // Faster beyond the spread as verification compared it (on the same elements, where
            // the runs covered the same ones), and truly faster in this script.
            assert.ok(v.speedup - v.speedupHalfWidth > 1 && v.speedup >= 1.03, v.summary);
            assert.ok([...kept].reduce((f, k) => f * factors[k]!, 1) >= 1.03, `${JSON.stringify(factors)}: ${v.summary}`);
            assert.deepEqual([...v.kept.changes].sort(), [...kept].sort());
            // It is the fastest configuration tried that holds no change that lost alone.
            for (const t of v.tried)
              if (t.changes.length > 0 && t.measured.rate > v.kept.measured.rate + 1e-9) assert.ok(t.changes.some((k) => v.dropped.some((x) => changeKey(x.change) === k)) || !reliablyFaster(t.measured, asWritten));
          } else {
            assert.equal(kept.size, 0);
            assert.match(v.summary, /^no reliable gain on this machine right now: /);
          }
          assert.equal(v.dropped.length + kept.size, keys.length);
          scripts++;
        }
      }
    }
    assert.equal(scripts, effects.length * effects.length * 2);
  });

  it('keeps nothing when the pipeline as written fails during verification, and says so', async () => {
    const first = threeChangeProfile();
    let n = 0;
    const d = await diagnose({
      passes: 1,
      run: async () => {
        n++;
        if (n === 1) return first;
        const p = structuredClone(first);
        p.error = { kind: 'exit', message: 'the process died' };
        return p;
      },
    });
    assert.equal(d.plan.verification!.verdict, 'error');
    assert.deepEqual(d.plan.changes, []);
    assert.match(d.plan.verification!.summary, /as written failed to run: the process died/);
    // The plan's run failed, then the first part of it tried and the run as written after it: nothing more.
    assert.equal(n, 4);
  });

  it('keeps nothing and says why when the plan itself fails to run and no part of it gains', async () => {
    const first = twoChangeProfile();
    const planned = modelPlan(first).changes;
    const s = scripted(
      first,
      () => planned,
      () => 1,
    );
    const run = async (o: Overrides, p: RunPurpose): Promise<Profile> => {
      const profile = await s.run(o, p);
      if (s.calls[s.calls.length - 1]!.applied.length === planned.length) profile.error = { kind: 'override', message: 'the worker could not load fetch' };
      return profile;
    };
    const d = await diagnose({ run, passes: 1, verifyBudgetSeconds: 60 });
    const v = d.plan.verification!;
    assert.equal(v.verdict, 'error');
    assert.equal(v.summary, "verification failed: the plan's run failed: the worker could not load fetch");
    assert.deepEqual(d.plan.changes, []);
    // Each change was still tried alone before giving up.
    assert.equal(s.calls.filter((c) => c.applied.length === 1).length, 2);
  });
});
