/**
 * Planning in passes, as DESIGN.md "The model" prescribes: plan from the profile as written, run
 * the pipeline again with that plan applied, and plan again from what the second run measured.
 * The second run shows what the first plan could not know (an awaiting op whose latency grows
 * with more calls in flight, a shared device, a worker pool's real cost), and the model keeps the
 * first pass's overrides in its second plan.
 */
import type { Analysis, ModelOptions, Plan, PlanChange } from '../shared/analysis';
import type { Overrides, Profile } from '../shared/profile';
import { analyze, plan as planOf } from '../model';

export interface PlannedRun {
  /** The profile of the pipeline as written (with the user's own overrides, if any). */
  first: Profile;
  /** The analysis of `first`: what holds the pipeline back today. */
  analysis: Analysis;
  /** The final plan: every pass's changes, the last pass's prediction and overrides. */
  plan: Plan;
  /** The profile the final plan was computed from (the last pass). */
  last: Profile;
  /** How many profiles were taken. */
  passes: number;
}

/**
 * A change to an operator an earlier pass inserted (a prefetch that is not in the source) says
 * the same as "insert it after the operator it follows, with the new size".
 */
function relativeToSource(c: PlanChange, profile: Profile): PlanChange {
  if (c.kind !== 'prefetch' || !c.existing) return c;
  const op = profile.ops.find((o) => o.id === c.opId);
  if (!op?.overridden || op.site || op.inputs.length !== 1) return c;
  return { kind: 'prefetch', opId: op.inputs[0], existing: false, size: c.size, reason: c.reason };
}

/**
 * Profiles, plans, and re-profiles with the plan applied up to `passes` times in all. Stops early
 * when a run fails or a plan proposes nothing. `profile` runs the pipeline with extra overrides.
 */
export async function planInPasses(profile: (overrides: Overrides) => Promise<Profile>, passes: number, options: ModelOptions, userOverrides: Overrides): Promise<PlannedRun> {
  const first = await profile(userOverrides);
  const analysis = analyze(first, options);
  let last = first;
  let current = planOf(first, options);
  const changes = new Map<string, PlanChange>(current.changes.map((c) => [`${c.kind}:${c.opId}`, c]));
  let taken = 1;
  const runs: Profile[] = [first];
  while (taken < passes && !first.error && current.changes.length > 0) {
    const next = await profile({ ...userOverrides, ...current.overrides });
    taken++;
    if (next.error) break;
    // Earlier runs at other knob values let the model see how latency grows with calls in flight.
    current = planOf(next, { ...options, history: [...(options.history ?? []), ...runs] });
    runs.push(next);
    last = next;
    // A later pass refines an earlier change of the same kind on the same operator.
    for (const c of current.changes) {
      const asWritten = relativeToSource(c, next);
      changes.set(`${asWritten.kind}:${asWritten.opId}`, asWritten);
    }
  }
  return { first, analysis, last, passes: taken, plan: { ...current, currentRate: analysis.measuredRate, changes: [...changes.values()] } };
}
