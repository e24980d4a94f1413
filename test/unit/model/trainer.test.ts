import { strict as assert } from 'node:assert';
import { analyze, plan } from '../../../src/model';
import { cheapest, trainerCandidates, trainerFigures, trainerVerdict } from '../../../src/model/trainer';
import type { Profile } from '../../../src/shared/profile';
import { newCounters } from '../../../src/data/tracing';
import { trainerLensTitle } from '../../../src/server/features/trainerLens';

const FILE = '/repo/train.ts';

/**
 * A training profile of `range → map(augment) → prefetch(2)` feeding a loop: the map costs `pipe`
 * main-thread seconds per element (or, with `workers`, that much CPU in a pool of that many worker
 * threads), the trainer's own step `step` seconds of main-thread CPU. The loop waited for the
 * map's work when it ran on the main thread, and `wait` seconds per step otherwise.
 */
function trainingProfile(o: { pipe: number; step: number; workers?: number; wait?: number; steps?: number; cores?: number }): Profile {
  const n = o.steps ?? 200;
  const inWorkers = (o.workers ?? 0) > 0;
  const wait = o.wait ?? (inWorkers ? 0 : o.pipe);
  const mainPipe = inWorkers ? 20e-6 : o.pipe;
  const seconds = n * (wait + o.step);
  const counters = (c: Partial<ReturnType<typeof newCounters>>) => ({ ...newCounters(), ...c });
  return {
    version: 1,
    pipeline: { file: FILE, exportName: '', rootId: '3:40' },
    machine: { cores: o.cores ?? 2, availableCores: o.cores ?? 2, memoryTotalBytes: 8e9, memoryFreeBytes: 4e9, nodeVersion: 'v20', platform: 'linux', arch: 'x64', cpuModel: 'test', libuvThreads: 4, cpuClock: 'schedstat' },
    run: {
      startedAt: '2026-11-30T00:00:00Z',
      elements: n,
      seconds,
      warmupElements: 10,
      warmupSeconds: 0.1,
      converged: false,
      endReason: 'budget',
      rateEstimates: [],
      overrides: {},
      availableCores: o.cores ?? 2,
      mainThreadShare: 1,
      mainThreadCpuSeconds: n * mainPipe,
      processCpuSeconds: n * (mainPipe + (inWorkers ? o.pipe : 0)),
      peakRssBytes: 1e8,
    },
    ops: [
      { id: '3:14', kind: 'range', inputs: [], placement: 'main', knobs: {}, random: false, counters: counters({ produced: n }) },
      {
        id: '3:20',
        kind: 'map',
        inputs: ['3:14'],
        placement: inWorkers ? 'worker' : 'main',
        knobs: inWorkers ? { parallelism: o.workers, resolvedParallelism: o.workers, deterministic: true } : { resolvedParallelism: 1, deterministic: true },
        random: false,
        fnName: 'augment',
        fnModule: { file: '/repo/augment.ts', exportName: 'augment' },
        moveCost: { samples: 8, cloneInSeconds: 2e-6, cloneOutSeconds: 2e-6, inBytes: 8, outBytes: 8, mainCpuSeconds: o.pipe, workerCpuSeconds: o.pipe },
        counters: inWorkers
          ? counters({ produced: n, pulled: n, calls: n, workerCpuSeconds: n * o.pipe, dispatchSeconds: n * 20e-6, workerTasks: n, inFlightHighWater: o.workers })
          : counters({ produced: n, pulled: n, calls: n, selfSeconds: n * o.pipe }),
      },
      { id: '3:40', kind: 'prefetch', inputs: ['3:20'], placement: 'main', knobs: { bufferSize: 2 }, random: false, counters: counters({ produced: n, pulled: n, waitSeconds: n * wait }) },
    ],
    trainer: {
      steps: n,
      seconds,
      waitSeconds: n * wait,
      stepSeconds: n * o.step,
      waitMainCpuSeconds: inWorkers ? 0 : n * o.pipe,
      stepMainCpuSeconds: n * (o.step + (inWorkers ? mainPipe : 0)),
      maxWaitSeconds: wait * 2,
      pipelineStepSeconds: inWorkers ? n * mainPipe : 0,
      warmupSteps: 10,
      endReason: 'budget',
    },
  };
}

describe('the trainer in the loop (model)', () => {
  it('reads the input-bound fraction as the share of the loop spent waiting, and the unstarved rate from the trainer’s own step', () => {
    const f = trainerFigures(trainingProfile({ pipe: 3e-3, step: 1e-3 }));
    assert.ok(f);
    assert.ok(Math.abs(f.inputBound - 0.75) < 1e-9, String(f.inputBound));
    assert.ok(Math.abs(f.ownSeconds - 1e-3) < 1e-9, String(f.ownSeconds));
    assert.ok(Math.abs(f.pipelineMain - 3e-3) < 1e-9, String(f.pipelineMain));
  });

  it('does not count the pipeline’s work inside the trainer’s awaits as the trainer’s step', () => {
    const f = trainerFigures(trainingProfile({ pipe: 2e-3, step: 1e-3, workers: 2 }));
    assert.ok(f);
    // The step ran 1 ms of the trainer and 20 µs of worker dispatch: the trainer's own is the 1 ms.
    assert.ok(Math.abs(f.ownSeconds - 1e-3) < 1e-9, String(f.ownSeconds));
    assert.ok(Math.abs(f.ownMainCpu - 1e-3) < 1e-9, String(f.ownMainCpu));
  });

  it('plans worker threads for an input-bound loop whose augmentation holds the main thread, and predicts a faster loop', () => {
    const p = trainingProfile({ pipe: 3e-3, step: 1e-3 });
    const v = trainerVerdict(p);
    assert.ok(v);
    assert.ok(v.changed, v.summary);
    assert.ok(v.predictedStepsPerSec > v.asWrittenPredictedStepsPerSec * 1.3, `${v.predictedStepsPerSec} vs ${v.asWrittenPredictedStepsPerSec}`);
    assert.match(v.summary, /waited 75% of its time for input/);
    const pl = plan(p);
    assert.equal(pl.trainer?.changed, true);
    assert.ok(pl.changes.some((c) => c.kind === 'placement' && c.opId === '3:20'), JSON.stringify(pl.changes));
    assert.equal(pl.overrides['3:20']?.placement, 'worker');
  });

  it('moves no augmentation to worker threads whose results a copy between threads would change', () => {
    const p = trainingProfile({ pipe: 3e-3, step: 1e-3 });
    p.ops[1]!.moveBlocked = { side: 'result', change: 'class', what: 'Tensor objects' };
    const pl = plan(p);
    assert.equal(pl.overrides['3:20']?.placement, undefined, JSON.stringify(pl.overrides));
    assert.ok(!pl.changes.some((c) => c.kind === 'placement'), JSON.stringify(pl.changes));
  });

  it('says “not input-bound: no change needed” when the trainer hardly waits, and proposes nothing', () => {
    const p = trainingProfile({ pipe: 0.1e-3, step: 5e-3 });
    const v = trainerVerdict(p);
    assert.ok(v);
    assert.equal(v.changed, false);
    assert.match(v.summary, /^not input-bound: .*no change needed/);
    assert.equal(plan(p).changes.length, 0);
    assert.equal(analyze(p).trainer?.changed, false);
  });

  it('gives worker threads back to a trainer that its pool outpaces, and predicts no slower loop', () => {
    const p = trainingProfile({ pipe: 1e-3, step: 8e-3, workers: 2 });
    const v = trainerVerdict(p);
    assert.ok(v);
    assert.ok(v.workers < 2, v.summary);
    assert.ok(v.predictedStepsPerSec >= v.asWrittenPredictedStepsPerSec * 0.97, `${v.predictedStepsPerSec} vs ${v.asWrittenPredictedStepsPerSec}`);
    assert.match(v.summary, /give 1 worker thread back/);
  });

  it('chooses the cheapest configuration that reaches the best rate: fewer threads win among equals', () => {
    const p = trainingProfile({ pipe: 3e-3, step: 1e-3, cores: 8 });
    const all = trainerCandidates(p);
    const chosen = cheapest(all);
    assert.ok(chosen);
    const best = Math.max(...all.map((c) => c.rate));
    assert.ok(chosen.rate >= best * 0.97);
    for (const c of all) if (c.rate >= best * 0.97) assert.ok(c.workers >= chosen.workers, `${c.workers} < ${chosen.workers}`);
    // Feeding a 1 ms step from a 3 ms map takes 3 threads, not the machine's 8.
    assert.ok(chosen.workers <= 4, `${chosen.workers} workers`);
  });

  it('puts the loop’s rate, its wait for input and the plan’s gain on the editor’s lens', () => {
    const fed = trainerVerdict(trainingProfile({ pipe: 3e-3, step: 1e-3 }));
    const bound = trainerVerdict(trainingProfile({ pipe: 0.1e-3, step: 5e-3 }));
    assert.ok(fed && bound);
    assert.match(trainerLensTitle(fed), /^trainer 250 steps\/s · waits 75% on input · plan: \+\d+%$/);
    assert.match(trainerLensTitle(bound), /^trainer [\d.]+ steps\/s · waits 2% on input · plan: no change$/);
  });

  it('leaves a pipeline profile without a trainer verdict', () => {
    const p = trainingProfile({ pipe: 1e-3, step: 1e-3 });
    delete p.trainer;
    assert.equal(trainerVerdict(p), undefined);
    assert.equal(analyze(p).trainer, undefined);
  });
});
