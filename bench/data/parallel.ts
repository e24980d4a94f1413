/**
 * B2, worker map: a JIT-stable CPU task of about 2 ms per element, 400 elements, in worker threads
 * with parallelism 1 and 2; and a task of about 50 µs on small plain-object elements (parsed CSV
 * rows of ~300 bytes), where messaging and cloning weigh most. B3, latency-bound map: an async fn awaiting 10 ms per element, 320
 * elements, parallelism 1 and 32.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { newCounters, range, threadCpuSeconds, TRACER_KEY, type OpCounters, type OpInfo, type Tracer } from 'plumber-data';
import { calibrate, makeRow, scoreRow, spinWork, type Row, type WorkItem } from './work';

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

/** Rounds for ~50 µs, measured once on this thread. */
let rounds50us = 0;

/** Rows for the small-element case: made once, before any timing. */
function rows(n: number): Row[] {
  if (rounds50us === 0) rounds50us = calibrate(0.05);
  return Array.from({ length: n }, (_, i) => makeRow(i, rounds50us));
}

export interface SmallRates {
  /** The same map on the main thread, elements per second. */
  mainElementsPerSec: number;
  /** Placement 'worker', first result to last. */
  elementsPerSec: number;
  firstResultMs: number;
  /** Elements per task the worker map chose. */
  elementsPerTask: number;
  /**
   * CPU per element of the worker run (all threads, from the first result) over the main-thread
   * run's: the work placement adds. Unlike rates, other load on the machine barely moves it.
   */
  cpuVsMain: number;
  /** Main-thread CPU per element in the worker run over the main-thread run's: what caps the rate at 1 / this. */
  mainThreadShare: number;
}

/** Counters of the worker-placed operators built while it is installed. */
class WorkerOpsTracer implements Tracer {
  readonly workerOps: OpCounters[] = [];
  register(info: OpInfo): OpCounters {
    const c = newCounters();
    if (info.placement === 'worker') this.workerOps.push(c);
    return c;
  }
}

/**
 * The ~50 µs map on row elements, on the main thread and then in `parallelism` worker threads,
 * back to back so both see the same machine. The worker run is traced, for its tasks' size.
 */
export async function workerMapSmall(parallelism: number, n = 20_000): Promise<SmallRates> {
  const data = rows(n);
  const main = range(n)
    .map((i) => data[i])
    .map(scoreRow);
  let t0 = performance.now();
  let got = 0;
  const cpuMain0 = process.cpuUsage();
  for await (const _ of main) got++;
  const mainElementsPerSec = (got * 1000) / (performance.now() - t0);
  const cpuMain = process.cpuUsage(cpuMain0);
  const mainCpuPerElement = (cpuMain.user + cpuMain.system) / 1e6 / n;
  const tracer = new WorkerOpsTracer();
  const g = globalThis as { [TRACER_KEY]?: Tracer };
  g[TRACER_KEY] = tracer;
  let ds;
  try {
    ds = range(n)
      .map((i) => data[i])
      .map(scoreRow, { placement: 'worker', module: WORK_MODULE, parallelism });
  } finally {
    delete g[TRACER_KEY];
  }
  t0 = performance.now();
  let first = 0;
  got = 0;
  let cpu0 = process.cpuUsage();
  let thread0 = 0;
  for await (const _ of ds) {
    if (got++ === 0) {
      first = performance.now();
      cpu0 = process.cpuUsage();
      thread0 = threadCpuSeconds();
    }
  }
  const end = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const thread = threadCpuSeconds() - thread0;
  if (got !== n) throw new Error(`worker map produced ${got} of ${n}`);
  return {
    cpuVsMain: (cpu.user + cpu.system) / 1e6 / (n - 1) / mainCpuPerElement,
    mainThreadShare: thread / (n - 1) / mainCpuPerElement,
    mainElementsPerSec,
    elementsPerSec: ((n - 1) * 1000) / (end - first),
    firstResultMs: first - t0,
    elementsPerTask: n / tracer.workerOps.reduce((a, c) => a + c.workerTasks, 0),
  };
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
