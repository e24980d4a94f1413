/**
 * The one diagnose routine the CLI, the language server and the benchmarks share (DESIGN.md
 * "Verify, never lose"): profile the pipeline as written, plan, re-profile with the plan and plan
 * again (../passes.ts), then verify (./verify.ts): measure the plan against the pipeline as
 * written in alternating runs and keep only what measured reliably faster, within a time budget
 * (./budget.ts).
 *
 * Everything here is deterministic given what `run` returns (and the clock, for the budget), so the
 * decision logic is tested with scripted runs; the runner itself is a child process elsewhere.
 */
import type { ModelOptions } from '../../shared/analysis';
import type { Profile } from '../../shared/profile';
import { describeOp, eventLoopMove, overridesFor, planTarget, timeFor } from '../../model';
import { planInPasses, withoutUnpromising } from '../passes';
import { cacheAfterRandom, userCachesAfterRandom } from '../randomness';
import { DEFAULT_BUDGET_SECONDS, passWarmupElements, replanSeconds } from './budget';
import type { DiagnoseInput, Diagnosis, PassRun, RunBudget, RunPurpose } from './input';
import { freshDiskCaches } from './diskCaches';
import { withoutUnoffered } from './unoffered';
import { verifyPlan } from './verify';

/**
 * Profile → plan → re-plan → verify → keep the best measured. Never rejects for a failed run: a
 * failed first run comes back as `error` with an empty plan; a failed verification run as
 * `plan.verification.verdict === 'error'` with no changes kept.
 */
export async function diagnose(given: DiagnoseInput): Promise<Diagnosis> {
  const { input, cleanup } = freshDiskCaches(given);
  try {
    const d = await diagnoseRuns(input);
    return d.error ? d : { ...d, plan: { ...d.plan, time: timeFor(d.first, overridesFor(d.first, d.plan.changes, input.options), input.options) ?? d.plan.time } };
  } finally {
    await cleanup();
  }
}

async function diagnoseRuns(input: DiagnoseInput): Promise<Diagnosis> {
  const user = input.userOverrides ?? {};
  const options: ModelOptions = { ...(input.options ?? {}) };
  const clock = input.clock ?? ((): number => performance.now() / 1000);
  const profiles: Profile[] = [];
  const passRuns: PassRun[] = [];
  const passes = Math.max(1, Math.floor(input.passes ?? 2));
  const began = clock();
  let asWritten: Profile | undefined;
  const planned = await planInPasses(
    async (overrides, pass) => {
      const purpose: RunPurpose = pass === 1 ? 'profile' : 'replan';
      input.onStep?.({ phase: purpose, message: pass === 1 ? 'profiling as written' : `re-profiling with the plan applied (pass ${pass} of ${passes})`, run: profiles.length + 1 });
      const t0 = clock();
      const spare = (input.budgetSeconds ?? DEFAULT_BUDGET_SECONDS) - (t0 - began) - (passRuns[0]?.seconds ?? 0);
      const warmupElements = asWritten && passWarmupElements(asWritten, overrides, spare);
      const seconds = asWritten && replanSeconds(asWritten, overrides, warmupElements, options);
      const budget: RunBudget = { ...(warmupElements ? { warmupElements } : {}), ...(seconds ? { seconds } : {}) };
      const p = await input.run(overrides, purpose, Object.keys(budget).length > 0 ? budget : undefined);
      asWritten ??= p;
      profiles.push(p);
      passRuns.push({ overrides, profile: p, seconds: clock() - t0 });
      return p;
    },
    passes,
    options,
    user,
    // Never a cache at or after a random op, whatever the model proposes: the static randomness
    // (options.randomOps) and what the runner saw in this run.
    (c, profile) => {
      if (c.kind !== 'cache') return undefined;
      const random = cacheAfterRandom(c.opId, profile, options.randomOps ?? []);
      if (!random) return undefined;
      return `A cache after ${describeOp(profile.ops.find((o) => o.id === c.opId) ?? random)} is left out: ${describeOp(random)} is random, and a cache would replay its first epoch's draws every epoch.`;
    },
  );
  // Unmeasured, a plan the last pass predicted no faster than as written is not offered; measured,
  // verification decides.
  // A plan for a machine with more cores than this one (`--cores`, the target-machine setting) that
  // needs more worker threads than there are cores here cannot be measured here: run starved, it
  // would read as no gain. It stays the model's, unverified, labelled as predicted for the target.
  const target = planTarget(planned.first, planned.plan, options);
  const verify = input.verify !== false && (target === undefined || target.verifiable);
  const checked = verify ? planned : withoutUnpromising(planned, options, user);
  const { first, analysis, last, history } = checked;
  let plan = checked.plan;
  const frozen = userCachesAfterRandom(first, options.randomOps ?? []);
  if (frozen.length > 0) plan = { ...plan, notes: [...(plan.notes ?? []), ...frozen] };
  // The final overrides are this engine's own translation of the (source-relative) changes, so a
  // verified subset and the whole plan run the same way.
  if (plan.changes.length > 0) plan = { ...plan, overrides: overridesFor(first, plan.changes, options) };
  if (first.error) {
    return { first, analysis, plan: { ...plan, changes: [], overrides: { ...user } }, last: first, profiles, error: first.error };
  }
  // A change the source shows cannot be made (a conversion the rewrite refuses) is dropped with its
  // reason before any run is spent on it.
  plan = await withoutUnoffered(plan, input.unoffered, { first, last, history }, options);
  // A plan of no change still gets the one move the model cannot price (see eventLoopMove), for
  // verification to measure: its estimate stays as written's.
  if (verify && plan.changes.length === 0) {
    const move = eventLoopMove(first, options);
    if (move) plan = { ...plan, changes: [move], overrides: overridesFor(first, [move], options) };
  }
  if (!verify || plan.changes.length === 0) return { first, analysis, plan, last, profiles };
  const verified = await verifyPlan({ input, first, plan, options, profiles, clock, passRuns, began, last, history });
  return { first, analysis, plan: verified, last, profiles };
}
