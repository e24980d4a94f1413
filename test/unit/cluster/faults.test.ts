/**
 * The cluster under faults, with a real redis-server and real worker processes: a fault either
 * leaves every element delivered once and in order, or fails the pass with an error naming its
 * cause (and the element, where there is one) — never a hang — and no job of the run stays in Redis.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Queue as BullQueue } from 'bullmq';
import { connect, PipelineError, range } from '../../../src/data/index';
import { loadBull } from '../../../src/data/cluster/redis';
import { alive, gone } from '../../helpers/processes';
import { freePort, Processes, TRANSFORMS } from './harness';

const { Queue } = loadBull();
const CONSUMER = join(__dirname, 'fixtures', 'consumer.ts');

async function rejection(p: Promise<unknown>): Promise<PipelineError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof PipelineError, `expected a PipelineError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected the pipeline to fail');
}

/** The jobs of cluster `name` still in Redis once workers have finished or skipped what they held (polled up to a hang guard). */
async function jobsLeft(url: string, name: string): Promise<number> {
  const queue: BullQueue = new Queue(name, { connection: { url } as never, prefix: 'plumber' });
  try {
    let left = Infinity;
    for (let i = 0; i < 100; i++) {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'paused', 'failed', 'completed', 'waiting-children');
      left = Object.values(counts).reduce((a, b) => a + b, 0);
      if (left === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    return left;
  } finally {
    await queue.close();
  }
}

describe('the cluster under faults', function () {
  this.timeout(60_000);
  const procs = new Processes();
  afterEach(() => procs.killAll());

  it('fails with the element and "the worker running it died 3 times" when an element kills every worker that runs it, and the fleet survives', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    await procs.redis(port);
    // Four jobs at a time per worker: the neighbours that die with element 50 must not be blamed.
    const workers = await Promise.all([0, 1, 2, 3].map(() => procs.worker(port, 'poison', 4, 1000)));
    const cluster = connect({ redis: url, name: 'poison', noWorkerTimeoutMs: 20_000 });
    const seen: number[] = [];
    const e = await rejection(
      (async () => {
        for await (const x of range(100).map(
          async function exitsOnFifty(x: number) {
            return x;
          },
          { placement: cluster, module: TRANSFORMS, parallelism: 8 },
        ))
          seen.push(x);
      })(),
    );
    assert.equal(e.index, 50);
    assert.match(e.message, /the worker running it died 3 times \(.*\), 2 of them running nothing else/);
    assert.match(e.message, /map\(exitsOnFifty\)/);
    assert.deepEqual(
      seen,
      Array.from({ length: 50 }, (_, i) => i),
    );
    assert.equal(workers.filter((w) => alive(w.pid as number)).length, 1);
    assert.equal(await jobsLeft(url, 'poison'), 0);
  });

  it('names the element the workers died running when they are all gone (3 workers, as in the issue)', async () => {
    const port = await freePort();
    await procs.redis(port);
    await Promise.all([0, 1, 2].map(() => procs.worker(port, 'fleet', 1, 1000)));
    const cluster = connect({ redis: `redis://127.0.0.1:${port}`, name: 'fleet', noWorkerTimeoutMs: 2000 });
    const e = await rejection(
      range(100)
        .map(
          function exitsOnFifty(x: number) {
            return x;
          },
          { placement: cluster, parallelism: 8 },
        )
        .toArray(),
    );
    assert.match(e.message, /no worker has served cluster 'fleet'/);
    assert.match(e.message, /The workers died running element 50 \(2 deaths\): the fn likely kills its worker there/);
  });

  it('refuses an export name that only an inherited member answers to (constructor)', async () => {
    const port = await freePort();
    await procs.redis(port);
    await procs.worker(port, 'own', 2);
    const cluster = connect({ redis: `redis://127.0.0.1:${port}`, name: 'own' });
    const e = await rejection(
      range(3)
        .map((x: number) => x, { placement: cluster, exportName: 'constructor' })
        .toArray(),
    );
    assert.equal(e.index, 0);
    assert.match(e.message, /no function export 'constructor'/);
  });

  it("gives up on an element whose promise never settles after the map's timeoutMs, naming it", async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    await procs.redis(port);
    await procs.worker(port, 'hangs', 4);
    const cluster = connect({ redis: url, name: 'hangs' });
    const e = await rejection(
      range(10)
        .map(
          function hangsOnFive(x: number) {
            return x;
          },
          { placement: cluster, timeoutMs: 500 },
        )
        .toArray(),
    );
    assert.equal(e.index, 5);
    assert.match(e.message, /map\(hangsOnFive\) did not settle within 500 ms \(timeoutMs\)/);
    assert.equal(await jobsLeft(url, 'hangs'), 0);
  });

  it("gives up on such an element after the worker's --timeout-ms when the map sets no limit", async () => {
    const port = await freePort();
    await procs.redis(port);
    await procs.worker(port, 'limited', 4, 1000, ['--timeout-ms', '400']);
    const cluster = connect({ redis: `redis://127.0.0.1:${port}`, name: 'limited' });
    const e = await rejection(
      range(10)
        .map(
          function hangsOnFive(x: number) {
            return x;
          },
          { placement: cluster },
        )
        .toArray(),
    );
    assert.equal(e.index, 5);
    assert.match(e.message, /did not settle within 400 ms/);
  });

  it('fails naming the outstanding elements when workers serve the cluster but nothing arrives, and the workers let go of them', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    await procs.redis(port);
    await procs.worker(port, 'stuck', 4);
    const cluster = connect({ redis: url, name: 'stuck', noProgressTimeoutMs: 3000 });
    const e = await rejection(
      range(10)
        .map(
          function hangsOnFive(x: number) {
            return x;
          },
          { placement: cluster, parallelism: 4 },
        )
        .toArray(),
    );
    assert.match(e.message, /no result has arrived from cluster 'stuck'/);
    assert.match(e.message, /while 1 worker serves it, with element 5 outstanding/);
    assert.match(e.message, /timeoutMs/);
    // The hung job ends once its worker sees the run ended.
    assert.equal(await jobsLeft(url, 'stuck'), 0);
  });

  it("removes the run's queued jobs when the pass fails (no worker serves the cluster)", async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    await procs.redis(port);
    const cluster = connect({ redis: url, name: 'orphans', noWorkerTimeoutMs: 1000 });
    const e = await rejection(
      range(50)
        .map(
          function slowDouble(x: number) {
            return x;
          },
          { placement: cluster, parallelism: 16 },
        )
        .toArray(),
    );
    assert.match(e.message, /no worker has served cluster 'orphans'/);
    assert.match(e.message, /with elements 0, 1, 2, .*, 15 waiting/);
    assert.equal(await jobsLeft(url, 'orphans'), 0);
  });

  for (const downMs of [300, 2000]) {
    it(`delivers every element once, in order, when Redis restarts empty ${downMs} ms after it was killed`, async () => {
      const port = await freePort();
      const url = `redis://127.0.0.1:${port}`;
      const redis = await procs.redis(port);
      await Promise.all([procs.worker(port, 'restart', 8), procs.worker(port, 'restart', 8)]);
      const cluster = connect({ redis: url, name: 'restart' });
      const out: number[] = [];
      let restarted: Promise<ChildProcess> | null = null;
      for await (const x of range(1000).map(
        async function slowerDouble(x: number) {
          return x;
        },
        { placement: cluster, module: TRANSFORMS, parallelism: 16 },
      )) {
        out.push(x);
        if (out.length === 100) {
          await procs.kill(redis);
          restarted = new Promise((r) => setTimeout(r, downMs)).then(() => procs.redis(port));
        }
      }
      assert.ok(restarted !== null && alive((await restarted).pid as number));
      assert.deepEqual(
        out,
        Array.from({ length: 1000 }, (_, i) => i * 2),
      );
      assert.equal(await jobsLeft(url, 'restart'), 0);
    });
  }
});

describe("a cluster map's timeoutMs", () => {
  it('is refused without a cluster placement, and unless it is a number of milliseconds above 0', () => {
    assert.throws(() => range(3).map((x: number) => x, { timeoutMs: 100 }), /applies to a map placed on a cluster/);
    const cluster = connect({ redis: 'redis://127.0.0.1:1', name: 'unused' });
    for (const bad of [0, -1, Number.NaN, Infinity, '100']) {
      assert.throws(
        () =>
          range(3).map(
            function slowDouble(x: number) {
              return x;
            },
            { placement: cluster, timeoutMs: bad as number },
          ),
        /needs a number of milliseconds above 0/,
      );
    }
  });
});

describe('the cluster with its consumer paused', function () {
  this.timeout(120_000);
  const procs = new Processes();
  let consumer: ChildProcess | null = null;
  afterEach(async () => {
    if (consumer !== null && consumer.exitCode === null && consumer.signalCode === null) consumer.kill('SIGKILL');
    if (consumer !== null) await gone(consumer.pid as number);
    await procs.killAll();
  });

  /** Starts the consumer process on `url` and resolves once it has taken its first 50 elements. */
  async function startConsumer(url: string, n: number): Promise<{ c: ChildProcess; output(): string; exited: Promise<number | null> }> {
    const c = spawn(process.execPath, ['--import', 'tsx', CONSUMER], { env: { ...process.env, PLUMBER_TEST_REDIS: url, PLUMBER_TEST_N: String(n) }, stdio: ['ignore', 'pipe', 'pipe'] });
    consumer = c;
    let out = '';
    c.stdout?.on('data', (b: Buffer) => (out += b.toString()));
    c.stderr?.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((r) => c.once('exit', (code) => r(code)));
    await new Promise<void>((resolve, reject) => {
      c.stdout?.on('data', () => {
        if (out.includes('started')) resolve();
      });
      c.once('exit', () => reject(new Error(`the consumer exited before it started:\n${out}`)));
    });
    return { c, output: () => out, exited };
  }

  it("delivers every element once, in order, after the consumer was stopped (SIGSTOP) for 35 s, past the run key's expiry", async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    await procs.redis(port);
    await Promise.all([procs.worker(port, 'paused', 8), procs.worker(port, 'paused', 8)]);
    const { c, output, exited } = await startConsumer(url, 2000);
    c.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, 35_000));
    c.kill('SIGCONT');
    assert.equal(await exited, 0, output());
    assert.match(output(), /delivered 2000 in order/);
    assert.equal(await jobsLeft(url, 'paused'), 0);
  });

  it('says that the process had been paused when Redis is gone after the pause', async () => {
    const port = await freePort();
    const redis = await procs.redis(port);
    await procs.worker(port, 'paused', 8);
    const { c, output, exited } = await startConsumer(`redis://127.0.0.1:${port}`, 100_000);
    c.kill('SIGSTOP');
    await procs.kill(redis);
    await new Promise((r) => setTimeout(r, 7000));
    c.kill('SIGCONT');
    assert.equal(await exited, 1, output());
    assert.match(output(), /failed: .*lost the connection to Redis/);
    assert.match(output(), /This process did not run for \d+ s before \(a debugger, a suspended machine, a long synchronous step\)/);
  });
});
