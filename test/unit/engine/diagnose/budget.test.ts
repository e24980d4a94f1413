/**
 * The time budget and each run's window and warm-up (src/engine/diagnose/budget.ts).
 */
import * as assert from 'node:assert/strict';
import { diagnose, verifyRunSeconds, VERIFY_MAX_RUN_SECONDS, VERIFY_MIN_ELEMENTS, VERIFY_RUN_SECONDS, type RunBudget, type RunPurpose } from '../../../../src/engine/diagnose';
import { plan as modelPlan, predict as modelPredict } from '../../../../src/model';
import { changeKey } from '../../../../src/shared/analysis';
import type { Overrides, Profile } from '../../../../src/shared/profile';
import { simulate } from '../contentRuns';
import { threeChangeProfile, twoChangeProfile, fetchDecodeProfile, moveOnTopOfParallelism, steadyRun, asPredicted, scripted, steppingClock } from './scripted';

describe('diagnose: verification within the time budget', () => {
  it('measures a slow configuration longer than a fast one, so a batch-a-second pipeline is not measured on one element', async () => {
    const first = threeChangeProfile();
    // As written measured about 2 elements a second in its slices: a 1 s run would hold one or two.
    first.run.windowSlices = [2, 2.1, 1.9].map((r) => ({ elements: r, seconds: 1 }));
    const planned = modelPlan(first).changes;
    const s = scripted(
      first,
      () => planned,
      (applied) => (applied.length === planned.length ? 20 : 1),
    );
    const budgets: Array<{ applied: number; seconds: number | undefined }> = [];
    const run = async (o: Overrides, purpose: RunPurpose, budget?: RunBudget): Promise<Profile> => {
      const p = await s.run(o, purpose);
      if (purpose === 'verify') budgets.push({ applied: s.calls.at(-1)!.applied.length, seconds: budget?.seconds });
      return p;
    };
    await diagnose({ run, passes: 1 });
    const firstAsWritten = budgets.find((x) => x.applied === 0);
    const firstPlan = budgets.find((x) => x.applied === planned.length);
    assert.ok(firstAsWritten && firstPlan, JSON.stringify(budgets));
    assert.equal(firstAsWritten.seconds, VERIFY_MAX_RUN_SECONDS, JSON.stringify(budgets));
    assert.ok(firstPlan.seconds! < firstAsWritten.seconds!, JSON.stringify(budgets));
    assert.equal(verifyRunSeconds(8), VERIFY_MIN_ELEMENTS / 8);
    assert.equal(verifyRunSeconds(10_000), VERIFY_RUN_SECONDS);
  });

  it('warms a run that moves a fn to p worker threads on p times the elements the run as written warmed up on', async () => {
    const { placement, s } = moveOnTopOfParallelism(0.5);
    const asked: Array<{ purpose: RunPurpose; moved: boolean; warmupElements: number | undefined }> = [];
    const run = async (o: Overrides, purpose: RunPurpose, budget?: RunBudget): Promise<Profile> => {
      const p = await s.run(o, purpose);
      // The run as written warmed up on 37 root elements.
      if (asked.length === 0) p.run.warmupElements = 37;
      asked.push({ purpose, moved: o[placement.slice('placement:'.length)]?.placement === 'worker', warmupElements: budget?.warmupElements });
      return p;
    };
    const d = await diagnose({ run, passes: 2, verifyBudgetSeconds: 60 });
    const move = d.profiles[0]!.ops.find((o) => changeKey({ kind: 'placement', opId: o.id }) === placement);
    const threads = move && d.plan.overrides[move.id]?.parallelism;
    assert.equal(typeof threads, 'number');
    const moved = asked.filter((a) => a.moved);
    assert.ok(moved.length >= 2 && moved.some((a) => a.purpose === 'replan') && moved.some((a) => a.purpose === 'verify'), JSON.stringify(asked));
    // Each thread of the pool warms on as many elements as the main thread did as written; runs
    // with every fn on the main thread warm up as usual.
    for (const a of moved) assert.equal(a.warmupElements, 37 * (threads as number), JSON.stringify(asked));
    for (const a of asked.filter((x) => !x.moved)) assert.equal(a.warmupElements, undefined, JSON.stringify(asked));
  });

  it("warms a later pass's threads beyond the run as written's warm-up only as far as the budget leaves time for", async () => {
    /** The warm-up the pass with the move asks for, when the run as written (37 warm-up elements) took `firstSeconds` of a 15 s budget. */
    const replanWarmup = async (firstSeconds: number) => {
      const { placement, s } = moveOnTopOfParallelism(0.5);
      let now = 0;
      let first: Profile | undefined;
      let asked: RunBudget | undefined;
      const run = async (o: Overrides, purpose: RunPurpose, budget?: RunBudget): Promise<Profile> => {
        const p = await s.run(o, purpose);
        if (!first) {
          p.run.warmupElements = 37;
          first = p;
          now += firstSeconds;
        } else now += 1;
        if (purpose === 'replan' && o[placement.slice('placement:'.length)]?.placement === 'worker') asked = budget;
        return p;
      };
      const d = await diagnose({ run, passes: 2, budgetSeconds: 15, clock: () => now });
      const move = d.profiles[0]!.ops.find((op) => changeKey({ kind: 'placement', opId: op.id }) === placement)!;
      const rate = first!.run.elements / first!.run.seconds;
      return { warmup: asked?.warmupElements, threads: d.plan.overrides[move.id]?.parallelism as number, rate };
    };
    // A quick first run leaves the budget room for the pool to warm each thread up on 37.
    const quick = await replanWarmup(2);
    assert.ok(quick.threads >= 2, `the scenario needs a move to several threads: ${quick.threads}`);
    assert.equal(quick.warmup, 37 * quick.threads);
    // A first run of 8 s of 15 leaves no time for a pass longer than it: the pool warms up on 37.
    assert.equal((await replanWarmup(8)).warmup, 37);
    // In between, the extra warm-up takes what is spare (15 less twice the first run) at the rate
    // as written: here the time of about 5.5 elements.
    const spare = 5.5 / quick.rate;
    const between = await replanWarmup((15 - spare) / 2);
    assert.ok(between.warmup! > 37 && between.warmup! < 37 * quick.threads, `${between.warmup}`);
    assert.equal(between.warmup, 37 + Math.floor((15 - 2 * ((15 - spare) / 2)) * between.rate));
  });

  it("measures a run as written beside the plan's long enough to cover the plan's elements, as far as the budget allows", async () => {
    // The plan runs 1.5× as fast: in its 1 s window it covers half as many elements again as as
    // written covers in 1 s. The run as written after it (the second pair, as the first found
    // different cores free) measures for as long as covering them takes, when the budget has room,
    // and only what the budget leaves when it has less (never less than its usual window).
    const planWindow = (verifyBudgetSeconds: number, asWrittenStartSeconds = 1) => {
      const first = twoChangeProfile();
      let seed = 3;
      let now = 0;
      const shape = (p: Profile, from: number, speed: number, seconds: number, cores = 2): Profile => {
        p.run.warmupElements = from;
        p.run.windowSlices = simulate(from, speed, seconds, 0.1, 0.05, seed++);
        p.run.elements = p.run.windowSlices.reduce((n, x) => n + x.elements, 0);
        p.run.seconds = p.run.windowSlices.reduce((t, x) => t + x.seconds, 0);
        p.run.availableCores = cores;
        return p;
      };
      shape(first, 100, 1, 1.2, 1.2);
      const asked: Array<{ changes: number; seconds: number | undefined }> = [];
      const runs: Profile[] = [];
      const run = async (overrides: Overrides, _purpose: RunPurpose, budget?: RunBudget): Promise<Profile> => {
        asked.push({ changes: Object.keys(overrides).length, seconds: budget?.seconds });
        // Each run costs a second besides its window (as written's, unless told otherwise).
        now += (Object.keys(overrides).length > 0 ? 1 : asWrittenStartSeconds) + (budget?.seconds ?? 1.2);
        if (runs.length === 0) {
          runs.push(first);
          return first;
        }
        const p = structuredClone(first);
        p.run.overrides = overrides;
        const plan = Object.keys(overrides).length > 0;
        runs.push(shape(p, plan ? 200 : Math.max(100, budget?.warmupElements ?? 0), plan ? 1.5 : 1, budget?.seconds ?? 1));
        return p;
      };
      return diagnose({ run, passes: 1, verifyBudgetSeconds, clock: () => now }).then((d) => ({ d, asked, runs, first }));
    };
    const ample = await planWindow(60);
    assert.deepEqual(
      ample.asked.slice(0, 4).map((a) => a.changes),
      [0, 2, 2, 0],
      'the scenario needs a second pair',
    );
    assert.equal(ample.asked[2]!.seconds, 1, "the plan's runs measure their usual window");
    // Covering the plan's last window at as written's rate (measured by its first run).
    const wanted = ample.runs[2]!.run.elements / (ample.first.run.elements / ample.first.run.seconds);
    assert.ok(wanted > 1.2 && wanted < 3, `the scenario needs a plan that covers more elements than as written's usual window: ${wanted}`);
    assert.ok(Math.abs(ample.asked[3]!.seconds! - wanted) < 0.01, `${ample.asked[3]!.seconds} s, not ${wanted}`);
    assert.equal(ample.d.plan.verification!.verdict, 'gain', ample.d.plan.verification!.summary);

    // 6.35 s: the second pair fits (two runs of 2 s after the first 2 s) with a third of a second to spare.
    const tight = await planWindow(6.35);
    assert.deepEqual(
      tight.asked.slice(0, 4).map((a) => a.changes),
      [0, 2, 2, 0],
    );
    const seconds = tight.asked[3]!.seconds!;
    assert.ok(seconds > 1 && seconds < wanted - 0.1, `${seconds} s: more than the usual window, less than covering the plan's elements takes`);
    assert.ok(tight.d.plan.verification!.seconds <= 6.35 + 1e-9, `verification took ${tight.d.plan.verification!.seconds} s of 6.35`);

    // Runs as written take 2 s to start, the plan's 1 s. After the plan's two runs (4 s) 2.9 s
    // are left: a run as written needs 2 of them to start and a quarter second more to warm up to
    // the plan's elements, so its window gets no more than its usual second. (Sized by the last
    // run's start-up, the plan's 1 s, it would take 1.28 s and end past the budget.)
    const slowStart = await planWindow(6.9, 2);
    assert.deepEqual(
      slowStart.asked.slice(0, 4).map((a) => a.changes),
      [0, 2, 2, 0],
    );
    assert.equal(slowStart.asked[3]!.seconds, 1);
  });

  it('runs a later pass only as long as covering what an unsettled run as written reached takes, and as usual after one that settled', async () => {
    const asked = async (endReason: 'budget' | 'converged') => {
      const first = twoChangeProfile();
      first.run.warmupElements = 100;
      // 10,000 elements a second for 2 s; the model predicts the plan at 8,448/s.
      first.run.windowSlices = simulate(100, 1, 2, 0.1, 0.05, 21, () => 1e-4);
      first.run.elements = first.run.windowSlices.reduce((n, x) => n + x.elements, 0);
      first.run.seconds = first.run.windowSlices.reduce((t, x) => t + x.seconds, 0);
      first.run.endReason = endReason;
      first.run.converged = endReason === 'converged';
      const calls: Array<{ overrides: Overrides; purpose: RunPurpose; budget?: RunBudget }> = [];
      const run = async (overrides: Overrides, purpose: RunPurpose, budget?: RunBudget): Promise<Profile> => {
        calls.push({ overrides, purpose, ...(budget ? { budget } : {}) });
        if (calls.length === 1) return first;
        const p = structuredClone(first);
        p.run.overrides = overrides;
        return p;
      };
      await diagnose({ run, passes: 2, verifyBudgetSeconds: 0 });
      return { first, replan: calls.find((c) => c.purpose === 'replan')! };
    };
    // The run as written ran out its window (its rate never settled) at element 100 + elements:
    // the plan's run measures those elements at the rate the model predicts for it.
    const unsettled = await asked('budget');
    const rate = modelPredict(unsettled.first, unsettled.replan.overrides).rate;
    const wanted = unsettled.first.run.elements / rate;
    assert.ok(wanted > 1, `the scenario needs a stretch that takes more than a verification window: ${wanted} s`);
    assert.ok(Math.abs(unsettled.replan.budget!.seconds! - wanted) < 1e-9, `${unsettled.replan.budget?.seconds} s, not ${wanted}`);
    // One that settled gets the pass's usual window.
    const settled = await asked('converged');
    assert.equal(settled.replan.budget?.seconds, undefined);
  });

  it('stops verifying when the time budget runs out, after the first pair', async () => {
    const first = twoChangeProfile();
    const planned = modelPlan(first).changes;
    const t = steppingClock(3);
    const s = scripted(
      first,
      () => planned,
      () => 1,
    );
    const run = async (o: Overrides, p: RunPurpose): Promise<Profile> => {
      t.tick();
      return s.run(o, p);
    };
    const d = await diagnose({ run, passes: 1, verifyBudgetSeconds: 5, clock: t.clock });
    // The plan's run (paired with the profile's as written) takes 3 s; the second pair would end at 9 s, beyond the 5 s budget.
    assert.equal(s.calls.filter((c) => c.purpose === 'verify').length, 1);
    assert.equal(d.plan.verification!.verdict, 'no-gain');
    assert.equal(d.plan.verification!.seconds, 3);
  });

  it('gives the optional runs what the passes leave of the whole budget, and the second A/B pair at least its floor unless the passes took it all', async () => {
    // The plan gains as predicted, and with room verification also measures the plan without the move.
    const first = fetchDecodeProfile();
    const planned = modelPlan(first).changes;
    const gain = asPredicted(first);
    /** Each run costs `fixed` seconds of start-up and teardown besides its window (3 s for a pass, what verification asks for otherwise). */
    const diagnoseWith = async (budgetSeconds: number, fixed = 2) => {
      let now = 0;
      const s = scripted(
        first,
        () => planned,
        (applied) => (applied.length === planned.length ? gain : 1),
      );
      const run = async (o: Overrides, p: RunPurpose, b?: RunBudget): Promise<Profile> => {
        const out = await s.run(o, p);
        now += fixed + (b?.seconds ?? 3);
        if (p !== 'verify') out.run.seconds = 3;
        return out;
      };
      const d = await diagnose({ run, passes: 2, budgetSeconds, clock: () => now });
      assert.equal(d.plan.verification!.verdict, 'gain');
      return s.calls.map((c) => `${c.purpose} ${c.applied.length}`);
    };
    // The passes ran as written and the plan (10 s). With a minute, verification runs the second
    // pair (B A) and the plan without its least promising change.
    assert.deepEqual(await diagnoseWith(60), ['profile 0', 'replan 2', 'verify 2', 'verify 0', 'verify 1']);
    // With 13 s the passes leave 3 s: the second pair still runs (its floor), the optional run does not.
    assert.deepEqual(await diagnoseWith(13), ['profile 0', 'replan 2', 'verify 2', 'verify 0']);
    // Runs that take 5 s besides their window: the passes take 16 s. With 17 s they leave one,
    // and the passes' runs show that the second pair (about 12 s) would not fit even the floor,
    // before any verification run has shown what one takes; one run as written (A B A) does.
    assert.deepEqual(await diagnoseWith(17, 5), ['profile 0', 'replan 2', 'verify 0']);
    // With 13 s the passes took the whole wait and more: the floor does not lengthen it further.
    assert.deepEqual(await diagnoseWith(13, 5), ['profile 0', 'replan 2']);
  });

  it('gives an undecided first pair on a steady machine a second pair only within the budget, and after a drift of load at least the floor', async () => {
    const first = steadyRun(fetchDecodeProfile(), 1.9);
    const planned = modelPlan(first).changes;
    const diagnoseWith = async (cores: number) => {
      let now = 0;
      // 10% faster, with a spread too wide for one pair to say so.
      const s = scripted(
        first,
        () => planned,
        (applied) => (applied.length === planned.length ? 1.1 : 1),
        0.3,
      );
      const run = async (o: Overrides, p: RunPurpose, b?: RunBudget): Promise<Profile> => {
        const out = await s.run(o, p);
        now += 2 + (b?.seconds ?? 3);
        if (out !== first) out.run.availableCores = cores;
        return out;
      };
      // The profile takes 5 s and the plan's first run 3 s of 8: a second pair (6 s) does not fit.
      await diagnose({ run, passes: 1, budgetSeconds: 8, clock: () => now });
      return s.calls.map((c) => `${c.purpose} ${c.applied.length}`);
    };
    assert.deepEqual(await diagnoseWith(1.85), ['profile 0', 'verify 2']);
    assert.deepEqual(await diagnoseWith(1.3), ['profile 0', 'verify 2', 'verify 2', 'verify 0']);
  });
});
