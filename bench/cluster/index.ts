/**
 * The cluster benchmark: `npm run bench:cluster -- [--json] [--quick] [--faults]`.
 *
 * Starts its own redis-server on a free loopback port and worker processes through the real
 * `plumber-data worker` bin (the built package, as users run it), and ends all of them.
 * - scaling: 1, 2, 4, 8 workers (`--quick`: 1, 2, 4), each with `--concurrency C`, on a stage of
 *   20 ms awaited work per element; goal: rate with K ≥ 0.85 × K × rate with 1. `predicted` is the
 *   model's bound for K workers (src/model/cluster.ts) from the profile taken with 1 worker, the K
 *   workers placed as measured: on this host, beside the consumer and Redis, sharing its cores.
 * - cluster-overhead: the same fn as a local async map at the same parallelism, and on a cluster
 *   with as many worker slots; msPerElement is the wall time per element the cluster adds.
 * - cluster-fault: a worker killed (SIGKILL) every second and replaced, over 2,000 elements:
 *   every element arrives once, in order.
 * `--faults` runs the fault scenarios instead (see faults.ts) and prints their table.
 */
import type { ChildProcess } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { connect, range } from '../../src/data/index';
import { newCounters, TRACER_KEY, type OpCounters, type Tracer } from '../../src/data/tracing';
import { clusterBounds } from '../../src/model/cluster';
import type { OpProfile } from '../../src/shared/profile';
import { groupedRowsTables, writeResults } from '../results';
import { runFaults } from './faults';
import { endAll, freePort, startRedis, startWorker as startProcWorker, stop } from './procs';
import { awaitTwenty } from './stage';

const STAGE = path.join(__dirname, 'stage.ts');
const argv = process.argv.slice(2);
const json = argv.includes('--json');
const quick = argv.includes('--quick');
const CONCURRENCY = 4;
const SCALE = quick ? [1, 2, 4] : [1, 2, 4, 8];
const LOCK_MS = 1000;

function startWorker(url: string, name: string): Promise<ChildProcess> {
  return startProcWorker(url, name, { module: STAGE, concurrency: CONCURRENCY, lockMs: LOCK_MS });
}

/** Runs `n` elements through the cluster map with a tracer on; returns the rate, the output and the counters. */
async function run(url: string, name: string, n: number, parallelism: number): Promise<{ rate: number; out: number[]; c: OpCounters; consumerCpuMs: number }> {
  let c = newCounters();
  const tracer: Tracer = {
    register(info) {
      const fresh = newCounters();
      if (info.kind === 'map') c = fresh;
      return fresh;
    },
  };
  (globalThis as { [TRACER_KEY]?: Tracer })[TRACER_KEY] = tracer;
  try {
    const cluster = connect({ redis: url, name });
    const ds = range(n).map(awaitTwenty, { placement: cluster, parallelism });
    const out: number[] = [];
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    for await (const x of ds) out.push(x);
    const rate = n / ((performance.now() - t0) / 1000);
    const cpu = process.cpuUsage(cpu0);
    return { rate, out, c, consumerCpuMs: (cpu.user + cpu.system) / 1000 / n };
  } finally {
    delete (globalThis as { [TRACER_KEY]?: Tracer })[TRACER_KEY];
  }
}

function asProfileOp(c: OpCounters, parallelism: number, name: string): OpProfile {
  return { id: 'map', kind: 'map', inputs: [], placement: 'remote', knobs: { parallelism, resolvedParallelism: parallelism, cluster: name }, random: false, counters: c } as OpProfile;
}

function emit(line: Record<string, unknown>, text: string): void {
  console.log(json ? JSON.stringify(line) : text);
}

async function main(): Promise<void> {
  if (argv.includes('--faults')) {
    await runFaults(json);
    return;
  }
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  await startRedis(port);
  const lines: Record<string, unknown>[] = [];

  // Scaling. Parallelism leaves room for every worker slot of the largest cluster twice over.
  const parallelism = 2 * CONCURRENCY * Math.max(...SCALE);
  const workers: ChildProcess[] = [];
  let profile1: OpProfile | undefined;
  let profile2: OpProfile | undefined;
  let rate1 = 0;
  for (const k of SCALE) {
    while (workers.length < k) workers.push(await startWorker(url, 'bench'));
    // Each run lasts ~3 s at the ideal rate (K × C / 20 ms); a short warm-up first.
    const ideal = (k * CONCURRENCY) / 0.02;
    await run(url, 'bench', Math.round(ideal * 0.5), parallelism);
    const n = Math.round(ideal * (quick ? 2 : 3));
    const r = await run(url, 'bench', n, parallelism);
    if (k === 1) {
      profile1 = asProfileOp(r.c, parallelism, 'bench');
      rate1 = r.rate;
    }
    if (k === 2) profile2 = asProfileOp(r.c, parallelism, 'bench');
    const predictFrom = (op: OpProfile | undefined): number | undefined => (op === undefined ? undefined : Math.min(...clusterBounds(op, 1, parallelism, 'map', k).map((b) => b.rate)));
    const predicted = predictFrom(profile1) as number;
    // What the same K workers would give on hosts of their own, like the one measured: the gap is what sharing this host's cores costs.
    const onOwnHosts = profile1 === undefined ? undefined : Math.min(...clusterBounds(profile1, 1, parallelism, 'map', k, 'new-hosts').map((b) => b.rate));
    const from2 = predictFrom(profile2);
    const line = {
      bench: 'cluster',
      workers: k,
      elementsPerSec: Math.round(r.rate),
      predicted: Math.round(predicted),
      scaling: Number((r.rate / (k * rate1)).toFixed(3)),
      predictionError: Number((predicted / r.rate - 1).toFixed(3)),
      // CPU per element on this host: the workers' processes and the consumer's (Redis not counted).
      workerCpuMsPerElement: Number(((r.c.workerCpuSeconds / Math.max(1, r.c.calls)) * 1000).toFixed(3)),
      consumerCpuMsPerElement: Number(r.consumerCpuMs.toFixed(3)),
      redisCpuMsPerElement: Number((((r.c.remoteRedisCpuSeconds ?? 0) / Math.max(1, r.c.calls)) * 1000).toFixed(3)),
      hosts: r.c.remoteHosts ?? 0,
      ...(onOwnHosts !== undefined ? { predictedOnOwnHosts: Math.round(onOwnHosts) } : {}),
      ...(from2 !== undefined ? { predictedFrom2: Math.round(from2), predictionErrorFrom2: Number((from2 / r.rate - 1).toFixed(3)) } : {}),
    };
    lines.push(line);
    emit(
      line,
      `cluster: ${k} worker(s) × ${CONCURRENCY}: ${r.rate.toFixed(0)} el/s (${line.scaling} × K × rate with 1; goal ≥ 0.85), model from 1 worker predicts ${predicted.toFixed(0)} el/s (${(line.predictionError * 100).toFixed(1)}%)${from2 !== undefined ? `, from 2 ${from2.toFixed(0)} el/s (${((from2 / r.rate - 1) * 100).toFixed(1)}%)` : ''}`,
    );
  }

  // Overhead: the same fn at the same parallelism, locally and on 4 workers (16 slots).
  while (workers.length > 4) await stop(workers.pop() as ChildProcess);
  const p = 4 * CONCURRENCY;
  const n = quick ? 800 : 2000;
  const t0 = performance.now();
  await range(n).map(awaitTwenty, { parallelism: p }).toArray();
  const local = (performance.now() - t0) / n;
  const remote = 1000 / (await run(url, 'bench', n, p)).rate;
  const overhead = {
    bench: 'cluster-overhead',
    msPerElement: Number((remote - local).toFixed(3)),
    addedLatencyMsPerCall: Number(((remote - local) * p).toFixed(2)),
    localMsPerElement: Number(local.toFixed(3)),
    clusterMsPerElement: Number(remote.toFixed(3)),
    parallelism: p,
  };
  lines.push(overhead);
  emit(
    overhead,
    `cluster-overhead: ${overhead.msPerElement} ms per element (local ${overhead.localMsPerElement}, cluster ${overhead.clusterMsPerElement}; ${overhead.addedLatencyMsPerCall} ms added per call at parallelism ${p}; goal ≤ 1 ms)`,
  );

  // Fault: kill a worker every second (and start another), over 2,000 elements. Two workers, so
  // the run lasts long enough for several kills, and each kill takes half the slots.
  while (workers.length > 2) await stop(workers.pop() as ChildProcess);
  const total = quick ? 800 : 2000;
  let killed = 0;
  let stopping = false;
  const killer = (async () => {
    while (!stopping) {
      await new Promise((r) => setTimeout(r, 1000));
      if (stopping) break;
      const victim = workers.shift();
      if (victim === undefined) continue;
      await stop(victim, 'SIGKILL');
      killed++;
      workers.push(await startWorker(url, 'bench'));
    }
  })();
  const f = await run(url, 'bench', total, 32);
  stopping = true;
  await killer;
  const seen = new Map<number, number>();
  for (const x of f.out) seen.set(x, (seen.get(x) ?? 0) + 1);
  let lost = 0;
  let duplicated = 0;
  for (let i = 0; i < total; i++) {
    const k = seen.get(i + 1) ?? 0;
    if (k === 0) lost++;
    if (k > 1) duplicated += k - 1;
  }
  const inOrder = f.out.every((x, i) => x === i + 1);
  const fault = { bench: 'cluster-fault', elements: total, workersKilled: killed, lost, duplicated, inOrder };
  lines.push(fault);
  emit(fault, `cluster-fault: ${killed} workers killed over ${total} elements: lost ${lost}, duplicated ${duplicated}, in order: ${inOrder}`);

  for (const w of workers) await stop(w);
  endAll();
  writeResults('bench:cluster', groupedRowsTables(lines));
  const load = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');
  if (!json) console.log(`load average: ${load}`);
  else console.log(JSON.stringify({ bench: 'cluster-load', loadAverage: os.loadavg() }));
}

main().then(
  // Without a code: the exit code a mode set (--faults: 1 when a scenario went wrong), else 0.
  () => process.exit(),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
