import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { Queue as BullQueue } from 'bullmq';
import type { Redis as IORedis } from 'ioredis';
import { connect, from, PipelineError, range } from '../../../src/data/index';
import { newCounters, TRACER_KEY, type OpCounters, type OpInfo, type Tracer } from '../../../src/data/tracing';
import { loadBull } from '../../../src/data/cluster/redis';
import { alive } from '../../helpers/processes';
import { CLI, freePort, Processes, TRANSFORMS } from './harness';

const { Queue, Redis } = loadBull();

/** A tracer that keeps each operator's counters, so a test can read what the library recorded. */
function trace(): { counters: Map<string, OpCounters>; uninstall(): void } {
  const counters = new Map<string, OpCounters>();
  const tracer: Tracer = {
    register(info: OpInfo) {
      const c = newCounters();
      counters.set(info.kind, c);
      return c;
    },
  };
  (globalThis as { [TRACER_KEY]?: Tracer })[TRACER_KEY] = tracer;
  return { counters, uninstall: () => delete (globalThis as { [TRACER_KEY]?: Tracer })[TRACER_KEY] };
}

async function rejection(p: Promise<unknown>): Promise<PipelineError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof PipelineError, `expected a PipelineError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected the pipeline to fail');
}

describe('a stage placed on a cluster of worker processes (BullMQ on Redis)', function () {
  this.timeout(60_000);
  const procs = new Processes();
  let port = 0;
  let url = '';

  before(async () => {
    port = await freePort();
    url = `redis://127.0.0.1:${port}`;
    await procs.redis(port);
    await procs.worker(port, 'tests', 8);
    await procs.worker(port, 'tests', 8);
  });

  after(() => procs.killAll());

  it('maps every element, in input order, on the workers', async () => {
    const cluster = connect({ redis: url, name: 'tests' });
    const out = await range(300)
      .map(
        async function slowDouble(x: number) {
          return -x;
        },
        { placement: cluster, module: TRANSFORMS, parallelism: 16 },
      )
      .toArray();
    // The local body returns -x: only the workers' export (x * 2) could have produced these.
    assert.deepEqual(
      out,
      Array.from({ length: 300 }, (_, i) => i * 2),
    );
  });

  it('ships typed arrays in and Maps back, as structured clone does', async () => {
    const cluster = connect({ redis: url, name: 'tests' });
    const input = [0, 1, 2].map((id) => ({ id, values: new Float32Array([id, 1, 2]) }));
    const out = await from(input)
      .map(
        function summarize(x: (typeof input)[number]) {
          return x;
        },
        { placement: cluster, parallelism: 4 },
      )
      .toArray();
    assert.deepEqual(
      out,
      [0, 1, 2].map(
        (id) =>
          new Map([
            ['id', id],
            ['sum', id + 3],
          ]),
      ),
    );
  });

  it('filters and flat-maps on the workers', async () => {
    const cluster = connect({ redis: url, name: 'tests' });
    const evens = await range(20)
      .filter(
        function isEven() {
          return true;
        },
        { placement: cluster, parallelism: 8 },
      )
      .toArray();
    assert.deepEqual(evens, [0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
    const doubled = await range(5)
      .flatMap(
        function twice(): number[] {
          return [];
        },
        { placement: cluster, parallelism: 8 },
      )
      .toArray();
    assert.deepEqual(doubled, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]);
  });

  it('keeps at most `parallelism` elements in flight, and records the workers it saw and the bytes it shipped', async () => {
    const t = trace();
    try {
      const cluster = connect({ redis: url, name: 'tests' });
      const ds = range(200).map(
        async function slowDouble(x: number) {
          return x;
        },
        { placement: cluster, parallelism: 6 },
      );
      const out = await ds.toArray();
      assert.equal(out.length, 200);
      const c = t.counters.get('map') as OpCounters;
      assert.ok(c.inFlightHighWater >= 2 && c.inFlightHighWater <= 6, `in flight at most ${c.inFlightHighWater}`);
      assert.equal(c.calls, 200);
      assert.equal(c.remoteWorkers, 2);
      assert.equal(c.remoteConcurrency, 16);
      assert.ok((c.bytesShipped ?? 0) > 200 * 2, `bytes shipped: ${c.bytesShipped}`);
      assert.ok((c.remoteServiceSeconds ?? 0) > 0 && (c.remoteRoundTripSeconds ?? -1) >= 0);
    } finally {
      t.uninstall();
    }
  });

  it('delivers every element with deterministic: false, in whatever order they finish', async () => {
    const cluster = connect({ redis: url, name: 'tests' });
    const out = await range(100)
      .map(
        async function slowDouble(x: number) {
          return x;
        },
        { placement: cluster, parallelism: 16, deterministic: false },
      )
      .toArray();
    assert.deepEqual(
      [...out].sort((a, b) => a - b),
      Array.from({ length: 100 }, (_, i) => i * 2),
    );
  });

  it("fails with the operator and the index of the element whose fn threw, and the worker's error as the cause", async () => {
    const cluster = connect({ redis: url, name: 'tests' });
    const seen: number[] = [];
    const e = await rejection(
      (async () => {
        for await (const x of range(20).map(
          function failsOnSeven(x: number) {
            return x;
          },
          { placement: cluster, parallelism: 4 },
        ))
          seen.push(x);
      })(),
    );
    assert.equal(e.op.kind, 'map');
    assert.equal(e.index, 7);
    assert.equal((e.cause as Error).name, 'RangeError');
    assert.match(e.message, /seven is not allowed/);
    // Elements before the failure arrive first, as locally.
    assert.deepEqual(seen, [0, 1, 2, 3, 4, 5, 6]);
  });

  it('says which export is missing when the workers do not serve it', async () => {
    const cluster = connect({ redis: url, name: 'tests' });
    const e = await rejection(
      range(3)
        .map(
          function notExported(x: number) {
            return x;
          },
          { placement: cluster },
        )
        .toArray(),
    );
    assert.equal(e.index, 0);
    assert.match(e.message, /no function export 'notExported'/);
  });

  it("cancels the run's queued jobs and removes its keys, but for the ended run's mark, when the loop breaks", async () => {
    const cluster = connect({ redis: url, name: 'tests' });
    const got: number[] = [];
    for await (const x of range(1000).map(
      function lingering(x: number) {
        return x;
      },
      { placement: cluster, parallelism: 64 },
    )) {
      got.push(x);
      if (got.length === 3) break;
    }
    assert.deepEqual(got, [0, 1, 2]);
    const queue: BullQueue = new Queue('tests', { connection: { url } as never, prefix: 'plumber' });
    const redis: IORedis = new Redis(url, {});
    try {
      const { waiting, prioritized, delayed } = await queue.getJobCounts('waiting', 'prioritized', 'delayed');
      assert.deepEqual({ waiting, prioritized, delayed }, { waiting: 0, prioritized: 0, delayed: 0 });
      // Jobs the workers held finish on their own; then nothing of the run is left.
      for (let i = 0; i < 100 && (await queue.getJobCounts('active')).active > 0; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal((await queue.getJobCounts('active')).active, 0);
      // Only the ended runs' keys stay, for a while, so that workers skip jobs they still hold.
      const left = await redis.keys('plumber:tests:r*');
      assert.ok(
        left.every((k) => k.startsWith('plumber:tests:run:')),
        `left behind: ${left.join(', ')}`,
      );
      for (const k of left) {
        assert.equal(await redis.get(k), 'ended');
        assert.ok((await redis.pttl(k)) > 0);
      }
    } finally {
      await queue.close();
      redis.disconnect();
    }
  });
});

describe('a cluster stage when a worker dies mid-run', function () {
  this.timeout(90_000);
  const procs = new Processes();
  after(() => procs.killAll());

  it("re-runs the dead worker's jobs on another worker: no element lost, none twice", async () => {
    const port = await freePort();
    await procs.redis(port);
    const doomed = await procs.worker(port, 'faults', 8, 1000);
    await procs.worker(port, 'faults', 8, 1000);
    const cluster = connect({ redis: `redis://127.0.0.1:${port}`, name: 'faults' });
    const out: number[] = [];
    let killed = false;
    for await (const x of range(400).map(
      async function slowerDouble(x: number) {
        return x;
      },
      { placement: cluster, parallelism: 32 },
    )) {
      out.push(x);
      // Mid-run, with both workers holding jobs: the doomed one dies holding its share.
      if (out.length === 100) killed = await procs.kill(doomed);
    }
    assert.ok(killed && !alive(doomed.pid as number));
    assert.deepEqual(
      out,
      Array.from({ length: 400 }, (_, i) => i * 2),
    );
  });
});

describe('a cluster stage when Redis is not there', function () {
  this.timeout(60_000);
  const procs = new Processes();
  after(() => procs.killAll());

  it('fails at the start with a clear error when Redis cannot be reached', async () => {
    const port = await freePort();
    const cluster = connect({ redis: `redis://127.0.0.1:${port}`, name: 'nowhere', connectTimeoutMs: 1000 });
    const e = await rejection(
      range(10)
        .map(
          function slowDouble(x: number) {
            return x;
          },
          { placement: cluster },
        )
        .toArray(),
    );
    assert.match(e.message, /cannot reach Redis/);
    assert.match(e.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
  });

  it('fails with a clear error, not a hang, when Redis stops mid-run', async () => {
    const port = await freePort();
    const redis = await procs.redis(port);
    await procs.worker(port, 'lost', 4);
    const cluster = connect({ redis: `redis://127.0.0.1:${port}`, name: 'lost', connectTimeoutMs: 1000 });
    const seen: number[] = [];
    const e = await rejection(
      (async () => {
        for await (const x of range(100_000).map(
          async function slowDouble(x: number) {
            return x;
          },
          { placement: cluster, parallelism: 8 },
        )) {
          seen.push(x);
          if (seen.length === 20) await procs.kill(redis);
        }
      })(),
    );
    assert.match(e.message, /lost the connection to Redis/);
    assert.ok(seen.length >= 20 && seen.length < 100_000);
  });

  it('fails with a clear error when no worker serves the cluster', async () => {
    const port = await freePort();
    await procs.redis(port);
    const cluster = connect({ redis: `redis://127.0.0.1:${port}`, name: 'empty', noWorkerTimeoutMs: 1000 });
    const e = await rejection(
      range(10)
        .map(
          function slowDouble(x: number) {
            return x;
          },
          { placement: cluster },
        )
        .toArray(),
    );
    assert.match(e.message, /no worker has served cluster 'empty'/);
    assert.match(e.message, /npx plumber-data worker --redis redis:\/\/127\.0\.0\.1/);
  });
});

describe('plumber-data worker', () => {
  it('prints its usage and exits 2 when an option is missing', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'worker', '--redis', 'redis://127.0.0.1:1'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--name is required/);
    assert.match(r.stderr, /usage: plumber-data worker/);
  });
});

describe('connect()', () => {
  it('rejects a URL that is not redis:// and a name workers could not be started with', () => {
    assert.throws(() => connect({ redis: 'localhost:6379', name: 'x' }), /redis:\/\/host:6379/);
    assert.throws(() => connect({ redis: 'redis://h:1', name: 'a:b' }), /letters, digits/);
  });
});
