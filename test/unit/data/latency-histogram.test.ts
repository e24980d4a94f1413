import assert from 'node:assert/strict';
import { join } from 'node:path';
import { range } from 'plumber-data';
import { addLatency, LATENCY_BUCKETS } from '../../../src/data/tracing';
import { traced } from './helpers';

// The per-call latency spread of a map (issue 54 part 3): what prices a slow call holding back the
// calls behind it when output keeps its order.
const MODULE = join(__dirname, '../../fixtures/data/cpu-work.ts');
const sum = (h: readonly number[] | undefined): number => (h ?? []).reduce((a, b) => a + b, 0);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('plumber-data latency histograms', function () {
  this.timeout(60_000);

  it('puts a call in the power-of-two bucket of its microseconds', () => {
    assert.equal(addLatency(undefined, 0.5e-6).length, LATENCY_BUCKETS);
    assert.equal(addLatency(undefined, 0.5e-6)[0], 1);
    assert.equal(addLatency(undefined, 3e-6)[1], 1);
    assert.equal(addLatency(undefined, 1e-3)[9], 1); // 1000 µs: 512 ≤ x < 1024
    assert.equal(addLatency(undefined, 1e6)[LATENCY_BUCKETS - 1], 1);
    const h = addLatency(undefined, 1e-3, 3);
    assert.equal(addLatency(h, 1e-3)[9], 4);
  });

  it("counts an async map's calls by latency: the slow calls land apart from the fast ones", async () => {
    // Every tenth call waits 40 ms, the others 2 ms: two clusters of buckets.
    const { tracer, value } = traced(() => range(40).map(async (x: number) => (await sleep(x % 10 === 0 ? 40 : 2), x), { parallelism: 4 }));
    assert.deepEqual(await value.toArray(), [...Array(40).keys()]);
    const h = tracer.only('map').counters.latencyHistogram;
    assert.ok(h !== undefined);
    assert.equal(sum(h), 40);
    // 40 ms ≥ 2^15 µs (32.8 ms); 2 ms timers fire well under that.
    assert.equal(sum(h.slice(15)), 4, JSON.stringify(h));
    assert.equal(sum(h.slice(0, 15)), 36);
  });

  it("counts a worker map's calls and tasks, and nothing for a sync map on the main thread", async () => {
    const { tracer, value } = traced(() => range(200).map((x: number) => x, { placement: 'worker', module: MODULE, exportName: 'hashElement', parallelism: 2 }));
    await value.toArray();
    const c = tracer.only('map').counters;
    assert.equal(sum(c.latencyHistogram), 200);
    assert.equal(sum(c.taskHistogram), c.workerTasks);
    const plain = traced(() => range(10).map((x: number) => x + 1));
    await plain.value.toArray();
    assert.equal(plain.tracer.only('map').counters.latencyHistogram, undefined);
  });
});
