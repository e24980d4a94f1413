/**
 * Verification (DESIGN.md "Verify, never lose"): measure as written and the plan in alternating
 * runs (A B B A: the passes' own runs are the first A B when the last pass ran exactly the final
 * plan), pool each side's window slices into a rate ± Student-t interval, and keep only a
 * configuration that measured reliably faster (intervals apart and ≥ MIN_RELATIVE_GAIN). When the
 * plan is not a reliable gain, the change that hurts is looked for (leave-one-out, each change
 * alone, the union of the changes that did not lose alone) within the time budget; when it is,
 * each of its changes is left out in turn while the budget lasts. Then ./decide.ts keeps the best
 * measured configuration, a training loop's worker pool is sized by measuring its neighbours
 * (./trainer.ts), and ./extras.ts tries what the model does not price on top of it.
 */
import type { Plan, PlanChange, Verification } from '../../shared/analysis';
import { sideFaster, sideSlower } from '../paired';
import { pooledRate } from '../stats';
import { configOut, keyOf, predictedOf, type Config } from './config';
import { chooseKept, verdictOf } from './decide';
import { tryExtras } from './extras';
import { planKeeping } from './keep';
import { firstPairAlignable, settledAfterOnePair, steadyFirstPair } from './settle';
import { tryPoolNeighbours } from './trainer';
import { Trials, type VerifyContext } from './trials';

/**
 * A part of a plan that gained is measured without one change only when the model puts it above
 * this share of the plan's measured rate: below it the part cannot be the faster one, and its run
 * (slow, as the pipeline without the change is) would only cost the user time.
 */
const LEAVE_OUT_FLOOR = 0.5;

const CANCELLED = 'verification was cancelled';

/** The plan, verified: `plan.verification` says what was measured, and `plan.changes` holds only what it kept. */
export async function verifyPlan(ctx: VerifyContext): Promise<Plan> {
  const trials = new Trials(ctx);
  const stopped = (await measurePairs(trials)) ?? (await findWhatHurts(trials)) ?? (await leaveEachOut(trials));
  if (stopped) return stopped;
  const pooled = await tryPoolNeighbours(trials, chooseKept(trials));
  if (pooled === 'cancelled') return errorOut(trials, CANCELLED);
  const kept = await tryExtras(trials, pooled);
  if (kept === 'cancelled') return errorOut(trials, CANCELLED);
  const { verification, keep } = verdictOf(trials, kept);
  return finish(trials, verification, keep);
}

/** The plan keeping `keep`, with the verification's runs and time added to `v`. */
function finish(trials: Trials, v: Omit<Verification, 'asWritten' | 'tried' | 'seconds'>, keep: PlanChange[]): Plan {
  const { ctx } = trials;
  const verification: Verification = {
    ...v,
    asWritten: pooledRate(trials.asWritten.slices),
    tried: trials.order.map((c) => configOut(c)),
    seconds: trials.budget.elapsed(),
  };
  return planKeeping({ first: ctx.first, last: ctx.last, history: ctx.history }, ctx.plan, keep, ctx.options, verification);
}

/** The plan keeping no change because verification could not go on: every change dropped with `message`. */
function errorOut(trials: Trials, message: string): Plan {
  const a = pooledRate(trials.asWritten.slices);
  return finish(trials, { verdict: 'error', kept: { changes: [], measured: a }, speedup: 1, speedupHalfWidth: 0, dropped: trials.all.map((change) => ({ change, why: message })), summary: message }, []);
}

/** Measures as written after a run of `partner`, its window on the elements partner's covered (see `alignedStart`); the plan to return when it failed. */
async function measureAsWritten(trials: Trials, partner: Config): Promise<Plan | undefined> {
  const { asWritten } = trials;
  if (await trials.measure(asWritten, `${trials.name(asWritten)} (${asWritten.runs + 1})`, partner)) return undefined;
  return errorOut(trials, trials.cancelled ? CANCELLED : `verification failed: the pipeline as written failed to run: ${asWritten.error?.message ?? 'no profile'}`);
}

/**
 * Phase 1: as written and the whole plan, alternating, so a change of load hits both. The first
 * pair is the first pass's run as written and the plan's first run (a pass's, when the last pass
 * ran exactly the plan): the runs between them change nothing of as written, and a drift of load
 * shows in the cores each found free (see settledAfterOnePair). The second pair runs B A, so a
 * load that drifts during the runs weighs on both sides alike (an ABBA design). Returns the plan
 * when verification cannot go on.
 */
async function measurePairs(trials: Trials): Promise<Plan | undefined> {
  const { asWritten, planned, budget } = trials;
  const cores = trials.first.machine.cores;
  for (let pair = planned.runs; pair < 2; pair++) {
    if (pair > 0 && settledAfterOnePair(asWritten, planned, cores)) break;
    // A pair on a steady machine that compared the same elements gets the second within the
    // budget; one under a drifting load, or on different stretches of the data, within the floor.
    const comparable = steadyFirstPair(asWritten, planned, cores) && !firstPairAlignable(asWritten, planned);
    const within = comparable ? budget.seconds : budget.pairSeconds;
    if (pair > 0 && !budget.room(2, within)) {
      // No room for the second pair, but for one run as written: on the plan's elements (its
      // warm-up aligned to the plan's run), it makes the first pair an A B A design, which cancels
      // a steady drift of load as the second pair would, and gives the plan's run a partner that
      // ran the same elements (the first run as written started earlier, and runs that share few
      // stretches of the data compare with a wide spread).
      if (budget.room(1, within, budget.alignedWarmupSeconds(planned))) {
        const failed = await measureAsWritten(trials, planned);
        if (failed) return failed;
      }
      break;
    }
    await trials.measure(planned, `${trials.name(planned)} (${planned.runs + 1})`);
    if (trials.cancelled) return errorOut(trials, CANCELLED);
    if (pair > 0) {
      const failed = await measureAsWritten(trials, planned);
      if (failed) return failed;
    }
    if (planned.error) break;
  }
  return undefined;
}

/**
 * Phase 2: the whole plan is not a reliable gain: find the change that hurts. The plan without
 * each change (of three or more), then each change alone, the most promising first, then the
 * changes that did not lose alone together; each beside a run as written, while there is room.
 */
async function findWhatHurts(trials: Trials): Promise<Plan | undefined> {
  const { all, asWritten, planned } = trials;
  if ((sideFaster(planned, asWritten) && !planned.error) || all.length < 2) return undefined;
  const candidates: PlanChange[][] = [];
  if (all.length >= 3) for (const c of all) candidates.push(all.filter((x) => x !== c));
  const byPromise = [...all].sort((a, b) => predictedOf(b) - predictedOf(a));
  for (const c of byPromise) candidates.push([c]);
  for (const changes of candidates) {
    const failed = await tryBesideAsWritten(trials, changes);
    if (failed) return failed;
  }
  // The changes that did not lose alone may add up: measure them together once.
  const union = all.filter((c) => {
    const alone = trials.configs.get(keyOf([c]));
    return alone && alone.runs > 0 && !alone.error && !sideSlower(alone, asWritten);
  });
  if (union.length >= 2) return tryBesideAsWritten(trials, union);
  return undefined;
}

/** Measures a part of the plan not measured yet and as written after it, when both fit; the plan to return when verification cannot go on. */
async function tryBesideAsWritten(trials: Trials, changes: PlanChange[]): Promise<Plan | undefined> {
  const c = trials.configOf(changes);
  if (c.runs > 0 || !trials.budget.room(2)) return undefined;
  await trials.measure(c, trials.name(c));
  if (trials.cancelled) return errorOut(trials, CANCELLED);
  return measureAsWritten(trials, c);
}

/**
 * Phase 3: the plan is a gain, but that says nothing of each change in it: a large gain (a cache
 * that saves most of an element's cost) hides a change that loses beside it (a worker move whose
 * cloning costs more than the fn once the cache serves). Measure the plan without each change, the
 * least promising first, while there is room; one run each, compared with the plan itself.
 */
async function leaveEachOut(trials: Trials): Promise<Plan | undefined> {
  const { all, asWritten, planned } = trials;
  if (!(sideFaster(planned, asWritten) && !planned.error && all.length >= 2)) return undefined;
  const leastPromising = [...all].sort((a, b) => predictedOf(a) - predictedOf(b));
  for (const change of leastPromising) {
    const c = trials.configOf(all.filter((x) => x !== change));
    if (c.runs > 0 || !trials.budget.room(1)) continue;
    // Without the change that carries the gain (a cache worth 300×) the rest cannot beat the
    // plan: a part the model puts at half the plan's measured rate or less is not measured.
    if (c.predictedRate !== undefined && c.predictedRate <= LEAVE_OUT_FLOOR * pooledRate(planned.slices).rate) continue;
    await trials.measure(c, trials.name(c));
    if (trials.cancelled) return errorOut(trials, CANCELLED);
    trials.measuredParts.add(c);
  }
  return undefined;
}
