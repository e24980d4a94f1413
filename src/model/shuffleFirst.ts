/**
 * A shuffle moved ahead of the expensive work its buffer fills behind (issue 54, "move the shuffle
 * before the decode"): what it gains is the first batch, not the rate. Priced by planning the
 * reshaped pipeline (./reshape.ts `reshapedProfile`) and projecting its first batch (./epochs.ts)
 * against the plan as written's; proposed only when the shuffle's fill dominates the first batch
 * as planned (`shuffleFillShare`, `firstBatchMinSeconds`), the move shortens the first batch by
 * more than the minimum gain, and the reshaped plan's rate is not lower by more than it.
 *
 * The reshaped run keeps the pipeline's start as measured: its first element is set to the start
 * the run as written measured (its first element less the fill the model accounts for) plus the
 * fill the reshaped pipeline would take in the configuration it ran, so a projection from it
 * carries the same start.
 */
import type { ModelOptions, Plan, TimeProjection } from '../shared/analysis';
import type { Overrides, Profile } from '../shared/profile';
import { MODEL_CONSTANTS as C } from './constants';
import { describeOp, formatSeconds } from './describe';
import { reshapedRun, shuffleCandidates, type ReorderCandidate, type ReorderChange } from './reshape';

/** What pricing a move needs from the model: a plan, a rate and bound, a time projection of a profile. */
export interface FirstBatchPricing {
  planOf(p: Profile): Plan;
  ranOf(p: Profile): { rate: number; bound: number };
  timeOf(p: Profile, overrides: Overrides): TimeProjection | undefined;
}

const startOf = (t: TimeProjection | undefined): number => t?.firstBatchParts.find((p) => p.what === 'start')?.seconds ?? 0;

/** The reshaped run with its first element carrying the start the run as written measured (see the file's comment). */
function reshapedWithStart(profile: Profile, c: ReorderCandidate, start: number, pricing: FirstBatchPricing): Profile | undefined {
  const moved = reshapedRun(profile, c, pricing.ranOf);
  if (!moved) return undefined;
  const bare: Profile = { ...moved, run: { ...moved.run, firstElementSeconds: undefined } };
  const fill = pricing.timeOf(bare, bare.run.overrides)?.firstBatchSeconds;
  if (fill === undefined || !Number.isFinite(fill)) return undefined;
  return { ...bare, run: { ...bare.run, firstElementSeconds: start + fill } };
}

/** "the shuffle buffer of 10,000 fills behind map(decode): ≈ 41 s; moved before it, the first batch comes in ≈ 0.4 s". */
export function shuffleFirstReason(profile: Profile, c: ReorderCandidate, fillSeconds: number, firstBatchSeconds: number): string {
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const shuffle = byId.get(c.opId)!;
  const maps = [...c.crossed].reverse().map((id) => describeOp(byId.get(id)!));
  const list = maps.length === 1 ? maps[0] : `${maps.slice(0, -1).join(', ')} and ${maps.at(-1)}`;
  const n = shuffle.knobs.bufferSize;
  const buffer = n !== undefined ? `the shuffle buffer of ${n.toLocaleString('en-US')}` : `${describeOp(shuffle)}'s buffer`;
  return `${buffer} fills behind ${list}: ≈ ${formatSeconds(fillSeconds)}; moved before ${maps.length === 1 ? 'it' : 'them'}, the first batch comes in ≈ ${formatSeconds(firstBatchSeconds)} (predicted)`;
}

/**
 * The plan with a shuffle moved ahead of the maps its fill waits on, when that shortens the first
 * batch as the file's comment says; otherwise `planned`. The reorder comes first, then the
 * reshaped pipeline's knob changes.
 */
export function withShuffleFirst(profile: Profile, options: ModelOptions | undefined, planned: Plan, pricing: FirstBatchPricing): Plan {
  if (options?.reshape === false || profile.trainer || !planned.time) return planned;
  const before = planned.time;
  const start = startOf(pricing.timeOf(profile, profile.run.overrides));
  let best: { plan: Plan; change: ReorderChange; first: number } | undefined;
  for (const c of shuffleCandidates(profile, options)) {
    const fill = before.firstBatchParts.find((p) => p.what === 'shuffle fill' && p.opId === c.opId)?.seconds ?? 0;
    if (before.firstBatchParts[0]?.opId !== c.opId || fill < C.firstBatchMinSeconds || fill < C.shuffleFillShare * before.firstBatchSeconds) continue;
    let reshaped: Plan;
    try {
      const p = reshapedWithStart(profile, c, start, pricing);
      if (!p) continue;
      reshaped = pricing.planOf(p);
    } catch {
      continue;
    }
    const first = reshaped.time?.firstBatchSeconds;
    if (first === undefined || !(first * (1 + C.minGain) < before.firstBatchSeconds)) continue;
    if (reshaped.predictedRate * (1 + C.minGain) < planned.predictedRate) continue;
    if (best && best.first <= first) continue;
    const change: ReorderChange = { kind: 'reorder', opId: c.opId, before: c.before, reason: shuffleFirstReason(profile, c, fill, first), predictedRate: reshaped.predictedRate, firstBatchSeconds: first };
    best = { plan: reshaped, change, first };
  }
  if (!best) return planned;
  return { ...best.plan, changes: [best.change, ...best.plan.changes], currentRate: planned.currentRate, ...(best.plan.notes ? { notes: best.plan.notes } : {}) };
}
