/**
 * A hand-built training profile (a script whose loop pulls from a pipeline and trains between
 * pulls), for the model's and the engine's tests.
 */
import { newCounters } from '../../../src/data/tracing';
import type { Profile } from '../../../src/shared/profile';

const FILE = '/repo/train.ts';

/**
 * A training profile of `range → map(augment) → prefetch(2)` feeding a loop: the map costs `pipe`
 * main-thread seconds per element (or, with `workers`, that much CPU in a pool of that many worker
 * threads), the trainer's own step `step` seconds of main-thread CPU. The loop waited for the
 * map's work when it ran on the main thread, and `wait` seconds per step otherwise.
 */
export function trainingProfile(o: { pipe: number; step: number; workers?: number; wait?: number; steps?: number; cores?: number }): Profile {
  const n = o.steps ?? 200;
  const inWorkers = (o.workers ?? 0) > 0;
  const wait = o.wait ?? (inWorkers ? 0 : o.pipe);
  const mainPipe = inWorkers ? 20e-6 : o.pipe;
  const seconds = n * (wait + o.step);
  const counters = (c: Partial<ReturnType<typeof newCounters>>) => ({ ...newCounters(), ...c });
  return {
    version: 1,
    pipeline: { file: FILE, exportName: '', rootId: '3:40' },
    machine: {
      cores: o.cores ?? 2,
      availableCores: o.cores ?? 2,
      memoryTotalBytes: 8e9,
      memoryFreeBytes: 4e9,
      nodeVersion: 'v20',
      platform: 'linux',
      arch: 'x64',
      cpuModel: 'test',
      libuvThreads: 4,
      cpuClock: 'schedstat',
    },
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
