/**
 * Calibrating a worker task on this machine, before the run: what posting one task to a
 * plumber-data worker pool and taking its result back costs the main thread, and what receiving
 * and answering it costs the worker, measured with an empty task through piscina (the pool
 * plumber-data's worker map uses). The model prices worker moves with these instead of constants.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { requireUnhooked } from './unhooked';
import { settledRss } from './memory';
import { THREAD_CPU_SOURCE } from './machine';

export interface WorkerCalibration {
  /** Main-thread CPU seconds per task (post + receive). */
  dispatchSeconds: number;
  /** Worker-thread CPU seconds per task outside the task's own function. */
  taskOverheadSeconds: number;
  /** Resident bytes the process grew by from starting the thread and serving tasks with it (the pool's module already loaded). */
  threadRssBytes?: number;
}

/** The part of piscina's API the calibration uses. */
interface PoolLike {
  run(task: unknown): Promise<unknown>;
  destroy(): Promise<void>;
}
type PiscinaCtor = new (options: Record<string, unknown>) => PoolLike;

/**
 * piscina as the user's plumber-data would load it (so the calibration uses the same version),
 * else the runner's own copy; undefined when neither is installed.
 */
function loadPiscina(pipelineFile: string): PiscinaCtor | undefined {
  // Past the TypeScript loader's hook (unhooked.ts): the library loads the same module later, from the cache.
  const attempts: (() => unknown)[] = [() => requireUnhooked(createRequire(createRequire(pipelineFile).resolve('plumber-data')).resolve('piscina')), () => requireUnhooked(createRequire(__filename).resolve('piscina'))];
  for (const attempt of attempts) {
    try {
      const mod = attempt() as { Piscina?: PiscinaCtor; default?: PiscinaCtor };
      const ctor = mod.Piscina ?? mod.default;
      if (typeof ctor === 'function') return ctor;
    } catch {
      // Not installed there: try the next place.
    }
  }
  return undefined;
}

/** The empty task: returns the worker thread's CPU clock, so consecutive tasks bound its overhead. */
const TASK_SOURCE = `${THREAD_CPU_SOURCE}
module.exports = function emptyTask() { return cpu(); };
`;

/** Tasks in flight at once: plumber-data's worker map keeps two per thread, so the main thread never idles the worker. */
const IN_FLIGHT = 2;

/**
 * Runs empty tasks through a one-thread piscina pool for about `seconds` (after a short warm-up)
 * and returns the per-task costs. `mainCpu` is the main thread's CPU clock. Undefined when piscina
 * is not installed, no per-thread clock exists, or the pool would not start in time. The pool and
 * its task file are always removed before this returns.
 */
export async function calibrateWorkerTasks(pipelineFile: string, mainCpu: () => number, seconds = 0.1): Promise<WorkerCalibration | undefined> {
  const Piscina = loadPiscina(pipelineFile);
  if (Piscina === undefined) return undefined;
  // Named with our pid, so whoever finds one can tell which process left it.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `plumber-calibrate-${process.pid}-`));
  const file = path.join(dir, 'task.cjs');
  let pool: PoolLike | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    fs.writeFileSync(file, TASK_SOURCE);
    // What the process holds before the thread starts, garbage collected, for the thread's own resident cost.
    const rss0 = await settledRss();
    // No loader flags: a task's messaging does not depend on them, and the thread starts faster.
    pool = new Piscina({ filename: file, minThreads: 1, maxThreads: 1, concurrentTasksPerWorker: 1, idleTimeout: 60_000, execArgv: [] });
    const p = pool;
    const gaveUp = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), 2000 + seconds * 1000);
    });
    const work = async (): Promise<WorkerCalibration | undefined> => {
      // Warm-up: starts the thread and lets V8 optimise both sides of the messaging.
      for (let i = 0; i < 10; i++) await Promise.all(Array.from({ length: IN_FLIGHT }, () => p.run(null)));
      const threadRss = process.memoryUsage.rss() - rss0;
      // The thread has loaded the task file: remove it now, so a runner killed mid-calibration leaves nothing behind.
      fs.rmSync(dir, { recursive: true, force: true });
      const readings: number[] = [];
      const c0 = mainCpu();
      const deadline = performance.now() + seconds * 1000;
      let tasks = 0;
      const lane = async (): Promise<void> => {
        while (performance.now() < deadline && tasks < 5000) {
          tasks++;
          readings.push(Number(await p.run(null)));
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
      const main = (mainCpu() - c0) / tasks;
      // Worker readings are taken at the start of each task: the clock's advance between the first
      // and the last covers whole tasks' receiving, replying and the empty body.
      const worker = (readings[readings.length - 1] - readings[0]) / (readings.length - 1);
      if (!Number.isFinite(main) || !Number.isFinite(worker) || readings.length < 10) return undefined;
      return { dispatchSeconds: Math.max(0, main), taskOverheadSeconds: Math.max(0, worker), ...(threadRss > 0 ? { threadRssBytes: threadRss } : {}) };
    };
    // A late rejection (the pool destroyed under a task after giving up) must not surface as the pipeline's error.
    return await Promise.race([work().catch(() => undefined), gaveUp]);
  } catch {
    return undefined;
  } finally {
    if (timer) clearTimeout(timer);
    await pool?.destroy().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
