import assert from 'node:assert/strict';
import { newCounters, type OpCounters } from '../../../src/data/tracing';
import { clusterBounds, clusterCapacity, clusterStats } from '../../../src/model/cluster';
import type { OpProfile } from '../../../src/shared/profile';

/** A cluster map's profile: `calls` calls on `workers` workers of concurrency 4 and 2 cores, 20 ms in the fn, a slot held `slotMs`, a 2 ms round trip. */
function clusterOp(o: { calls?: number; workers?: number; slotMs?: number; cpuMsPerCall?: number; hosts?: number; onConsumerHost?: number; consumerCpuMsPerCall?: number; redisCpuMsPerCall?: number } = {}): OpProfile {
  const calls = o.calls ?? 1000;
  const workers = o.workers ?? 1;
  const c: OpCounters = {
    ...newCounters(),
    calls,
    produced: calls,
    workerCpuSeconds: (calls * (o.cpuMsPerCall ?? 1)) / 1000,
    remoteWorkers: workers,
    remoteConcurrency: 4 * workers,
    remoteCores: 2 * (o.hosts ?? workers),
    ...(o.hosts !== undefined ? { remoteHosts: o.hosts } : {}),
    ...(o.onConsumerHost !== undefined ? { remoteWorkersOnConsumerHost: o.onConsumerHost } : {}),
    ...(o.consumerCpuMsPerCall !== undefined ? { remoteConsumerCpuSeconds: (calls * o.consumerCpuMsPerCall) / 1000 } : {}),
    ...(o.redisCpuMsPerCall !== undefined ? { remoteRedisCpuSeconds: (calls * o.redisCpuMsPerCall) / 1000 } : {}),
    remoteServiceSeconds: calls * 0.02,
    remoteQueueWaitSeconds: calls * 0.01,
    remoteRoundTripSeconds: calls * 0.002,
    remoteSlotJobs: calls,
    remoteSlotSeconds: (calls * (o.slotMs ?? 25)) / 1000,
    bytesShipped: calls * 40,
  };
  return { id: 'map@p.ts:3:4', kind: 'map', inputs: [], placement: 'remote', knobs: { parallelism: 64, resolvedParallelism: 64, cluster: 'images' }, random: false, counters: c } as OpProfile;
}

describe('the model of a stage on a cluster', () => {
  it('bounds a worker by its concurrency over the time a slot is held, not the fn alone', () => {
    const s = clusterStats(clusterOp({ slotMs: 25 }));
    assert.ok(s !== undefined);
    // 4 slots, each held 25 ms per job (20 ms of fn and 5 ms of the job's handling): 160 calls/s.
    assert.equal(Math.round(s.callsPerWorkerSecond), 160);
  });

  it('bounds a worker by its cores when the fn burns CPU', () => {
    // 15 ms of CPU per call on 2 cores: 133 calls/s, below the 160 its slots allow.
    const s = clusterStats(clusterOp({ cpuMsPerCall: 15 }));
    assert.equal(Math.round(s?.callsPerWorkerSecond ?? 0), 133);
    assert.equal(s?.cpuBound, true);
  });

  it('scales the capacity bound with the workers assumed, while the in-flight bound stays', () => {
    const op = clusterOp();
    const one = clusterBounds(op, 1, 64, 'map(decode)');
    const four = clusterBounds(op, 1, 64, 'map(decode)', 4);
    const cap = (bs: typeof one) => bs.find((b) => b.resource === 'parallel-op')?.rate ?? 0;
    const inflight = (bs: typeof one) => bs.find((b) => b.resource === 'latency')?.rate ?? 0;
    assert.equal(Math.round(cap(four)), 4 * Math.round(cap(one)));
    // 64 calls in flight, each out 22 ms (fn and round trip; queue wait is what more workers remove).
    assert.equal(Math.round(inflight(one)), Math.round(64 / 0.022));
    assert.equal(inflight(four), inflight(one));
  });

  it('answers how many workers like those measured a target rate needs, and the parallelism', () => {
    const cap = clusterCapacity(clusterOp(), 1, 64, 'map(decode)', Infinity, 1000);
    assert.ok(cap !== undefined);
    // 1000 el/s at 160 per worker: 7 workers; at 22 ms per call out, 22 calls in flight.
    assert.equal(cap.workersNeeded, 7);
    assert.equal(cap.parallelismNeeded, 22);
    assert.match(cap.summary, /To reach 1,000 el\/s, map\(decode\) needs 7 workers of cluster 'images' like the 1 measured/);
  });

  it('without a target, sizes the cluster to the rest of the pipeline', () => {
    const cap = clusterCapacity(clusterOp({ workers: 2 }), 1, 64, 'map(decode)', 500);
    assert.equal(cap?.workersNeeded, 4);
    assert.match(cap?.summary ?? '', /To keep up with the rest of the pipeline \(500 el\/s\)/);
  });

  it('says nothing for an op that is not on a cluster', () => {
    const op = { ...clusterOp(), placement: 'main' } as OpProfile;
    assert.equal(clusterStats(op), undefined);
    assert.deepEqual(clusterBounds(op, 1, 64, 'map'), []);
  });

  const capacity = (op: OpProfile, k: number, layout?: 'measured' | 'new-hosts'): number => clusterBounds(op, 1, 100_000, 'map(decode)', k, layout).find((b) => b.resource === 'parallel-op')?.rate ?? 0;

  it('stops scaling workers added to one 2-core host once their CPU fills its cores', () => {
    // One worker measured on a 2-core host of its own: 4 slots × 25 ms = 160 calls/s, 5 ms of CPU each.
    const op = clusterOp({ cpuMsPerCall: 5, hosts: 1 });
    // Its cores serve 2 ÷ 5 ms = 400 calls/s: two workers still scale, four and eight do not.
    assert.equal(Math.round(capacity(op, 2)), 320);
    assert.equal(Math.round(capacity(op, 4)), 400);
    assert.equal(Math.round(capacity(op, 8)), 400);
  });

  it('scales the same workers on hosts of their own', () => {
    const op = clusterOp({ cpuMsPerCall: 5, hosts: 1 });
    assert.equal(Math.round(capacity(op, 8, 'new-hosts')), 8 * 160);
  });

  it('leaves co-located workers what the consumer and Redis take from the cores of their host', () => {
    // 5 ms of worker CPU, 3 ms of the consumer's and 2 ms of Redis's per call, all on one 2-core host: 2 ÷ 10 ms = 200 calls/s.
    const shared = clusterOp({ cpuMsPerCall: 5, hosts: 1, onConsumerHost: 1, consumerCpuMsPerCall: 3, redisCpuMsPerCall: 2 });
    assert.equal(Math.round(capacity(shared, 8)), 200);
    // The same workers on a host without the consumer keep the whole cores.
    const apart = clusterOp({ cpuMsPerCall: 5, hosts: 1, onConsumerHost: 0, consumerCpuMsPerCall: 3, redisCpuMsPerCall: 2 });
    assert.equal(Math.round(capacity(apart, 8)), 400);
  });

  it('reads workers per host from the profile: eight workers measured on one host are not eight hosts', () => {
    const eight = clusterOp({ workers: 8, cpuMsPerCall: 5, hosts: 1 });
    assert.equal(Math.round(capacity(eight, 8)), 400);
    assert.equal(Math.round(capacity(eight, 16)), 400);
    // Another host like it, with eight workers too, doubles it.
    assert.equal(Math.round(capacity(eight, 16, 'new-hosts')), 800);
  });

  it('sizes a target on new hosts and says more workers on the measured host cannot help', () => {
    const op = clusterOp({ cpuMsPerCall: 5, hosts: 1, onConsumerHost: 1, consumerCpuMsPerCall: 3, redisCpuMsPerCall: 2 });
    const cap = clusterCapacity(op, 1, 256, 'map(decode)', Infinity, 1000);
    assert.ok(cap !== undefined);
    // The measured worker serves 160 calls/s (its slots bind; the host could give it 200): 840 more
    // at 160 per worker on new hosts of one worker each is 6 workers more, on 6 new hosts.
    assert.equal(Math.round(cap.capacityRate), 160);
    assert.equal(Math.round(cap.sameHostsRate ?? 0), 200);
    assert.equal(cap.workersNeeded, 7);
    assert.equal(cap.newHostsNeeded, 6);
    assert.match(cap.summary, /6 of them on 6 new hosts/);
    assert.match(cap.summary, /More workers on the 1 host measured cannot help past 200 el\/s/);
  });

  it('does not send a target the measured hosts can reach to new hosts', () => {
    const cap = clusterCapacity(clusterOp({ workers: 4, cpuMsPerCall: 1, hosts: 1 }), 1, 256, 'map(decode)', Infinity, 300);
    // Four workers of 160 calls/s on one 2-core host at 1 ms each (2,000 calls/s of cores): two reach 300.
    assert.equal(cap?.workersNeeded, 2);
    assert.equal(cap?.newHostsNeeded, 0);
    assert.doesNotMatch(cap?.summary ?? '', /cannot help/);
  });

  it("says what other work on the host took while measured, and still sizes by the host's cores", () => {
    // A 2-core host, 10 s of its clock: the op's workers took 5 s of CPU (1,000 calls × 5 ms), and
    // the cores sat idle 5 s more. Other work took the other 10 s: it left one core free.
    const busy = clusterOp({ cpuMsPerCall: 5, hosts: 1 });
    busy.counters.remoteHostWallSeconds = 10;
    busy.counters.remoteHostIdleSeconds = 5;
    assert.equal(clusterStats(busy)?.freeCoresPerHost, 1);
    // Other work comes and goes, and the scheduler gives more to an op that asks for more: the bound stays the host's.
    assert.equal(Math.round(capacity(busy, 8)), 400);
    const detail = clusterBounds(busy, 1, 100_000, 'map(decode)', 8).find((b) => b.resource === 'parallel-op')?.detail ?? '';
    assert.match(detail, /2 cores, other work leaving 1 free while measured/);
  });
});
