/**
 * Changes the source shows cannot be made, dropped before verification spends a run on them: a
 * conversion whose chain the rewrite refuses (a generator stage that keeps state across
 * elements…) is known not to be writable from the source alone, so it is not offered, with its
 * reason as a note, and never reads as a verification that failed. The plan's other changes are
 * priced without it (as verification prices a part of a plan) and verified as usual.
 */
import type { ModelOptions, Plan, PlanChange } from '../../shared/analysis';
import type { Profile } from '../../shared/profile';
import { planKeeping } from './keep';

/** What a change is called in the note that says it is not offered. */
function titleOf(change: PlanChange): string {
  return change.kind === 'convert' ? 'Convert to plumber-data' : `The ${change.kind} change on ${change.opId}`;
}

/** `plan` without the changes `why` refuses, each said in a note "… not offered: <reason>". */
export async function withoutUnoffered(
  plan: Plan,
  why: ((change: PlanChange, first?: Profile, plan?: Plan) => Promise<string | undefined>) | undefined,
  runs: { first: Profile; last: Profile; history: Profile[] },
  options: ModelOptions,
): Promise<Plan> {
  if (!why || plan.changes.length === 0) return plan;
  const keep: PlanChange[] = [];
  const notes: string[] = [];
  for (const change of plan.changes) {
    const reason = await why(change, runs.first, plan);
    if (reason === undefined) keep.push(change);
    else notes.push(`${titleOf(change)} not offered: ${reason}`);
  }
  if (notes.length === 0) return plan;
  const kept = planKeeping(runs, plan, keep, options);
  return { ...kept, notes: [...(kept.notes ?? []), ...notes] };
}
