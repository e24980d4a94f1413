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
 * A conversion to plumber-data rewrites the whole chain on a prediction that does not price the
 * library's own per-element cost, so it is offered only when verification measured it: an
 * unverified plan offers its knob changes alone, on what they predict (each one's own
 * `predictedRate`: the plan's is the conversion's).
 */
export function offeredChanges(plan: Plan): PlanChange[] {
  const v = plan.verification;
  if (!v) {
    const { knobs, predicted } = withoutConversion(plan);
    return knobs.length > 0 && !predictsGain(predicted, plan.currentRate) ? [] : knobs;
  }
  if (v.verdict !== 'gain') return [];
  // `plan.changes` already holds only what verification kept (Plan.verification's contract);
  // checking against `kept` and `dropped` too means a plan that broke it still offers no loser.
  const kept = new Set(v.kept.changes);
  const dropped = new Set(v.dropped.map((d) => changeKey(d.change)));
  return plan.changes.filter((c) => kept.has(changeKey(c)) && !dropped.has(changeKey(c)));
}

/**
 * An unverified plan's changes but a conversion or a reorder (each rewrites the source and is
 * offered only measured), and the rate they predict. A cache in a plan with a reorder may be safe
 * only below the moved operator, so it goes with the reorder.
 */
function withoutConversion(plan: Plan): { knobs: PlanChange[]; predicted: number } {
  const reorders = plan.changes.some((c) => c.kind === 'reorder');
  const knobs = plan.changes.filter((c) => c.kind !== 'convert' && c.kind !== 'reorder' && !(reorders && c.kind === 'cache'));
  if (knobs.length === plan.changes.length) return { knobs, predicted: plan.predictedRate };
  return { knobs, predicted: Math.max(plan.currentRate, ...knobs.map((c) => c.predictedRate ?? 0)) };
}

/**
 * The plan as a person is offered it: its changes narrowed to `offeredChanges` (the rest of the
 * plan as it came, but for an unverified conversion left out: the prediction is then its knobs').
 */
export function offeredPlan(plan: Plan): Plan {
  const changes = offeredChanges(plan);
  if (changes.length === plan.changes.length) return plan;
  if (!plan.verification && plan.changes.some((c) => c.kind === 'convert' || c.kind === 'reorder')) return { ...plan, changes, predictedRate: withoutConversion(plan).predicted };
  return { ...plan, changes };
}
