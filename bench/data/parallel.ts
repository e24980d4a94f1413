/**
 * B2, worker map: a JIT-stable CPU task of about 2 ms per element, 400 elements, in worker threads
 * with parallelism 1 and 2. B3, latency-bound map: an async fn awaiting 10 ms per element, 320
 * elements, parallelism 1 and 32.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { range } from 'plumber-data';
import { calibrate, spinWork, type WorkItem } from './work';

const WORK_MODULE = join(__dirname, 'work.ts');

/** Rounds for ~2 ms, measured once on this thread. */
let rounds2ms = 0;

export interface WorkerMapResult {
  /** Elements per second from the first result to the last: the pool's steady state. */
  elementsPerSec: number;
  /** Elements per second including starting the pool (threads load tsx and the module). */
  totalElementsPerSec: number;
  /** Milliseconds until the first result. */
  firstResultMs: number;
  /**
   * Cores this process kept busy in the steady state (process CPU seconds / wall seconds, all
   * threads). With p threads it should be near p; less means the machine gave us less.
   */
  processCpuCores: number;
}

/** One pass of the worker map; `build` lets B4 install a tracer around it. */
export async function workerMap(parallelism: number, n = 400): Promise<WorkerMapResult> {
  if (rounds2ms === 0) rounds2ms = calibrate(2);
  const items: WorkItem[] = Array.from({ length: n }, (_, i) => ({ seed: i & 0xff, rounds: rounds2ms }));
  const ds = range(n)
    .map((i) => items[i])
    .map(spinWork, { placement: 'worker', module: WORK_MODULE, parallelism });
  const t0 = performance.now();
  let first = 0;
  let cpu0 = process.cpuUsage();
  let got = 0;
  for await (const _ of ds) {
    if (got++ === 0) {
      first = performance.now();
      cpu0 = process.cpuUsage();
    }
  }
  const end = performance.now();
  const cpu = process.cpuUsage(cpu0);
  if (got !== n) throw new Error(`worker map produced ${got} of ${n}`);
  return {
    elementsPerSec: ((n - 1) * 1000) / (end - first),
    totalElementsPerSec: (n * 1000) / (end - t0),
    firstResultMs: first - t0,
    processCpuCores: (cpu.user + cpu.system) / 1000 / (end - first),
  };
}

/** The same CPU task on the main thread, one element at a time: what a worker must beat. */
export function mainThreadRate(n = 100): number {
  if (rounds2ms === 0) rounds2ms = calibrate(2);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) spinWork({ seed: i & 0xff, rounds: rounds2ms });
  return (n * 1000) / (performance.now() - t0);
}

/** B3: elements per second of an async map whose fn awaits 10 ms. */
export async function asyncMap(parallelism: number, n = 320): Promise<number> {
  const ds = range(n).map(
    async (x, ctx) => {
      await sleep(10, undefined, { signal: ctx.signal });
      return x;
    },
    { parallelism },
  );
  const t0 = performance.now();
  let got = 0;
  for await (const _ of ds) got++;
  if (got !== n) throw new Error(`async map produced ${got} of ${n}`);
  return (n * 1000) / (performance.now() - t0);
}

/**
 * What the machine allows right now: the work two bare worker threads get done, over what one gets
 * done, spinning for `ms`. On an idle 2-core machine about 2; other load on the cores lowers it,
 * and caps B2's speedup with it.
 */
export async function bareThreadsSpeedup(ms = 800): Promise<number> {
  const { Worker } = await import('node:worker_threads');
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    let h = 1, rounds = 0;
    const end = performance.now() + workerData;
    while (performance.now() < end) { for (let i = 0; i < 100000; i++) h = Math.imul(h ^ i, 0x01000193) | 0; rounds++; }
    parentPort.postMessage(rounds + (h & 0));`;
  const run = (n: number): Promise<number> =>
    Promise.all(Array.from({ length: n }, () => new Promise<number>((resolve) => new Worker(code, { eval: true, workerData: ms }).once('message', resolve)))).then((rs) => rs.reduce((a, b) => a + b, 0));
  const one = await run(1);
  const two = await run(2);
  return two / one;
}
