/**
 * `npm run bench:cluster -- --faults [--json]`: the cluster under faults, with a real
 * redis-server and real worker processes (a fresh set per scenario). Each scenario must end in
 * every element delivered exactly once and in order, or in an error that names its cause (and
 * the element, where there is one); afterwards no job of the run may stay in Redis. Prints a
 * table: scenario, outcome, whether that outcome is the expected one, elements delivered, jobs
 * left, seconds. Every wait is bounded, so a scenario that would hang shows as a timeout.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connect, type Dataset, range } from '../../src/data/index';
import { loadBull } from '../../src/data/cluster/redis';
import { rowsTable } from '../results';
import { freePort, startRedis, startWorker, stop, track } from './procs';

const FAULTY = path.join(__dirname, 'faulty.ts');
const CONSUMER = path.join(__dirname, 'paused-consumer.ts');
/** A scenario still running after this long is reported as a hang. */
const HANG_MS = 90_000;

interface Setup {
  workers: number;
  concurrency: number;
  lockMs?: number;
  nodeArgs?: string[];
  /** Redis with an append-only file (fsync always) instead of none. */
  persistent?: boolean;
}

/** What a scenario's consumer saw. */
interface Seen {
  out: number[];
  error?: string;
}

/** A scenario's world: its Redis, workers, and what it may do to them. */
interface World {
  url: string;
  name: string;
  port: number;
  redis: ChildProcess;
  workers: ChildProcess[];
  setup: Setup;
  aofDir?: string;
  /** A fault still under way (Redis being restarted): waited for before the teardown. */
  pending?: Promise<unknown>;
}

interface Scenario {
  name: string;
  setup: Setup;
  /** Elements mapped; with `error`, the outcome expected is that error, else all n in order. */
  n: number;
  error?: RegExp;
  run(w: World): Promise<Seen>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** range(n) mapped on the scenario's cluster with the workers' export `exportName`. */
function onCluster(w: World, n: number, exportName: string, o: { parallelism: number; timeoutMs?: number; noProgressTimeoutMs?: number; noWorkerTimeoutMs?: number }): Dataset<number> {
  const cluster = connect({ redis: w.url, name: w.name, noProgressTimeoutMs: o.noProgressTimeoutMs, noWorkerTimeoutMs: o.noWorkerTimeoutMs });
  return range(n).map((x: number) => x, { placement: cluster, exportName, parallelism: o.parallelism, timeoutMs: o.timeoutMs });
}

/** Iterates `ds`, calling `onElement` with the count so far; returns what arrived and the error, if any. */
async function consume(ds: Dataset<number>, onElement: (count: number) => Promise<void> | void = () => undefined): Promise<Seen> {
  const out: number[] = [];
  try {
    for await (const x of ds) {
      out.push(x);
      await onElement(out.length);
    }
    return { out };
  } catch (e) {
    return { out, error: e instanceof Error ? e.message : String(e) };
  }
}

function redisRestart(downMs: number, persistent: boolean): Scenario {
  return {
    name: `Redis killed and restarted ${downMs / 1000} s later (${persistent ? 'append-only file' : 'no persistence'})`,
    setup: { workers: 2, concurrency: 8, persistent },
    n: 1500,
    run: (w) =>
      consume(onCluster(w, 1500, 'fortyMs', { parallelism: 16 }), async (count) => {
        if (count !== 200) return;
        await stop(w.redis, 'SIGKILL');
        w.pending = sleep(downMs).then(async () => (w.redis = await startRedis(w.port, w.aofDir)));
      }),
  };
}

function poison(fn: string, nodeArgs?: string[]): Scenario {
  const expect = fn === 'throwsOnFifty' ? /failed on element 50: fifty is not allowed/ : /failed on element 50: the worker running it died 3 times/;
  return {
    name: `a poison element: ${fn === 'exitsOnFifty' ? 'process.exit' : fn === 'throwsOnFifty' ? 'throws' : 'out of memory (64 MB heap)'} on element 50, 4 workers`,
    setup: { workers: 4, concurrency: 4, nodeArgs },
    n: 100,
    error: expect,
    run: (w) => consume(onCluster(w, 100, fn, { parallelism: 8 })),
  };
}

const SCENARIOS: Scenario[] = [
  redisRestart(300, false),
  redisRestart(2000, false),
  redisRestart(300, true),
  poison('exitsOnFifty'),
  poison('throwsOnFifty'),
  poison('oomOnFifty', ['--max-old-space-size=64']),
  {
    name: 'a hanging element (a promise that never settles), timeoutMs 1000',
    setup: { workers: 2, concurrency: 4 },
    n: 100,
    error: /failed on element 50: map\(hangsOnFifty\) did not settle within 1000 ms/,
    run: (w) => consume(onCluster(w, 100, 'hangsOnFifty', { parallelism: 8, timeoutMs: 1000 })),
  },
  {
    name: 'a hanging element, no timeoutMs, noProgressTimeoutMs 3000',
    setup: { workers: 2, concurrency: 4 },
    n: 100,
    error: /no result has arrived .* with element 50 outstanding/,
    run: (w) => consume(onCluster(w, 100, 'hangsOnFifty', { parallelism: 8, noProgressTimeoutMs: 3000 })),
  },
  {
    name: 'a worker killed (SIGKILL) every second and replaced',
    setup: { workers: 3, concurrency: 4 },
    n: 1500,
    run: async (w) => {
      let stopping = false;
      const killer = (async () => {
        while (!stopping) {
          await sleep(1000);
          if (stopping) break;
          const victim = w.workers.shift();
          if (victim !== undefined) await stop(victim, 'SIGKILL');
          w.workers.push(await startWorker(w.url, w.name, { module: FAULTY, concurrency: w.setup.concurrency, lockMs: 1000 }));
        }
      })();
      const seen = await consume(onCluster(w, 1500, 'fortyMs', { parallelism: 24 }));
      stopping = true;
      await killer;
      return seen;
    },
  },
  {
    name: 'all workers killed after 100 elements, noWorkerTimeoutMs 3000',
    setup: { workers: 2, concurrency: 4 },
    n: 1500,
    error: /no worker has served cluster .* waiting\. Start one/,
    run: (w) =>
      consume(onCluster(w, 1500, 'fortyMs', { parallelism: 16, noWorkerTimeoutMs: 3000 }), async (count) => {
        if (count === 100) for (const p of w.workers.splice(0)) await stop(p, 'SIGKILL');
      }),
  },
  {
    name: 'the consumer stopped (SIGSTOP) for 35 s, past the run key’s 30 s expiry',
    setup: { workers: 2, concurrency: 8 },
    n: 2000,
    run: (w) => pausedConsumer(w, 2000, 35_000),
  },
];

/** Runs the consumer in a process of its own, stops it for `pauseMs` after 50 elements, and reads what it saw. */
async function pausedConsumer(w: World, n: number, pauseMs: number): Promise<Seen> {
  const c = track(spawn(process.execPath, ['--import', 'tsx', CONSUMER, w.url, w.name, String(n)], { stdio: ['ignore', 'pipe', 'inherit'] }));
  let text = '';
  const exited = new Promise((r) => c.once('exit', r));
  await new Promise<void>((resolve) => {
    const on = (b: Buffer): void => {
      text += b.toString();
      if (text.includes('started')) {
        c.stdout?.off('data', on);
        resolve();
      }
    };
    c.stdout?.on('data', on);
    c.once('exit', () => resolve());
  });
  c.stdout?.on('data', (b: Buffer) => (text += b.toString()));
  c.kill('SIGSTOP');
  await sleep(pauseMs);
  c.kill('SIGCONT');
  await exited;
  const last = text.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(last) as Seen;
  } catch {
    return { out: [], error: `the consumer printed no result: ${text.trim()}` };
  }
}

/** The jobs of the cluster still in Redis once workers have finished or skipped what they held (waits up to 5 s for them). */
async function jobsLeft(url: string, name: string): Promise<number> {
  const { Queue } = loadBull();
  const queue = new Queue(name, { connection: { url, maxRetriesPerRequest: 1 } as never, prefix: 'plumber' });
  queue.on('error', () => undefined);
  try {
    let left = -1;
    for (let i = 0; i < 25; i++) {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'paused', 'failed', 'completed', 'waiting-children');
      left = Object.values(counts).reduce((a, b) => a + b, 0);
      if (left === 0) break;
      await sleep(200);
    }
    return left;
  } catch {
    return -1;
  } finally {
    await queue.close().catch(() => undefined);
  }
}

async function runOne(s: Scenario, index: number): Promise<Record<string, unknown>> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const aofDir = s.setup.persistent ? mkdtempSync(path.join(os.tmpdir(), 'plumber-faults-')) : undefined;
  const name = `faults${index}`;
  const redis = await startRedis(port, aofDir);
  const workers = await Promise.all(
    Array.from({ length: s.setup.workers }, () => startWorker(url, name, { module: FAULTY, concurrency: s.setup.concurrency, lockMs: s.setup.lockMs ?? 1000, nodeArgs: s.setup.nodeArgs })),
  );
  const w: World = { url, name, port, redis, workers, setup: s.setup, aofDir };
  const t0 = performance.now();
  const seen = await Promise.race([s.run(w), sleep(HANG_MS).then((): Seen => ({ out: [], error: `HANG: still running after ${HANG_MS / 1000} s` }))]);
  const seconds = (performance.now() - t0) / 1000;
  const inOrder = seen.out.length === s.n && seen.out.every((x, i) => x === i);
  const outcome = seen.error === undefined ? (inOrder ? 'delivered exactly once in order' : `WRONG: ${seen.out.length} elements, not 0..${s.n - 1} in order`) : `error: ${seen.error}`;
  const expected = s.error === undefined ? seen.error === undefined && inOrder : seen.error !== undefined && s.error.test(seen.error);
  await w.pending;
  const left = await jobsLeft(url, name);
  for (const p of [...w.workers, w.redis]) await stop(p, 'SIGKILL');
  if (aofDir !== undefined) rmSync(aofDir, { recursive: true, force: true });
  return { scenario: s.name, outcome: outcome.length > 240 ? `${outcome.slice(0, 240)}…` : outcome, asExpected: expected ? 'yes' : 'NO', delivered: seen.out.length, jobsLeft: left, seconds: Number(seconds.toFixed(1)) };
}

export async function runFaults(json: boolean): Promise<void> {
  const rows: Record<string, unknown>[] = [];
  for (let i = 0; i < SCENARIOS.length; i++) {
    const row = await runOne(SCENARIOS[i], i);
    rows.push(row);
    if (json) console.log(JSON.stringify({ bench: 'cluster-faults', ...row }));
    else console.error(`${row.asExpected === 'yes' ? 'ok ' : 'BAD'} ${row.scenario}: ${row.outcome} (${row.seconds} s)`);
  }
  if (!json) console.log(rowsTable(rows));
  if (rows.some((r) => r.asExpected !== 'yes' || r.jobsLeft !== 0)) process.exitCode = 1;
}
