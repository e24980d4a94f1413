/**
 * The plan as verification left it: reduced to the changes kept, priced by the model for that
 * subset, and a training loop's verdict said of the loop as written.
 */
import type { ModelOptions, Plan, PlanChange, Verification } from '../../shared/analysis';
import type { Overrides, Profile } from '../../shared/profile';
import { analyze, keptTrainerVerdict, overridesFor, overridesReverting, reshapedFor } from '../../model';
import { safePredict } from './config';
import { formatSpeedup } from '../../shared/words';

/**
 * The plan reduced to `keep` (a subset of its changes), with the model's prediction for that
 * subset. It is priced from the last pass's run, which ran most of the plan, with the knobs of
 * the changes left out turned back (`overridesReverting`): the run as written measured each op at
 * its own knobs (an inner dataset's latency at two in flight), and priced from it a kept part
 * reads far below what it runs at. From the run as written only when a knob that run had cannot
 * be turned back (a cache it inserted).
 */
export function planKeeping(runs: { first: Profile; last: Profile; history: Profile[] }, plan: Plan, keep: PlanChange[], options: ModelOptions, verification?: Verification): Plan {
  return withTrainerAsKept(runs, planKept(runs, plan, keep, options, verification), options, verification);
}

/**
 * A training loop's verdict as verification left the plan: about the loop as written (the first
 * run), and what the changes kept do for it. The model's verdict came from the last planning pass
 * (a loop already running the first plan) and promised the plan before verification measured it,
 * so it would speak of changes verification dropped beside a verdict that kept none. The verdict
 * sentence in the plan's notes is replaced with the new one. The changes kept are priced from the
 * last pass's run, as the plan is (planKept): a run with a map in worker threads measured the
 * tasks the library sends in this loop, which a step holding the main thread makes far larger than
 * on a free one, and those decide how much of a step a pool covers.
 */
function withTrainerAsKept(runs: { first: Profile; last: Profile }, plan: Plan, options: ModelOptions, verification?: Verification): Plan {
  const { first, last } = runs;
  const asWritten = first.trainer ? analyze(first, options).trainer : undefined;
  if (!asWritten) return plan;
  const why = verification && verification.verdict !== 'gain' ? verification.summary : "the plan's changes did not hold up once the pipeline ran with them";
  const measured = verification?.verdict === 'gain' ? formatSpeedup(verification.speedup, verification.speedupHalfWidth) : undefined;
  const fromLast = last.trainer ? fromLastRun(runs, plan.changes, options) : undefined;
  const priced = fromLast ? { profile: last, overrides: fromLast } : undefined;
  const trainer = keptTrainerVerdict(first, asWritten, plan.overrides, plan.changes, why, options, measured, priced);
  const old = plan.trainer?.summary;
  const notes = (plan.notes ?? []).filter((n) => n !== old && n !== asWritten.summary);
  return { ...plan, trainer, notes: [...notes, trainer.summary] };
}

function planKept(runs: { first: Profile; last: Profile; history: Profile[] }, plan: Plan, keep: PlanChange[], options: ModelOptions, verification?: Verification): Plan {
  const { first, last } = runs;
  // The whole plan, as the model made it (a widened lever is a change of its own: priced below).
  if (keep.length === plan.changes.length && keep.every((c, i) => c === plan.changes[i])) return { ...plan, verification };
  const overrides = overridesFor(first, keep, options);
  if (keep.length === 0) {
    // Keeping the pipeline as written, the best estimate of its rate is what every run of it
    // measured (verification's pooled windows), not its first run alone: beside other work one
    // run of a pipeline can measure a third above or below the next.
    const pooled = verification?.asWritten.rate;
    const rate = pooled !== undefined && Number.isFinite(pooled) && pooled > 0 ? pooled : plan.currentRate;
    return { ...plan, changes: [], overrides, currentRate: rate, predictedRate: rate, predictedBound: analyzeBound(first, options), predictedBottleneck: analyze(first, options).bottleneck, verification };
  }
  const fromLast = fromLastRun(runs, keep, options);
  const reorders = keep.some((c) => c.kind === 'reorder');
  const p = (fromLast && safePredict(last, fromLast, { ...options, history: runs.history })) ?? safePredict(reorders ? reshapedFor(first, keep, options) : first, overrides, options);
  return { ...plan, changes: keep, overrides, predictedRate: p?.rate ?? plan.predictedRate, predictedBound: p?.bound ?? plan.predictedBound, predictedBottleneck: p?.bottleneck ?? plan.predictedBottleneck, verification };
}

/**
 * The overrides that give the configuration `keep` makes from the last pass's run, or undefined
 * when there is no later run or `keep` reorders the pipeline (no pass ran the reshaped pipeline:
 * it is priced on the first run, as reshaped).
 */
function fromLastRun(runs: { first: Profile; last: Profile }, keep: PlanChange[], options: ModelOptions): Overrides | undefined {
  if (runs.last === runs.first || keep.some((c) => c.kind === 'reorder')) return undefined;
  return overridesReverting(runs.last, runs.first, keep, options);
}

function analyzeBound(profile: Profile, options: ModelOptions): number {
  return analyze(profile, options).bound;
}
