/**
 * A reorder whose gain is the first batch (a shuffle moved ahead of the work its buffer filled
 * behind; src/model/shuffleFirst.ts) is judged by each run's time to its first element
 * (`run.firstElementSeconds`: every verification run is a fresh process), beside the rate: kept
 * only when it measured faster on one beyond the spread and no slower on the other (`firstBatchGain`).
 */
import type { PlanChange } from '../../shared/analysis';
import { MIN_RELATIVE_GAIN } from '../stats';
import { formatSeconds } from '../../shared/words';
import type { Config } from './config';

/** Runs each side needs before their first batches are compared. */
export const FIRST_BATCH_MIN_RUNS = 2;

/** The change is a reorder priced by its first batch. */
export function isFirstBatchMove(c: PlanChange): boolean {
  return c.kind === 'reorder' && c.firstBatchSeconds !== undefined;
}

/** `c` holds a reorder priced by its first batch. */
export function movesFirstBatch(c: Config): boolean {
  return c.changes.some(isFirstBatchMove);
}

/**
 * `a` reached its first element sooner than `b` beyond the spread: each ran at least
 * FIRST_BATCH_MIN_RUNS times and `a`'s slowest first batch, plus MIN_RELATIVE_GAIN, is below `b`'s
 * fastest (the ranges do not overlap: no run of either side says otherwise).
 */
export function firstBatchFaster(a: Config, b: Config): boolean {
  if (a.firstBatch.length < FIRST_BATCH_MIN_RUNS || b.firstBatch.length < FIRST_BATCH_MIN_RUNS) return false;
  return Math.max(...a.firstBatch) * (1 + MIN_RELATIVE_GAIN) < Math.min(...b.firstBatch);
}

/** `a`'s first batches measured no slower than `b`'s: both measured, and `a`'s median at most `b`'s. */
export function firstBatchNoSlower(a: Config, b: Config): boolean {
  return a.firstBatch.length > 0 && b.firstBatch.length > 0 && median(a.firstBatch) <= median(b.firstBatch);
}

/**
 * `c` (holding a move judged by its first batch) is a gain over `asWritten`: faster on one measure
 * beyond the spread and no slower on the other — its first batch faster beyond the spread and its
 * rate not slower beyond it, or its rate faster beyond the spread (a knob beside the move) and its
 * first batch measured no slower. `faster` and `slower` compare rates (../paired.ts).
 */
export function firstBatchGain(c: Config, asWritten: Config, faster: (a: Config, b: Config) => boolean, slower: (a: Config, b: Config) => boolean): boolean {
  return (firstBatchFaster(c, asWritten) && !slower(c, asWritten)) || (faster(c, asWritten) && firstBatchNoSlower(c, asWritten));
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** "the first batch in ≈ 0.4 s (0.38–0.45 s over 2 runs) against ≈ 41 s (40–42 s over 2 runs) as written, measured". */
export function firstBatchWords(kept: Config, asWritten: Config): string {
  const side = (c: Config): string =>
    c.firstBatch.length === 1
      ? `≈ ${formatSeconds(c.firstBatch[0]!)} (one run)`
      : `≈ ${formatSeconds(median(c.firstBatch))} (${formatSeconds(Math.min(...c.firstBatch))}–${formatSeconds(Math.max(...c.firstBatch))} over ${c.firstBatch.length} runs)`;
  return `the first batch in ${side(kept)} against ${side(asWritten)} as written, measured`;
}
