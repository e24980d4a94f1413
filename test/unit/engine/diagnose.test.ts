/**
 * The decision logic of `diagnose`, driven by a scripted `run` (the runner is a real child
 * process elsewhere; see diagnose.integration.test.ts): which runs it asks for, in which order,
 * and which configuration it keeps given what those runs measured.
 */
import * as assert from 'node:assert/strict';
import { measuredSlower, pooledRate, reliablyFaster, runSlices } from '../../../src/engine/stats';
import { compareSides, sideOf } from '../../../src/engine/paired';
import { diagnose, verifyRunSeconds, VERIFY_MAX_RUN_SECONDS, VERIFY_MIN_ELEMENTS, VERIFY_RUN_SECONDS, type RunBudget, type RunPurpose } from '../../../src/engine/diagnose';
import { eventLoopMove, overridesFor, plan as modelPlan, predict as modelPredict } from '../../../src/model';
import { changeKey, type PlanChange } from '../../../src/shared/analysis';
import type { Overrides, Profile, WindowSlice } from '../../../src/shared/profile';
import { ProfileBuilder } from '../model/builder';
import { simulate } from './contentRuns';
import { trainingProfile } from '../model/training';

const id = ProfileBuilder.id;

/** Two awaiting maps with one call in flight each and a CPU-heavy importable map on 4 cores: the model proposes three changes. */
function threeChangeProfile(): Profile {
  const p = new ProfileBuilder({ cores: 4 })
    .range()
    .map('fetch', { latency: 20e-3, parallelism: 1 })
    .map('lookup', { latency: 10e-3, parallelism: 1 })
    .map('decode', { self: 5e-3, module: true })
    .build({ rootElements: 100, rate: 28 });
  assert.equal(modelPlan(p).changes.length, 3, 'the scenario needs a plan of three changes');
  return p;
}

/** Two awaiting maps with one call in flight each: the model raises both parallelisms. */
function twoChangeProfile(): Profile {
  const p = new ProfileBuilder({ cores: 2 })
    .range()
    .map('fetch', { latency: 20e-3, parallelism: 1 })
    .map('lookup', { latency: 10e-3, parallelism: 1 })
    .build({ rootElements: 100, rate: 33 });
  assert.equal(modelPlan(p).changes.length, 2, 'the scenario needs a plan of two changes');
  return p;
}

/** An awaiting fetch with one call in flight, then a 1 ms decode: the model raises the fetch's parallelism and moves the decode to worker threads. */
function fetchDecodeProfile(): Profile {
  const p = new ProfileBuilder({ cores: 2 })
    .range()
    .map('fetch', { latency: 20e-3, parallelism: 1 })
    .map('decode', { self: 1e-3, module: true })
    .build({ rootElements: 100, rate: 1 / 21e-3 });
  assert.deepEqual(modelPlan(p).changes.map((c) => c.kind).sort(), ['parallelism', 'placement'], 'the scenario needs a parallelism change and a worker move');
  return p;
}

/**
 * fetchDecodeProfile's plan, scripted so that the plan measures what the model predicted and the
 * plan without the worker move (the parallelism alone) measures `without` × that.
 */
function moveOnTopOfParallelism(without: number) {
  const first = fetchDecodeProfile();
  const planned = modelPlan(first).changes;
  const gain = asPredicted(first);
  const placement = changeKey(planned.find((c) => c.kind === 'placement')!);
  const parallelism = changeKey(planned.find((c) => c.kind === 'parallelism')!);
  const factor = (applied: string[]): number => (applied.length === 2 ? gain : applied.length === 1 && applied[0] === parallelism ? without * gain : 1);
  return { placement, parallelism, s: scripted(first, () => planned, factor) };
}

/** An awaiting fetch with one call in flight: the model proposes one change, more calls in flight. */
function oneFetchProfile(): Profile {
  const p = new ProfileBuilder({ cores: 2 })
    .range()
    .map('fetch', { latency: 20e-3, parallelism: 1 })
    .build({ rootElements: 100, rate: 1 / 21e-3 });
  assert.equal(modelPlan(p).changes.length, 1, 'the scenario needs a plan of one change');
  return p;
}

/** Gives `first` five window slices within ±2% and `cores` free during its run: a steady run as written. */
function steadyRun(first: Profile, cores: number): Profile {
  first.run.windowSlices = [1, 1.02, 0.98, 1, 1].map((k) => ({ elements: k * (first.run.elements / first.run.seconds), seconds: 1 }));
  first.run.availableCores = cores;
  return first;
}

/** `run`, with every run after the first finding `cores` free. */
function findingFree(first: Profile, run: (o: Overrides, purpose: RunPurpose) => Promise<Profile>, cores: number) {
  return async (o: Overrides, purpose: RunPurpose): Promise<Profile> => {
    const p = await run(o, purpose);
    if (p !== first) p.run.availableCores = cores;
    return p;
  };
}

/** The speed-up the model predicts for its whole plan on `first`: a run measuring it falls short of nothing. */
function asPredicted(first: Profile): number {
  const p = modelPlan(first);
  return p.predictedRate! / p.currentRate!;
}

interface Call {
  purpose: RunPurpose;
  /** Which plan changes the overrides applied, as change keys. */
  applied: string[];
}

function widenedBeyond(changes: PlanChange[], o: Overrides): boolean {
  return changes.some((c) => {
    const k = o[c.opId];
    if (c.kind === 'parallelism') return typeof k?.parallelism === 'number' && k.parallelism > c.to;
    if (c.kind === 'cycleLength') return typeof k?.cycleLength === 'number' && k.cycleLength > c.to;
    return false;
  });
}

/**
 * A scripted runner: the first call returns `first`; every later call returns `first` measured at
 * `factor(applied)` × first's rate, as five windows spread ±`noise`.
 */
function scripted(first: Profile, changes: () => PlanChange[], factor: (applied: string[]) => number, noise = 0.02, prefetchFactor = 1) {
  const calls: Call[] = [];
  const widened: Call[] = [];
  const prefetched: Call[] = [];
  const rootId = first.pipeline.rootId;
  const run = async (overrides: Overrides, purpose: RunPurpose): Promise<Profile> => {
    const applied = changes()
      .filter((c) => overrides[c.opId] !== undefined && Object.keys(overrides[c.opId]!).length > 0 && appliedKnob(c, overrides))
      .map(changeKey)
      .sort();
    // A prefetch at the end that no plan change asked for is verification's last try.
    const atEnd = overrides[rootId]?.prefetch !== undefined && !changes().some((c) => c.kind === 'prefetch' && c.opId === rootId);
    // A run of the plan with its free levers doubled, or with a prefetch at the end (verification's
    // last phases), is counted apart: the tests of the other phases count the runs of the plan's
    // own configurations.
    if (widenedBeyond(changes(), overrides)) widened.push({ purpose, applied });
    else if (atEnd) prefetched.push({ purpose, applied });
    else calls.push({ purpose, applied });
    if (calls.length === 1 && !atEnd) return first;
    const rate = (first.run.elements / first.run.seconds) * factor(applied) * (atEnd ? prefetchFactor : 1);
    const p = structuredClone(first);
    p.run.overrides = overrides;
    p.run.windowSlices = [-2, -1, 0, 1, 2].map((k) => ({ elements: rate * (1 + (k * noise) / 2), seconds: 1 }));
    p.run.seconds = 1;
    p.run.elements = rate;
    return p;
  };
  return { run, calls, widened, prefetched };
}

function appliedKnob(c: PlanChange, o: Overrides): boolean {
  const k = o[c.opId]!;
  switch (c.kind) {
    case 'placement':
      return k.placement === 'worker';
    case 'parallelism':
      return k.parallelism === c.to;
    case 'prefetch':
      return k.prefetch === c.size;
    case 'cache':
      return k.cache === 'memory';
    default:
      return false;
  }
}

/** A clock that advances `step` seconds on every run. */
function steppingClock(step: number): { clock: () => number; tick: () => void } {
  let now = 0;
  return { clock: () => now, tick: () => (now += step) };
}

describe('diagnose: verification', () => {
  it('keeps the whole plan when it measured faster beyond the spread, measuring as written and the plan in turn', async () => {
    const first = threeChangeProfile();
    const planned = modelPlan(first).changes;
    const all = planned.map(changeKey).sort();
    const gain = asPredicted(first);
    const s = scripted(first, () => planned, (applied) => (applied.length === all.length ? gain : 1));
    const d = await diagnose({ run: s.run, passes: 1 });
    // A B B A: as written (the profile's run), the plan, then the other way round, so a drifting
    // load weighs on both. (Without any one of its changes the model puts this plan at a quarter
    // of its rate or less: no part of it is measured on its own.)
    assert.deepEqual(s.calls.map((c) => c.purpose), ['profile', 'verify', 'verify', 'verify']);
    assert.deepEqual(s.calls.map((c) => c.applied.length), [0, all.length, all.length, 0]);
    const v = d.plan.verification!;
    assert.equal(v.verdict, 'gain');
    assert.deepEqual(d.plan.changes.map(changeKey).sort(), all);
    assert.match(v.summary, new RegExp(`^verified ${gain.toFixed(1).replace('.', '\\.')}\\d?× ± `));
    assert.ok(Math.abs(v.speedup - gain) < 1e-9);
    assert.equal(v.dropped.length, 0);
    // With room left, the plan with its calls in flight doubled ran last, measured no faster (the
    // script gives it the rate as written) and is not kept.
    assert.equal(s.widened.length, 1);
    // And the plan with a prefetch at the end, which the script measures as fast as the plan: not kept.
    assert.equal(s.prefetched.length, 1);
    assert.equal(s.prefetched[0]!.applied.length, all.length);
    assert.ok(!d.plan.changes.some((c) => c.kind === 'prefetch'));
    assert.equal(v.tried.length, 4);
    // The profile's window and the second pair's five slices.
    assert.equal(v.asWritten.windows, runSlices(first).length + 5);
    assert.equal(d.profiles.length, 6);
  });

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
    assert.deepEqual(after.map((c) => c.applied), [[parallelism]]);
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
      assert.deepEqual(s.calls.slice(4).map((c) => c.applied), [[parallelism]]);
      return { plan: d.plan, placement, parallelism };
    };
    // The same rate without the move: the move was not measured to help, and goes.
    const same = await keptWith(1);
    assert.equal(same.plan.verification!.verdict, 'gain');
    assert.deepEqual(same.plan.changes.map(changeKey), [same.parallelism]);
    assert.deepEqual(same.plan.verification!.dropped.map((x) => changeKey(x.change)), [same.placement]);
    assert.match(same.plan.verification!.dropped[0]!.why, /^not measured to help: the plan measured [\d.]+× with it and [\d.]+× without$/);
    // A fifth slower without it: the move helped beyond the spread, and the whole plan stays.
    const slower = await keptWith(0.8);
    assert.deepEqual(slower.plan.changes.map(changeKey).sort(), [slower.parallelism, slower.placement].sort());
    assert.equal(slower.plan.verification!.dropped.length, 0);
  });

  it('stops after one pair when it settled the comparison on runs that found the same cores free', async () => {
    const first = steadyRun(threeChangeProfile(), 3.8);
    const planned = modelPlan(first).changes;
    const gain = asPredicted(first);
    const s = scripted(first, () => planned, (applied) => (applied.length === planned.length ? gain : 1));
    const same = await diagnose({ run: findingFree(first, s.run, 3.7), passes: 2 });
    // profile (A), re-plan with the plan (B): the pair settled it, so no B A follows.
    assert.deepEqual(s.calls.map((c) => `${c.purpose}:${c.applied.length}`), ['profile:0', `replan:${planned.length}`]);
    assert.equal(same.plan.verification?.verdict, 'gain');

    // The same gain on a run that found a core fewer free: the load moved against the plan, and
    // the pair still decides.
    s.calls.length = 0;
    const against = await diagnose({ run: findingFree(first, s.run, 2.8), passes: 2 });
    assert.deepEqual(s.calls.map((c) => c.purpose), ['profile', 'replan']);
    assert.equal(against.plan.verification?.verdict, 'gain');

    // As written on 2.6 free cores, the plan on 3.8: a gain of 1.3× is within what the extra
    // cores alone could give (3.8 ÷ 2.6 = 1.46), so B A follows (and then, the plan falling well
    // short of its prediction, the search for what holds it back); the model's gain is beyond it.
    const eased = steadyRun(threeChangeProfile(), 2.6);
    const easedPlan = modelPlan(eased).changes;
    const easedGain = asPredicted(eased);
    assert.ok(easedGain > 1.03 * (3.8 / 2.6), 'the scenario needs a gain beyond the drift');
    const pairsAt = async (factor: number): Promise<string[]> => {
      const e = scripted(eased, () => easedPlan, (applied) => (applied.length === easedPlan.length ? factor : 1));
      await diagnose({ run: findingFree(eased, e.run, 3.8), passes: 2, verifyBudgetSeconds: 60 });
      return e.calls.map((c) => `${c.purpose}:${c.applied.length}`);
    };
    const n = easedPlan.length;
    assert.deepEqual((await pairsAt(1.3)).slice(0, 4), ['profile:0', `replan:${n}`, `verify:${n}`, 'verify:0']);
    assert.deepEqual(await pairsAt(easedGain), ['profile:0', `replan:${n}`]);
  });

  it('stops after one pair when the plan measured slower, or no faster, on runs that found the same cores free', async () => {
    const first = steadyRun(oneFetchProfile(), 1.9);
    const planned = modelPlan(first).changes;
    // The plan loses 40% (more calls in flight overload what they call), or gains 1%: no gain either way.
    for (const factor of [0.6, 1.01]) {
      const s = scripted(first, () => planned, (applied) => (applied.length > 0 ? factor : 1));
      const steady = await diagnose({ run: findingFree(first, s.run, 1.85), passes: 2 });
      // profile (A), re-plan with the plan (B): on a steady machine the pair decides, no B A follows.
      assert.deepEqual(s.calls.map((c) => `${c.purpose}:${c.applied.length}`), ['profile:0', 'replan:1'], `× ${factor}`);
      assert.equal(steady.plan.verification?.verdict, 'no-gain');
      assert.deepEqual(steady.plan.changes, []);

      // The same on a run that found half a core fewer free: 1.9 ÷ 1.4 more cores could have made
      // the plan up to 1.36× faster. A 40% loss stays a loss with that (the pair decides); a 1% gain
      // might be 37% (B A follows).
      s.calls.length = 0;
      const drifted = await diagnose({ run: findingFree(first, s.run, 1.4), passes: 2 });
      const pair = ['profile:0', 'replan:1'];
      assert.deepEqual(s.calls.map((c) => `${c.purpose}:${c.applied.length}`), factor < 1 ? pair : [...pair, 'verify:1', 'verify:0'], `× ${factor}`);
      assert.equal(drifted.plan.verification?.verdict, 'no-gain');
    }
  });

  it('measures a slow configuration longer than a fast one, so a batch-a-second pipeline is not measured on one element', async () => {
    const first = threeChangeProfile();
    // As written measured about 2 elements a second in its slices: a 1 s run would hold one or two.
    first.run.windowSlices = [2, 2.1, 1.9].map((r) => ({ elements: r, seconds: 1 }));
    const planned = modelPlan(first).changes;
    const s = scripted(first, () => planned, (applied) => (applied.length === planned.length ? 20 : 1));
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

  it('warms a later pass\'s threads beyond the run as written\'s warm-up only as far as the budget leaves time for', async () => {
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

  it('counts the passes as the first pair when the last pass ran exactly the final plan', async () => {
    const first = twoChangeProfile();
    const planned = modelPlan(first).changes;
    const gain = asPredicted(first);
    const s = scripted(first, () => planned, (applied) => (applied.length === planned.length ? gain : 1));
    const d = await diagnose({ run: s.run, passes: 2 });
    // profile (A), re-plan with the plan (B), then one more pair the other way round (B A).
    // (The second pass re-predicts the plan from its faster run, and this scripted runner measures
    // it below that: verification then also measures the plan without each change, after these.)
    assert.deepEqual(s.calls.slice(0, 4).map((c) => `${c.purpose}:${c.applied.length}`), ['profile:0', 'replan:2', 'verify:2', 'verify:0']);
    const v = d.plan.verification!;
    assert.equal(v.verdict, 'gain');
    // The first profile is the builder's single rate; the others five windows each.
    assert.deepEqual(v.tried.slice(0, 2).map((t) => t.measured.windows), [1 + 5, 5 + 5]);
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
    assert.deepEqual(firstPlan.map((c) => c.kind), ['parallelism'], 'the first pass must raise the fetch alone');
    const fetch = changeKey(firstPlan[0]!);
    const planned: PlanChange[] = [...firstPlan];
    const s = scripted(first, () => planned, (applied) => (applied.length === 1 && applied[0] === fetch ? 5 : applied.length === 2 ? whole : 1));
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
    assert.deepEqual(s.calls.filter((c) => c.purpose === 'verify' && c.applied.join() === fetch), []);
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
    assert.deepEqual(same.d.plan.verification!.dropped.map((x) => changeKey(x.change)), [changeKey(move)]);
    // Its part was the pass's run, not run again by verification.
    assert.deepEqual(same.s.calls.filter((c) => c.purpose === 'verify' && c.applied.join() === same.fetch), []);
    // Measured beyond the spread faster with the move (6× against 5×), the whole plan stays.
    const faster = await partRunByPass(6);
    assert.deepEqual(faster.d.plan.changes.map(changeKey).sort(), faster.planned.map(changeKey).sort());
    assert.equal(faster.d.plan.verification!.dropped.length, 0);
  });

  it('predicts a kept part of the plan from the run that measured the plan, with the knobs it leaves out turned back', async () => {
    // The plan raises the fetch's calls in flight and moves the decode to worker threads. The
    // pass's run of it finds the service throttled (latency grows with calls in flight: the fetch
    // binds at 100/s), and verification measures the fetch alone faster than the whole plan.
    const first = fetchDecodeProfile();
    const planned = modelPlan(first).changes;
    const fetch = changeKey(planned.find((c) => c.kind === 'parallelism')!);
    const throttled = 100;
    const base = first.run.elements / first.run.seconds;
    const s = scripted(first, () => planned, (applied) => (applied.length === 0 ? 1 : applied.length === 1 && applied[0] === fetch ? throttled / base : (0.8 * throttled) / base));
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
    assert.equal(Object.values(d.plan.overrides).some((o) => o.placement === 'worker'), false);
  });

  it('compares configurations on the elements their runs shared, so stretches of dear and cheap data do not hide a gain', async () => {
    const first = twoChangeProfile();
    const planned = modelPlan(first).changes;
    const all = planned.map(changeKey).sort();
    let seed = 1;
    const slicesOf = (speed: number): WindowSlice[] => simulate(200, speed, 1.2, 0.1, 0.05, seed++);
    first.run.warmupElements = 200;
    first.run.windowSlices = slicesOf(1);
    const calls: string[][] = [];
    const run = async (overrides: Overrides): Promise<Profile> => {
      const applied = planned.filter((c) => overrides[c.opId] !== undefined && appliedKnob(c, overrides)).map(changeKey).sort();
      calls.push(applied);
      if (calls.length === 1) return first;
      const p = structuredClone(first);
      p.run.overrides = overrides;
      // The whole plan is 1.5 times as fast on every element; a part of it gains nothing.
      p.run.windowSlices = slicesOf(applied.length === all.length ? 1.5 : 1);
      return p;
    };
    // One pair of runs (the first pair always runs): the profile's as written and the plan's.
    const d = await diagnose({ run, passes: 1, verifyBudgetSeconds: 0 });
    const v = d.plan.verification!;
    assert.deepEqual(calls.map((c) => c.length), [0, all.length]);
    // Pooled, the content's spread swallows the gain.
    const plan = v.tried.find((t) => t.changes.length === all.length)!;
    assert.equal(reliablyFaster(plan.measured, v.asWritten), false, JSON.stringify(v.tried));
    assert.equal(v.verdict, 'gain', v.summary);
    assert.deepEqual(d.plan.changes.map(changeKey).sort(), all);
    assert.ok(Math.abs(v.speedup - 1.5) < 0.15 && v.speedup - v.speedupHalfWidth > 1, v.summary);
  });

  it('does not take a gain from a first pair that measured different stretches of the data; the next run as written starts where the plan\'s did', async () => {
    // The first 300 elements are four times as dear as the rest. As written warmed up on 100
    // elements; the plan's runs warm up on 200 (as p worker threads do) and measure twice as
    // long, running into the cheap stretch. The plan gains nothing on any element.
    const dearHead = (n: number): number => (n < 300 ? 4e-3 : 1e-3);
    const first = twoChangeProfile();
    const planned = modelPlan(first).changes;
    let seed = 3;
    const window = (from: number, seconds: number): WindowSlice[] => simulate(from, 1, seconds, 0.1, 0.05, seed++, dearHead);
    const shape = (p: Profile, from: number, seconds: number): Profile => {
      p.run.warmupElements = from;
      p.run.windowSlices = window(from, seconds);
      p.run.elements = p.run.windowSlices.reduce((n, x) => n + x.elements, 0);
      p.run.seconds = p.run.windowSlices.reduce((t, x) => t + x.seconds, 0);
      p.run.availableCores = 2;
      return p;
    };
    shape(first, 100, 0.6);
    const asked: Array<{ changes: number; warmupElements: number | undefined }> = [];
    const runs: Profile[] = [];
    const run = async (overrides: Overrides, _purpose: RunPurpose, budget?: RunBudget): Promise<Profile> => {
      const plan = Object.keys(overrides).length > 0;
      asked.push({ changes: Object.keys(overrides).length, warmupElements: budget?.warmupElements });
      if (runs.length === 0) {
        runs.push(first);
        return first;
      }
      const p = structuredClone(first);
      p.run.overrides = overrides;
      runs.push(plan ? shape(p, 200, 1.2) : shape(p, Math.max(100, budget?.warmupElements ?? 0), 0.6));
      return p;
    };
    const d = await diagnose({ run, passes: 1 });
    // The scenario: pooled, the first pair's rates say the plan is reliably faster.
    assert.ok(reliablyFaster(pooledRate(runSlices(runs[1]!)), pooledRate(runSlices(first))), 'the first pair must look like a gain on its pooled rates');
    assert.equal(compareSides(sideOf(runs[1]!, 1), sideOf(first, 0)).paired, false, 'the first pair must share too few elements to be paired');
    // A second pair ran, the whole plan (two changes) then as written, and as written warmed up to
    // where the plan's window started.
    assert.equal(planned.length, 2);
    assert.deepEqual(asked.slice(0, 4).map((a) => `${a.changes}:${a.warmupElements ?? '-'}`), ['0:-', '2:-', '2:-', '0:200']);
    const v = d.plan.verification!;
    assert.equal(v.verdict, 'no-gain', v.summary);
    assert.deepEqual(d.plan.changes, []);
    assert.match(v.summary, /on the elements both ran/);
  });

  it('with room for one run but not a second pair, measures as written once more on the plan\'s elements (A B A) and judges the plan against it', async () => {
    // As written's first run measured elements 100 onwards; the plan's, warmed up on 200, measured
    // further and faster (1.5× on every element). Their windows share a short stretch of elements
    // whose cost differs four times from stretch to stretch, and their times jitter: the first pair
    // does not decide. A second pair does not fit what is left of the budget; one run does.
    const first = twoChangeProfile();
    const planned = modelPlan(first).changes;
    let seed = 5;
    const shape = (p: Profile, from: number, speed: number, seconds: number): Profile => {
      p.run.warmupElements = from;
      p.run.windowSlices = simulate(from, speed, seconds, 0.1, 0.3, seed++);
      p.run.elements = p.run.windowSlices.reduce((n, x) => n + x.elements, 0);
      p.run.seconds = p.run.windowSlices.reduce((t, x) => t + x.seconds, 0);
      p.run.availableCores = 2;
      return p;
    };
    shape(first, 100, 1, 0.6);
    let now = 0;
    const asked: string[] = [];
    const runs: Profile[] = [];
    const run = async (overrides: Overrides, _purpose: RunPurpose, budget?: RunBudget): Promise<Profile> => {
      const plan = Object.keys(overrides).length > 0;
      asked.push(`${Object.keys(overrides).length}:${budget?.warmupElements ?? '-'}`);
      now += 3 + (budget?.seconds ?? 3);
      if (runs.length === 0) {
        runs.push(first);
        return first;
      }
      const p = structuredClone(first);
      p.run.overrides = overrides;
      runs.push(plan ? shape(p, 200, 1.5, 1.2) : shape(p, Math.max(100, budget?.warmupElements ?? 0), 1, 0.6));
      return p;
    };
    // The profile takes 6 s and the plan's run 4 s: a second pair (8 s) does not fit even the
    // floor verification gets when the first pair measured different stretches; one run does.
    const d = await diagnose({ run, passes: 1, budgetSeconds: 12.5, clock: () => now });
    // The scenario: the first pair alone decides nothing.
    const firstPair = compareSides(sideOf(runs[1]!, 1), sideOf(first, 0));
    assert.ok(firstPair.speedup - firstPair.halfWidth <= 1, `the first pair must not decide: ${JSON.stringify(firstPair)}`);
    // Then as written ran once more, warmed up to where the plan's window started.
    assert.deepEqual(asked.slice(0, 3), ['0:-', `${planned.length}:-`, '0:200']);
    const v = d.plan.verification!;
    assert.equal(v.verdict, 'gain', v.summary);
    assert.ok(Math.abs(v.speedup - 1.5) < 0.2 && v.speedup - v.speedupHalfWidth > 1, v.summary);
    assert.match(v.summary, /on the elements both ran|verified/);
  });

  it('does not hold a run as written to a window the plan started beyond what as written reached', async () => {
    // A plan whose window starts at element 2,000 (its warm-up ran that far); as written measured
    // elements 100 to about 250. Waiting for as written to reach 2,000 would cost it ten windows of
    // warm-up: its runs warm up as usual. (As written found fewer cores free than the plan, so the
    // first pair does not settle and a second runs.)
    const first = twoChangeProfile();
    let seed = 11;
    const shape = (p: Profile, from: number, speed: number, cores = 2): Profile => {
      p.run.warmupElements = from;
      p.run.windowSlices = simulate(from, speed, 0.6, 0.1, 0.05, seed++, () => 4e-3);
      p.run.elements = p.run.windowSlices.reduce((n, x) => n + x.elements, 0);
      p.run.seconds = p.run.windowSlices.reduce((t, x) => t + x.seconds, 0);
      p.run.availableCores = cores;
      return p;
    };
    shape(first, 100, 1, 1.2);
    const asked: Array<{ changes: number; warmupElements: number | undefined }> = [];
    const run = async (overrides: Overrides, _purpose: RunPurpose, budget?: RunBudget): Promise<Profile> => {
      asked.push({ changes: Object.keys(overrides).length, warmupElements: budget?.warmupElements });
      if (asked.length === 1) return first;
      const p = structuredClone(first);
      p.run.overrides = overrides;
      const plan = Object.keys(overrides).length > 0;
      return shape(p, plan ? 2000 : Math.max(100, budget?.warmupElements ?? 0), plan ? 1.5 : 1);
    };
    const d = await diagnose({ run, passes: 1, verifyBudgetSeconds: 60 });
    assert.equal(d.plan.verification!.verdict, 'gain', d.plan.verification!.summary);
    assert.deepEqual(asked.slice(0, 4).map((a) => `${a.changes}:${a.warmupElements ?? '-'}`), ['0:-', '2:-', '2:-', '0:-']);
  });

  it('measures a run as written beside the plan\'s long enough to cover the plan\'s elements, as far as the budget allows', async () => {
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
    assert.deepEqual(ample.asked.slice(0, 4).map((a) => a.changes), [0, 2, 2, 0], 'the scenario needs a second pair');
    assert.equal(ample.asked[2]!.seconds, 1, 'the plan\'s runs measure their usual window');
    // Covering the plan's last window at as written's rate (measured by its first run).
    const wanted = ample.runs[2]!.run.elements / (ample.first.run.elements / ample.first.run.seconds);
    assert.ok(wanted > 1.2 && wanted < 3, `the scenario needs a plan that covers more elements than as written's usual window: ${wanted}`);
    assert.ok(Math.abs(ample.asked[3]!.seconds! - wanted) < 0.01, `${ample.asked[3]!.seconds} s, not ${wanted}`);
    assert.equal(ample.d.plan.verification!.verdict, 'gain', ample.d.plan.verification!.summary);

    // 6.35 s: the second pair fits (two runs of 2 s after the first 2 s) with a third of a second to spare.
    const tight = await planWindow(6.35);
    assert.deepEqual(tight.asked.slice(0, 4).map((a) => a.changes), [0, 2, 2, 0]);
    const seconds = tight.asked[3]!.seconds!;
    assert.ok(seconds > 1 && seconds < wanted - 0.1, `${seconds} s: more than the usual window, less than covering the plan's elements takes`);
    assert.ok(tight.d.plan.verification!.seconds <= 6.35 + 1e-9, `verification took ${tight.d.plan.verification!.seconds} s of 6.35`);

    // Runs as written take 2 s to start, the plan's 1 s. After the plan's two runs (4 s) 2.9 s
    // are left: a run as written needs 2 of them to start and a quarter second more to warm up to
    // the plan's elements, so its window gets no more than its usual second. (Sized by the last
    // run's start-up, the plan's 1 s, it would take 1.28 s and end past the budget.)
    const slowStart = await planWindow(6.9, 2);
    assert.deepEqual(slowStart.asked.slice(0, 4).map((a) => a.changes), [0, 2, 2, 0]);
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
    const s = scripted(bare, () => planned, () => 1.01, 0.06);
    const d2 = await diagnose({ run: async (o, p) => { const out = await s.run(o, p); out.run.windowSlices = undefined; return out; }, passes: 1, verifyBudgetSeconds: 0 });
    assert.match(d2.plan.verification!.summary, /as written \(1\.0\d?× ± [\d.]+\)$/);
  });

  it('judges by pooled rates when pairing the runs gives the wider interval, as a slow pipeline\'s few batches do', async () => {
    const first = oneFetchProfile();
    // Element by element (a batch each): as written steady at ≈ 0.65/s; the plan ≈ 2× overall, but
    // uneven over the few elements both windows share, so the ranges paired there disagree.
    const asWrittenSeconds = [1.5, 1.7, 1.4, 1.6];
    const planSeconds = [0.2, 1.6, 0.25, 1.55, 0.7, 0.72, 0.69, 0.71, 0.7, 0.7, 0.71, 0.69];
    const shape = (p: Profile, seconds: number[]): Profile => {
      p.run.warmupElements = 10;
      p.run.windowSlices = seconds.map((t) => ({ elements: 1, seconds: t }));
      p.run.elements = seconds.length;
      p.run.seconds = seconds.reduce((a, b) => a + b, 0);
      return p;
    };
    shape(first, asWrittenSeconds);
    const calls: string[] = [];
    const run = async (o: Overrides, purpose: RunPurpose): Promise<Profile> => {
      const applied = Object.keys(o).length > 0;
      calls.push(`${purpose}:${o[first.pipeline.rootId]?.prefetch !== undefined ? 'plan with a prefetch at the end' : applied ? 'plan' : 'as written'}`);
      if (calls.length === 1) return first;
      const p = structuredClone(first);
      p.run.overrides = o;
      return shape(p, applied ? planSeconds : asWrittenSeconds);
    };
    const d = await diagnose({ run, passes: 2 });
    assert.deepEqual(calls, ['profile:as written', 'replan:plan', 'verify:plan', 'verify:as written', 'verify:plan with a prefetch at the end']);
    const v = d.plan.verification!;
    // Paired on the shared elements: 1.7× ± 1.1, no verdict; pooled: 2.0× ± 0.5, beyond the spread.
    assert.equal(v.verdict, 'gain', v.summary);
    assert.match(v.summary, /^verified 2\.0× ± 0\.5$/);
    assert.equal(d.plan.changes.length, 1);
  });

  it('keeps no change and says "no reliable gain" when the plan and each change alone measure within the spread', async () => {
    const first = twoChangeProfile();
    const planned = modelPlan(first).changes;
    assert.equal(planned.length, 2);
    const s = scripted(first, () => planned, () => 1.01, 0.06);
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

  it('keeping the pipeline as written, predicts what every run as written measured, not the first run alone', async () => {
    // The first run caught a quiet moment: every later run, as written or with any change,
    // measures 0.7× its rate.
    const first = steadyRun(twoChangeProfile(), 2);
    const planned = modelPlan(first).changes;
    const s = scripted(first, () => planned, () => 0.7, 0.04);
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
    assert.deepEqual(d.plan.changes.map(changeKey).sort(), planned.map(changeKey).filter((k) => k !== placement).sort());
    assert.equal(v.dropped.length, 1);
    assert.equal(changeKey(v.dropped[0]!.change), placement);
    assert.equal(v.dropped[0]!.why, 'measured 0.6× alone');
    assert.match(v.summary, /^verified 1\.5\d× ± /);
    // The kept plan's overrides carry no worker placement.
    assert.equal(Object.values(d.plan.overrides).some((o) => o.placement === 'worker'), false);
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
    assert.deepEqual(d.plan.changes.map(changeKey).sort(), planned.map(changeKey).filter((k) => k !== placement).sort());
    assert.equal(changeKey(v.dropped[0]!.change), placement);
    assert.match(v.dropped[0]!.why, /^the plan measured .* with it and .* without$/);

    // A plan that measures what was predicted, no part of which the model puts near it, is kept
    // whole with no runs beyond A B B A.
    const exact = scripted(first, () => planned, (applied) => (applied.length === planned.length ? gain : 1));
    const kept = await diagnose({ run: exact.run, passes: 1, verifyBudgetSeconds: 60 });
    assert.equal(kept.plan.changes.length, planned.length);
    assert.equal(exact.calls.length, 4);
  });

  it('measures the kept plan once more with its calls in flight doubled, and keeps that only when reliably faster', async () => {
    // An awaiting fetch with one call in flight before a 1 ms parse that must stay on the main
    // thread: the plan gives the fetch enough calls for the parse to bind, with headroom.
    const first = new ProfileBuilder({ cores: 2 })
      .range()
      .map('fetch', { latency: 20e-3, parallelism: 1 })
      .map('parse', { self: 1e-3 })
      .build({ rootElements: 100, rate: 1 / 21e-3 });
    const changes = modelPlan(first).changes;
    assert.equal(changes.length, 1, 'the scenario needs a plan of one change');
    const [planned] = changes;
    assert.equal(planned!.kind, 'parallelism');
    const p = (planned as Extract<PlanChange, { kind: 'parallelism' }>).to;
    const gain = asPredicted(first);
    const fetch = planned!.opId;
    /**
     * Runs measuring `rateAt(calls in flight)` × first's rate, as five windows spread ±1%; with
     * `queues`, each call's latency grows with the calls in flight (a throttled service).
     */
    const byCalls = (rateAt: (k: number) => number, queues = false) => {
      const calls: number[] = [];
      const run = async (overrides: Overrides): Promise<Profile> => {
        const written = overrides[fetch]?.parallelism;
        const k = typeof written === 'number' ? written : 1;
        // A prefetch at the end (verification's last try) is not a count of calls in flight.
        if (overrides[first.pipeline.rootId]?.prefetch === undefined) calls.push(k);
        if (calls.length === 1) return first;
        const rate = (first.run.elements / first.run.seconds) * rateAt(k);
        const out = structuredClone(first);
        const op = out.ops.find((o) => o.id === fetch)!;
        op.knobs = { ...op.knobs, parallelism: k, resolvedParallelism: k };
        if (queues) op.counters.asyncLatencySeconds *= k;
        out.run.overrides = overrides;
        out.run.windowSlices = [-2, -1, 0, 1, 2].map((i) => ({ elements: rate * (1 + i * 0.005), seconds: 1 }));
        out.run.seconds = 1;
        out.run.elements = rate;
        return out;
      };
      return { calls, run };
    };
    // The plan's calls measure 60% of the predicted gain; twice as many measure 95% of it: kept.
    const short = byCalls((k) => (k === 1 ? 1 : k === p ? 0.6 * gain : k === 2 * p ? 0.95 * gain : 0.1));
    const d = await diagnose({ run: short.run, passes: 1, verifyBudgetSeconds: 60 });
    assert.equal(short.calls.at(-1), 2 * p, `the widened run comes after the plan was verified: ${short.calls.join(', ')} (planned ${p})`);
    assert.equal(short.calls.filter((k) => k === 2 * p).length, 1);
    assert.equal(d.plan.verification?.verdict, 'gain');
    const kept = d.plan.changes[0] as Extract<PlanChange, { kind: 'parallelism' }>;
    assert.equal(d.plan.changes.length, 1);
    assert.equal(kept.to, 2 * p);
    assert.equal(d.plan.overrides[fetch]?.parallelism, 2 * p);
    // The report tells the two runs of the same change apart by the count each ran.
    const key = changeKey(planned!);
    assert.deepEqual(d.plan.verification!.kept.values, { [key]: 2 * p });
    assert.deepEqual(d.plan.verification!.tried.filter((t) => t.changes.length === 1).map((t) => t.values), [{ [key]: p }, { [key]: 2 * p }]);
    assert.ok(Math.abs(d.plan.verification!.speedup / (0.95 * gain) - 1) < 0.02, `verified ${d.plan.verification!.speedup}`);
    assert.match(kept.reason, new RegExp(`The plan sized it at ${p}; verification measured .* with ${2 * p} against .* with ${p}`));

    // Twice the calls measure no faster: the plan's own count stays, after the one extra run.
    const flat = byCalls((k) => (k === 1 ? 1 : 0.6 * gain));
    const same = await diagnose({ run: flat.run, passes: 1, verifyBudgetSeconds: 60 });
    assert.equal(flat.calls.at(-1), 2 * p);
    assert.equal((same.plan.changes[0] as Extract<PlanChange, { kind: 'parallelism' }>).to, p);
    assert.doesNotMatch(same.plan.changes[0]!.reason, /verification measured/);

    // Calls whose latency grew with their number across the passes' runs only queue: no such run.
    const throttled = byCalls((k) => (k === 1 ? 1 : 0.6 * gain), true);
    const queued = await diagnose({ run: throttled.run, passes: 2, verifyBudgetSeconds: 60 });
    const last = queued.plan.changes.find((c) => c.opId === fetch) as Extract<PlanChange, { kind: 'parallelism' }> | undefined;
    assert.ok(last, 'the plan still raises the calls in flight');
    assert.ok(throttled.calls.every((k) => k <= Math.max(p, last.to)), `calls in flight run: ${throttled.calls.join(', ')} (planned ${p}, then ${last.to})`);

    // Without room in the budget there is no such run.
    const tight = byCalls((k) => (k === 1 ? 1 : 0.6 * gain));
    await diagnose({ run: tight.run, passes: 1, verifyBudgetSeconds: 0 });
    assert.ok(!tight.calls.includes(2 * p), `calls in flight run: ${tight.calls.join(', ')}`);
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
          const s = scripted(first, () => planned, (applied) => applied.reduce((f, k) => f * factors[k]!, 1), 0.04);
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
            for (const t of v.tried) if (t.changes.length > 0 && t.measured.rate > v.kept.measured.rate + 1e-9) assert.ok(t.changes.some((k) => v.dropped.some((x) => changeKey(x.change) === k)) || !reliablyFaster(t.measured, asWritten));
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

  it('stops verifying when the time budget runs out, after the first pair', async () => {
    const first = twoChangeProfile();
    const planned = modelPlan(first).changes;
    const t = steppingClock(3);
    const s = scripted(first, () => planned, () => 1);
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
      const s = scripted(first, () => planned, (applied) => (applied.length === planned.length ? gain : 1));
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
      const s = scripted(first, () => planned, (applied) => (applied.length === planned.length ? 1.1 : 1), 0.3);
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

  it('keeps a prefetch at the end only when the kept changes measured reliably faster with it, and prices the plan with what it added', async () => {
    const first = oneFetchProfile();
    const planned = modelPlan(first).changes;
    const gain = asPredicted(first);
    const rootId = first.pipeline.rootId;
    const withPrefetch = async (prefetchFactor: number) => {
      const s = scripted(first, () => planned, (applied) => (applied.length === planned.length ? gain : 1), 0.02, prefetchFactor);
      return { s, d: await diagnose({ run: s.run, passes: 1, verifyBudgetSeconds: 60 }) };
    };
    // 1.5× with it, within ±1%: kept, after the plan itself was verified.
    const faster = await withPrefetch(1.5);
    assert.equal(faster.s.prefetched.length, 1);
    assert.deepEqual(faster.s.prefetched[0]!.applied, planned.map(changeKey));
    const added = faster.d.plan.changes.find((c) => c.kind === 'prefetch');
    assert.ok(added && added.kind === 'prefetch', 'the prefetch is a change of the plan');
    assert.equal(added.opId, rootId);
    assert.equal(added.existing, false);
    assert.equal(added.size, 2);
    assert.match(added.reason, /The model does not price it; verification measured .* with it against .* without \(1\.[45]\d?× ± /);
    assert.equal(faster.d.plan.overrides[rootId]?.prefetch, 2);
    assert.equal(faster.d.plan.verification?.verdict, 'gain');
    assert.ok(Math.abs(faster.d.plan.verification!.speedup - 1.5 * gain) < 0.05 * gain, `verified ${faster.d.plan.verification!.speedup} against ${1.5 * gain}`);
    // The estimate stays the model's, which does not price the prefetch: the verified figure says what it added.
    const model = modelPlan(first).predictedRate;
    assert.ok(Math.abs(faster.d.plan.predictedRate - model) < 0.05 * model, `predicted ${faster.d.plan.predictedRate} against ${model}`);
    // 1.02×: within the smallest gain that counts, so not kept; the plan's figure is the model's.
    const same = await withPrefetch(1.02);
    assert.equal(same.s.prefetched.length, 1);
    assert.ok(!same.d.plan.changes.some((c) => c.kind === 'prefetch'));
    assert.equal(same.d.plan.predictedRate, model);
    assert.equal(same.d.plan.overrides[rootId]?.prefetch, undefined);
  });

  it('verifies a move the model cannot price, a fn on the event loop that serves the waits that bind, and keeps it only when measured faster', async () => {
    // 16 shards all pulled at once, each record awaited 4 ms on the main thread, whose parse keeps
    // it busy 58% of the time: the model offers no change (see model eventLoopMove).
    const first = new ProfileBuilder({ cores: 2 })
      .range(16)
      .op({ kind: 'from', inputs: [], parent: 3, wait: 4e-3 })
      .map('parseRecord', { self: 150e-6, inputs: [1], parent: 3, module: true })
      .op({ kind: 'interleave', fnName: 'readShard', inputs: [0], out: 1000, cycleLength: 16, parallelism: 16 })
      .batch(32)
      .build({ rootElements: 360, rate: 120 });
    assert.deepEqual(modelPlan(first).changes, []);
    const move = eventLoopMove(first)!;
    assert.ok(move, 'the scenario needs a move to try');
    const outcome = async (factor: number) => {
      const s = scripted(first, () => [move], (applied) => (applied.length === 1 ? factor : 1));
      return { s, d: await diagnose({ run: s.run, passes: 1, verifyBudgetSeconds: 60 }) };
    };
    const faster = await outcome(1.3);
    assert.deepEqual(faster.s.calls.slice(0, 2).map((c) => `${c.purpose}:${c.applied.join(',') || 'as written'}`), ['profile:as written', `verify:${changeKey(move)}`]);
    assert.equal(faster.d.plan.verification?.verdict, 'gain');
    assert.deepEqual(faster.d.plan.changes.map(changeKey), [changeKey(move)]);
    assert.equal(faster.d.plan.overrides[move.opId]?.placement, 'worker');
    assert.match(faster.d.plan.changes[0]!.reason, /The model does not price how much of that wait is the loop's/);
    // The estimate stays as written's: the model predicts nothing for the move.
    assert.ok(Math.abs(faster.d.plan.predictedRate - 120) < 0.05 * 120, `predicted ${faster.d.plan.predictedRate}`);
    const same = await outcome(1);
    assert.equal(same.s.calls[1]?.purpose, 'verify', 'it was measured');
    assert.equal(same.d.plan.verification?.verdict, 'no-gain');
    assert.deepEqual(same.d.plan.changes, []);
  });

  it('measures the kept plan once more with the fn on a busy event loop moved off it, and keeps that only when reliably faster', async () => {
    // 16 shards, 8 pulled at once: the plan pulls all 16. Run with it, the shards' waits bind on a
    // main thread the parse keeps busy 58% of the time (see model eventLoopMove).
    const shards = (cycleLength: number, rate: number) =>
      new ProfileBuilder({ cores: 2 })
        .range(16)
        .op({ kind: 'from', inputs: [], parent: 3, wait: 4e-3 })
        .map('parseRecord', { self: 150e-6, inputs: [1], parent: 3, module: true })
        .op({ kind: 'interleave', fnName: 'readShard', inputs: [0], out: 1000, cycleLength, parallelism: cycleLength })
        .batch(32)
        .build({ rootElements: 5 * rate, rate });
    const first = shards(8, 60);
    const planned = modelPlan(first).changes;
    assert.ok(planned.some((c) => c.kind === 'cycleLength') && !planned.some((c) => c.kind === 'placement'), 'the scenario needs a plan that widens the interleave and moves nothing');
    const outcome = async (moved: number) => {
      const runs: string[] = [];
      const run = async (o: Overrides, purpose: RunPurpose): Promise<Profile> => {
        const wide = o[id(3)]?.cycleLength === 16;
        const worker = o[id(2)]?.placement === 'worker';
        runs.push(`${purpose}:${wide ? 'plan' : 'as written'}${worker ? ' + move' : ''}`);
        if (runs.length === 1) return first;
        const p = wide ? shards(16, 120) : structuredClone(first);
        const rate = (p.run.elements / p.run.seconds) * (worker ? moved : 1);
        p.run.overrides = o;
        p.run.windowSlices = [-2, -1, 0, 1, 2].map((k) => ({ elements: rate * (1 + k * 0.01), seconds: 1 }));
        p.run.elements = 5 * rate;
        return p;
      };
      return { runs, d: await diagnose({ run, passes: 1, verifyBudgetSeconds: 60 }) };
    };
    const faster = await outcome(1.3);
    assert.ok(faster.runs.includes('verify:plan + move'), faster.runs.join(', '));
    // After the plan was verified, before the prefetch at the end.
    assert.ok(faster.runs.indexOf('verify:plan + move') > faster.runs.indexOf('verify:plan'), faster.runs.join(', '));
    assert.equal(faster.d.plan.verification?.verdict, 'gain');
    const move = faster.d.plan.changes.find((c) => c.kind === 'placement');
    assert.ok(move && move.opId === id(2), JSON.stringify(faster.d.plan.changes.map(changeKey)));
    assert.match(move.reason, /Verification measured 156\/s ± \S+ with it against 120\/s ± \S+ without \(1\.[23]\d?× ± /);
    const same = await outcome(1);
    assert.equal(same.runs.filter((r) => r === 'verify:plan + move').length, 1);
    assert.ok(!same.d.plan.changes.some((c) => c.kind === 'placement'), 'not kept when no faster');
    assert.equal(same.d.plan.verification?.verdict, 'gain');
  });

  it('does not measure the fn on a busy event loop moved off it again when verification already measured that configuration', async () => {
    // Two shards of 16 open, a 0.6 ms parse: the plan opens all 16 and moves the parse to 2
    // worker threads. With all 16 open and the parse on the main thread, the shards' reads (12 ms
    // each) bind on a thread the parse keeps 77% busy: the event-loop move is the plan's own move.
    const shards = (cycleLength: number, rate: number, wait: number) =>
      new ProfileBuilder({ cores: 2 })
        .range(16)
        .op({ kind: 'from', inputs: [], parent: 3, wait })
        .map('parseRecord', { self: 0.6e-3, inputs: [1], parent: 3, module: true })
        .op({ kind: 'interleave', fnName: 'readShard', inputs: [0], out: 1000, cycleLength, parallelism: cycleLength })
        .batch(32)
        .build({ rootElements: 5 * rate, rate });
    const first = shards(2, 14, 4e-3);
    const planned = modelPlan(first).changes;
    const move = planned.find((c) => c.kind === 'placement');
    assert.ok(move && move.kind === 'placement' && planned.some((c) => c.kind === 'cycleLength'), 'the scenario needs a plan that opens the shards and moves the parse');
    const wide = shards(16, 40, 12e-3);
    const loop = eventLoopMove(wide);
    assert.ok(loop && loop.opId === move.opId && loop.parallelism === move.parallelism, 'the scenario needs the event-loop move to be the plan\'s');
    const steps: string[] = [];
    let runs = 0;
    const run = async (o: Overrides): Promise<Profile> => {
      if (runs++ === 0) return first;
      // Opening the shards is the gain (40/s against 14/s); the move adds nothing.
      const p = structuredClone(o[id(3)]?.cycleLength === 16 ? wide : first);
      const rate = p.run.elements / p.run.seconds;
      p.run.overrides = o;
      p.run.windowSlices = [-2, -1, 0, 1, 2].map((k) => ({ elements: rate * (1 + k * 0.01), seconds: 1 }));
      return p;
    };
    const d = await diagnose({ run, passes: 1, verifyBudgetSeconds: 60, onStep: (st) => steps.push(st.message) });
    assert.equal(d.plan.verification?.verdict, 'gain');
    assert.ok(!d.plan.changes.some((c) => c.kind === 'placement'), 'the move measured no faster than the plan without it');
    assert.ok(steps.some((m) => /the plan without run map\(parseRecord\) in worker threads/.test(m)), steps.join('\n'));
    assert.ok(!steps.some((m) => /, with run map\(parseRecord\) in worker threads$/.test(m)), steps.join('\n'));
  });

  it('adds no prefetch at the end of a pipeline that ends in one, or that the user\'s overrides give one', async () => {
    const endsInOne = new ProfileBuilder({ cores: 2 })
      .range()
      .map('fetch', { latency: 20e-3, parallelism: 1 })
      .prefetch(2)
      .build({ rootElements: 100, rate: 1 / 21e-3 });
    const planned = modelPlan(endsInOne).changes;
    assert.ok(planned.length > 0, 'the scenario needs a plan');
    const s = scripted(endsInOne, () => planned, (applied) => (applied.length === planned.length ? asPredicted(endsInOne) : 1), 0.02, 2);
    const d = await diagnose({ run: s.run, passes: 1, verifyBudgetSeconds: 60 });
    assert.equal(d.plan.verification?.verdict, 'gain');
    assert.equal(s.prefetched.length, 0);
    assert.ok(!d.plan.changes.some((c) => c.kind === 'prefetch' && c.opId === endsInOne.pipeline.rootId));

    const first = oneFetchProfile();
    const rootId = first.pipeline.rootId;
    const user: Overrides = { [rootId]: { prefetch: 8 } };
    const plannedFor = modelPlan(first).changes;
    const calls: Overrides[] = [];
    const t = scripted(first, () => plannedFor, (applied) => (applied.length === plannedFor.length ? asPredicted(first) : 1), 0.02, 2);
    const d2 = await diagnose({ run: async (o, purpose) => (calls.push(o), t.run(o, purpose)), passes: 1, verifyBudgetSeconds: 60, userOverrides: user });
    assert.equal(d2.plan.verification?.verdict, 'gain');
    assert.ok(calls.every((o) => o[rootId]?.prefetch === undefined || o[rootId]?.prefetch === 8), 'no run sized the user\'s prefetch otherwise');
    assert.ok(!d2.plan.changes.some((c) => c.kind === 'prefetch'));
  });

  it('reports progress per step, naming the phase and the run', async () => {
    const first = threeChangeProfile();
    const planned = modelPlan(first).changes;
    const gain = asPredicted(first);
    const s = scripted(first, () => planned, (applied) => (applied.length === planned.length ? gain : 1));
    const steps: string[] = [];
    await diagnose({ run: s.run, passes: 1, onStep: (st) => steps.push(`${st.run} ${st.phase}: ${st.message}`) });
    assert.deepEqual(steps.slice(0, 4), ['1 profile: profiling as written', '2 verify: verifying: the plan (1)', '3 verify: verifying: the plan (2)', '4 verify: verifying: as written (2)']);
    assert.match(steps[4]!, /^5 verify: verifying: the plan, doubling what it keeps in flight \(set parallelism of map\(fetch\) to \d+, set parallelism of map\(lookup\) to \d+\)$/);
    assert.match(steps[5]!, /^6 verify: verifying: the plan, with .*prefetch\(2\)/);
    assert.equal(steps.length, 6);
  });

  it('returns the first run\'s error with an empty plan and runs nothing else', async () => {
    const first = threeChangeProfile();
    first.error = { kind: 'throw', message: 'decode threw' };
    first.run.elements = 0;
    const s = scripted(first, () => [], () => 1);
    const d = await diagnose({ run: s.run });
    assert.equal(d.error?.message, 'decode threw');
    assert.deepEqual(d.plan.changes, []);
    assert.equal(s.calls.length, 1);
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
    const s = scripted(first, () => planned, () => 1);
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

  it('plans without verifying when asked, keeping every change', async () => {
    const first = threeChangeProfile();
    const s = scripted(first, () => [], () => 1);
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
    assert.ok(d.plan.notes?.some((n) => n.includes('no more than the 19,000 el/s measured as written')), JSON.stringify(d.plan.notes));
  });

  it('leaves the decision to verification when it runs', async () => {
    const d = await diagnose({ run, passes: 2 });
    assert.ok(d.plan.verification, 'the plan was verified');
    assert.equal(d.plan.notes?.some((n) => n.includes('measured as written, so the model proposes no change')) ?? false, false);
  });
});

describe('diagnose: randomness', () => {
  it('never caches after an operator the source shows is random, though the runner did not mark it', async () => {
    const first = new ProfileBuilder()
      .range(1000)
      .map('augment', { self: 10e-3, bytes: 100e3 })
      .op({ kind: 'repeat', count: -1 })
      .batch(10)
      .build({ rootElements: 100, rate: 9.8 });
    assert.ok(modelPlan(first).changes.some((c) => c.kind === 'cache' && c.opId === id(1)), 'without the static randomness the model caches after augment');
    const d = await diagnose({ run: async () => first, passes: 1, verify: false, options: { randomOps: [id(1)] } as never });
    assert.equal(d.plan.changes.some((c) => c.kind === 'cache'), false);
    assert.equal(Object.values(d.plan.overrides).some((o) => o.cache !== undefined), false);
    assert.ok(d.plan.notes?.some((n) => /map\(augment\) is random/.test(n)), JSON.stringify(d.plan.notes));
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
    assert.equal((await notes({})).some((n) => n.startsWith('cache() at')), false);
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

describe('diagnose: rates with a spread', () => {
  /** Slices of one second each holding these counts. */
  const perSecond = (...counts: number[]): WindowSlice[] => counts.map((elements) => ({ elements, seconds: 1 }));

  it('pools slices of equal length into the mean rate with a Student-t interval', () => {
    const r = pooledRate(perSecond(9, 10, 11));
    assert.equal(r.rate, 10);
    assert.equal(r.windows, 3);
    // s = 1, t(2) = 4.303: 4.303 / √3.
    assert.ok(Math.abs(r.halfWidth - 4.303 / Math.sqrt(3)) < 1e-9);
  });

  it('pools slices of one element each by elements over time, without the heavy tail of 1 ÷ Δt', () => {
    // A batch-a-second pipeline measured as one batch per slice: arrivals 0.5, 1.5, 0.9, 1.1 s apart.
    // The mean of per-slice rates (2, 0.67, 1.11, 0.91 → 1.17/s) overstates the 1/s that arrived;
    // elements over time is exactly 1/s.
    const r = pooledRate([0.5, 1.5, 0.9, 1.1].map((seconds) => ({ elements: 1, seconds })));
    assert.ok(Math.abs(r.rate - 1) < 1e-12);
    // Regular arrivals measure tight: perfectly regular ones have no spread at all.
    const regular = pooledRate([1, 1, 1, 1].map((seconds) => ({ elements: 1, seconds })));
    assert.equal(regular.halfWidth, 0);
    assert.ok(r.halfWidth > 0);
  });

  it('weighs a long slice more than a short one', () => {
    // 10 elements in 10 s and 1 element in 0.1 s: 11 in 10.1 s, not the mean of 1/s and 10/s.
    const r = pooledRate([{ elements: 10, seconds: 10 }, { elements: 1, seconds: 0.1 }]);
    assert.ok(Math.abs(r.rate - 11 / 10.1) < 1e-12);
  });

  it('gives a single unsliced run the counting error of its elements, so a drained finite source can still show a 100× gain', () => {
    // A fast plan drained a finite source in one short window: 25 elements in a quarter second.
    const plan = pooledRate([{ elements: 25, seconds: 0.25 }]);
    assert.ok(Math.abs(plan.halfWidth - (1.96 * 100) / 5) < 1e-9);
    const asWritten = pooledRate(perSecond(0.8, 0.9, 0.85));
    assert.ok(reliablyFaster(plan, asWritten));
    // With too few elements a single window clears nothing.
    assert.equal(pooledRate([{ elements: 3, seconds: 0.03 }]).halfWidth, 100);
    assert.ok(!reliablyFaster(pooledRate([{ elements: 3, seconds: 0.03 }]), asWritten));
  });

  it('does not call a 2% difference a gain even when the spread is tiny', () => {
    assert.equal(reliablyFaster({ rate: 10.2, halfWidth: 0.01, windows: 10 }, { rate: 10, halfWidth: 0.01, windows: 10 }), false);
    assert.equal(reliablyFaster({ rate: 10.4, halfWidth: 0.01, windows: 10 }, { rate: 10, halfWidth: 0.01, windows: 10 }), true);
    assert.equal(reliablyFaster({ rate: 12, halfWidth: 1.5, windows: 10 }, { rate: 10, halfWidth: 1, windows: 10 }), false);
  });
});

describe('diagnose: a training loop', () => {
  it('says of the loop as written what verification kept: no change, and why, when the plan measured no faster', async () => {
    const first = trainingProfile({ pipe: 3e-3, step: 1e-3 });
    const model = modelPlan(first);
    assert.ok(model.trainer?.changed, 'the scenario needs a plan for the trainer');
    const s = scripted(first, () => model.changes, () => 1.0, 0.06);
    const d = await diagnose({ run: s.run, passes: 1, userOverrides: {} });
    assert.equal(d.plan.verification?.verdict, 'no-gain');
    assert.deepEqual(d.plan.changes, []);
    assert.equal(d.plan.trainer?.changed, false);
    assert.equal(d.plan.trainer?.predictedStepsPerSec, d.plan.trainer?.asWrittenPredictedStepsPerSec);
    assert.match(d.plan.trainer!.summary, /^the trainer waited 75% of its time for input .*; no reliable gain on this machine right now: .*, so no change\.$/);
    // The notes carry the verdict once, as verification left it.
    assert.deepEqual(d.plan.notes?.filter((n) => /trainer waited/.test(n)), [d.plan.trainer!.summary]);
  });

  it('prices the kept plan for the loop as written when verification kept it', async () => {
    const first = trainingProfile({ pipe: 3e-3, step: 1e-3 });
    const model = modelPlan(first);
    const s = scripted(first, () => model.changes, (applied) => (applied.length > 0 ? 1.6 : 1));
    const d = await diagnose({ run: s.run, passes: 1, userOverrides: {} });
    assert.equal(d.plan.verification?.verdict, 'gain');
    assert.equal(d.plan.trainer?.changed, true);
    assert.equal(d.plan.trainer?.predictedStepsPerSec, model.trainer?.predictedStepsPerSec);
    assert.match(d.plan.trainer!.summary, /the plan feeds it .* worker threads?\.$/);
  });
});
