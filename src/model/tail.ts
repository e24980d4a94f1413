/**
 * Head-of-line blocking: an ordered map hands its results on in input order, so a slow call holds
 * back every faster call that started after it (MinatoLoader's "one slow sample holds up its batch").
 *
 * The rule (derived, not fitted). plumber-data's engine keeps at most k calls running and at most
 * W = 2k results held, running or finished and waiting for an earlier one (src/data/internal/ops/
 * engine.ts `room`). With output in order, element i can start only once element i − W has been
 * handed on, and it is handed on when every element before it has finished. So in steady state a
 * window of W consecutive elements is released no faster than its slowest member finishes, and
 * the ordered map gives at most W / E[max of W latencies] elements per second; it also gives at
 * most k / E[latency] (Little's law), which is all an unordered map is held to. The ordered rate is
 * the lesser: min(k / E[L], W / E[max_W L]). For latencies that barely spread, E[max_W] ≤ 2 E[L]
 * and the second term never binds (it cannot for k = 1: E[max_2] ≤ 2 E[L]); a long tail makes
 * E[max_W] approach the tail's latency, so the ordered rate grows about as 2k / (the slow calls'
 * latency): more calls in flight cover the tail only in that proportion, and the planner, which
 * raises them until the op no longer binds (allocate.ts), finds how many; where it cannot (the
 * cap, memory), `deterministic: false` lifts the second term (flow.ts).
 *
 * E[max_W] comes from the measured distribution of call latency (`counters.latencyHistogram`,
 * power-of-two buckets in µs), each bucket at its geometric middle: E[max_W] = Σ_b x_b (F_b^W − F_{b−1}^W).
 */
import type { OpProfile } from '../shared/profile';
import type { OpConfig } from './config';
import { formatSeconds } from './describe';
import { isFnOp } from './knobs';

/** Results an ordered map holds per call in flight (running or waiting): plumber-data's engine holds 2 × its calls in flight. */
export const HELD_PER_CALL = 2;

/** Calls below which a histogram says too little about a tail to price it. */
const MIN_CALLS = 20;

/** Seconds at the middle of histogram bucket i (bucket i spans [2^i, 2^(i+1)) µs; bucket 0 also anything shorter). */
function bucketSeconds(i: number): number {
  return i === 0 ? 1e-6 : Math.SQRT2 * 2 ** i * 1e-6;
}

/** A map's measured call latencies, as the tail model needs them: the mean, and E[max of n] for any n. */
export interface LatencySpread {
  calls: number;
  /** Mean seconds per call, from the histogram (its buckets' middles). */
  mean: number;
  /** E[max of n calls' latencies], seconds, from the histogram. */
  expectedMax(n: number): number;
  /** The latency a share `q` of calls stay under (bucket middle), seconds. */
  quantile(q: number): number;
}

/** The spread of `op`'s call latency, or undefined when the run did not time enough calls. */
export function latencySpread(op: OpProfile): LatencySpread | undefined {
  const h = op.counters.latencyHistogram;
  if (h === undefined) return undefined;
  const calls = h.reduce((a, b) => a + b, 0);
  if (!(calls >= MIN_CALLS)) return undefined;
  const mean = h.reduce((a, n, i) => a + n * bucketSeconds(i), 0) / calls;
  const cdf: number[] = [];
  let acc = 0;
  for (const n of h) cdf.push((acc += n) / calls);
  return {
    calls,
    mean,
    expectedMax(n: number): number {
      let prev = 0;
      let e = 0;
      for (let i = 0; i < cdf.length; i++) {
        const f = cdf[i] ** n;
        e += bucketSeconds(i) * (f - prev);
        prev = f;
      }
      return e;
    },
    quantile(q: number): number {
      const i = cdf.findIndex((f) => f >= q);
      return bucketSeconds(i < 0 ? cdf.length - 1 : i);
    },
  };
}

/**
 * The ordered map's rate ÷ the unordered one's at k calls in flight: (W / E[max_W]) ÷ (k / E[L]),
 * at most 1 (see the header). 1 when the spread is unknown.
 */
export function orderedShare(spread: LatencySpread | undefined, k: number): number {
  if (spread === undefined || !(k >= 1) || !(spread.mean > 0)) return 1;
  const w = Math.max(1, Math.round(HELD_PER_CALL * k));
  const max = spread.expectedMax(w);
  if (!(max > 0)) return 1;
  return Math.min(1, w / max / (k / spread.mean));
}

/** Whether `op` hands results on in input order under `c`: a plumber-data map, filter or flatMap (its engine) not set `deterministic: false`. */
export function keepsOrder(op: OpProfile, c: OpConfig | undefined): boolean {
  if (!isFnOp(op) || (op.dialect !== undefined && op.dialect !== 'plumber-data')) return false;
  return c?.unordered !== true;
}

/** The spread in words: "half its calls take under 2.8 ms, 1 in 100 over 45 ms". */
export function tailWords(op: OpProfile, k: number): string {
  const s = latencySpread(op);
  if (s === undefined) return 'its latency spreads';
  const w = Math.max(1, Math.round(HELD_PER_CALL * k));
  return `half its calls take about ${formatSeconds(s.quantile(0.5))}, 1 in 100 about ${formatSeconds(s.quantile(0.99))}; the slowest of ${w} held takes ${formatSeconds(s.expectedMax(w))} on average`;
}
