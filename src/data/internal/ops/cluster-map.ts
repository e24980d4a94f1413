/**
 * map/filter/flatMap placed on a cluster (`placement: connect(...)`): each element becomes one
 * BullMQ job on the cluster's queue, run by whichever worker process takes it; results come back
 * through the run's own Redis list (see cluster/protocol.ts for why not the event stream).
 *
 * The parallel engine keeps the library's guarantees: input order unless `deterministic: false`,
 * at most `parallelism` elements in flight (queued, running or finished and not yet consumed),
 * and a fn's error delivered as a PipelineError with the operator and index. On top of it this
 * file keeps exactly one result per index (a job re-run after its worker died may report twice),
 * cancels the run's queued jobs when the pass stops, and turns a lost Redis or a cluster without
 * workers into an error within seconds instead of a wait without end.
 */
import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import type { Queue as BullQueue } from 'bullmq';
import type { Redis as IORedis } from 'ioredis';
import type { OpCounters } from '../../tracing';
import { describeThrown, findUncloneable, atPath, PipelineError, type OpRef } from '../../errors';
import { type Chunks, now, type OpNode } from '../core';
import { Engine, type Launcher } from './engine';
import { type Cluster, redactUrl } from '../../cluster/placement';
import { failFastOptions, isLoopback, loadBull } from '../../cluster/redis';
import { decodeResult, encodeElement, hostId, type Job, type JobData, jobKey, type Mode, PREFIX, type ResultRecord, resultsKey, RUN_ALIVE, RUN_ENDED, RUN_ENDED_TTL_MS, RUN_TTL_MS, runKey } from '../../cluster/protocol';

export interface ClusterMapConfig {
  mode: Mode;
  cluster: Cluster;
  exportName: string;
  /** The module as the map names it (only its file name travels: workers load their own copy). */
  module?: string;
  parallelism: number;
  deterministic: boolean;
  /** The map's `timeoutMs` (see MapOptions). */
  timeoutMs?: number;
}

interface Pending {
  resolve(out: unknown[]): void;
  reject(e: unknown): void;
  x: unknown;
  t0: number;
  /** As queued: added again, under the same id, when Redis lost it. */
  job: Job;
}

/** A gap this long between two ticks of the 1 s timer means the process did not run: a debugger, a suspended machine, a long synchronous step. */
const PAUSE_MS = 5000;

/** With a `timeoutMs`, the no-progress watchdog waits that long plus this: a stalled job's lock to expire and the job to run again. */
const PROGRESS_SLACK_MS = 15_000;

/** At most this many indexes are named in a message. */
const NAMED = 20;

interface SeenWorker {
  cpuSeconds: number;
  jobsDone: number;
  slotSeconds: number;
  concurrency: number;
  host: string;
  cores: number;
}

class ClusterMap implements Chunks<unknown> {
  private readonly engine: Engine<unknown, unknown>;
  private readonly run = randomUUID().replace(/-/g, '').slice(0, 16);
  private readonly pending = new Map<number, Pending>();
  /** Jobs launched and not yet sent to Redis (see flush). */
  private toAdd: Job[] = [];
  /** Indexes still outstanding when the pass failed: their jobs are removed when it stops. */
  private abandoned: number[] = [];
  private resyncing: Promise<void> | null = null;
  /** When the 1 s timer last ran, and the last pause it saw (its length and end, Date.now() ms). */
  private lastTick = Date.now();
  private pause = { ms: 0, endedAt: 0 };
  private started: Promise<void> | null = null;
  private conn: IORedis | null = null;
  private reader: IORedis | null = null;
  private queue: BullQueue | null = null;
  private failure: PipelineError | null = null;
  /** Redis answered once: a later failure is a lost connection, not an unreachable server. */
  private connected = false;
  private closing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastProgress = Date.now();
  private noWorkerSince = 0;
  private lastRedisError = '';
  private readonly workers = new Map<string, SeenWorker>();
  /** Each worker host's latest clock reading ([uptime, idle], see hostClock). */
  private readonly hostClocks = new Map<string, [number, number]>();
  private readonly moduleName: string | undefined;
  /** The consumer's process CPU (µs, user + system) when last counted; null before the pass connects. */
  private cpuAt: number | null = null;
  private cpuReadAt = 0;
  /** Redis's CPU seconds when last read, when Redis runs on this host; null otherwise. */
  private redisCpuAt: number | null = null;

  constructor(
    up: Chunks<unknown>,
    upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private readonly cfg: ClusterMapConfig,
    private readonly op: OpRef,
  ) {
    this.moduleName = cfg.module === undefined ? undefined : basename(cfg.module.startsWith('file:') ? new URL(cfg.module).pathname : cfg.module);
    const launcher: Launcher<unknown, unknown> = {
      groupSize: () => 1,
      fail: (e, base) => (e instanceof PipelineError ? e : new PipelineError(this.op, base, e)),
      launch: (items, base) => this.launch(items[0], base),
    };
    this.engine = new Engine(up, upC, c, launcher, cfg.parallelism, cfg.deterministic, 'dispatchSeconds');
  }

  async next(hint: number): Promise<unknown[] | null> {
    let out: unknown[] | null;
    try {
      out = await this.engine.next(hint);
    } catch (e) {
      await this.return();
      throw e;
    }
    if (out === null) await this.return();
    return out;
  }

  return(): Promise<void> {
    if (this.closing === null) this.closing = this.stop();
    return this.closing;
  }

  private get where(): string {
    return this.cfg.cluster.toString();
  }

  private get opName(): string {
    return `${this.cfg.mode}(${this.cfg.exportName})`;
  }

  /** Connects, marks the run alive, and starts reading results. Once per pass. */
  private start(): Promise<void> {
    if (this.started === null) this.started = this.connect();
    return this.started;
  }

  private async connect(): Promise<void> {
    const { Queue, Redis } = loadBull();
    const cluster = this.cfg.cluster;
    const conn = new Redis(cluster.redis, failFastOptions(cluster));
    this.conn = conn;
    // Without listeners ioredis reports errors on stderr as unhandled; they reach the user through the commands that fail.
    conn.on('error', (e: unknown) => {
      this.lastRedisError = describeThrown(e);
    });
    try {
      await conn.connect();
    } catch (e) {
      throw this.redisFailure(e, 'cannot reach Redis');
    }
    const reader = conn.duplicate();
    this.reader = reader;
    reader.on('error', (e: unknown) => {
      this.lastRedisError = describeThrown(e);
    });
    try {
      await reader.connect();
      await conn.set(runKey(cluster.name, this.run), RUN_ALIVE, 'PX', RUN_TTL_MS);
    } catch (e) {
      throw this.redisFailure(e, 'cannot reach Redis');
    }
    const queue = new Queue(cluster.name, { connection: conn, prefix: PREFIX });
    queue.on('error', (e: unknown) => {
      this.lastRedisError = describeThrown(e);
    });
    this.queue = queue;
    this.connected = true;
    const u = process.cpuUsage();
    this.cpuAt = u.user + u.system;
    this.cpuReadAt = performance.now();
    if (isLoopback(cluster.redis)) {
      this.redisCpuAt = await this.redisCpu();
      if (this.redisCpuAt !== null && this.c !== null) this.c.remoteRedisCpuSeconds ??= 0;
    }
    void this.readLoop(reader);
    // A reconnect may reach a Redis that restarted empty: the run's key and jobs are gone.
    conn.on('ready', () => this.resync());
    let refreshed = Date.now();
    this.lastTick = Date.now();
    this.timer = setInterval(() => {
      const t = Date.now();
      const gap = t - this.lastTick;
      this.lastTick = t;
      if (this.failure !== null || this.closing !== null) return;
      if (gap >= PAUSE_MS) {
        // The process was paused: nothing could arrive meanwhile, and the run key may have lapsed.
        this.pause = { ms: gap, endedAt: t };
        this.lastProgress += gap;
        if (this.noWorkerSince !== 0) this.noWorkerSince += gap;
        this.resync();
      }
      if (t - refreshed > RUN_TTL_MS / 3) {
        refreshed = t;
        conn
          .pexpire(runKey(cluster.name, this.run), RUN_TTL_MS)
          .then((n) => {
            if (n === 0) this.resync();
          })
          .catch(() => undefined);
      }
      void this.watchWorkers();
      void this.countRedisCpu();
    }, 1000);
    this.timer.unref();
  }

  /**
   * Restores what Redis may have lost (after a reconnect, a pause, a lapsed or missing run key):
   * the run key, and the job of every element still waited for. A job that exists is left alone;
   * one that is missing is added again under its id, so it runs once more at worst and the
   * consumer keeps one result per index. Fails the pass when Redis cannot be reached for it.
   */
  private resync(): void {
    if (this.resyncing !== null || this.closing !== null || this.failure !== null || this.conn === null || this.queue === null) return;
    const conn = this.conn;
    const queue = this.queue;
    const name = this.cfg.cluster.name;
    this.resyncing = (async () => {
      await conn.set(runKey(name, this.run), RUN_ALIVE, 'PX', RUN_TTL_MS);
      const unsent = new Set(this.toAdd.map((j) => j.data.index));
      const waited = [...this.pending.entries()].filter(([i]) => !unsent.has(i));
      if (waited.length === 0) return;
      const pipe = conn.pipeline();
      for (const [, p] of waited) pipe.exists(jobKey(name, p.job.opts.jobId));
      const found = (await pipe.exec()) ?? [];
      const missing = waited.filter((_, k) => found[k]?.[1] !== 1).map(([, p]) => p.job);
      if (missing.length > 0 && this.closing === null && this.failure === null) await queue.addBulk(missing);
    })()
      .catch((e: unknown) => this.fail(this.redisFailure(e, 'lost the connection to Redis while restoring the run')))
      .finally(() => {
        this.resyncing = null;
      });
  }

  /**
   * After a command failed: true when Redis answers again within the connect timeout (the
   * failure was a pause of this process, or a reconnect), and the run has been restored.
   */
  private async recovered(): Promise<boolean> {
    const conn = this.conn;
    if (conn === null) return false;
    // ioredis gives up by itself after its retries (failFastOptions: status 'end'); the deadline only bounds a ping that goes unanswered.
    const deadline = Date.now() + this.cfg.cluster.connectTimeoutMs + 2000;
    while (this.closing === null && this.failure === null && Date.now() < deadline) {
      if (conn.status === 'end') return false;
      try {
        await conn.ping();
        this.resync();
        await this.resyncing;
        return this.failure === null;
      } catch {
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    return false;
  }

  /** Adds the consumer process's CPU since the last count (at most every 10 ms: a read costs a system call). */
  private countCpu(force = false): void {
    if (this.cpuAt === null || this.c === null) return;
    const t = performance.now();
    if (!force && t - this.cpuReadAt < 10) return;
    const u = process.cpuUsage();
    const cpu = u.user + u.system;
    this.c.remoteConsumerCpuSeconds = (this.c.remoteConsumerCpuSeconds ?? 0) + (cpu - this.cpuAt) / 1e6;
    this.cpuAt = cpu;
    this.cpuReadAt = t;
  }

  /** redis-server's CPU seconds (user + system) from INFO, or null when it does not answer. */
  private async redisCpu(): Promise<number | null> {
    if (this.conn === null || this.conn.status !== 'ready') return null;
    try {
      const info = await this.conn.info('cpu');
      const user = /used_cpu_user:([\d.]+)/.exec(info);
      const sys = /used_cpu_sys:([\d.]+)/.exec(info);
      return user === null || sys === null ? null : Number(user[1]) + Number(sys[1]);
    } catch {
      return null;
    }
  }

  /** Adds Redis's CPU since the last read, when it runs on this host and so shares its cores with co-located workers. */
  private async countRedisCpu(): Promise<void> {
    if (this.redisCpuAt === null || this.c === null) return;
    const cpu = await this.redisCpu();
    if (cpu === null || this.redisCpuAt === null) return;
    if (cpu > this.redisCpuAt) this.c.remoteRedisCpuSeconds = (this.c.remoteRedisCpuSeconds ?? 0) + (cpu - this.redisCpuAt);
    this.redisCpuAt = cpu;
  }

  /**
   * Fails the pass when elements are outstanding and nothing arrives: for `noWorkerTimeoutMs`
   * while no worker serves the cluster, or past the no-progress bound while workers do (a fn that
   * hangs on some element). Either way the message names the outstanding elements.
   */
  private async watchWorkers(): Promise<void> {
    if (this.pending.size === 0 || Date.now() - this.lastProgress < 2000 || this.queue === null) {
      this.noWorkerSince = 0;
      return;
    }
    let count: number;
    try {
      count = await this.queue.getWorkersCount();
    } catch {
      return; // A lost connection is reported by the reader.
    }
    const silent = Date.now() - this.lastProgress;
    const cluster = this.cfg.cluster;
    if (count > 0) {
      this.noWorkerSince = 0;
      const bound = this.cfg.timeoutMs !== undefined ? this.cfg.timeoutMs + PROGRESS_SLACK_MS : cluster.noProgressTimeoutMs;
      if (silent < bound) return;
      const limit =
        this.cfg.timeoutMs !== undefined
          ? `its timeoutMs (${this.cfg.timeoutMs} ms) did not end them: a fn that blocks its worker's event loop cannot be given up on`
          : 'give the map a `timeoutMs` to have workers give up on such an element';
      this.fail(
        new PipelineError(
          this.op,
          undefined,
          new Error(`no progress on ${this.where}`),
          `${this.opName}: no result has arrived from ${this.where} for ${Math.round(silent / 1000)} s while ${count} ${count === 1 ? 'worker serves' : 'workers serve'} it, with ${this.outstanding()} outstanding: the fn hangs on ${this.pending.size === 1 ? 'it' : 'them'} (an endless loop, or a promise that never settles), or is slower than the pass waits (noProgressTimeoutMs on connect()); ${limit}.`,
        ),
      );
      return;
    }
    if (this.noWorkerSince === 0) this.noWorkerSince = Date.now();
    else if (Date.now() - this.noWorkerSince >= cluster.noWorkerTimeoutMs) {
      const killers = await this.workerKillers();
      const cause =
        killers === ''
          ? `Start one: npx plumber-data worker --redis ${redactUrl(cluster.redis)} --name ${cluster.name} --module <the module exporting ${this.cfg.exportName}>.`
          : `The workers died running ${killers}: the fn likely kills its worker there (it exits, runs out of memory, or blocks); fix it for those elements, then start workers again.`;
      this.fail(
        new PipelineError(
          this.op,
          undefined,
          new Error(`no worker serves ${this.where}`),
          `${this.opName}: no worker has served ${this.where} for ${Math.round(silent / 1000)} s, with ${this.outstanding()} waiting. ${cause}`,
        ),
      );
    }
  }

  /** The outstanding elements, for a message: "element 5", "elements 4, 7", "elements 0, 1, …, 19 (20 of 64)". */
  private outstanding(): string {
    const ids = [...this.pending.keys()].sort((a, b) => a - b);
    if (ids.length === 1) return `element ${ids[0]}`;
    return ids.length > NAMED ? `elements ${ids.slice(0, NAMED).join(', ')}, … (${NAMED} of ${ids.length})` : `elements ${ids.join(', ')}`;
  }

  /** The outstanding elements whose jobs stalled (their worker died running them), as "element 50 (2 deaths)"; '' when none did or Redis does not say. */
  private async workerKillers(): Promise<string> {
    if (this.conn === null) return '';
    const ids = [...this.pending.keys()].sort((a, b) => a - b);
    try {
      const pipe = this.conn.pipeline();
      for (const i of ids) pipe.hget(jobKey(this.cfg.cluster.name, `${this.run}-${i}`), 'stc');
      const got = (await pipe.exec()) ?? [];
      const hit = ids.map((i, k) => [i, Number(got[k]?.[1] ?? 0)] as const).filter(([, n]) => n > 0);
      return hit
        .slice(0, NAMED)
        .map(([i, n]) => `element ${i} (${n} ${n === 1 ? 'death' : 'deaths'})`)
        .join(', ');
    } catch {
      return '';
    }
  }

  private async readLoop(reader: IORedis): Promise<void> {
    const key = resultsKey(this.cfg.cluster.name, this.run);
    while (this.closing === null && this.failure === null) {
      try {
        const got = await reader.blpopBuffer(key, 1);
        if (got === null) continue;
        this.receive(got[1]);
        // Whatever else has arrived, in one round trip.
        const more = await reader.lpopBuffer(key, 512);
        if (more !== null) for (const b of more as unknown as Buffer[]) this.receive(b);
      } catch (e) {
        // A command that timed out during a pause may have popped results that are now lost: recovered() adds their jobs again.
        if (this.closing !== null || this.failure !== null) return;
        if (reader.status === 'end' || !(await this.recovered())) {
          if (this.closing === null) this.fail(this.redisFailure(e, 'lost the connection to Redis'));
          return;
        }
      }
    }
  }

  private redisFailure(e: unknown, what: string): PipelineError {
    const detail = describeThrown(e);
    const last = this.lastRedisError !== '' && !detail.includes(this.lastRedisError) ? ` (${this.lastRedisError})` : '';
    const paused = Math.max(Date.now() - this.lastTick, Date.now() - this.pause.endedAt < 10_000 ? this.pause.ms : 0);
    const pause = paused >= PAUSE_MS ? ` This process did not run for ${Math.round(paused / 1000)} s before (a debugger, a suspended machine, a long synchronous step), and Redis did not answer after it.` : '';
    return new PipelineError(
      this.op,
      undefined,
      e,
      `${this.opName} on ${this.where}: ${what}: ${detail}${last}.${pause} Check that redis-server runs there and this host can reach it; ${this.pending.size} elements in flight were not delivered.`,
    );
  }

  /** Delivers a failure to every element in flight, and to any later launch. */
  private fail(e: PipelineError): void {
    if (this.failure !== null) return;
    this.failure = e;
    this.abandoned = [...this.pending.keys()];
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(e);
  }

  private launch(x: unknown, index: number): Promise<unknown[]> {
    if (this.failure !== null) return Promise.reject(this.failure);
    let bytes: Buffer;
    try {
      bytes = encodeElement(x);
    } catch (e) {
      const u = findUncloneable(x);
      const what = u === null ? describeThrown(e) : `it holds ${u.what}${atPath(u)}`;
      return Promise.reject(new PipelineError(this.op, index, e, `${this.opName} cannot send element ${index} to ${this.where}: ${what}. Elements travel v8-serialised: plain data, typed arrays, Maps, Sets, Dates.`));
    }
    return new Promise<unknown[]>((resolve, reject) => {
      const t0 = now();
      if (this.c !== null) {
        this.c.calls++;
        this.c.bytesShipped = (this.c.bytesShipped ?? 0) + bytes.length;
      }
      // Attempts cover the worker's own failures (Redis under it): a fn's error is a result, never retried.
      const data: JobData = { run: this.run, index, mode: this.cfg.mode, exportName: this.cfg.exportName, module: this.moduleName, x: bytes.toString('base64'), timeoutMs: this.cfg.timeoutMs };
      const job: Job = { name: this.cfg.mode, data, opts: { jobId: `${this.run}-${index}`, removeOnComplete: true, removeOnFail: true, attempts: 3, backoff: { type: 'fixed', delay: 200 } } };
      this.pending.set(index, { resolve, reject, x, t0, job });
      this.toAdd.push(job);
      if (this.toAdd.length === 1) setImmediate(() => this.flush());
    });
  }

  /**
   * Queues the jobs launched since the last flush in one round trip (`addBulk`): the engine starts
   * elements one at a time, and a round trip each would cost the main thread and Redis more than
   * the elements' own handling.
   */
  private flush(): void {
    const jobs = this.toAdd;
    this.toAdd = [];
    if (jobs.length === 0) return;
    this.start()
      .then(() => {
        if (this.closing !== null || this.failure !== null) return;
        return (this.queue as BullQueue).addBulk(jobs);
      })
      .catch(async (e: unknown) => {
        // Once connected, a failed add may be a pause or a reconnect: recovered() adds what is missing.
        if (!(e instanceof PipelineError) && this.connected && (await this.recovered())) return;
        this.fail(e instanceof PipelineError ? e : this.redisFailure(e, this.connected ? 'lost the connection to Redis' : 'cannot reach Redis'));
      });
  }

  private receive(b: Buffer): void {
    let r: ResultRecord;
    try {
      r = decodeResult(b);
    } catch {
      return; // Not a record of ours: nothing waits for it.
    }
    const p = this.pending.get(r.index);
    // A result for an index already delivered: the job ran twice (its first worker died after
    // pushing). One result per index is the contract; the later one is dropped.
    if (p === undefined) return;
    this.pending.delete(r.index);
    this.lastProgress = Date.now();
    this.account(r, b.length, p.t0);
    if (!r.ok) {
      const err = r.error ?? { name: 'Error', message: 'unknown failure' };
      const cause = new Error(err.message);
      cause.name = err.name;
      if (err.stack !== undefined) cause.stack = err.stack;
      p.reject(new PipelineError(this.op, r.index, cause));
      return;
    }
    if (this.cfg.mode === 'filter') p.resolve(r.value ? [p.x] : []);
    else if (this.cfg.mode === 'flatMap') p.resolve(r.value as unknown[]);
    else p.resolve([r.value]);
  }

  private account(r: ResultRecord, bytes: number, t0: number): void {
    const c = this.c;
    const w = r.worker;
    const seen = this.workers.get(w.id);
    if (seen === undefined) {
      this.workers.set(w.id, { cpuSeconds: w.cpuSeconds, jobsDone: w.jobsDone, slotSeconds: w.slotSeconds, concurrency: w.concurrency, host: w.host ?? w.id.slice(0, w.id.lastIndexOf(':')), cores: w.cores });
    } else {
      // Stamps of one worker may arrive out of order (its jobs finish concurrently): count only growth.
      if (c !== null && w.cpuSeconds > seen.cpuSeconds) c.workerCpuSeconds += w.cpuSeconds - seen.cpuSeconds;
      if (c !== null && w.jobsDone > seen.jobsDone) {
        c.remoteSlotJobs = (c.remoteSlotJobs ?? 0) + (w.jobsDone - seen.jobsDone);
        c.remoteSlotSeconds = (c.remoteSlotSeconds ?? 0) + (w.slotSeconds - seen.slotSeconds);
        seen.jobsDone = w.jobsDone;
        seen.slotSeconds = w.slotSeconds;
      }
      seen.cpuSeconds = Math.max(seen.cpuSeconds, w.cpuSeconds);
    }
    if (c === null) return;
    this.countCpu();
    if (w.hostClock !== undefined) {
      const host = w.host ?? w.id.slice(0, w.id.lastIndexOf(':'));
      const last = this.hostClocks.get(host);
      // Readings of one host may arrive out of order (its workers report independently): count only forward steps.
      if (last === undefined) this.hostClocks.set(host, w.hostClock);
      else if (w.hostClock[0] > last[0] && w.hostClock[1] >= last[1]) {
        c.remoteHostWallSeconds = (c.remoteHostWallSeconds ?? 0) + (w.hostClock[0] - last[0]);
        c.remoteHostIdleSeconds = (c.remoteHostIdleSeconds ?? 0) + (w.hostClock[1] - last[1]);
        this.hostClocks.set(host, w.hostClock);
      }
    }
    const latency = (now() - t0) / 1000;
    const wait = Math.max(0, r.queueWaitMs / 1000);
    c.bytesShipped = (c.bytesShipped ?? 0) + bytes;
    c.remoteServiceSeconds = (c.remoteServiceSeconds ?? 0) + r.serviceSeconds;
    c.remoteQueueWaitSeconds = (c.remoteQueueWaitSeconds ?? 0) + wait;
    c.remoteRoundTripSeconds = (c.remoteRoundTripSeconds ?? 0) + Math.max(0, latency - r.serviceSeconds - wait);
    c.asyncLatencySeconds += latency;
    c.asyncCalls++;
    if (seen === undefined) {
      c.remoteWorkers = this.workers.size;
      let concurrency = 0;
      const cores = new Map<string, number>();
      for (const s of this.workers.values()) {
        concurrency += s.concurrency;
        cores.set(s.host, s.cores);
      }
      c.remoteConcurrency = concurrency;
      c.remoteCores = [...cores.values()].reduce((a, b) => a + b, 0);
      c.remoteHosts = cores.size;
      const here = hostId();
      let local = 0;
      for (const s of this.workers.values()) if (s.host === here) local++;
      c.remoteWorkersOnConsumerHost = local;
    }
  }

  /**
   * Ends the pass, however it ends (completion, a break, an error): stops the engine, marks the
   * run ended, removes its jobs still queued, and closes the connections. A job a worker holds
   * finishes, or is given up on once the worker sees the run ended, and its result is refused;
   * one whose worker died is skipped by the worker that takes it next.
   */
  private async stop(): Promise<void> {
    await this.engine.close();
    if (this.timer !== null) clearInterval(this.timer);
    const ids = [...new Set([...this.pending.keys(), ...this.abandoned])];
    this.pending.clear();
    const conn = this.conn;
    const queue = this.queue;
    if (this.started !== null) await this.started.catch(() => undefined);
    await this.resyncing;
    this.countCpu(true);
    if (this.failure === null) await Promise.race([this.countRedisCpu(), new Promise((r) => setTimeout(r, 200).unref())]);
    if (conn !== null && conn.status === 'ready') {
      const name = this.cfg.cluster.name;
      const cleanup = (async () => {
        // The run ends first: a worker that takes one of these jobs now skips it. With nothing outstanding no worker holds a job of it.
        if (ids.length > 0) await conn.set(runKey(name, this.run), RUN_ENDED, 'PX', RUN_ENDED_TTL_MS);
        else await conn.del(runKey(name, this.run));
        if (queue !== null) await Promise.all(ids.map((i) => queue.remove(`${this.run}-${i}`).catch(() => 0)));
        await conn.del(resultsKey(name, this.run));
      })();
      await Promise.race([cleanup.catch(() => undefined), new Promise((r) => setTimeout(r, this.cfg.cluster.connectTimeoutMs).unref())]);
    }
    if (queue !== null) await Promise.race([queue.close().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
    this.reader?.disconnect();
    conn?.disconnect();
  }
}

export function openClusterMap(node: OpNode, upstream: Chunks<unknown>, cfg: ClusterMapConfig): Chunks<unknown> {
  const input = node.inputs[0];
  return new ClusterMap(upstream, input.counters, node.counters, cfg, { kind: node.kind, key: node.key, site: node.site });
}
