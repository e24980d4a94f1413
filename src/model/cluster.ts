/**
 * Stages placed on a cluster (placement 'remote', issue 12): the fn runs in worker processes on
 * other hosts, reached through a queue on Redis. Two things bound such a stage:
 *
 * - the workers' total capacity: each worker runs `concurrency` calls at once, so it serves at
 *   most concurrency ÷ (the time its slot is held per call) calls per second; and the workers of
 *   one host together serve at most its cores ÷ (a worker's CPU per call). Workers are placed on
 *   hosts as measured: more workers on the measured hosts share their cores (8 workers on a 2-core
 *   host are not 8 times one), and on the consumer's own host they share them with the consumer
 *   and, when it runs there, Redis (their CPU per call is measured too). The capacity answer adds
 *   workers on new hosts like the ones measured, and says when the measured hosts are full;
 * - the calls in flight: the map keeps at most `parallelism` elements out, each for its service
 *   plus the network and Redis round trip, so at most parallelism ÷ (service + round trip) per
 *   second (Little's law). Queue wait is left out on purpose: it is what a shortfall of capacity
 *   looks like, and more workers remove it.
 *
 * Pure: from the profile's counters (src/data/tracing.ts OpCounters' remote fields) to bounds.
 */
import type { Bound, ClusterCapacity } from '../shared/analysis';
import type { OpProfile } from '../shared/profile';
import { formatRate } from '../shared/words';
import type { Config } from './config';
import { describeOp } from './describe';
import type { Evaluation } from './evaluation';
import type { Measured } from './measured';

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
  /** Hosts the workers ran on, and of the workers, those on the consumer's own host. */
  hosts: number;
  workersOnConsumerHost: number;
  /** Cores of one worker host, on average. */
  coresPerHost: number;
  /**
   * Cores the hosts left free to the op while it was measured (their idle CPU plus the op's own
   * CPU there), on average; undefined without the hosts' clocks. Said, not used as a bound: other
   * work's CPU comes and goes, and the scheduler gives more of the cores to an op that asks for
   * more, so what one worker left free does not cap what more workers get.
   */
  freeCoresPerHost: number | undefined;
  /** Calls per second one worker's slots allow (its concurrency over the time a slot is held per call). */
  callsPerWorkerByTime: number;
  /** CPU seconds per call of the consumer's process, and of Redis when it runs on the consumer's host: what co-located workers share the host's cores with. */
  consumerCpuSeconds: number;
  redisCpuSeconds: number;
}

/** Workers on one host, in a layout the model evaluates. */
export interface HostLoad {
  workers: number;
  cores: number;
  /** The consumer (and a Redis on its loopback) runs on this host too. */
  consumer: boolean;
}

/**
 * Where K workers run: `'measured'` spreads them over the hosts measured, in the measured shares
 * (as a benchmark or a user adding processes to the same machines does); `'new-hosts'` keeps the
 * measured workers where they are and puts the rest on new hosts like the measured ones, with as
 * many workers per host as measured (as a user adding machines does).
 */
export type ClusterLayout = 'measured' | 'new-hosts';

/** The op's per-call figures, or undefined when it is not a cluster op or made no measured call. */
export function clusterStats(op: OpProfile): ClusterStats | undefined {
  const c = op.counters;
  if (op.placement !== 'remote' || c.calls <= 0 || !(c.remoteWorkers && c.remoteWorkers > 0)) return undefined;
  const calls = c.calls;
  const workers = c.remoteWorkers;
  const concurrencyPerWorker = (c.remoteConcurrency ?? workers) / workers;
  const coresPerWorker = (c.remoteCores ?? workers) / workers;
  // Profiles from before hosts were counted: each worker host counted once in remoteCores, so
  // one host per worker unless the cores say otherwise.
  const hosts = Math.max(1, Math.min(workers, c.remoteHosts ?? workers));
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
    hosts,
    workersOnConsumerHost: Math.min(workers, c.remoteWorkersOnConsumerHost ?? 0),
    coresPerHost: (c.remoteCores ?? workers) / hosts,
    freeCoresPerHost: freeCoresPerHost(c, (c.remoteCores ?? workers) / hosts),
    callsPerWorkerByTime: byTime,
    consumerCpuSeconds: (c.remoteConsumerCpuSeconds ?? 0) / calls,
    redisCpuSeconds: (c.remoteRedisCpuSeconds ?? 0) / calls,
  };
}

/**
 * The cores a worker host left to the op while measured, on average: (its idle CPU + the op's CPU on it) ÷ wall,
 * capped at its cores. The op's CPU there is the workers' and, on the consumer's host, the
 * consumer's and a local Redis's. Without the hosts' clocks, all their cores.
 */
function freeCoresPerHost(c: OpProfile['counters'], cores: number): number | undefined {
  const wall = c.remoteHostWallSeconds ?? 0;
  if (!(wall > 0) || c.remoteHostIdleSeconds === undefined) return undefined;
  const shared = (c.remoteWorkersOnConsumerHost ?? 0) > 0 ? (c.remoteConsumerCpuSeconds ?? 0) + (c.remoteRedisCpuSeconds ?? 0) : 0;
  // Sums over the hosts of idle and wall seconds: (Σ idle + Σ ours) ÷ Σ wall is the average host's
  // free cores. The op's CPU is counted over the whole pass, the clocks between a host's first and
  // last report: close enough over a pass of many calls, and capped by the cores either way.
  const free = (c.remoteHostIdleSeconds + c.workerCpuSeconds + shared) / wall;
  return Math.min(cores, Math.max(0, free));
}

/**
 * The hosts of K workers (see `ClusterLayout`). Workers may be fractional: the layout spreads a
 * count in the measured shares, which is what a bound needs.
 */
export function clusterLayout(s: ClusterStats, k: number, layout: ClusterLayout = 'measured'): HostLoad[] {
  const onConsumer = s.workersOnConsumerHost;
  const elsewhere = s.workers - onConsumer;
  const otherHosts = Math.max(0, s.hosts - (onConsumer > 0 ? 1 : 0));
  const measured = (n: number): HostLoad[] => {
    const out: HostLoad[] = [];
    if (onConsumer > 0) out.push({ workers: (n * onConsumer) / s.workers, cores: s.coresPerHost, consumer: true });
    for (let h = 0; h < otherHosts; h++) out.push({ workers: (n * elsewhere) / s.workers / otherHosts, cores: s.coresPerHost, consumer: false });
    return out;
  };
  if (layout === 'measured' || k <= s.workers) return measured(k);
  const out = measured(s.workers);
  const perHost = s.workers / s.hosts;
  const extra = k - s.workers;
  const whole = Math.floor(extra / perHost + 1e-9);
  for (let h = 0; h < whole; h++) out.push({ workers: perHost, cores: s.coresPerHost, consumer: false });
  const rest = extra - whole * perHost;
  if (rest > 1e-9) out.push({ workers: rest, cores: s.coresPerHost, consumer: false });
  return out;
}

/**
 * Calls per second the workers of a layout serve together. A host serves at most its workers'
 * slots allow and at most its cores ÷ a worker's CPU per call. The consumer's host also spends
 * the consumer's and Redis's CPU on every call of the stage, whichever host served it: with r
 * calls/s in all, r_local ≤ (cores − r·a) ÷ w, so r ≤ (others·w + cores) ÷ (w + a).
 */
export function clusterCallRate(s: ClusterStats, hosts: readonly HostLoad[]): number {
  const w = s.cpuSeconds;
  const a = s.consumerCpuSeconds + s.redisCpuSeconds;
  const hostRate = (h: HostLoad): number => Math.min(h.workers * s.callsPerWorkerByTime, w > 0 ? h.cores / w : Infinity);
  let others = 0;
  let consumer: HostLoad | undefined;
  for (const h of hosts) {
    if (h.consumer) consumer = h;
    else others += hostRate(h);
  }
  if (consumer === undefined) return others;
  const bySlots = others + consumer.workers * s.callsPerWorkerByTime;
  const byCores = w + a > 0 ? (others * w + consumer.cores) / (w + a) : Infinity;
  return Math.min(bySlots, byCores);
}

/** Calls per second K workers serve in a layout (see `clusterLayout`, `clusterCallRate`). */
export function clusterWorkersRate(s: ClusterStats, k: number, layout: ClusterLayout = 'measured'): number {
  return clusterCallRate(s, clusterLayout(s, k, layout));
}

const rate = (r: number): string => formatRate(r);

function ms(s: number): string {
  return `${Number((s * 1000).toPrecision(3))} ms`;
}

/** "2 cores", and "(other work left 1.3 free while measured)" when it took some. */
function coresText(s: ClusterStats): string {
  const all = Number(s.coresPerHost.toPrecision(2));
  const free = s.freeCoresPerHost === undefined ? all : Number(s.freeCoresPerHost.toPrecision(2));
  return free < all * 0.9 ? `${all} cores, other work leaving ${free} free while measured` : `${all} cores`;
}

function hostsText(n: number): string {
  const r = Number(n.toPrecision(2));
  return `${r} host${r === 1 ? '' : 's'}`;
}

/** Why the workers of a layout serve what they serve: their slots, or the cores of their hosts (with the consumer's and Redis's share on the consumer's host). */
function capacityWhy(s: ClusterStats, hosts: readonly HostLoad[], callRate: number): string {
  const k = hosts.reduce((t, h) => t + h.workers, 0);
  const slots = k * s.callsPerWorkerByTime;
  const slotText = `${Number(s.concurrencyPerWorker.toPrecision(3))} slots each held ${ms(s.slotSeconds)} per call (${ms(s.serviceSeconds)} of it in the fn)`;
  if (callRate >= slots * 0.999) return `their slots bind: ${slotText}`;
  const shared =
    hosts.some((h) => h.consumer) && s.consumerCpuSeconds + s.redisCpuSeconds > 0
      ? `, and on the consumer's host the consumer's ${ms(s.consumerCpuSeconds)}${s.redisCpuSeconds > 0 ? ` and Redis's ${ms(s.redisCpuSeconds)}` : ''} CPU per call`
      : '';
  return `the cores of their ${hostsText(hosts.length)} bind (${coresText(s)} each): ${ms(s.cpuSeconds)} of worker CPU per call${shared}`;
}

/**
 * The bounds of a cluster op in root elements per second: the workers' capacity ('parallel-op')
 * and the calls in flight over the round trip ('latency'). `callsPerRoot`: calls per root
 * element; `parallelism`: the map's calls in flight; `workers`: how many workers to assume
 * (default: those seen), placed as `layout` says (default: on the hosts measured).
 */
export function clusterBounds(op: OpProfile, callsPerRoot: number, parallelism: number, name: string, workers?: number, layout: ClusterLayout = 'measured'): Bound[] {
  const s = clusterStats(op);
  if (s === undefined || callsPerRoot <= 0) return [];
  const k = workers ?? s.workers;
  const perCall = s.serviceSeconds + s.roundTripSeconds;
  const out: Bound[] = [];
  const hosts = clusterLayout(s, k, layout);
  const callRate = clusterCallRate(s, hosts);
  if (Number.isFinite(callRate)) {
    const kText = Number(k.toPrecision(3));
    out.push({
      resource: 'parallel-op',
      opId: op.id,
      rate: callRate / callsPerRoot,
      detail: `${name} runs on ${kText} cluster worker${kText === 1 ? '' : 's'} on ${hostsText(hosts.length)}${hosts.some((h) => h.consumer) ? " (one of them the consumer's)" : ''}: together at most ${rate(callRate / callsPerRoot)}; ${capacityWhy(s, hosts, callRate)}.`,
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
 * the rest of the pipeline, where this stage would stop binding), how many workers and how many
 * calls in flight it needs. Workers beyond those measured go on new hosts like the measured ones
 * (as many per host as measured); the answer also says what the measured hosts serve at most
 * however many workers they run, so a user does not add processes to a host whose cores are full.
 */
export function clusterCapacity(op: OpProfile, callsPerRoot: number, parallelism: number, name: string, otherBound: number, target?: number): ClusterCapacity | undefined {
  const s = clusterStats(op);
  if (s === undefined || callsPerRoot <= 0) return undefined;
  const perHost = s.workers / s.hosts;
  // One worker on a new host, its host's cores shared with as many workers as the measured hosts ran.
  const perWorkerCalls = Math.min(s.callsPerWorkerByTime, s.cpuSeconds > 0 ? s.coresPerHost / perHost / s.cpuSeconds : Infinity);
  const perWorkerRate = perWorkerCalls / callsPerRoot;
  const capacityCalls = clusterWorkersRate(s, s.workers);
  const sameHostsRate = clusterWorkersRate(s, s.workers * 1e6) / callsPerRoot;
  const sameHostsFull = capacityCalls / callsPerRoot >= 0.95 * sameHostsRate;
  const perCall = s.serviceSeconds + s.roundTripSeconds;
  const inFlightRate = perCall > 0 ? parallelism / perCall / callsPerRoot : Infinity;
  const goal = target ?? otherBound;
  const reachable = Number.isFinite(goal) && goal > 0;
  let workersNeeded = Infinity;
  if (reachable) {
    const goalCalls = goal * callsPerRoot;
    if (goalCalls <= capacityCalls) {
      // Fewer workers than measured may do, on the measured hosts.
      workersNeeded = s.workers;
      for (let k = 1; k < s.workers; k++) {
        if (clusterWorkersRate(s, k) >= goalCalls * (1 - 1e-9)) {
          workersNeeded = k;
          break;
        }
      }
    } else if (perWorkerCalls > 0) {
      workersNeeded = s.workers + Math.max(1, Math.ceil((goalCalls - capacityCalls) / perWorkerCalls - 1e-9));
    }
  }
  const newHosts = Number.isFinite(workersNeeded) && workersNeeded > s.workers ? Math.ceil((workersNeeded - s.workers) / perHost - 1e-9) : 0;
  const parallelismNeeded = reachable ? Math.max(1, Math.ceil(goal * callsPerRoot * perCall - 1e-9)) : Infinity;
  const why = target !== undefined ? `To reach ${rate(goal)}` : `To keep up with the rest of the pipeline (${rate(goal)})`;
  const cluster = op.knobs.cluster !== undefined ? ` of cluster '${op.knobs.cluster}'` : '';
  const measuredHosts = `the ${hostsText(s.hosts)} measured`;
  const perHostText = perHost > 1 ? `${Number(perHost.toPrecision(2))} per host` : 'one per host';
  const hostsNote = newHosts > 0 ? `, ${workersNeeded - s.workers} of them on ${newHosts} new host${newHosts === 1 ? '' : 's'} like ${measuredHosts} (${perHostText})` : '';
  const shared =
    s.workersOnConsumerHost > 0 && s.consumerCpuSeconds + s.redisCpuSeconds > 0
      ? `, less the consumer's ${ms(s.consumerCpuSeconds)}${s.redisCpuSeconds > 0 ? ` and Redis's ${ms(s.redisCpuSeconds)}` : ''} per call on its host`
      : '';
  const full =
    (goal > sameHostsRate || sameHostsFull) && Number.isFinite(sameHostsRate)
      ? ` More workers on ${measuredHosts} cannot help past ${rate(sameHostsRate)}: that is what their cores (${coresText(s)} each) serve at ${ms(s.cpuSeconds)} of worker CPU per call${shared}.`
      : '';
  const summary = reachable
    ? `${why}, ${name} needs ${workersNeeded} worker${workersNeeded === 1 ? '' : 's'}${cluster} like the ${s.workers} measured (${rate(perWorkerRate)} each on a new host)${hostsNote} and parallelism ≥ ${parallelismNeeded} (now ${parallelism}).${full}`
    : `${name} runs on ${s.workers} worker${s.workers === 1 ? '' : 's'}${cluster} on ${measuredHosts} at ${rate(capacityCalls / callsPerRoot)} together; nothing else in the pipeline bounds it.${full}`;
  return {
    opId: op.id,
    ...(op.knobs.cluster !== undefined ? { cluster: op.knobs.cluster } : {}),
    workersSeen: s.workers,
    perWorkerRate,
    capacityRate: capacityCalls / callsPerRoot,
    inFlightRate,
    serviceSeconds: s.serviceSeconds,
    queueWaitSeconds: s.queueWaitSeconds,
    roundTripSeconds: s.roundTripSeconds,
    targetRate: goal,
    workersNeeded,
    parallelismNeeded,
    summary,
    hostsSeen: s.hosts,
    workersPerHost: perHost,
    sameHostsRate,
    newHostsNeeded: newHosts,
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
