import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { inheritProbes, planInPasses, probesFor, stagedChanges, withoutUnpromising } from '../../../src/engine/passes';
import { plan } from '../../../src/model';
import { runProfile } from '../../../src/runner/spawn';
import type { Overrides, Profile } from '../../../src/shared/profile';
import { ProfileBuilder } from '../model/builder';

const id = ProfileBuilder.id;

/**
 * decode (10 ms, deterministic) → repeat → augment → batch: as written, decode binds; with a cache
 * after decode, the augment's cost (`augmentSeconds` per call, as the run with the cache measured
 * it) is what is left.
 */
function cacheable(augmentSeconds: number, overrides: Overrides = {}): Profile {
  return new ProfileBuilder({ cores: 2 })
    .range(1000)
    .map('decode', { self: 10e-3, bytes: 10e3 })
    .op({ kind: 'repeat', count: -1 })
    .map('augment', { self: augmentSeconds, module: true })
    .batch(10)
    .build({ rootElements: 100, rate: 9.5, overrides });
}

const FILE = path.resolve(__dirname, '../../fixtures/pipelines/latency-bound.ts');
const MOVES = path.resolve(__dirname, '../../fixtures/pipelines/probe-moves.ts');

describe('planning in passes', function () {
  this.timeout(60_000);

  it('re-runs the pipeline with the first plan applied and keeps its changes in the final plan', async () => {
    const runs: Overrides[] = [];
    const profile = (o: Overrides): Promise<Profile> => {
      runs.push(o);
      return runProfile({ file: FILE, seconds: 0.8, warmupSeconds: 0.2, overrides: o });
    };
    const planned = await planInPasses(profile, 2, {}, {});
    assert.equal(planned.passes, 2);
    assert.deepEqual(runs[0], {});
    // The second run applied the first plan: the awaiting map got more calls in flight.
    assert.ok(Number(runs[1]['11:4']?.parallelism ?? 1) > 1, JSON.stringify(runs[1]));
    assert.ok(Number(planned.last.ops.find((o) => o.id === '11:4')!.knobs.parallelism) > 1);
    // The final plan still says to raise the parallelism written in the source (1).
    assert.ok(planned.plan.changes.some((c) => c.kind === 'parallelism' && c.opId === '11:4'));
    assert.ok(Number(planned.plan.overrides['11:4']?.parallelism ?? 1) > 1);
    assert.equal(planned.plan.currentRate, planned.analysis.measuredRate);
  });

  it('stops after one run when asked for one pass', async () => {
    let runs = 0;
    const planned = await planInPasses((o) => (runs++, runProfile({ file: FILE, seconds: 0.5, warmupSeconds: 0.2, overrides: o })), 1, {}, {});
    assert.equal(runs, 1);
    assert.equal(planned.last, planned.first);
  });
  it('probes only the first run; the second pass inherits its move costs and calibration and plans the same moves from them', async () => {
    assert.deepEqual((['profile', 'replan', 'verify'] as const).map(probesFor), [true, false, false]);
    const seen: Profile[] = [];
    const profile = async (o: Overrides, pass: number): Promise<Profile> => {
      const p = await runProfile({ file: MOVES, seconds: 0.8, warmupSeconds: 0.2, overrides: o, ...(probesFor(pass === 1 ? 'profile' : 'replan') ? {} : { probes: false }) });
      seen.push(p);
      return p;
    };
    // For a 4-core target: a second pass needs a first plan, and on a machine whose other work
    // left one core free the heavy fn's move may not pay (that decision is the model's, tested there).
    const planned = await planInPasses(profile, 2, { cores: 4 }, {});
    const [first, second] = seen;
    assert.ok(first && second, `two runs; the first plan: ${JSON.stringify(planned.plan.changes)} ${planned.plan.notes?.join(' ') ?? ''} ${planned.plan.coresNote ?? ''}`);
    const priced = first.ops.filter((o) => o.moveCost !== undefined);
    assert.ok(priced.length > 0, 'the first run priced a move');
    // The second run measured no move costs itself, and the pass planned from them all the same.
    assert.ok(second.ops.every((o) => o.moveCost === undefined));
    for (const op of priced) assert.deepEqual(planned.last.ops.find((o) => o.id === op.id)?.moveCost, op.moveCost);
    assert.equal(planned.last.machine.workerDispatchSeconds, first.machine.workerDispatchSeconds);
  });

  it('runs a plan with a cache first with the cache alone, and keeps what the run with the cache asks for', async () => {
    // As written the model wants the cache and, for the augment it measured at 400 µs beside the
    // decode, worker threads: a change the second run must confirm.
    const first = cacheable(400e-6);
    const firstPlan = plan(first);
    assert.deepEqual(firstPlan.changes.map((c) => `${c.kind}:${c.opId}`).sort(), [`cache:${id(1)}`, `placement:${id(3)}`]);
    assert.deepEqual(
      stagedChanges(firstPlan, first).map((c) => c.kind),
      ['cache'],
    );
    for (const [augment, moved] of [
      [5e-6, false],
      [400e-6, true],
    ] as const) {
      const runs: Overrides[] = [];
      const planned = await planInPasses(
        async (o, pass) => {
          runs.push(o);
          // The run with the cache: decode costs nothing any more, the augment what it measured.
          return pass === 1
            ? first
            : new ProfileBuilder({ cores: 2 })
                .range(1000)
                .map('decode', { self: 0 })
                .op({ kind: 'repeat', count: -1 })
                .map('augment', { self: augment, module: true })
                .batch(10)
                .build({ rootElements: 1000, rate: 1 / (10 * augment * 1.1), overrides: o });
        },
        2,
        {},
        {},
      );
      assert.deepEqual(runs[1], { [id(1)]: { cache: 'memory' } }, 'the second run has the cache and nothing else');
      const kept = planned.plan.changes.map((c) => `${c.kind}:${c.opId}`).sort();
      assert.deepEqual(kept, moved ? [`cache:${id(1)}`, `placement:${id(3)}`] : [`cache:${id(1)}`], `augment ${augment}`);
      assert.equal(planned.plan.overrides[id(3)]?.placement, moved ? 'worker' : undefined);
      assert.equal(planned.plan.overrides[id(1)]?.cache, 'memory');
    }
  });

  it('tries a move the probe priced far cheaper in a worker on one free core, and keeps it only as the run with it measured', async () => {
    // One core free: at the main thread's CPU the move is a loss, so the plan leaves transformRow.
    // The probe's worker ran it at a fifth of that; the run with the move says what holds.
    const moveCost = { samples: 64, cloneInSeconds: 1e-6, cloneOutSeconds: 1e-6, inBytes: 300, outBytes: 300, mainCpuSeconds: 20e-6, workerCpuSeconds: 4e-6 };
    const first = new ProfileBuilder({ cores: 2, availableCores: 1, groupScheduled: true })
      .range()
      .map('transformRow', { self: 20e-6, module: true, moveCost, bytes: 300 })
      .build({ rootElements: 50000, rate: 45000, availableCores: 1 });
    assert.equal(plan(first).changes.length, 0);
    for (const [workerSeconds, kept] of [
      [5e-6, true],
      [22e-6, false],
    ] as const) {
      const runs: Overrides[] = [];
      const planned = await planInPasses(
        async (o, pass) => {
          runs.push(o);
          if (pass === 1) return first;
          // The fn in one worker thread, at what the pipeline's own worker measured.
          const rate = 1 / (workerSeconds + 6e-6);
          return new ProfileBuilder({ cores: 2, availableCores: 1, groupScheduled: true })
            .range()
            .map('transformRow', { placement: 'worker', parallelism: 1, worker: workerSeconds, dispatch: 1e-6, module: true, bytes: 300 })
            .build({ rootElements: 50000, rate, availableCores: 1, overrides: o });
        },
        2,
        {},
        {},
      );
      assert.equal(runs.length, 2, 'the trial ran');
      assert.equal(runs[1]![id(1)]?.placement, 'worker', JSON.stringify(runs[1]));
      const move = planned.plan.changes.find((c) => c.kind === 'placement' && c.opId === id(1));
      assert.equal(Boolean(move), kept, `worker ${workerSeconds}: ${JSON.stringify(planned.plan.changes)} ${planned.plan.notes?.join(' ')}`);
      if (kept) assert.ok(planned.plan.predictedRate > 2 * 45000, `priced from the run with the move: ${planned.plan.predictedRate}`);
      else
        assert.ok(
          planned.plan.notes?.some((n) => /was tried in the run with the plan applied and left out/.test(n)),
          planned.plan.notes?.join(' '),
        );
    }
  });

  it('falls back to the whole first plan when the run with the cache alone fails', async () => {
    const first = cacheable(400e-6);
    const planned = await planInPasses(async (o, pass) => (pass === 1 ? first : { ...cacheable(400e-6, o), error: { kind: 'oom', message: 'the heap ran out' } }), 2, {}, {});
    // Verification then measures (and reports on) what the first pass proposed, as without the stage.
    assert.deepEqual(planned.plan.changes.map((c) => `${c.kind}:${c.opId}`).sort(), [`cache:${id(1)}`, `placement:${id(3)}`]);
    assert.equal(planned.plan.overrides[id(3)]?.placement, 'worker');
    assert.equal(planned.last, first);
  });

  it('offers no unmeasured plan that the run with it applied measured slower than as written, and says why', async () => {
    const first = new ProfileBuilder({ cores: 2 }).range().map('scale', { self: 50e-6, module: true }).build({ rootElements: 10000, rate: 19000 });
    assert.equal(plan(first).changes[0]?.kind, 'placement');
    const passed = await planInPasses(
      async (o, pass) =>
        pass === 1
          ? first
          : new ProfileBuilder({ cores: 2 }).range().map('scale', { placement: 'worker', worker: 20e-6, dispatch: 45e-6, parallelism: 2, module: true }).build({ rootElements: 10000, rate: 16000, overrides: o }),
      2,
      {},
      {},
    );
    assert.equal(passed.passes, 2);
    // For --no-verify (verification, when it runs, measures the two on the same elements instead).
    const planned = withoutUnpromising(passed, {}, {});
    // Back where the source has it: the source needs no change, and no knob puts it in workers.
    assert.deepEqual(planned.plan.changes, []);
    assert.notEqual(planned.plan.overrides[id(1)]?.placement, 'worker');
    // And the plan says what was measured, not only that it proposes nothing.
    assert.ok(
      planned.plan.notes?.some((n) =>
        /^The run with the plan applied \(run map\(scale\) in worker threads\) measured 16,000 el\/s, .* no more than the 19,000 el\/s measured as written, so the model proposes no change\.$/.test(n),
      ),
      JSON.stringify(planned.plan.notes),
    );
  });

  it("prices a worker move back on the main thread at what the run as written measured there, not at the workers' clock", async () => {
    // A fn that allocates large arrays: 1.9 ms a call on the main thread as written, 5.4 ms of
    // worker CPU a call in a pool of two (their GC). Back on the main thread it costs what it cost
    // there; priced by the workers' clock it would look worse than the pool.
    const first = new ProfileBuilder({ cores: 2 }).range().map('make', { self: 1.9e-3, module: true, bytes: 64e3 }).build({ rootElements: 1000, rate: 500 });
    const second = (o: Overrides): Profile =>
      new ProfileBuilder({ cores: 2 }).range().map('make', { placement: 'worker', worker: 5.4e-3, dispatch: 0.2e-3, parallelism: 2, module: true, bytes: 64e3 }).build({ rootElements: 1000, rate: 360, overrides: o });
    assert.equal(plan(first).changes[0]?.kind, 'placement', 'as written the model moves it');
    const planned = await planInPasses(async (o, pass) => (pass === 1 ? first : second(o)), 2, {}, {});
    assert.deepEqual(planned.plan.changes, [], JSON.stringify(planned.plan.changes));
    const note = planned.plan.notes?.find((n) => n.startsWith('run map(make) in worker threads was tried'));
    assert.ok(note, JSON.stringify(planned.plan.notes));
    assert.match(note, /on the main thread the fn itself needs ≈ 1\.9\d? ms per element \(measured there in an earlier run\)/);
    // Nothing changes, so nothing is predicted to: the rate is the one measured as written, not the
    // last pass's estimate of its knobs put back.
    assert.equal(planned.plan.predictedRate, planned.analysis.measuredRate);
    assert.deepEqual(planned.plan.overrides, {});
  });

  it('keeps a worker move the model would undo when the run with it measured faster than as written, and says so', async () => {
    // A corpus whose elements differ along its order (the text example: the first emails tokenise
    // into a quarter of the sequences later ones do). As written the run covered a stretch of 8
    // calls a root element at 1 ms each; the run with the move covered one of 2 calls a root
    // element, so from the per-call cost as written the model prices the fn back on the main
    // thread at 2 ms a root element, faster than the pool's 3 ms calls. Measured on the same root
    // elements, the run with the move was faster: that outweighs the estimate.
    const sliced = (p: Profile, rate: number): Profile => ({
      ...p,
      run: { ...p.run, warmupElements: 100, elements: 1000, seconds: 1000 / rate, windowSlices: Array.from({ length: 8 }, (_, k) => ({ elements: 125, seconds: (125 / rate) * (1 + (k % 2 ? 0.02 : -0.02)) })) },
    });
    const first = sliced(new ProfileBuilder({ cores: 2 }).range().map('make', { self: 1e-3, module: true }).batch(8).build({ rootElements: 1000, rate: 119 }), 119);
    assert.equal(plan(first).changes[0]?.kind, 'placement', 'as written the model moves it');
    const second = (o: Overrides, rate: number): Profile =>
      sliced(new ProfileBuilder({ cores: 2 }).range().map('make', { placement: 'worker', worker: 3e-3, dispatch: 0.1e-3, parallelism: 2, module: true }).batch(2).build({ rootElements: 1000, rate, overrides: o }), rate);
    const faster = await planInPasses(async (o, pass) => (pass === 1 ? first : second(o, 300)), 2, {}, {});
    assert.deepEqual(
      faster.plan.changes.map((c) => `${c.kind}:${c.opId}`),
      [`placement:${id(1)}`],
      JSON.stringify(faster.plan.notes),
    );
    assert.equal(faster.plan.overrides[id(1)]?.placement, 'worker');
    assert.equal(faster.plan.overrides[id(1)]?.parallelism, 2);
    assert.ok(
      faster.plan.notes?.some((n) => /^The passes kept run map\(make\) in worker threads although, .* that run measured 2\.5\d?× ± 0\.\d+ on the same elements\.$/.test(n)),
      JSON.stringify(faster.plan.notes),
    );
    // The same runs, the one with the move measured at as written's pace: the model's undo stands.
    const even = await planInPasses(async (o, pass) => (pass === 1 ? first : second(o, 119)), 2, {}, {});
    assert.deepEqual(even.plan.changes, [], JSON.stringify(even.plan.changes));
    assert.ok(
      even.plan.notes?.some((n) => n.startsWith('run map(make) in worker threads was tried')),
      JSON.stringify(even.plan.notes),
    );
  });

  it('gives a worker move the thread count the next run asks for, as one change', async () => {
    const first = new ProfileBuilder({ cores: 2 }).range().map('parse', { self: 1e-3, module: true }).batch(16).build({ rootElements: 1000, rate: 56 });
    assert.deepEqual(
      plan(first).changes.map((c) => c.kind),
      ['placement'],
    );
    const planned = await planInPasses(
      async (o, pass) =>
        pass === 1
          ? first
          : // The pool ran one thread (say the first plan was for a busier machine), which binds.
            new ProfileBuilder({ cores: 2 }).range().map('parse', { placement: 'worker', worker: 1e-3, dispatch: 10e-6, parallelism: 1, module: true }).batch(16).build({ rootElements: 1000, rate: 59, overrides: o }),
      2,
      {},
      {},
    );
    const [move, ...rest] = planned.plan.changes;
    assert.deepEqual(rest, [], JSON.stringify(planned.plan.changes));
    assert.ok(move?.kind === 'placement' && move.to === 'worker' && move.parallelism === 2, JSON.stringify(move));
    assert.match(move.reason, /With the plan applied, the next run measured: map\(parse\) needs/);
    assert.equal(planned.plan.overrides[id(1)]?.parallelism, 2);
  });

  it("keeps the source's value as the start of a knob a later pass refines, and says the reason is the later run's", async () => {
    // An awaited lookup (10 ms, 1 in flight as written) before a 1 ms map.
    const build = (parallelism: number, latency: number, rate: number, o: Overrides = {}): Profile =>
      new ProfileBuilder({ cores: 2 }).range().map('lookup', { latency, parallelism }).map('parse', { self: 1e-3 }).build({ rootElements: 1000, rate, overrides: o });
    const first = build(1, 10e-3, 98);
    const [raise1] = plan(first).changes;
    assert.ok(raise1?.kind === 'parallelism' && raise1.from === 1, JSON.stringify(raise1));
    // The run with the plan found the lookup slower at that many in flight: the next pass asks for more.
    const planned = await planInPasses(async (o, pass) => (pass === 1 ? first : build(raise1.to, 40e-3, (raise1.to / 40e-3) * 0.98, o)), 2, {}, {});
    const raise = planned.plan.changes.find((c) => c.kind === 'parallelism' && c.opId === id(1));
    assert.ok(raise?.kind === 'parallelism' && raise.to > raise1.to, JSON.stringify(planned.plan.changes));
    assert.equal(raise.from, 1, 'the source has 1 in flight, not what the first plan ran');
    assert.match(raise.reason, /^With the plan applied, the next run measured: map\(lookup\) waits 40(\.0)? ms per call/);
  });

  it('keeps what a later run measured itself over what the first measured', () => {
    const held = { heapBytes: 10_800, sizeBytes: 540 };
    const first = { machine: { workerDispatchSeconds: 1e-4 }, ops: [{ id: 'a', kind: 'map', randomObserved: true, moveCost: { samples: 8 }, held }] } as unknown as Profile;
    const next = {
      machine: { workerDispatchSeconds: 2e-4 },
      ops: [
        { id: 'a', kind: 'map', randomObserved: false },
        { id: 'b', kind: 'map' },
      ],
    } as unknown as Profile;
    const out = inheritProbes(next, first);
    assert.equal(out.machine.workerDispatchSeconds, 2e-4);
    assert.equal(out.ops[0]!.randomObserved, false);
    assert.deepEqual(out.ops[0]!.moveCost, { samples: 8 });
    // What its elements hold: a later run with the op in worker threads samples none of them.
    assert.deepEqual(out.ops[0]!.held, held);
    assert.equal(out.ops[1]!.moveCost, undefined);
  });
});
