/**
 * Stages placed on a cluster (placement 'remote', issue 12): the fn runs in worker processes on
 * other hosts, reached through a queue on Redis. Two things bound such a stage:
 *
 * - the workers' total capacity: each worker runs `concurrency` calls at once, so it serves at
 *   most concurrency ÷ (the fn's time per call) calls per second, and no more than its cores ÷
 *   (the fn's CPU per call); K workers like the ones measured serve K times one;
 * - the calls in flight: the map keeps at most `parallelism` elements out, each for its service
 *   plus the network and Redis round trip, so at most parallelism ÷ (service + round trip) per
 *   second (Little's law). Queue wait is left out on purpose: it is what a shortfall of capacity
 *   looks like, and more workers remove it.
 *
 * Pure: from the profile's counters (src/data/tracing.ts OpCounters' remote fields) to bounds.
 */
import type { Bound, ClusterCapacity } from '../shared/analysis';
import type { OpProfile } from '../shared/profile';
import type { Config } from './config';
import { describeOp } from './describe';
import type { Evaluation } from './evaluate';
import type { Measured } from './measure';

/** Per-call figures of a cluster op, from its counters. */
export interface ClusterStats {
  calls: number;
  workers: number;
  /** Concurrency and cores of one worker, on average over those seen. */
  concurrencyPerWorker: number;
  coresPerWorker: number;
  serviceSeconds: number;
  /** Seconds a worker's slot is held per job (the fn and the job's handling in the worker). */
  slotSeconds: number;
  cpuSeconds: number;
  queueWaitSeconds: number;
  roundTripSeconds: number;
  /** Calls per second one worker like those measured serves. */
  callsPerWorkerSecond: number;
  /** Its cores bound it rather than its concurrency. */
  cpuBound: boolean;
}

/** The op's per-call figures, or undefined when it is not a cluster op or made no measured call. */
export function clusterStats(op: OpProfile): ClusterStats | undefined {
  const c = op.counters;
  if (op.placement !== 'remote' || c.calls <= 0 || !(c.remoteWorkers && c.remoteWorkers > 0)) return undefined;
  const calls = c.calls;
  const workers = c.remoteWorkers;
  const concurrencyPerWorker = (c.remoteConcurrency ?? workers) / workers;
  const coresPerWorker = (c.remoteCores ?? workers) / workers;
  const serviceSeconds = (c.remoteServiceSeconds ?? 0) / calls;
  const cpuSeconds = c.workerCpuSeconds / calls;
  // A slot is held longer than the fn runs: the job's own Redis round trips, completing it and
  // taking the next. Measured when the workers reported it; else the fn's time alone.
  const slotSeconds = c.remoteSlotJobs && c.remoteSlotJobs > 0 && c.remoteSlotSeconds !== undefined ? Math.max(serviceSeconds, c.remoteSlotSeconds / c.remoteSlotJobs) : serviceSeconds;
  const byTime = slotSeconds > 0 ? concurrencyPerWorker / slotSeconds : Infinity;
  const byCpu = cpuSeconds > 0 ? coresPerWorker / cpuSeconds : Infinity;
  return {
    calls,
    workers,
    concurrencyPerWorker,
    coresPerWorker,
    serviceSeconds,
    slotSeconds,
    cpuSeconds,
    queueWaitSeconds: (c.remoteQueueWaitSeconds ?? 0) / calls,
    roundTripSeconds: (c.remoteRoundTripSeconds ?? 0) / calls,
    callsPerWorkerSecond: Math.min(byTime, byCpu),
    cpuBound: byCpu < byTime,
  };
}

function rate(r: number): string {
  if (!Number.isFinite(r)) return 'unbounded';
  return `${r >= 100 ? Math.round(r).toLocaleString('en-US') : Number(r.toPrecision(3))} el/s`;
}

function calls(r: number): string {
  return `${r >= 100 ? Math.round(r).toLocaleString('en-US') : Number(r.toPrecision(3))} calls/s`;
}

function ms(s: number): string {
  return `${Number((s * 1000).toPrecision(3))} ms`;
}

/**
 * The bounds of a cluster op in root elements per second: the workers' capacity ('parallel-op')
 * and the calls in flight over the round trip ('latency'). `callsPerRoot`: calls per root
 * element; `parallelism`: the map's calls in flight; `workers`: how many workers to assume
 * (default: those seen).
 */
export function clusterBounds(op: OpProfile, callsPerRoot: number, parallelism: number, name: string, workers?: number): Bound[] {
  const s = clusterStats(op);
  if (s === undefined || callsPerRoot <= 0) return [];
  const k = workers ?? s.workers;
  const perCall = s.serviceSeconds + s.roundTripSeconds;
  const out: Bound[] = [];
  if (Number.isFinite(s.callsPerWorkerSecond)) {
    const limit = s.cpuBound ? `${Number(s.coresPerWorker.toPrecision(2))} cores` : `${Number(s.concurrencyPerWorker.toPrecision(3))} calls at once`;
    out.push({
      resource: 'parallel-op',
      opId: op.id,
      rate: (k * s.callsPerWorkerSecond) / callsPerRoot,
      detail: `${name} runs on ${k} cluster worker${k === 1 ? '' : 's'}; each serves at most ${calls(s.callsPerWorkerSecond)} (a slot held ${ms(s.slotSeconds)} per call, ${ms(s.serviceSeconds)} of it in the fn and ${ms(s.cpuSeconds)} CPU; ${limit}): together at most ${rate((k * s.callsPerWorkerSecond) / callsPerRoot)}.`,
    });
  }
  if (perCall > 0) {
    out.push({
      resource: 'latency',
      opId: op.id,
      rate: parallelism / perCall / callsPerRoot,
      detail: `${name} keeps ${parallelism} call${parallelism === 1 ? '' : 's'} in flight to its cluster, each out ${ms(perCall)} (${ms(s.serviceSeconds)} in the fn, ${ms(s.roundTripSeconds)} network and Redis round trip): at most ${rate(parallelism / perCall / callsPerRoot)}.`,
    });
  }
  return out;
}

/**
 * The capacity answer for a cluster op: to reach `target` root el/s (default: the lowest bound of
 * the rest of the pipeline, where this stage would stop binding), how many workers like those
 * measured and how many calls in flight it needs.
 */
export function clusterCapacity(op: OpProfile, callsPerRoot: number, parallelism: number, name: string, otherBound: number, target?: number): ClusterCapacity | undefined {
  const s = clusterStats(op);
  if (s === undefined || callsPerRoot <= 0) return undefined;
  const perWorkerRate = s.callsPerWorkerSecond / callsPerRoot;
  const perCall = s.serviceSeconds + s.roundTripSeconds;
  const inFlightRate = perCall > 0 ? parallelism / perCall / callsPerRoot : Infinity;
  const goal = target ?? otherBound;
  const reachable = Number.isFinite(goal) && goal > 0;
  const workersNeeded = reachable ? Math.max(1, Math.ceil(goal / perWorkerRate - 1e-9)) : Infinity;
  const parallelismNeeded = reachable ? Math.max(1, Math.ceil(goal * callsPerRoot * perCall - 1e-9)) : Infinity;
  const why = target !== undefined ? `To reach ${rate(goal)}` : `To keep up with the rest of the pipeline (${rate(goal)})`;
  const cluster = op.knobs.cluster !== undefined ? ` of cluster '${op.knobs.cluster}'` : '';
  const summary = reachable
    ? `${why}, ${name} needs ${workersNeeded} worker${workersNeeded === 1 ? '' : 's'}${cluster} like the ${s.workers} measured (${rate(perWorkerRate)} each) and parallelism ≥ ${parallelismNeeded} (now ${parallelism}).`
    : `${name} runs on ${s.workers} worker${s.workers === 1 ? '' : 's'}${cluster} at ${rate(perWorkerRate)} each; nothing else in the pipeline bounds it.`;
  return {
    opId: op.id,
    ...(op.knobs.cluster !== undefined ? { cluster: op.knobs.cluster } : {}),
    workersSeen: s.workers,
    perWorkerRate,
    capacityRate: s.workers * perWorkerRate,
    inFlightRate,
    serviceSeconds: s.serviceSeconds,
    queueWaitSeconds: s.queueWaitSeconds,
    roundTripSeconds: s.roundTripSeconds,
    targetRate: goal,
    workersNeeded,
    parallelismNeeded,
    summary,
  };
}

/** The capacity answer for every cluster op of a measured configuration (see `clusterCapacity`). */
export function clusterCapacities(m: Measured, cfg: Config, ev: Evaluation, target?: number): ClusterCapacity[] {
  const out: ClusterCapacity[] = [];
  for (const [id, om] of m.ops) {
    if (om.op.placement !== 'remote') continue;
    // Where this stage stops binding: the lowest bound of anything else.
    let otherBound = Infinity;
    for (const b of ev.bounds) if (b.opId !== id && b.rate < otherBound) otherBound = b.rate;
    const cap = clusterCapacity(om.op, om.callsPerRoot, cfg[id]?.concurrency ?? 1, describeOp(om.op), otherBound, target);
    if (cap !== undefined) out.push(cap);
  }
  return out;
}
