/**
 * The words every surface shows for a time projection (src/model/epochs.ts): the first batch and
 * the epochs, always marked as predicted.
 */
import type { Plan, TimeProjection } from './analysis';
import { formatSeconds } from './words';

/** "First batch ≈ 41 s (predicted): the shuffle buffer of 10,000 fills behind map(decode): …". */
export function firstBatchLine(t: TimeProjection): string {
  return `First batch ≈ ${formatSeconds(t.firstBatchSeconds)} (predicted): ${t.firstBatchSummary}.`;
}

/** "Epochs ≈ 42 s, then 9 s (predicted): 1,000 batches an epoch …"; undefined for an endless pipeline. */
export function epochsLine(t: TimeProjection): string | undefined {
  const e = t.epochSeconds;
  if (!e || e.length === 0) return undefined;
  const [first, later] = e;
  const then = later !== undefined && Math.abs(later - first!) > 0.05 * first! ? `, then ${formatSeconds(later)}` : ' each';
  return `Epochs ≈ ${formatSeconds(first!)}${then} (predicted)${t.epochSummary ? `: ${t.epochSummary}` : ''}.`;
}

/** The short form for a lens: "first batch ≈ 4.0 s · epochs ≈ 42 s, then 9 s (predicted)". */
export function timeShort(t: TimeProjection): string {
  const e = t.epochSeconds;
  const epochs = e && e.length > 0 ? ` · epoch ≈ ${formatSeconds(e[0]!)}${e[1] !== undefined && Math.abs(e[1] - e[0]!) > 0.05 * e[0]! ? `, then ${formatSeconds(e[1])}` : ''}` : '';
  return `first batch ≈ ${formatSeconds(t.firstBatchSeconds)}${epochs} (predicted)`;
}

/** The lines `plumber plan` prints: the plan's projection when it changes something, else the pipeline's as written. */
export function timeLines(asWritten: TimeProjection | undefined, plan: Pick<Plan, 'changes' | 'time'>): string[] {
  const t = plan.changes.length > 0 && plan.time ? plan.time : asWritten;
  if (!t) return [];
  const which = plan.changes.length > 0 && plan.time ? 'With the plan: ' : '';
  const epochs = epochsLine(t);
  return [`${which}${firstBatchLine(t)}`, ...(epochs ? [`${which}${epochs}`] : [])];
}
