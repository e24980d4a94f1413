/**
 * Which of a plan's changes may be offered to a person: the one rule the editor's lenses and quick
 * fixes, `plumber plan` and `plumber fix` all apply, so that what a terminal applies is what the
 * editor would offer. A change verification dropped is never offered, and neither is an unverified
 * plan whose predicted figure reads as no gain.
 */
import { changeKey, type Plan, type PlanChange } from '../shared/analysis';

/**
 * True when `predicted` is a gain over `current` as a person reads the figure: it shows as more
 * than "1.0×" (a plan "est. 1.0×" would change the code for nothing).
 */
export function predictsGain(predicted: number | undefined, current: number): boolean {
  if (predicted === undefined || !(current > 0) || !Number.isFinite(predicted)) return false;
  return Number((predicted / current).toFixed(1)) > 1;
}

/**
 * The changes a person may apply: all of an unverified plan's when the model predicts a gain from
 * them, only the kept ones of a verified plan, none after no-gain or error. A measured gain is
 * offered whatever the model predicted: verification keeps changes the model does not price (a
 * prefetch at the end, a fn moved off a busy event loop), whose estimate stays as written's.
 */
export function offeredChanges(plan: Plan): PlanChange[] {
  const v = plan.verification;
  if (!v) return plan.changes.length > 0 && !predictsGain(plan.predictedRate, plan.currentRate) ? [] : plan.changes;
  if (v.verdict !== 'gain') return [];
  // `plan.changes` already holds only what verification kept (Plan.verification's contract);
  // checking against `kept` and `dropped` too means a plan that broke it still offers no loser.
  const kept = new Set(v.kept.changes);
  const dropped = new Set(v.dropped.map((d) => changeKey(d.change)));
  return plan.changes.filter((c) => kept.has(changeKey(c)) && !dropped.has(changeKey(c)));
}

/** The plan as a person is offered it: its changes narrowed to `offeredChanges` (the rest of the plan as it came). */
export function offeredPlan(plan: Plan): Plan {
  const changes = offeredChanges(plan);
  return changes.length === plan.changes.length ? plan : { ...plan, changes };
}
