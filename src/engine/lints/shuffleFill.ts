/**
 * `plumber/shuffle-fill-dominates` (measured): a shuffle after expensive work whose buffer takes
 * most of the time to the first batch, as the model projects it from the profiled run
 * (src/model/epochs.ts): every epoch's first batch waits for the buffer to fill behind that work.
 */
import { timeFor } from '../../model';
import type { Profile } from '../../shared/profile';
import { formatSeconds } from '../../shared/words';
import type { GraphOp } from '../graph/types';
import type { LintFinding } from './rules';

export const SHUFFLE_FILL_RULE = 'plumber/shuffle-fill-dominates';

/**
 * A policy line, not a measurement: the fill is reported when it is at least this share of the
 * first batch and at least `SHUFFLE_FILL_MIN_SECONDS` long (a fill of a few milliseconds delays
 * nobody, whatever its share).
 */
export const SHUFFLE_FILL_SHARE = 0.5;
export const SHUFFLE_FILL_MIN_SECONDS = 1;

/** The finding for the profiled pipeline's shuffle whose fill dominates its first batch, if any. */
export function shuffleFillLint(profile: Profile, byProfileId: Map<string, GraphOp>): LintFinding | undefined {
  const time = timeFor(profile, {});
  const top = time?.firstBatchParts[0];
  if (!time || !top || top.what !== 'shuffle fill' || top.opId === undefined) return undefined;
  if (top.seconds < SHUFFLE_FILL_MIN_SECONDS || top.seconds < SHUFFLE_FILL_SHARE * time.firstBatchSeconds) return undefined;
  // "After expensive work": the summary names the work the buffer fills behind.
  if (!/ fills behind /.test(time.firstBatchSummary)) return undefined;
  const op = byProfileId.get(top.opId);
  if (!op) return undefined;
  return {
    rule: SHUFFLE_FILL_RULE,
    severity: 'information',
    message: `The first batch waits ≈ ${formatSeconds(top.seconds)} of its ≈ ${formatSeconds(time.firstBatchSeconds)} (predicted from the profiled run) for this shuffle: ${time.firstBatchSummary}.`,
    op,
    related: [],
  };
}
