/**
 * A cluster worker: a BullMQ worker on the cluster's queue that runs the named exports of one
 * module on the elements it is sent, and pushes each result to its run's list (see protocol.ts).
 *
 * A worker that dies mid-job leaves the job locked; when the lock expires (`lockMs`), BullMQ's
 * stalled-job check (run by every live worker) puts it back in the queue and another worker runs
 * it. The consumer keeps one result per index, so a job that ran twice is delivered once.
 */
import { availableParallelism, hostname } from 'node:os';
import { resolve as resolvePath, basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Job, Worker as BullWorker } from 'bullmq';
import { describeThrown, findUncloneable, atPath } from '../errors';
import { hostClock, hostId, PREFIX, type JobData, type ResultRecord, type WorkerStamp, decodeElement, encodeResult, resultsKey, runKey } from './protocol';
import { loadBull } from './redis';

export interface ClusterWorkerOptions {
  redis: string;
  name: string;
  /** Path (relative to the working directory) or file URL of the module whose exports the worker runs. */
  module: string;
  /** Jobs run at once (default 4). */
  concurrency?: number;
  /** How long a job's lock lasts without renewal (default 5000 ms): a dead worker's job runs again after at most this (plus the check interval). */
  lockMs?: number;
  /** Where the worker says what it serves and its rate (default: none). */
  log?: (line: string) => void;
  /** How often the rate is logged (default 5000 ms). */
  reportMs?: number;
}

export interface ClusterWorker {
  /** Elements served so far. */
  readonly served: number;
  /** Waits for the running jobs, then disconnects. */
  close(): Promise<void>;
}

// A dynamic import that esbuild's CJS output leaves alone.
const importModule = new Function('u', 'return import(u)') as (u: string) => Promise<Record<string, unknown>>;

/** Loads the module as plumber-data's worker threads do: require first (TypeScript under tsx's hooks), import() for ES modules. */
async function loadModule(module: string): Promise<Record<string, unknown>> {
  const path = module.startsWith('file:') ? new URL(module).pathname : resolvePath(module);
  try {
    return require(path) as Record<string, unknown>;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code !== 'ERR_REQUIRE_ESM' && code !== 'ERR_REQUIRE_ASYNC_MODULE' && code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw e;
    return importModule(pathToFileURL(path).href);
  }
}

/** The elements of a flatMap's result, as one array. */
async function materialize(v: unknown): Promise<unknown[]> {
  if (Array.isArray(v)) return v;
  if (v !== null && typeof v === 'object') {
    if (Symbol.asyncIterator in v) {
      const out: unknown[] = [];
      for await (const y of v as AsyncIterable<unknown>) out.push(y);
      return out;
    }
    if (Symbol.iterator in v) return [...(v as Iterable<unknown>)];
  }
  throw new TypeError(`a flatMap fn must return an array or an iterable, not ${v === null ? 'null' : typeof v}.`);
}

const PUSH = `if redis.call('exists', KEYS[2]) == 1 then
  redis.call('rpush', KEYS[1], ARGV[1])
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 1
end
return 0`;

/** Starts a worker; it runs until `close()`. */
export async function startWorker(o: ClusterWorkerOptions): Promise<ClusterWorker> {
  const { Worker, Redis } = loadBull();
  const concurrency = Math.max(1, Math.floor(o.concurrency ?? 4));
  const lockMs = Math.max(500, o.lockMs ?? 5000);
  const log = o.log ?? (() => undefined);
  const exports = await loadModule(o.module);
  const fns = Object.entries(exports)
    .filter(([, v]) => typeof v === 'function')
    .map(([k]) => k);
  const moduleName = basename(o.module.startsWith('file:') ? new URL(o.module).pathname : o.module);
  const id = `${hostname()}:${process.pid}`;
  const cores = availableParallelism();
  const host = hostId();
  const started = process.hrtime.bigint();
  // The worker waits for Redis to come back rather than failing its jobs: maxRetriesPerRequest null, as BullMQ requires.
  // Auto-pipelining sends the commands of one tick in one write: a worker's jobs finish together.
  const conn = new Redis(o.redis, { maxRetriesPerRequest: null, enableAutoPipelining: true });
  conn.on('error', () => undefined);
  // EVALSHA rather than EVAL per result: Redis need not receive and hash the script's text each time.
  conn.defineCommand('plumberPush', { numberOfKeys: 2, lua: PUSH });
  const push = (run: string, buf: Buffer): Promise<unknown> =>
    (conn as unknown as { plumberPush(k1: string, k2: string, v: Buffer, ttl: string): Promise<unknown> }).plumberPush(resultsKey(o.name, run), runKey(o.name, run), buf, String(60 * 60 * 1000));
  let served = 0;
  /** Runs whose consumer is gone (most recent last, at most 1000 kept). */
  const goneRuns = new Set<string>();
  let jobsDone = 0;
  let slotSeconds = 0;

  // The process's CPU, read at most every 10 ms: a getrusage per job costs more than it tells.
  let cpuSeconds = 0;
  let cpuReadAt = -Infinity;
  let clock = hostClock();
  let clockReadAt = performance.now();
  const stamp = (): WorkerStamp => {
    const t = performance.now();
    if (t - cpuReadAt >= 10) {
      const u = process.cpuUsage();
      cpuSeconds = (u.user + u.system) / 1e6;
      cpuReadAt = t;
    }
    if (t - clockReadAt >= 100) {
      clock = hostClock();
      clockReadAt = t;
    }
    return { id, concurrency, cores, host, ...(clock !== undefined ? { hostClock: clock } : {}), cpuSeconds, uptimeSeconds: Number(process.hrtime.bigint() - started) / 1e9, jobsDone, slotSeconds };
  };

  const processJob = async (job: Job<JobData>): Promise<void> => {
    const d = job.data;
    const queueWaitMs = (job.processedOn ?? Date.now()) - job.timestamp;
    // The run is gone (its consumer stopped, or died; learnt when a result could not be pushed):
    // nobody wants this result. Asking Redis per job would cost a round trip each.
    if (goneRuns.has(d.run)) return;
    const t0 = performance.now();
    let rec: ResultRecord;
    try {
      const fn = exports[d.exportName];
      if (typeof fn !== 'function') {
        const named = d.module !== undefined && d.module !== moduleName ? ` (the map names ${d.module})` : '';
        throw new Error(`the worker ${id} serves ${o.module}${named}, which has no function export '${d.exportName}' (it exports ${fns.join(', ') || 'no functions'}). Start the workers with the module that exports it.`);
      }
      const x = decodeElement(Buffer.from(d.x, 'base64'));
      let v = (fn as (x: unknown) => unknown)(x);
      if (v !== null && typeof v === 'object' && typeof (v as PromiseLike<unknown>).then === 'function') v = await v;
      if (d.mode === 'filter') v = Boolean(v);
      else if (d.mode === 'flatMap') v = await materialize(v);
      rec = { index: d.index, ok: true, value: v, serviceSeconds: 0, queueWaitMs, worker: stamp() };
    } catch (e) {
      const err = e instanceof Error ? { name: e.name, message: e.message, stack: e.stack } : { name: 'Error', message: describeThrown(e) };
      rec = { index: d.index, ok: false, error: err, serviceSeconds: 0, queueWaitMs, worker: stamp() };
    }
    rec.serviceSeconds = (performance.now() - t0) / 1000;
    let buf: Buffer;
    try {
      buf = encodeResult(rec);
    } catch (e) {
      const u = findUncloneable(rec.value);
      const what = u === null ? describeThrown(e) : `${u.what}${atPath(u)}`;
      buf = encodeResult({
        ...rec,
        ok: false,
        value: undefined,
        error: { name: 'DataCloneError', message: `the result holds ${what}, which cannot travel back: results must be v8-serialisable (plain data, typed arrays, Maps, Sets, Dates).` },
      });
    }
    const pushed = await push(d.run, buf);
    if (pushed === 0) {
      goneRuns.add(d.run);
      if (goneRuns.size > 1000) goneRuns.delete(goneRuns.values().next().value as string);
    }
    served++;
  };

  const worker: BullWorker = new Worker<JobData>(o.name, processJob, {
    connection: { url: o.redis, maxRetriesPerRequest: null, enableAutoPipelining: true } as never,
    prefix: PREFIX,
    concurrency,
    lockDuration: lockMs,
    stalledInterval: Math.max(250, Math.floor(lockMs / 2)),
    // A worker killed over and over must not turn a healthy element into a failure: re-run it.
    maxStalledCount: 1000,
  });
  worker.on('error', (e: unknown) => log(`worker ${id}: ${describeThrown(e)}`));
  // A job fails (rather than reporting the fn's error, which it does as a result) only when the
  // worker could not handle it: Redis failed under it, or it stalled too often. After its last
  // attempt, tell the run, so the consumer gets an error instead of waiting for a result that will not come.
  worker.on('failed', (job: Job<JobData> | undefined, e: Error) => {
    if (job === undefined || job.attemptsMade < (job.opts.attempts ?? 1)) return;
    const d = job.data;
    const rec: ResultRecord = {
      index: d.index,
      ok: false,
      error: { name: 'ClusterJobError', message: `the cluster could not run this element's job (${job.attemptsMade} attempts): ${describeThrown(e)}` },
      serviceSeconds: 0,
      queueWaitMs: 0,
      worker: stamp(),
    };
    push(d.run, encodeResult(rec)).catch(() => undefined);
  });
  worker.on('completed', (job: Job<JobData>) => {
    if (job.processedOn !== undefined && job.finishedOn !== undefined) {
      jobsDone++;
      slotSeconds += (job.finishedOn - job.processedOn) / 1000;
    }
  });
  await worker.waitUntilReady();
  log(`plumber-data worker ${id}: serving cluster '${o.name}' at ${o.redis.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')} with ${o.module} (${fns.join(', ') || 'no function exports'}), concurrency ${concurrency}`);
  const reportMs = o.reportMs ?? 5000;
  let lastServed = 0;
  let lastAt = performance.now();
  const timer = setInterval(() => {
    const t = performance.now();
    const n = served - lastServed;
    if (n > 0) log(`worker ${id}: ${n} elements in ${((t - lastAt) / 1000).toFixed(1)} s (${((n * 1000) / (t - lastAt)).toFixed(1)} el/s), ${served} in all`);
    lastServed = served;
    lastAt = t;
  }, reportMs);
  timer.unref();
  return {
    get served() {
      return served;
    },
    async close() {
      clearInterval(timer);
      await worker.close();
      conn.disconnect();
    },
  };
}
