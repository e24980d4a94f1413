/**
 * A cluster worker: a BullMQ worker on the cluster's queue that runs the named exports of one
 * module on the elements it is sent, and pushes each result to its run's list (see protocol.ts).
 *
 * A worker that dies mid-job leaves the job locked; when the lock expires (`lockMs`), BullMQ's
 * stalled-job check (run by every live worker) puts it back in the queue and another worker runs
 * it. The consumer keeps one result per index, so a job that ran twice is delivered once. Such a
 * job runs alone on its worker, and one that killed its worker `MAX_ALONE_DEATHS` times so is not
 * run again: its element is reported as the cause.
 */
import { availableParallelism, hostname } from 'node:os';
import { resolve as resolvePath, basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Job, Worker as BullWorker } from 'bullmq';
import type { Redis as IORedis } from 'ioredis';
import { describeThrown, findUncloneable, atPath } from '../errors';
import {
  ALONE_FIELD,
  hostClock,
  hostId,
  jobKey,
  MAX_ALONE_DEATHS,
  PREFIX,
  RESULTS_TTL_MS,
  RUN_ENDED,
  type JobData,
  type ResultRecord,
  type WorkerStamp,
  decodeElement,
  encodeResult,
  resultsKey,
  runKey,
} from './protocol';
import { loadBull } from './redis';
import { exportedMember } from '../internal/exports';

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
  /** Gives up on a fn whose promise has not settled after this long (default: no limit; a map's own `timeoutMs` may be lower). */
  timeoutMs?: number;
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

// Only an ended run refuses results: a missing run key may come back (see runKey).
const PUSH = `if redis.call('get', KEYS[2]) == ARGV[3] then
  return 0
end
redis.call('rpush', KEYS[1], ARGV[1])
redis.call('pexpire', KEYS[1], ARGV[2])
return 1`;

/** Pushes a result to its run's list: 1, or 0 when the run ended. */
function pusher(conn: IORedis, name: string): (run: string, buf: Buffer) => Promise<unknown> {
  // EVALSHA rather than EVAL per result: Redis need not receive and hash the script's text each time.
  conn.defineCommand('plumberPush', { numberOfKeys: 2, lua: PUSH });
  const c = conn as unknown as { plumberPush(k1: string, k2: string, v: Buffer, ttl: string, ended: string): Promise<unknown> };
  return (run, buf) => c.plumberPush(resultsKey(name, run), runKey(name, run), buf, String(RESULTS_TTL_MS), RUN_ENDED);
}

/** Why a job's fn was not waited for to the end: past its time limit, or its run ended meanwhile. */
class GaveUp extends Error {
  constructor(readonly why: 'timeout' | 'ended') {
    super(why);
  }
}

/** How often the worker asks whether the runs of its long-running jobs have ended, and how long a job runs before it is asked about. */
const ABANDON_CHECK_MS = 2000;

/** What the worker knows of the runs it serves: which ended, and the fn promises it still waits for. */
class Runs {
  /** Runs whose consumer ended them (most recent last, at most 1000 kept). */
  private readonly gone = new Set<string>();
  /** Jobs whose fn is awaited: their run, when they started, and how to stop waiting for them. */
  private readonly running = new Set<{ run: string; t0: number; giveUp(e: GaveUp): void }>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly conn: IORedis,
    private readonly name: string,
  ) {
    this.timer = setInterval(() => this.abandon(), ABANDON_CHECK_MS);
    this.timer.unref();
  }

  /** True once the run's consumer ended it; asks Redis unless already known. */
  async ended(run: string): Promise<boolean> {
    if (this.gone.has(run)) return true;
    const ended = (await this.conn.get(runKey(this.name, run))) === RUN_ENDED;
    if (ended) this.markGone(run);
    return ended;
  }

  /** Known ended, without asking Redis. */
  knownGone(run: string): boolean {
    return this.gone.has(run);
  }

  markGone(run: string): void {
    this.gone.add(run);
    if (this.gone.size > 1000) this.gone.delete(this.gone.values().next().value as string);
  }

  /**
   * Waits for a fn's promise, at most `limitMs`, and no longer than its run lasts: a promise that
   * never settles must not hold a slot (and its job) for ever. The fn's work itself cannot be
   * stopped; it goes on in the background.
   */
  settle(v: PromiseLike<unknown>, run: string, limitMs: number | undefined): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const entry = { run, t0: performance.now(), giveUp: reject };
      this.running.add(entry);
      const timer = limitMs === undefined ? undefined : setTimeout(() => reject(new GaveUp('timeout')), limitMs);
      Promise.resolve(v)
        .then(resolve, reject)
        .finally(() => {
          this.running.delete(entry);
          if (timer !== undefined) clearTimeout(timer);
        });
    });
  }

  /** Stops waiting for the fns of jobs that have run a while when their run has ended. */
  private abandon(): void {
    const t = performance.now();
    const runs = new Set([...this.running].filter((r) => t - r.t0 >= ABANDON_CHECK_MS).map((r) => r.run));
    for (const run of runs) {
      this.ended(run)
        .then((ended) => {
          if (ended) for (const r of this.running) if (r.run === run) r.giveUp(new GaveUp('ended'));
        })
        .catch(() => undefined);
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}

/**
 * Lets a job's fn run beside others (`shared`) or with nothing else running on this worker
 * (`alone`): a suspect waits for the running fns to end, and fns that start later wait for it.
 */
class Gate {
  private running = 0;
  private solo: Promise<void> | null = null;
  private drained: (() => void) | null = null;

  async shared<T>(f: () => Promise<T>): Promise<T> {
    while (this.solo !== null) await this.solo;
    this.running++;
    try {
      return await f();
    } finally {
      this.running--;
      if (this.running === 0) this.drained?.();
    }
  }

  async alone<T>(f: () => Promise<T>): Promise<T> {
    while (this.solo !== null) await this.solo;
    let release = (): void => undefined;
    this.solo = new Promise<void>((r) => (release = r));
    try {
      if (this.running > 0) await new Promise<void>((r) => (this.drained = r));
      this.drained = null;
      return await f();
    } finally {
      this.solo = null;
      release();
    }
  }
}

/** The error of a job not run again because its workers died running it. */
function diedError(op: string, exportName: string, deaths: number): Error {
  const e = new Error(
    `the worker running it died ${deaths} times (it exited, ran out of memory, or blocked its event loop past its lock), ${MAX_ALONE_DEATHS} of them running nothing else, so ${op} is not run on it again: an element that kills its worker would take down every worker that runs it. Fix or catch what ${exportName} does with this element.`,
  );
  e.name = 'WorkerDiedError';
  return e;
}

/** The error of a job whose fn did not settle within its limit. */
function timeoutError(op: string, limitMs: number, worker: string): { name: string; message: string } {
  return {
    name: 'TimeoutError',
    message: `${op} did not settle within ${limitMs} ms (timeoutMs) on the worker ${worker}, which gave up on it: a promise that never settles, or work slower than the limit. Raise timeoutMs, or find what the fn waits for on this element.`,
  };
}

/** Makes the worker's stamps; `slots` is updated as jobs complete. */
function stamper(id: string, concurrency: number, slots: { jobsDone: number; slotSeconds: number }): () => WorkerStamp {
  const cores = availableParallelism();
  const host = hostId();
  const started = process.hrtime.bigint();
  // The process's CPU, read at most every 10 ms: a getrusage per job costs more than it tells.
  let cpuSeconds = 0;
  let cpuReadAt = -Infinity;
  let clock = hostClock();
  let clockReadAt = performance.now();
  return () => {
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
    const { jobsDone, slotSeconds } = slots;
    return { id, concurrency, cores, host, ...(clock !== undefined ? { hostClock: clock } : {}), cpuSeconds, uptimeSeconds: Number(process.hrtime.bigint() - started) / 1e9, jobsDone, slotSeconds };
  };
}

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
  // The worker waits for Redis to come back rather than failing its jobs: maxRetriesPerRequest null, as BullMQ requires.
  // Auto-pipelining sends the commands of one tick in one write: a worker's jobs finish together.
  const conn = new Redis(o.redis, { maxRetriesPerRequest: null, enableAutoPipelining: true });
  conn.on('error', () => undefined);
  const push = pusher(conn, o.name);
  let served = 0;
  const runs = new Runs(conn, o.name);
  const gate = new Gate();
  const slots = { jobsDone: 0, slotSeconds: 0 };
  const stamp = stamper(id, concurrency, slots);

  const processJob = async (job: Job<JobData>): Promise<void> => {
    const d = job.data;
    const queueWaitMs = (job.processedOn ?? Date.now()) - job.timestamp;
    const deaths = job.stalledCounter ?? 0;
    // The run ended (learnt when a result could not be pushed): nobody wants this result. A job
    // re-run after its worker died may belong to a run that ended since; asking Redis for every
    // job would cost a round trip each.
    if (runs.knownGone(d.run) || (deaths > 0 && (await runs.ended(d.run)))) return;
    const t0 = performance.now();
    const limitMs = [d.timeoutMs, o.timeoutMs].filter((n): n is number => n !== undefined).reduce((a, b) => Math.min(a, b), Infinity);
    const op = `${d.mode}(${d.exportName})`;
    const call = async (): Promise<unknown> => {
      // Own properties only: `constructor` or `toString` are members of every object, not exports.
      const fn = exportedMember(exports, d.exportName);
      if (typeof fn !== 'function') {
        const named = d.module !== undefined && d.module !== moduleName ? ` (the map names ${d.module})` : '';
        throw new Error(`the worker ${id} serves ${o.module}${named}, which has no function export '${d.exportName}' (it exports ${fns.join(', ') || 'no functions'}). Start the workers with the module that exports it.`);
      }
      const x = decodeElement(Buffer.from(d.x, 'base64'));
      let v = (fn as (x: unknown) => unknown)(x);
      if (v !== null && typeof v === 'object' && typeof (v as PromiseLike<unknown>).then === 'function') v = await runs.settle(v as PromiseLike<unknown>, d.run, Number.isFinite(limitMs) ? limitMs : undefined);
      if (d.mode === 'filter') v = Boolean(v);
      else if (d.mode === 'flatMap') v = await materialize(v);
      return v;
    };
    // A suspect's earlier runs alone that did not end (a run that ends completes the job) are deaths of its own.
    const alone = async (): Promise<unknown> => {
      if ((await conn.hincrby(jobKey(o.name, job.id as string), ALONE_FIELD, 1)) > MAX_ALONE_DEATHS) throw diedError(op, d.exportName, deaths);
      return call();
    };
    let rec: ResultRecord;
    try {
      const v = deaths === 0 ? await gate.shared(call) : await gate.alone(alone);
      rec = { index: d.index, ok: true, value: v, serviceSeconds: 0, queueWaitMs, worker: stamp() };
    } catch (e) {
      if (e instanceof GaveUp && e.why === 'ended') return;
      const err = e instanceof GaveUp ? timeoutError(op, limitMs, id) : e instanceof Error ? { name: e.name, message: e.message, stack: e.stack } : { name: 'Error', message: describeThrown(e) };
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
    if (pushed === 0) runs.markGone(d.run);
    served++;
  };

  const worker: BullWorker = new Worker<JobData>(o.name, processJob, {
    connection: { url: o.redis, maxRetriesPerRequest: null, enableAutoPipelining: true } as never,
    prefix: PREFIX,
    concurrency,
    lockDuration: lockMs,
    stalledInterval: Math.max(250, Math.floor(lockMs / 2)),
    // processJob counts a job's stalls itself (MAX_DEATHS) and reports the element as a result; BullMQ never fails a stalled job.
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
      slots.jobsDone++;
      slots.slotSeconds += (job.finishedOn - job.processedOn) / 1000;
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
      runs.close();
      await worker.close();
      conn.disconnect();
    },
  };
}
