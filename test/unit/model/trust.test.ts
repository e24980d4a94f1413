/**
 * Advice you can trust (issue 9): the model plans for the cores the pipeline can get, prices
 * worker moves from what moving measured, never caches at or after randomness from any source,
 * models ops inside an interleave as nested with the interleave's levers, and gives each change its
 * own predicted effect.
 */
import * as assert from 'node:assert/strict';
import { analyze, changeTitle, eventLoopMove, overridesFor, plan, predict, wholeCores, trialPlan, widenFreeLevers } from '../../../src/model';
import { coresGot } from '../../../src/model/cores';
import { MODEL_CONSTANTS } from '../../../src/model/constants';
import type { PlanChange } from '../../../src/shared/analysis';
import type { MoveCost } from '../../../src/shared/profile';
import { ProfileBuilder } from './builder';

const id = ProfileBuilder.id;

function near(actual: number, expected: number, rel = 1e-6): void {
  assert.ok(Math.abs(actual - expected) <= rel * Math.abs(expected), `expected ${actual} to be ≈ ${expected}`);
}

function change<K extends PlanChange['kind']>(changes: PlanChange[], kind: K, opId?: string): Extract<PlanChange, { kind: K }> | undefined {
  return changes.find((c): c is Extract<PlanChange, { kind: K }> => c.kind === kind && (opId === undefined || c.opId === opId));
}

/** A sync 12 ms decode that binds the main thread and can move to workers. */
function decodeBound(machine: { cores: number; availableCores?: number }, runCores?: number) {
  return new ProfileBuilder(machine).range().map('decode', { self: 12e-3, module: true }).build({ rootElements: 200, rate: 80, availableCores: runCores });
}

describe('model: the cores the pipeline can get', () => {
  it("counts a core when at least 90% of it is free, at least 1 and at most the machine's", () => {
    assert.equal(wholeCores(1.1, 2), 1);
    assert.equal(wholeCores(1.95, 2), 2);
    assert.equal(wholeCores(1.85, 2), 1);
    assert.equal(wholeCores(0.3, 2), 1);
    assert.equal(wholeCores(3.9, 2), 2);
  });

  it("with 1.1 of 2 cores free by the probe alone (no measure of other work's threads), plans for 1 and proposes no worker pool that would fight for them", () => {
    const profile = decodeBound({ cores: 2, availableCores: 1.1 });
    const a = analyze(profile);
    assert.equal(a.cores, 1);
    assert.equal(a.coresAvailable, 1.1);
    assert.equal(a.coresNote, '1.1 of 2 cores free: planning for 1');
    const p = plan(profile);
    assert.equal(p.coresNote, '1.1 of 2 cores free: planning for 1');
    assert.equal(p.cores, 1);
    assert.equal(change(p.changes, 'placement'), undefined);
  });

  it('plans for a target machine when the user names its cores, whatever was free here', () => {
    const profile = decodeBound({ cores: 2, availableCores: 1.1 });
    const p = plan(profile, { cores: 2 });
    assert.equal(p.coresNote, 'planning for 2 cores, as asked (1.1 of 2 cores free on the profiled machine)');
    assert.equal(change(p.changes, 'placement', id(1))?.parallelism, 2);
  });

  it("predicts a target machine from a run that had fewer cores free: the run's efficiency on its own cores, the bound on the target's", () => {
    // The decode already in two worker threads, measured with one of two cores free: ≈ 80/s where
    // two free cores give ≈ 160/s.
    const profile = new ProfileBuilder({ cores: 2 }).range().map('decode', { worker: 12e-3, placement: 'worker', parallelism: 2, module: true }).build({ rootElements: 200, rate: 80 });
    profile.machine.availableCores = 1;
    const here = plan(profile);
    assert.equal(here.cores, 1);
    near(here.predictedRate, 80);
    const there = plan(profile, { cores: 2 });
    assert.equal(there.cores, 2);
    // Nothing left to change, but on the target the pipeline as it ran is twice as fast.
    assert.ok(there.predictedRate > 1.8 * there.currentRate, `predicted ${there.predictedRate} for 2 cores from ${there.currentRate} measured on 1`);
    assert.ok(there.predictedRate <= there.predictedBound * 1.0001, `${there.predictedRate} within the bound ${there.predictedBound}`);
    near(predict(profile, {}, { cores: 2 }).rate, there.predictedRate);
  });

  it("sizes worker pools to the cores free, not the machine's: 2.2 of 4 free gives a pool of 2", () => {
    const p = plan(decodeBound({ cores: 4, availableCores: 2.2 }));
    assert.equal(p.coresNote, '2.2 of 4 cores free: planning for 2');
    assert.equal(change(p.changes, 'placement', id(1))?.parallelism, 2);
    assert.equal(change(plan(decodeBound({ cores: 4 })).changes, 'placement', id(1))?.parallelism, 4);
  });

  it('takes the cores free during the run over the probe before it, and the probe when the run has none', () => {
    assert.match(plan(decodeBound({ cores: 4, availableCores: 3.96 }, 1.2)).coresNote ?? '', /^1\.2 of 4 cores free, shared with ≈ 2\.8 busy threads of other work/);
    assert.equal(plan(decodeBound({ cores: 4, availableCores: 2.95 })).coresNote, '3 of 4 cores free: planning for 3');
    const none = plan(decodeBound({ cores: 4 }));
    assert.equal(none.cores, 4);
    assert.equal(none.coresNote, undefined);
  });
});

describe('model: a fair share of a contended machine', () => {
  /** The 12 ms decode, measured while other work ran: `free` cores free, the main thread got `share` of a core while runnable. */
  const contended = (free: number, share: number, rate: number) =>
    new ProfileBuilder({ cores: 2 }).range().map('decode', { self: 12e-3, module: true }).build({ rootElements: 200, rate, availableCores: free, mainThreadShare: share });

  it('gives t busy threads beside n others min(t, cores, cores·t/(t+n)) cores', () => {
    assert.equal(coresGot(2, 5), 2);
    assert.equal(coresGot({ machine: 2, others: 0 }, 1), 1);
    assert.equal(coresGot({ machine: 2, others: 0 }, 3), 2);
    assert.equal(coresGot({ machine: 2, others: 1 }, 1), 1);
    assert.equal(coresGot({ machine: 2, others: 1 }, 3), 1.5);
    assert.equal(coresGot({ machine: 2, others: 4 }, 1), 2 / 5);
  });

  it('beside one busy thread of other work, moves the main-thread decode to workers: more threads win more of the cores', () => {
    // One core free (the other one busy elsewhere) and the main thread never waited for a core.
    const p = plan(contended(1, 1, 80));
    assert.match(p.coresNote ?? '', /^1 of 2 cores free, shared with ≈ 1 busy thread of other work: planning for a fair share \(1 core for one thread, 1\.5 for 3\)$/);
    const move = change(p.changes, 'placement', id(1));
    assert.ok(move, JSON.stringify(p.changes));
    assert.ok(p.predictedRate > 80 * 1.1, `predicted ${p.predictedRate}`);
    // With only the probe's free cores (nothing measured of how other work's threads share them) the
    // same profile plans for one whole core and proposes no move.
    const probeOnly = new ProfileBuilder({ cores: 2, availableCores: 1 }).range().map('decode', { self: 12e-3, module: true }).build({ rootElements: 200, rate: 80 });
    assert.equal(change(plan(probeOnly).changes, 'placement'), undefined);
  });

  it('takes a main thread too seldom runnable to measure its share as one that got a whole core, so 1.85 free cores are not one', () => {
    // The decode in one worker thread; the main thread only dispatches, so the run measured no
    // share for it. 1.85 of 2 cores free: as whole cores, one, and a second thread could not help.
    const workerBound = (free: number) =>
      new ProfileBuilder({ cores: 2 }).range().map('decode', { worker: 12e-3, placement: 'worker', parallelism: 1, module: true }).build({ rootElements: 200, rate: 80, availableCores: free });
    const p = plan(workerBound(1.85));
    assert.match(p.coresNote ?? '', /^1\.9 of 2 cores free, shared with ≈ 0\.1 busy threads of other work: planning for a fair share/);
    assert.equal(change(p.changes, 'parallelism', id(1))?.to, 2, JSON.stringify(p.changes));
    assert.ok(p.predictedRate > 1.6 * 80, `predicted ${p.predictedRate}`);
    // One core taken by other work: two worker threads win 2 of the 3 busy threads' share.
    const busy = plan(workerBound(1));
    assert.equal(change(busy.changes, 'parallelism', id(1))?.to, 2, JSON.stringify(busy.changes));
    assert.ok(busy.predictedRate < 1.4 * 80, `predicted ${busy.predictedRate} for a third of the cores more`);
  });

  it('counts the CPU of libuv and V8 threads as busy threads, so light contention does not price a worker move at one core', () => {
    // 1.9 of 2 cores free (≈ 0.1 busy threads elsewhere); besides the 12 ms decode the process's
    // other threads (file reads, GC) burned 2 ms per element. 0.5 s of them over 200 elements at 80/s.
    const light = new ProfileBuilder({ cores: 2 }).range().map('decode', { self: 12e-3, module: true }).build({ rootElements: 200, rate: 80, availableCores: 1.9, mainThreadShare: 1, otherCpuSeconds: 0.4 });
    const moved = predict(light, { [id(1)]: { placement: 'worker', parallelism: 2, module: '/work/transforms.ts' } });
    // The same move on 2 whole cores, for scale: a tenth of a busy thread elsewhere costs a few percent, not half.
    const whole = predict(
      { ...light, run: { ...light.run, availableCores: undefined, mainThreadShare: undefined }, machine: { ...light.machine, availableCores: undefined } },
      { [id(1)]: { placement: 'worker', parallelism: 2, module: '/work/transforms.ts' } },
    );
    assert.ok(moved.bound > 0.9 * whole.bound, `contended ${moved.bound} against ${whole.bound} on whole cores: ${moved.bottleneck.reason}`);
    assert.doesNotMatch(moved.bottleneck.reason, /\b1 core\b/);
    assert.ok(change(plan(light).changes, 'placement', id(1)), 'the move is planned');
  });

  it('on a busy machine bounds the main thread by the share it got, so the bound matches what was measured', () => {
    // 0.4 of 2 cores free and 40% of a core while runnable: four busy threads elsewhere.
    const a = analyze(contended(0.4, 0.4, 33));
    assert.ok(Math.abs(a.bound - 0.4 / 12e-3) / a.bound < 0.05, `bound ${a.bound}`);
    const main = a.bounds.find((b) => b.resource === 'main-thread');
    assert.ok(main && Math.abs(main.rate - 0.4 / 12e-3) / main.rate < 0.05, JSON.stringify(main));
    assert.match(main.detail, /one thread's 40% of a core/);
  });
});

describe('model: a machine the kernel shares program by program', () => {
  /**
   * The 12 ms decode measured with `free` cores free and the main thread given `share` of a core
   * while runnable, on a Linux whose autogroup gives the runner's threads one group's share.
   */
  const grouped = (free: number, share: number | undefined, rate: number, groupScheduled = true) =>
    new ProfileBuilder({ cores: 2, groupScheduled })
      .range()
      .map('decode', { self: 12e-3, module: true })
      .build({ rootElements: 200, rate, availableCores: free, ...(share !== undefined ? { mainThreadShare: share } : {}) });

  it("gives the pipeline's threads the cores other programs leave, however many threads it runs", () => {
    assert.equal(coresGot({ machine: 2, group: 1 }, 1), 1);
    assert.equal(coresGot({ machine: 2, group: 1 }, 3), 1);
    assert.equal(coresGot({ machine: 2, group: 1.3 }, 1), 1);
    assert.equal(coresGot({ machine: 2, group: 1.3 }, 2), 1.3);
  });

  it('beside a program that keeps a whole core, proposes no worker pool: more threads would not take more of the cores', () => {
    const p = plan(grouped(1, 1, 80));
    assert.match(p.coresNote ?? '', /^1 of 2 cores free: planning for the 1 core other programs leave/);
    assert.equal(change(p.changes, 'placement', id(1)), undefined, JSON.stringify(p.changes));
    const moved = predict(grouped(1, 1, 80), { [id(1)]: { placement: 'worker', parallelism: 2 } });
    assert.ok(moved.bound <= 1 / 12e-3, `two worker threads bound at ${moved.bound}/s on one core`);
    // The same run where threads share the cores one by one (other work in the runner's session):
    // more threads win more of them, and the move is planned.
    assert.ok(change(plan(grouped(1, 1, 80, false)).changes, 'placement', id(1)));
  });

  it('plans for the share the main thread got while runnable when the run wanted less than the cores other programs left it', () => {
    // Other programs took 1.7 cores while the pipeline mostly waited; its main thread got 95% of a
    // core whenever it was runnable, so it can have at least that.
    const a = analyze(grouped(0.3, 0.95, 30));
    const cpu = a.bounds.find((b) => b.resource === 'cpu');
    assert.ok(cpu && Math.abs(cpu.rate - 0.95 / 12e-3) / cpu.rate < 0.05, JSON.stringify(cpu));
    assert.match(a.coresNote ?? '', /^0\.3 of 2 cores free: planning for the 1 core other programs leave/);
  });

  it('plans for what the probe before the run got when the run itself mostly waited and other programs took the rest', () => {
    // A pipeline that awaits almost all the time beside a program busy on every core: the run
    // used 0.1 core and nothing was idle, but the probe spinning a thread per core got one.
    const waiting = (probe?: number) =>
      new ProfileBuilder({ cores: 2, groupScheduled: true, ...(probe !== undefined ? { availableCores: probe } : {}) })
        .range()
        .map('fetch', { latency: 20e-3, parallelism: 1 })
        .map('decode', { self: 2e-3, module: true })
        .build({ rootElements: 200, rate: 45, availableCores: 0.1 });
    assert.match(analyze(waiting(1)).coresNote ?? '', /^0\.1 of 2 cores free: planning for the 1 core other programs leave/);
    assert.match(analyze(waiting()).coresNote ?? '', /^0\.1 of 2 cores free: planning for the 0\.1 cores other programs leave/);
    // More calls in flight are not held to a tenth of a core.
    assert.ok(plan(waiting(1)).predictedRate > 4 * 45, `predicted ${plan(waiting(1)).predictedRate}`);
  });

  it('says its busy threads, not other programs, limit the cores when other programs leave more than they use', () => {
    // 1.8 of 2 free and only the main thread busy: one core, because there is one thread to run.
    const cpu = (free: number) => analyze(grouped(free, 1, 80)).bounds.find((b) => b.resource === 'cpu')?.detail ?? '';
    assert.match(cpu(1.8), /; 1 core \(one per busy thread; other programs leave 1\.8\) gives at most/);
    assert.match(cpu(1), /; 1 core \(what other programs leave\) gives at most/);
  });

  it('plans for the whole machine when other programs leave all but noise', () => {
    const p = plan(grouped(1.95, 1, 80));
    assert.equal(p.coresNote, '2 of 2 cores free: planning for 2');
    assert.ok(change(p.changes, 'placement', id(1)));
  });
});

describe('model: worker moves priced from measurement', () => {
  // A 20 µs transform of parsed CSV rows (a few hundred bytes of plain objects) that binds the main
  // thread at 50,000 rows/s. Per row the main thread keeps 2 µs of bookkeeping and 60 µs dispatch
  // per task; the workers pay 18 µs of fn and 40 µs per task. plumber-data gives a task the rows
  // that make its fixed cost (dispatch, overhead and one row's clones) 5% of it: without clones
  // ⌈100 µs ÷ (5% × 18 µs)⌉ = 112 rows.
  const rows = (moveCost?: MoveCost, machine: { workerDispatchSeconds?: number; workerTaskOverheadSeconds?: number } = {}) =>
    new ProfileBuilder({ cores: 2, availableCores: 2, ...machine }).range().map('transformRow', { self: 20e-6, module: true, moveCost, bytes: 300 }).build({ rootElements: 50000, rate: 50000 });
  const toWorkers = () => ({ [id(1)]: { placement: 'worker' as const, parallelism: 2, module: '/work/transforms.ts' } });
  const measured = (cloneEachWay: number): MoveCost => ({
    samples: 64,
    cloneInSeconds: cloneEachWay,
    cloneOutSeconds: cloneEachWay,
    inBytes: 300,
    outBytes: 300,
    mainCpuSeconds: 20e-6,
    workerCpuSeconds: 28e-6,
  });

  it('without a measured move cost, prices the move by bytes and the fn as on the main thread (≈ 1.9×)', () => {
    const profile = rows();
    const moved = predict(profile, toWorkers());
    // CPU: 2 cores / (2 µs + 60 µs / 112 on the main thread + 18 µs + 40 µs / 112 in workers).
    near(moved.bound, 2 / ((2 + 60 / 112 + 18 + 40 / 112) * 1e-6));
    assert.ok(change(plan(profile).changes, 'placement', id(1)));
  });

  it('with a measured move cost, pays half of each clone round on each side and scales the fn by its CPU in a worker', () => {
    // 4 µs per clone round each way, 40% more CPU in a worker: a task of ⌈(100 + 8) µs ÷ (5% ×
    // 18 × 1.4 µs)⌉ = 86 rows; the main thread keeps 2 + 60 / 86 + 4 µs, the workers do
    // 18 × 1.4 + 40 / 86 + 4 µs.
    const profile = rows(measured(4e-6));
    near(predict(profile, toWorkers()).bound, 2 / ((2 + 60 / 86 + 4 + 18 * 1.4 + 40 / 86 + 4) * 1e-6));
    const move = change(plan(profile).changes, 'placement', id(1));
    assert.ok(move);
    assert.match(move.reason, /\(measured: cloning 4 µs in and 4 µs out per call, the fn 1\.4× its main-thread CPU in a worker\)/);
  });

  it('does not propose a move that the measured clone and worker CPU make a loss', () => {
    // Rows with nested fields clone in 8 µs each way: 2 cores / (10.6 + 37.6 µs) = 41,500 rows/s,
    // below the 50,000 the main thread manages alone.
    const profile = rows(measured(8e-6));
    assert.ok(predict(profile, toWorkers()).rate < 50000);
    const p = plan(profile);
    assert.equal(change(p.changes, 'placement'), undefined);
    assert.deepEqual(p.changes, []);
  });

  it('never moves a fn whose results a copy between threads changes, and says what would let it move', () => {
    const profile = decodeBound({ cores: 2, availableCores: 2 });
    assert.ok(change(plan(profile).changes, 'placement', id(1)), 'the same decode moves when its results cross unchanged');
    const op = profile.ops.find((o) => o.id === id(1))!;
    op.moveBlocked = { side: 'result', change: 'class', what: 'Image objects' };
    const p = plan(profile);
    assert.equal(change(p.changes, 'placement'), undefined);
    assert.match(
      analyze(profile).bottleneck.reason,
      /Worker threads could run it beside the main thread \(all cores together allow about .*\), but its results are Image objects, and a copy between threads keeps their data but not their class .*: return plain data/,
    );
    op.moveBlocked = { side: 'input', change: 'buffer', what: 'Buffers' };
    assert.equal(change(plan(profile).changes, 'placement'), undefined);
    assert.match(analyze(profile).bottleneck.reason, /the elements it takes hold Buffers, which a copy between threads turns into plain Uint8Arrays/);
  });

  it('prices a move of a fn cheaper than 20 µs a call when its move costs were measured, and only then', () => {
    // A 13 µs scorer on small records, 256 calls per batch: 1 µs clones each way leave 2 + 0.6 +
    // 1 µs a call on the main thread, so the move frees most of it.
    const scorer = (moveCost?: MoveCost, self = 13e-6) =>
      new ProfileBuilder({ cores: 2, availableCores: 2 })
        .range()
        .map('score', { self, module: true, moveCost, bytes: 20 })
        .batch(256)
        .build({ rootElements: 100, rate: 1 / (256 * self) });
    const cheapMove = (self: number): MoveCost => ({ ...measured(1e-6), inBytes: 20, outBytes: 20, mainCpuSeconds: self, workerCpuSeconds: self });
    const moved = change(plan(scorer(cheapMove(13e-6))).changes, 'placement', id(1));
    assert.ok(moved, 'the measured move is planned');
    assert.ok((moved.predictedRate ?? 0) > 1.3 / (256 * 13e-6));
    // Without a measurement the clones would be priced by bytes alone: not considered.
    assert.equal(change(plan(scorer()).changes, 'placement'), undefined);
    // A fn that costs less than what its move leaves on the main thread is not considered at all.
    assert.deepEqual(plan(scorer(cheapMove(3e-6), 3e-6)).changes, []);
  });

  it("carries the clones from sampled elements to the window's by their bytes (a few long emails among short ones)", () => {
    // The text example: tokenize 1 ms a call on emails of 3.8 kB, 9 kB of token ids back. The six
    // sampled emails averaged 53 kB: 42 µs to clone in, 900 µs to clone the ids back. Priced at
    // the sample's clones the main thread would keep 2 µs, a share of a task's dispatch and 471 µs
    // a call and the pool as much again — a wash; per byte of the window's emails the clones are
    // 3 µs and 64 µs.
    const mails = (sizes: Partial<MoveCost>) =>
      new ProfileBuilder({ cores: 2, availableCores: 2 })
        .op({ kind: 'from', bytes: 3800 })
        .map('tokenize', {
          self: 1e-3,
          module: true,
          bytes: 9000,
          moveCost: { samples: 6, cloneInSeconds: 42e-6, cloneOutSeconds: 900e-6, inBytes: 53000, outBytes: 90000, mainCpuSeconds: 14e-3, ...sizes },
        })
        .build({ rootElements: 2000, rate: 1000 });
    const toPool = { [id(1)]: { placement: 'worker' as const, parallelism: 2, module: '/work/transforms.ts' } };
    const scaled = mails({ inSizeBytes: 53000, outSizeBytes: 126000 });
    const cloneIn = 42e-6 * (3800 / 53000);
    const cloneOut = 900e-6 * (9000 / 126000);
    // Per call: main 2 µs + 60 µs ÷ 4 + half of each clone; the workers the fn less the main
    // thread's 2 µs, 40 µs ÷ 4 and the other halves. A task carries ⌈(100 µs + both clones) ÷
    // (5% × 998 µs)⌉ = 4 calls.
    const half = (cloneIn + cloneOut) / 2;
    near(predict(scaled, toPool).bound, 2 / (2e-6 + 15e-6 + half + (1e-3 - 2e-6) + 10e-6 + half));
    const move = change(plan(scaled).changes, 'placement', id(1));
    assert.ok(move, 'the move is planned');
    assert.match(move.reason, /cloning 3.01 µs in and 64.3 µs out per call, scaled from sampled elements 14× the window's size/);
    // A profile without the sizes (from before they were recorded) keeps the sample's clones, and
    // they make the move no gain; sizes within 2× of the window's are taken as they are.
    assert.equal(change(plan(mails({})).changes, 'placement'), undefined);
    const alike = mails({ inSizeBytes: 3800 * 1.9, outSizeBytes: 9000 / 1.9 });
    near(predict(alike, toPool).bound, predict(mails({}), toPool).bound);
    // The sampled emails cost 14 ms a call where the window's cost 1 ms: per byte the same work
    // (14 ms × 3.8 ÷ 53 = 1.0 ms), so the 1.4× they measured in a worker prices the pool; without
    // the sizes the sample's calls look 14× the window's and the ratio is left out.
    // (1.4× the work makes a task of ⌈(100 µs + both clones) ÷ (5% × 1.4 × 998 µs)⌉ = 3 calls.)
    const slower = { inSizeBytes: 53000, outSizeBytes: 126000, workerCpuSeconds: 14e-3 * 1.4 };
    near(predict(mails(slower), toPool).bound, 2 / (2e-6 + 20e-6 + half + (1e-3 - 2e-6) * 1.4 + 40e-6 / 3 + half));
    const unsized = predict(mails({ workerCpuSeconds: 14e-3 * 1.4 }), toPool).bound;
    near(unsized, predict(mails({}), toPool).bound);
  });

  it('uses the dispatch and task overhead calibrated on this machine instead of its constants', () => {
    const profile = rows(undefined, { workerDispatchSeconds: 200e-6, workerTaskOverheadSeconds: 100e-6 });
    // A dearer task carries more rows: ⌈300 µs ÷ (5% × 18 µs)⌉ = 334. Main: 2 µs + 200 µs / 334;
    // workers: 18 µs + 100 µs / 334.
    near(predict(profile, toWorkers()).bound, 2 / ((2 + 200 / 334 + 18 + 100 / 334) * 1e-6));
  });

  it('groups elements into tasks by the chunking the profiled copy of plumber-data reports', () => {
    const chunked = (workerChunking: { overheadShare: number; maxTaskSeconds: number; maxTaskBytes: number; maxGroup: number }) =>
      new ProfileBuilder({ cores: 2, availableCores: 2, workerChunking }).range().map('transformRow', { self: 20e-6, module: true, bytes: 300 }).build({ rootElements: 50000, rate: 50000 });
    // At most 10 rows a task: main 2 µs + 60 µs / 10; workers 18 µs + 40 µs / 10.
    near(predict(chunked({ overheadShare: 0.05, maxTaskSeconds: 0.025, maxTaskBytes: 1 << 20, maxGroup: 10 }), toWorkers()).bound, 2 / ((2 + 6 + 18 + 4) * 1e-6));
    // A fixed cost of 20% of a task: ⌈100 µs ÷ (20% × 18 µs)⌉ = 28 rows.
    near(predict(chunked({ overheadShare: 0.2, maxTaskSeconds: 0.025, maxTaskBytes: 1 << 20, maxGroup: 4096 }), toWorkers()).bound, 2 / ((2 + 60 / 28 + 18 + 40 / 28) * 1e-6));
    // At most 3,000 bytes of rows in and out: 10 rows of 300 bytes.
    near(predict(chunked({ overheadShare: 0.05, maxTaskSeconds: 0.025, maxTaskBytes: 3000, maxGroup: 4096 }), toWorkers()).bound, 2 / ((2 + 6 + 18 + 4) * 1e-6));
    // At most 90 µs of fn work: 5 rows of 18 µs.
    near(predict(chunked({ overheadShare: 0.05, maxTaskSeconds: 90e-6, maxTaskBytes: 1 << 20, maxGroup: 4096 }), toWorkers()).bound, 2 / ((2 + 12 + 18 + 8) * 1e-6));
    // Without the field, the library's own values: 112 rows (see above).
    near(predict(rows(), toWorkers()).bound, 2 / ((2 + 60 / 112 + 18 + 40 / 112) * 1e-6));
  });

  it('ignores the worker CPU ratio when the sampled calls cost far less than the calls in the window (a fn that caches by input)', () => {
    // 1 µs per repeated sample call against 20 µs per call in the window: the sample is not the
    // pipeline's work, so its worker/main ratio of 3 says nothing; clone costs still count.
    const profile = rows({ ...measured(0), mainCpuSeconds: 1e-6, workerCpuSeconds: 3e-6 });
    near(predict(profile, toWorkers()).bound, 2 / ((2 + 60 / 112 + 18 + 40 / 112) * 1e-6));
  });

  it('never prices the fn cheaper in a worker than on the main thread, whatever the quiet probe measured', () => {
    // The probe's worker ran the fn at half the main thread's CPU; a pipeline's workers run it at
    // no less than the main thread's (constants.ts `workerCpuRatioMin`).
    const halved = rows({ ...measured(0), workerCpuSeconds: 10e-6 });
    const same = rows({ ...measured(0), workerCpuSeconds: 20e-6 });
    near(predict(halved, toWorkers()).bound, 2 / ((2 + 60 / 112 + 18 + 40 / 112) * 1e-6));
    near(predict(halved, toWorkers()).bound, predict(same, toWorkers()).bound);
    const move = change(plan(halved).changes, 'placement', id(1));
    assert.ok(move);
    assert.doesNotMatch(move.reason, /its main-thread CPU in a worker/, 'a ratio the model did not use is not reported');
  });

  it('offers a trial of the move the probe priced far cheaper in a worker when no core is free for the plan to move it', () => {
    // One core free (the kernel shares cores program by program): a worker only shares it, so at
    // the main thread's CPU the move is a loss and the plan leaves the fn. The probe's worker ran
    // it at a fifth of that CPU; if that holds in the pipeline's workers, the move gains ≈ 3×.
    const busy = (workerCpuSeconds: number) =>
      new ProfileBuilder({ cores: 2, availableCores: 1, groupScheduled: true })
        .range()
        .map('transformRow', { self: 20e-6, module: true, moveCost: { ...measured(1e-6), workerCpuSeconds }, bytes: 300 })
        .build({ rootElements: 50000, rate: 45000, availableCores: 1 });
    const fifth = busy(4e-6);
    assert.equal(change(plan(fifth).changes, 'placement', id(1)), undefined);
    const trial = trialPlan(fifth, undefined, plan(fifth));
    const move = change(trial?.changes ?? [], 'placement', id(1));
    assert.equal(move?.to, 'worker', JSON.stringify(trial?.changes));
    assert.match(move.reason, /the fn 0\.2× its main-thread CPU in a worker/);
    assert.ok(trial!.predictedRate > 2 * 45000, `the trial's figure: ${trial!.predictedRate}`);
    // The probe no cheaper in a worker: nothing to try. Nor where the plan itself moves the fn.
    assert.equal(trialPlan(busy(20e-6), undefined, plan(busy(20e-6))), undefined);
    // Sampled calls that cost far less than the window's (a fn that caches by input) price
    // nothing, but a worker that ran them at a fifth of the main thread's CPU is still worth a try.
    const cached = new ProfileBuilder({ cores: 2, availableCores: 1, groupScheduled: true })
      .range()
      .map('transformRow', { self: 20e-6, module: true, moveCost: { ...measured(1e-6), mainCpuSeconds: 1e-6, workerCpuSeconds: 0.2e-6 }, bytes: 300 })
      .build({ rootElements: 50000, rate: 45000, availableCores: 1 });
    assert.equal(change(plan(cached).changes, 'placement', id(1)), undefined);
    assert.equal(change(trialPlan(cached, undefined, plan(cached))?.changes ?? [], 'placement', id(1))?.to, 'worker');
    const idle = rows({ ...measured(1e-6), workerCpuSeconds: 4e-6 });
    assert.equal(trialPlan(idle, undefined, plan(idle)), undefined);
  });

  it('clamps a worker CPU ratio that only a tiny or cold sample could give', () => {
    const profile = rows({ ...measured(0), workerCpuSeconds: 20e-6 * 50 });
    // At most 3× the main-thread CPU: workers do 18 × 3 + 40 / 38 µs, in tasks of ⌈100 µs ÷ (5% ×
    // 54 µs)⌉ = 38 rows.
    near(predict(profile, toWorkers()).bound, 2 / ((2 + 60 / 38 + 18 * 3 + 40 / 38) * 1e-6));
  });
});

describe('model: an async fn that works after its awaits', () => {
  // An unseen pipeline's `async loadImage(path)`: read a 30 kB JPEG (0.3 ms), decode it on the
  // main thread (7.6 ms). The window sees 0.1 ms of sync work a call and 8 ms of latency; the
  // decode lands in no op's counters, only in the main thread's unclaimed CPU. The runner awaited
  // eight sampled calls one at a time: 7.7 ms of main-thread CPU each in 8 ms.
  const calls = 1200;
  const photos = (awaited: Partial<MoveCost>, perCall = { cpu: 7.7e-3, wall: 8e-3, unclaimed: 7.75e-3 }) =>
    new ProfileBuilder({ cores: 2, availableCores: 2 })
      .op({ kind: 'from', bytes: 25 })
      .map('loadImage', {
        self: 0.1e-3,
        latency: perCall.wall,
        module: true,
        bytes: 300_000,
        moveCost: { samples: 8, cloneInSeconds: 2e-6, cloneOutSeconds: 50e-6, inBytes: 30, outBytes: 300_000, inSizeBytes: 25, outSizeBytes: 300_000, mainCpuSeconds: perCall.cpu, ...awaited },
      })
      .build({ rootElements: calls, rate: 1 / perCall.wall, unclaimedMainSeconds: calls * perCall.unclaimed });
  const toPool = { [id(1)]: { placement: 'worker' as const, parallelism: 2, module: '/work/transforms.ts' } };

  it('charges the work after its awaits to the fn and moves it to worker threads', () => {
    const p = photos({ awaitedSeconds: 8e-3 });
    const main = analyze(p).bounds.find((b) => b.resource === 'main-thread');
    // 0.1 ms sync + 7.6 ms after the awaits (7.7 ms less the 0.1 ms the window saw, within the 7.75 ms unclaimed).
    assert.match(main?.detail ?? '', /map\(loadImage\) 7\.7 ms/);
    const move = change(plan(p).changes, 'placement', id(1));
    assert.ok(move, JSON.stringify(plan(p).changes));
    assert.match(
      move.reason,
      /is an async function whose work keeps the main thread busy 7\.7 ms per element, 7\.6 ms of each call after its awaits, as awaiting calls one at a time measured, where each also waits 300 µs/,
    );
    assert.ok(predict(p, toPool).bound > 1.5 / 8e-3, String(predict(p, toPool).bound));
  });

  it('leaves an async fn in place when nothing measured its awaited calls (a profile from before, or no thread clock)', () => {
    const p = photos({});
    assert.equal(change(plan(p).changes, 'placement'), undefined);
    // The override a user writes by hand still prices: at the window's 0.1 ms a call, as before.
    assert.ok(predict(photos({ awaitedSeconds: 8e-3 }), toPool).bound > predict(p, toPool).bound);
  });

  it("holds a worker thread for an async fn's waits too, and moves only one that mostly works", () => {
    // 6 ms of decode after a 4 ms read: in two worker threads each call holds its thread 10 ms.
    const half = photos({ awaitedSeconds: 10e-3 }, { cpu: 6e-3, wall: 10e-3, unclaimed: 6e-3 });
    const pooled = predict(half, toPool).bound;
    assert.ok(pooled <= 2 / 10e-3 && pooled >= 2 / 10.6e-3, String(pooled));
    assert.ok(change(plan(half).changes, 'placement', id(1)), JSON.stringify(plan(half).changes));
    // A request of 20 ms whose reply takes 0.3 ms to parse waits on something threads do not
    // multiply: its calls stay on the main thread, more of them in flight.
    const io = photos({ awaitedSeconds: 20e-3 }, { cpu: 0.3e-3, wall: 20e-3, unclaimed: 0.2e-3 });
    // Not even where its calls in flight may not rise: a worker thread would wait on the same thing.
    assert.equal(change(plan(io, { maxConcurrency: 1 }).changes, 'placement'), undefined);
    const changes = plan(io).changes;
    assert.equal(change(changes, 'placement'), undefined, JSON.stringify(changes));
    assert.ok((change(changes, 'parallelism', id(1))?.to ?? 0) > 2, JSON.stringify(changes));
  });
});

describe('model: a per-call cost carried between runs that covered different stretches of the data', () => {
  // A corpus whose documents grow along its order (the text example's emails: 2.0 kB at the start,
  // 3.5 kB further on). As written the run covered the short ones: tokenize 0.5 ms a call on the
  // main thread. The run with tokenize in two worker threads went further: 1.2 ms of worker CPU a
  // call on documents 1.75× as long, 1.4× the main thread's per byte. Per call as written the main
  // thread looks cheaper than the pool; per byte it is not.
  const docs = (bytes: number, tokenize: Parameters<ProfileBuilder['map']>[1], rate: number, overrides = {}) =>
    new ProfileBuilder({ cores: 2 }).range().map('parse', { self: 30e-6, module: true, bytes }).map('tokenize', tokenize).batch(4).build({ rootElements: 500, rate, overrides });
  const inWorkers = { [id(2)]: { placement: 'worker' as const, parallelism: 2, module: '/work/transforms.ts' } };
  const first = docs(2000, { self: 0.5e-3, module: true }, 400);
  const second = (bytes: number) => docs(bytes, { placement: 'worker', worker: 1.2e-3, dispatch: 0.15e-3, parallelism: 2, module: true }, 340, inWorkers);

  it('scales the main-thread cost an earlier run measured by the input bytes per call of each run', () => {
    const p = plan(second(3500), { history: [first] });
    assert.equal(change(p.changes, 'placement', id(2)), undefined, `the pool stays: ${JSON.stringify(p.changes)}`);
    // Priced back on the main thread at 0.5 ms × 1.75 a call: 4 calls a batch, 3.5 ms, beside the rest.
    const back = predict(second(3500), { [id(2)]: { placement: 'main', parallelism: 1 } }, { history: [first] });
    const main = back.bounds.find((b) => b.resource === 'main-thread');
    assert.ok(main && main.rate < 1 / (4 * 0.5e-3 * 1.75), JSON.stringify(main));
  });

  it('keeps the earlier figure when both runs fed the fn inputs of the same size, and then moves it back', () => {
    const p = plan(second(2000), { history: [first] });
    const back = change(p.changes, 'placement', id(2));
    assert.equal(back?.to, 'main', JSON.stringify(p.changes));
    assert.match(back.reason, /on the main thread the fn itself needs ≈ 2(\.0\d?)? ms per batch \(measured there in an earlier run\)/);
    // Both sides of the comparison: what the workers cost, beside what the main thread keeps.
    assert.match(back.reason, /keeps the main thread busy [\d.]+ µs per batch and the fn takes 4\.8 ms of worker CPU \(measured in this run\)/);
  });

  it('says when it scaled the figure', () => {
    // Shorter documents in this run than as written: the pool's calls look cheap, and the main
    // thread's figure is scaled down with them; the move back names the scale.
    const shorter = second(1000);
    const back = change(plan(shorter, { history: [first] }).changes, 'placement', id(2));
    assert.equal(back?.to, 'main');
    assert.match(back.reason, /measured there in an earlier run, scaled to this run's 0\.5× the input bytes per call\)/);
  });
});

describe('model: randomness from every source', () => {
  // decode is deterministic; augment is random, and only one source says so. The plan would
  // otherwise cache after augment, the op that saves the most work.
  const build = (augment: { random?: boolean; randomObserved?: boolean }) =>
    new ProfileBuilder()
      .range(1000)
      .map('decode', { self: 10e-3, bytes: 1e4 })
      .map('augment', { self: 2e-3, bytes: 1e4, ...augment })
      .op({ kind: 'repeat', count: -1 })
      .batch(10)
      .build({ rootElements: 100, rate: 8.2 });
  const cacheAt = (changes: PlanChange[]) => change(changes, 'cache')?.opId;

  it('caches after augment when nothing says it is random (so the tests below can fail)', () => {
    assert.equal(cacheAt(plan(build({})).changes), id(2));
  });

  it('never caches at or after an op only the static graph knows is random (randomOps)', () => {
    const p = plan(build({}), { randomOps: [id(2)] });
    assert.equal(cacheAt(p.changes), id(1));
    assert.ok(
      p.notes?.some((n) => /map\(augment\) is random \(its source draws random numbers\).*so the plan caches after map\(decode\), above it\.$/.test(n)),
      JSON.stringify(p.notes),
    );
    assert.ok(!p.changes.some((c) => c.kind === 'cache' && [id(2), id(3), id(4)].includes(c.opId)));
  });

  it('never caches at or after an op the runner saw give two results for one element (randomObserved)', () => {
    const p = plan(build({ randomObserved: true }));
    assert.equal(cacheAt(p.changes), id(1));
    assert.ok(
      p.notes?.some((n) => /map\(augment\) is random \(it gave two different results for the same element\)/.test(n)),
      JSON.stringify(p.notes),
    );
  });

  it('never caches after an interleave whose inner datasets draw randomness', () => {
    const profile = new ProfileBuilder()
      .range(100)
      .op({ kind: 'from', inputs: [], parent: 3, self: 0 })
      .map('jitter', { self: 5e-3, bytes: 1e3, inputs: [1], parent: 3 })
      .op({ kind: 'interleave', fnName: 'readShard', inputs: [0], out: 10, bytes: 1e3 })
      .op({ kind: 'repeat', count: -1 })
      .build({ rootElements: 1000, rate: 190 });
    assert.equal(cacheAt(plan(profile).changes), id(3));
    const refused = plan(profile, { randomOps: [id(2)] });
    assert.equal(cacheAt(refused.changes), undefined);
    // The note says what the plan did: no cache, not "caches above it".
    assert.ok(
      refused.notes?.some((n) => /map\(jitter\) is random .*so the plan proposes no cache\.$/.test(n)),
      JSON.stringify(refused.notes),
    );
  });
});

describe('model: interleave and nesting', () => {
  // 16 shards read record by record (1 ms per record from an async iterable) inside
  // interleave(readShard, { cycleLength: 2, parallelism: 1 }); parsing takes 100 µs per record on
  // the main thread; batches of 32. One inner dataset is pulled at a time: ≈ 28 batches/s, while
  // the main thread could give 312.
  const shards = () =>
    new ProfileBuilder()
      .range(16)
      .op({ kind: 'from', inputs: [], parent: 3, wait: 1e-3 })
      .map('parseRecord', { self: 100e-6, inputs: [1], parent: 3 })
      .op({ kind: 'interleave', fnName: 'readShard', inputs: [0], out: 1000, cycleLength: 2, parallelism: 1 })
      .batch(32)
      .build({ rootElements: 100, rate: 28 });

  it('multiplies what an inner op delivers by the inner datasets pulled at once', () => {
    const profile = shards();
    const before = analyze(profile);
    assert.equal(before.bottleneck.opId, id(1));
    const wider = predict(profile, { [id(3)]: { cycleLength: 4, parallelism: 4 } });
    near(wider.bound, 4 * before.bound);
    // cycleLength alone does not pull more at once: parallelism 1 still reads one dataset at a time.
    near(predict(profile, { [id(3)]: { cycleLength: 4 } }).bound, before.bound);
  });

  it("raises the interleave's cycleLength and parallelism where a prefetch would give nothing (≈ 10×)", () => {
    const profile = shards();
    const p = plan(profile);
    const cycle = change(p.changes, 'cycleLength', id(3));
    const par = change(p.changes, 'parallelism', id(3));
    assert.ok(cycle && par, `expected both interleave levers, got ${p.changes.map((c) => changeTitle(c, profile)).join('; ')}`);
    assert.equal(cycle.from, 2);
    assert.ok(cycle.to >= 8 && cycle.to <= 16, `cycleLength ${cycle.to}`);
    assert.equal(par.to, cycle.to);
    assert.equal(changeTitle(cycle, profile), `set cycleLength of interleave(readShard) to ${cycle.to}`);
    assert.deepEqual(p.overrides[id(3)], { cycleLength: cycle.to, parallelism: par.to });
    assert.equal(change(p.changes, 'prefetch'), undefined);
    assert.ok(p.predictedRate > 8 * 28, `predicted ${p.predictedRate}`);
    assert.match(cycle.reason, /pulls 1 of its inner datasets at once/);
  });

  it("leaves the shards' waits headroom over the rate the plan predicts, as for calls in flight", () => {
    const profile = shards();
    const p = plan(profile);
    const after = predict(profile, p.overrides);
    assert.notEqual(after.bottleneck.opId, id(1), after.bottleneck.reason);
    // The inner source's own bound, with the datasets the plan pulls at once, keeps the hedge above
    // the pipeline's: a record that waits a little longer (a timer firing late) does not bind.
    const inner = Math.min(...after.bounds.filter((b) => b.opId === id(1)).map((b) => b.rate));
    assert.ok(inner >= MODEL_CONSTANTS.hedgeFactor * after.bound * (1 - 1e-9), `inner ${inner} vs pipeline ${after.bound}`);
  });

  it("widens the free levers of a plan to twice their planned value, within the interleave's inputs, and nothing else", () => {
    // 64 shards: the plan's interleave levers double; a worker pool beside them costs cores and stays.
    const profile = new ProfileBuilder()
      .range(64)
      .op({ kind: 'from', inputs: [], parent: 3, wait: 1e-3 })
      .map('parseRecord', { self: 100e-6, inputs: [1], parent: 3, module: true })
      .op({ kind: 'interleave', fnName: 'readShard', inputs: [0], out: 1000, cycleLength: 2, parallelism: 1 })
      .map('decode', { self: 0.3e-3, module: true })
      .batch(32)
      .build({ rootElements: 100, rate: 28 });
    const changes = plan(profile).changes;
    const cycle = change(changes, 'cycleLength', id(3))!;
    const move = change(changes, 'placement', id(4));
    assert.ok(cycle && move, `expected interleave levers and a worker move, got ${changes.map((c) => changeTitle(c, profile)).join('; ')}`);
    assert.ok(cycle.to <= 32, `the scenario needs room to double: cycleLength ${cycle.to}`);
    const wider = widenFreeLevers(profile, changes)!;
    assert.equal(change(wider, 'cycleLength', id(3))!.to, 2 * cycle.to);
    assert.equal(change(wider, 'parallelism', id(3))!.to, 2 * cycle.to);
    assert.equal(change(wider, 'placement', id(4)), move, 'the worker move is returned as it was');
    // Within the inputs: at 40 the next step is all 64 shards, and at 64 nothing can grow.
    const at = (n: number): PlanChange[] => changes.map((c) => (c.kind === 'cycleLength' || (c.kind === 'parallelism' && c.opId === id(3)) ? { ...c, to: n } : c));
    assert.equal(change(widenFreeLevers(profile, at(40))!, 'cycleLength', id(3))!.to, 64);
    assert.equal(widenFreeLevers(profile, at(64)), undefined);
  });

  it('widens calls in flight of an awaiting op, but not worker threads nor calls whose latency grows with them', () => {
    const profile = new ProfileBuilder({ cores: 4 }).range().map('fetch', { latency: 20e-3, parallelism: 1 }).map('decode', { self: 5e-3, module: true }).build({ rootElements: 100, rate: 40 });
    const changes = plan(profile).changes;
    const fetch = change(changes, 'parallelism', id(1))!;
    assert.ok(fetch && change(changes, 'placement', id(2)), `got ${changes.map((c) => changeTitle(c, profile)).join('; ')}`);
    const wider = widenFreeLevers(profile, changes)!;
    assert.equal(change(wider, 'parallelism', id(1))!.to, 2 * fetch.to);
    assert.deepEqual(change(wider, 'placement', id(2)), change(changes, 'placement', id(2)));
    // The same fetch measured at 4 calls in flight with twice the latency: it queues, so more calls are not free.
    const queued = structuredClone(profile);
    const op = queued.ops.find((o) => o.id === id(1))!;
    op.knobs = { ...op.knobs, parallelism: 4, resolvedParallelism: 4 };
    op.counters.asyncLatencySeconds *= 2;
    assert.equal(widenFreeLevers(profile, changes, { history: [queued] }), undefined);
  });

  it('never opens more inner datasets at once than the interleave has inputs', () => {
    const profile = new ProfileBuilder()
      .range(4)
      .op({ kind: 'from', inputs: [], parent: 3, wait: 1e-3 })
      .map('parseRecord', { self: 100e-6, inputs: [1], parent: 3 })
      .op({ kind: 'interleave', fnName: 'readShard', inputs: [0], out: 1000, cycleLength: 2, parallelism: 1 })
      .batch(32)
      .build({ rootElements: 100, rate: 28 });
    assert.equal(change(plan(profile).changes, 'cycleLength', id(3))?.to, 4);
  });
});

describe('model: each change with its own predicted effect, and never a predicted loss', () => {
  it('gives each change the rate predicted with only that change applied', () => {
    // lookup (10 ms, 1 in flight) binds at 100 el/s; decode (4 ms, sync) would bind next at 250.
    const profile = new ProfileBuilder({ cores: 2 }).range().map('lookup', { latency: 10e-3, parallelism: 1 }).map('decode', { self: 4e-3, module: true }).build({ rootElements: 1000, rate: 95 });
    const p = plan(profile);
    assert.ok(p.changes.length >= 2);
    for (const c of p.changes) {
      assert.ok(c.predictedRate !== undefined);
      near(c.predictedRate, predict(profile, overridesFor(profile, [c])).rate);
    }
    near(p.predictedRate, predict(profile, overridesFor(profile, p.changes)).rate);
    assert.deepEqual(overridesFor(profile, p.changes), p.overrides);
  });

  it('applies exactly the subset of changes asked for, on top of the overrides the profile ran with', () => {
    const profile = new ProfileBuilder()
      .range()
      .map('fetch', { latency: 10e-3, parallelism: 4 })
      .map('decode', { self: 2e-3, module: true })
      .build({ rootElements: 1000, rate: 380, overrides: { [id(1)]: { parallelism: 4 } } });
    const p = plan(profile);
    const move = change(p.changes, 'placement', id(2));
    assert.ok(move);
    assert.deepEqual(overridesFor(profile, [move]), {
      [id(1)]: { parallelism: 4 },
      [id(2)]: { placement: 'worker', parallelism: move.parallelism, module: '/work/transforms.ts', exportName: 'decode' },
    });
    assert.deepEqual(overridesFor(profile, []), { [id(1)]: { parallelism: 4 } });
  });

  it('proposes nothing, and says why, when the model predicts the plan no faster than measured', () => {
    // The run measured 130 el/s where the bound with fetch's 1 call in flight is 100. More calls
    // in flight raise the bound to the main thread's 111 el/s (decode, 9 ms), 11% up; but that is
    // below what the run already measured.
    const profile = new ProfileBuilder().range().map('fetch', { latency: 10e-3, parallelism: 1 }).map('decode', { self: 9e-3 }).build({ rootElements: 1000, rate: 130 });
    const p = plan(profile);
    assert.deepEqual(p.changes, []);
    assert.equal(p.predictedRate, 130);
    assert.ok(
      p.notes?.some((n) => /not 5% above the measured/.test(n)),
      JSON.stringify(p.notes),
    );
  });
});

describe('model: an interleave whose parallelism is auto', () => {
  it('turns only cycleLength: parallelism auto follows it', () => {
    const profile = new ProfileBuilder()
      .range(16)
      .op({ kind: 'from', inputs: [], parent: 3, wait: 1e-3 })
      .map('parseRecord', { self: 100e-6, inputs: [1], parent: 3 })
      .op({ kind: 'interleave', fnName: 'readShard', inputs: [0], out: 1000, cycleLength: 2, parallelism: 2 })
      .batch(32)
      .build({ rootElements: 100, rate: 56 });
    const interleave = profile.ops[3];
    interleave.knobs.parallelism = 'auto';
    const p = plan(profile);
    const cycle = change(p.changes, 'cycleLength', id(3));
    assert.ok(cycle && cycle.to >= 4);
    assert.equal(change(p.changes, 'parallelism', id(3)), undefined);
    assert.deepEqual(p.overrides[id(3)], { cycleLength: cycle.to });
    assert.ok(p.predictedRate > 3 * 56, `predicted ${p.predictedRate}`);
  });
});

describe('model: a run its operators do not explain', () => {
  const build = (rate: number, trainer = false) => {
    // map(f) costs 1 ms an element on the main thread: at most ≈ 1,000/s on this run's cores.
    const p = new ProfileBuilder({ cores: 2 }).range().map('f', { self: 1e-3 }).build({ rootElements: 200, rate });
    if (trainer) p.trainer = { steps: 200, seconds: 200 / rate, waitSeconds: 0.1, stepSeconds: 200 / rate - 0.1 } as NonNullable<typeof p.trainer>;
    return p;
  };

  it('says so when the run measured under half of what its operators allow, with both figures', () => {
    const a = analyze(build(100));
    assert.ok(a.unexplained, 'a run at a tenth of its bound');
    assert.match(a.unexplained, /The run measured 100 el\/s, 10% of the 1,000 el\/s its operators' measured work and waits allow: 90% of its time/);
  });

  it('says nothing for a run near its bound, for another machine, or for a training loop that sets its own pace', () => {
    assert.equal(analyze(build(900)).unexplained, undefined);
    assert.equal(analyze(build(100), { cores: 8 }).unexplained, undefined);
    assert.equal(analyze(build(100, true)).unexplained, undefined);
  });
});

describe('model: a fn on the event loop that serves the waits that bind', () => {
  // 16 shards, all pulled at once (the interleave can open no more), each record awaited 4 ms on
  // the main thread's event loop; a parse of `parse` seconds a record on the same thread; batches
  // of 32 at the rate the waits allow (16 ÷ 4 ms = 4,000 records/s, 125 batches/s).
  const loop = (parse: number, opts: { module?: boolean; wait?: number; cpuClock?: 'wall' } = {}) =>
    new ProfileBuilder(opts.cpuClock ? { cpuClock: opts.cpuClock } : {})
      .range(16)
      .op({ kind: 'from', inputs: [], parent: 3, wait: opts.wait ?? 4e-3 })
      .map('parseRecord', { self: parse, inputs: [1], parent: 3, module: opts.module ?? true })
      .op({ kind: 'interleave', fnName: 'readShard', inputs: [0], out: 1000, cycleLength: 16, parallelism: 16 })
      .batch(32)
      .build({ rootElements: 360, rate: 120 });

  it('offers the heaviest movable fn for a run with it in worker threads when waits on the busy main thread bind', () => {
    // The parse keeps the thread busy 120 × 32 × 150 µs = 58% of the window.
    const profile = loop(150e-6);
    // The shards' reads bind, one record at a time in each.
    assert.equal(analyze(profile).bottleneck.opId, id(1));
    const move = eventLoopMove(profile);
    assert.ok(move, 'a move to try');
    assert.equal(move.opId, id(2));
    assert.equal(move.to, 'worker');
    assert.equal(move.parallelism, 2);
    assert.match(
      move.reason,
      /^map\(parseRecord\) keeps the main thread busy 4\.8 ms per batch, 100% of its work, on the event loop that also serves what binds: from waits 4 ms a call, measured until its callback ran, while the thread was busy 58% of the time\. /,
    );
    // The run it would extend: the move applied to what it ran.
    assert.equal(overridesFor(profile, [move])[id(2)]?.placement, 'worker');
  });

  it('offers nothing when the thread is seldom busy, the fn cannot move, the main thread itself binds, or the clock is wall time', () => {
    assert.equal(eventLoopMove(loop(40e-6)), undefined, 'the parse keeps the thread busy 15% of the time');
    assert.equal(eventLoopMove(loop(150e-6, { module: false })), undefined, 'the parse is not an exported fn');
    // Waits of 0.5 ms: the waits allow 1,000 batches/s, the main thread (4.8 ms a batch) 208.
    const mainBound = loop(150e-6, { wait: 0.5e-3 });
    assert.equal(analyze(mainBound).bottleneck.resource, 'main-thread');
    assert.equal(eventLoopMove(mainBound), undefined);
    assert.equal(eventLoopMove(loop(150e-6, { cpuClock: 'wall' })), undefined);
  });
});
