/**
 * What the model does not price, tried on top of the kept configuration (src/engine/diagnose/extras.ts).
 */
import * as assert from 'node:assert/strict';
import { diagnose, type RunPurpose } from '../../../../src/engine/diagnose';
import { eventLoopMove, plan as modelPlan } from '../../../../src/model';
import { changeKey, type PlanChange } from '../../../../src/shared/analysis';
import type { Overrides, Profile } from '../../../../src/shared/profile';
import { ProfileBuilder } from '../../model/builder';
import { id, oneFetchProfile, asPredicted, scripted } from './scripted';

describe('diagnose: verification of what the model does not price, on top of what it kept', () => {
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
    // Measured, then confirmed beside a second run of the plan.
    assert.equal(short.calls.filter((k) => k === 2 * p).length, 2);
    assert.equal(d.plan.verification?.verdict, 'gain');
    const kept = d.plan.changes[0] as Extract<PlanChange, { kind: 'parallelism' }>;
    assert.equal(d.plan.changes.length, 1);
    assert.equal(kept.to, 2 * p);
    assert.equal(d.plan.overrides[fetch]?.parallelism, 2 * p);
    // The report tells the two runs of the same change apart by the count each ran.
    const key = changeKey(planned!);
    assert.deepEqual(d.plan.verification!.kept.values, { [key]: 2 * p });
    assert.deepEqual(
      d.plan.verification!.tried.filter((t) => t.changes.length === 1).map((t) => t.values),
      [{ [key]: p }, { [key]: 2 * p }],
    );
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
    assert.ok(
      throttled.calls.every((k) => k <= Math.max(p, last.to)),
      `calls in flight run: ${throttled.calls.join(', ')} (planned ${p}, then ${last.to})`,
    );

    // Without room in the budget there is no such run.
    const tight = byCalls((k) => (k === 1 ? 1 : 0.6 * gain));
    await diagnose({ run: tight.run, passes: 1, verifyBudgetSeconds: 0 });
    assert.ok(!tight.calls.includes(2 * p), `calls in flight run: ${tight.calls.join(', ')}`);
  });

  it('keeps a prefetch at the end only when the kept changes measured reliably faster with it, and prices the plan with what it added', async () => {
    const first = oneFetchProfile();
    const planned = modelPlan(first).changes;
    const gain = asPredicted(first);
    const rootId = first.pipeline.rootId;
    const withPrefetch = async (prefetchFactor: number) => {
      const s = scripted(
        first,
        () => planned,
        (applied) => (applied.length === planned.length ? gain : 1),
        0.02,
        prefetchFactor,
      );
      return { s, d: await diagnose({ run: s.run, passes: 1, verifyBudgetSeconds: 60 }) };
    };
    // 1.5× with it, within ±1%: kept, after the plan itself was verified.
    const faster = await withPrefetch(1.5);
    // Measured, then confirmed beside a second run of the plan.
    assert.equal(faster.s.prefetched.length, 2);
    assert.deepEqual(faster.s.prefetched[0]!.applied, planned.map(changeKey));
    const added = faster.d.plan.changes.find((c) => c.kind === 'prefetch');
    assert.ok(added && added.kind === 'prefetch', 'the prefetch is a change of the plan');
    assert.equal(added.opId, rootId);
    assert.equal(added.existing, false);
    assert.equal(added.size, 2);
    assert.match(added.reason, /The model does not price it; verification measured .* with it against .* without \(1\.[45]\d?× ± [\d.]+ on the elements both ran\)/);
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

  it('does not keep a prefetch at the end that won its first run only against a slow run of the kept plan', async () => {
    const first = oneFetchProfile();
    const planned = modelPlan(first).changes;
    const gain = asPredicted(first);
    // The plan measures 0.8 of its gain until the prefetch's first run, its gain after; the
    // prefetch changes nothing. One run each, the prefetch wins.
    const s = scripted(
      first,
      () => planned,
      (applied) => (applied.length === planned.length ? (s.prefetched.length === 0 ? 0.8 : 1) * gain : 1),
      0.02,
      1,
    );
    const d = await diagnose({ run: s.run, passes: 1, verifyBudgetSeconds: 60 });
    assert.equal(d.plan.verification?.verdict, 'gain');
    assert.equal(s.prefetched.length, 2, 'the prefetch is measured again after a second run of the plan');
    const last = s.calls.at(-1);
    assert.deepEqual(last?.applied, planned.map(changeKey).sort(), 'the plan runs again between the prefetch’s two runs');
    assert.ok(!d.plan.changes.some((c) => c.kind === 'prefetch'), d.plan.changes.map((c) => c.reason).join(' | '));
    assert.equal(d.plan.overrides[first.pipeline.rootId]?.prefetch, undefined);
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
      const s = scripted(
        first,
        () => [move],
        (applied) => (applied.length === 1 ? factor : 1),
      );
      return { s, d: await diagnose({ run: s.run, passes: 1, verifyBudgetSeconds: 60 }) };
    };
    const faster = await outcome(1.3);
    assert.deepEqual(
      faster.s.calls.slice(0, 2).map((c) => `${c.purpose}:${c.applied.join(',') || 'as written'}`),
      ['profile:as written', `verify:${changeKey(move)}`],
    );
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
    assert.ok(loop && loop.opId === move.opId && loop.parallelism === move.parallelism, "the scenario needs the event-loop move to be the plan's");
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
    assert.ok(
      steps.some((m) => /the plan without run map\(parseRecord\) in worker threads/.test(m)),
      steps.join('\n'),
    );
    assert.ok(!steps.some((m) => /, with run map\(parseRecord\) in worker threads$/.test(m)), steps.join('\n'));
  });

  it("adds no prefetch at the end of a pipeline that ends in one, or that the user's overrides give one", async () => {
    const endsInOne = new ProfileBuilder({ cores: 2 })
      .range()
      .map('fetch', { latency: 20e-3, parallelism: 1 })
      .prefetch(2)
      .build({ rootElements: 100, rate: 1 / 21e-3 });
    const planned = modelPlan(endsInOne).changes;
    assert.ok(planned.length > 0, 'the scenario needs a plan');
    const s = scripted(
      endsInOne,
      () => planned,
      (applied) => (applied.length === planned.length ? asPredicted(endsInOne) : 1),
      0.02,
      2,
    );
    const d = await diagnose({ run: s.run, passes: 1, verifyBudgetSeconds: 60 });
    assert.equal(d.plan.verification?.verdict, 'gain');
    assert.equal(s.prefetched.length, 0);
    assert.ok(!d.plan.changes.some((c) => c.kind === 'prefetch' && c.opId === endsInOne.pipeline.rootId));

    const first = oneFetchProfile();
    const rootId = first.pipeline.rootId;
    const user: Overrides = { [rootId]: { prefetch: 8 } };
    const plannedFor = modelPlan(first).changes;
    const calls: Overrides[] = [];
    const t = scripted(
      first,
      () => plannedFor,
      (applied) => (applied.length === plannedFor.length ? asPredicted(first) : 1),
      0.02,
      2,
    );
    const d2 = await diagnose({ run: async (o, purpose) => (calls.push(o), t.run(o, purpose)), passes: 1, verifyBudgetSeconds: 60, userOverrides: user });
    assert.equal(d2.plan.verification?.verdict, 'gain');
    assert.ok(
      calls.every((o) => o[rootId]?.prefetch === undefined || o[rootId]?.prefetch === 8),
      "no run sized the user's prefetch otherwise",
    );
    assert.ok(!d2.plan.changes.some((c) => c.kind === 'prefetch'));
  });
});
