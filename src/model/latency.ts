/**
 * How an awaiting operator's latency depends on its calls in flight: fitted across runs, and read
 * at any concurrency.
 */
import type { OpProfile, Profile } from '../shared/profile';
import { MODEL_CONSTANTS as C } from './constants';
import { formatSeconds } from './describe';
import { currentConcurrency } from './knobs';
import type { OpMeasure } from './measured';

/**
 * How an awaiting op's latency grows with its calls in flight, from the same op in earlier runs
 * with another concurrency: a least-squares line through (k, latency) points. A throttled
 * resource (a disk's byte rate, a rate-limited service) shows as latency ∝ k; an independent wait
 * as a flat line. Growth below `minLatencyGrowth` over the measured range is treated as noise.
 */
export function fitLatency(op: OpProfile, k: number, latency: number, history: Profile[]): { slope: number; fit?: string } {
  const points: Array<[number, number]> = [[k, latency]];
  for (const h of history) {
    const o = h.ops.find((x) => x.id === op.id && x.kind === op.kind);
    if (!o || o.counters.asyncCalls <= 0) continue;
    points.push([currentConcurrency(o, true), o.counters.asyncLatencySeconds / o.counters.asyncCalls]);
  }
  const ks = points.map(([x]) => x);
  const kMin = Math.min(...ks);
  const kMax = Math.max(...ks);
  if (kMax === kMin) return { slope: 0 };
  const mk = ks.reduce((a, b) => a + b, 0) / points.length;
  const ml = points.reduce((a, [, l]) => a + l, 0) / points.length;
  let cov = 0;
  let vk = 0;
  for (const [x, l] of points) {
    cov += (x - mk) * (l - ml);
    vk += (x - mk) * (x - mk);
  }
  const slope = cov / vk;
  const lMin = Math.min(...points.map(([, l]) => l));
  if (!(slope > 0) || slope * (kMax - kMin) < C.minLatencyGrowth * lMin) return { slope: 0 };
  const at = (kk: number) => points.find(([x]) => x === kk)?.[1] ?? 0;
  return {
    slope,
    fit: `its latency grew from ${formatSeconds(at(kMin))} at ${kMin} in flight to ${formatSeconds(at(kMax))} at ${kMax} across runs, ${formatSeconds(slope)} per extra call`,
  };
}

/**
 * Mean latency per call of an awaiting op at `k` calls in flight (see `latencySlope`). Two runs
 * cannot tell a resource with a hard knee (a service with a few slots: flat up to them, then
 * queueing) from one whose latency grows with every call; the line through them is exact for the
 * second and errs low for the first, so the plan never asks for fewer calls than the rate needs.
 */
export function latencyAt(om: OpMeasure, k: number): number {
  if (om.latencySlope <= 0) return om.latency;
  return Math.max(om.latency + om.latencySlope * (k - om.concurrency), 0.05 * om.latency);
}

/** Seconds one call holds its resource at `k` calls in flight: the service time scaled like the latency. */
export function serviceAt(om: OpMeasure, k: number): number {
  return om.latency > 0 ? (om.service * latencyAt(om, k)) / om.latency : om.service;
}
