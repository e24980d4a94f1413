import assert from 'node:assert/strict';
import { join } from 'node:path';
import { analyze } from '../../../src/model/index';
import { runProfile } from '../../../src/runner/spawn';
import { freePort, Processes } from './harness';

describe('a profile of a pipeline with a stage on a cluster (the real runner, Redis and a worker)', function () {
  this.timeout(120_000);
  const procs = new Processes();
  const saved = process.env.PLUMBER_TEST_REDIS;
  after(async () => {
    await procs.killAll();
    if (saved === undefined) delete process.env.PLUMBER_TEST_REDIS;
    else process.env.PLUMBER_TEST_REDIS = saved;
  });

  it('records the workers, their slots, queue wait, round trip and bytes shipped, and the plan sizes the cluster for a target', async () => {
    const port = await freePort();
    await procs.redis(port);
    await procs.worker(port, 'profiled', 4);
    // The runner's child process inherits the environment: the pipeline reads the URL from it.
    process.env.PLUMBER_TEST_REDIS = `redis://127.0.0.1:${port}`;
    const profile = await runProfile({ file: join(__dirname, 'fixtures', 'pipeline.ts'), seconds: 1, warmupSeconds: 0.3, timeoutSeconds: 60, probes: false });
    const op = profile.ops.find((o) => o.placement === 'remote');
    assert.ok(op !== undefined, `no remote op in ${JSON.stringify(profile.ops.map((o) => [o.kind, o.placement]))}`);
    assert.equal(op.kind, 'map');
    assert.equal(op.knobs.cluster, 'profiled');
    const c = op.counters;
    assert.ok(c.calls > 0);
    assert.equal(c.remoteWorkers, 1);
    assert.equal(c.remoteConcurrency, 4);
    assert.ok((c.remoteServiceSeconds ?? 0) > 0 && (c.remoteSlotSeconds ?? 0) >= 0 && (c.bytesShipped ?? 0) > 0);
    // The worker runs on this host, beside the consumer and Redis: one host, shared with the consumer, whose CPU and Redis's are counted.
    assert.equal(c.remoteHosts, 1);
    assert.equal(c.remoteWorkersOnConsumerHost, 1);
    assert.ok((c.remoteConsumerCpuSeconds ?? 0) > 0);
    assert.ok(c.remoteRedisCpuSeconds !== undefined && c.remoteRedisCpuSeconds >= 0);
    // The worker's host clock advanced while it served (Linux: /proc/uptime), so the model can tell what other work left free.
    assert.ok((c.remoteHostWallSeconds ?? 0) > 0 && c.remoteHostIdleSeconds !== undefined);
    // The model answers the capacity question: for 2.5 times what one worker like this one serves, 3 workers.
    const perWorker = analyze(profile).capacity?.[0]?.perWorkerRate ?? 0;
    assert.ok(perWorker > 0);
    const cap = analyze(profile, { targetRate: 2.5 * perWorker }).capacity?.[0];
    assert.ok(cap !== undefined);
    assert.equal(cap.opId, op.id);
    assert.equal(cap.workersNeeded, 3);
    assert.match(cap.summary, /needs \d+ workers of cluster 'profiled' like the 1 measured/);
  });
});
