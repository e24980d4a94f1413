/**
 * Planning in passes, as DESIGN.md "The model" prescribes: plan from the profile as written, run
 * the pipeline again with that plan applied, and plan again from what the second run measured.
 * The second run shows what the first plan could not know (an awaiting op whose latency grows
 * with more calls in flight, a shared device, a worker pool's real cost), and the model keeps the
 * first pass's overrides in its second plan. `diagnose` (./diagnose.ts) runs this, then verifies.
 */
import type { Analysis, ModelOptions, Plan, PlanChange } from '../shared/analysis';
import { changeKey } from '../shared/analysis';
import type { Overrides, Profile } from '../shared/profile';
import { rootUnit } from '../shared/units';
import { analyze, changeTitle, downstreamOf, formatRate, MODEL_CONSTANTS, overridesFor, plan as planOf, predict, reshapedFor, trialPlan } from '../model';
import { compareSides, sideFaster, sideOf, withoutBestWords } from './paired';
import { formatSpeedup } from './stats';

export interface PlannedRun {
  /** The profile of the pipeline as written (with the user's own overrides, if any). */
  first: Profile;
  /** The analysis of `first`: what holds the pipeline back today. */
  analysis: Analysis;
  /** The final plan: every pass's changes, the last pass's prediction and overrides. */
  plan: Plan;
  /** The profile the final plan was computed from (the last pass). */
  last: Profile;
  /** The earlier runs the last pass planned with (`options.history`, then the passes before `last`). */
  history: Profile[];
  /** How many profiles were taken. */
  passes: number;
}

/**
 * A change to an operator an earlier pass inserted (a prefetch that is not in the source) says
 * the same as "insert it after the operator it follows, with the new size".
 */
export function relativeToSource(c: PlanChange, profile: Profile): PlanChange {
  if (c.kind !== 'prefetch' || !c.existing) return c;
  const op = profile.ops.find((o) => o.id === c.opId);
  if (!op?.overridden || op.site || op.inputs.length !== 1) return c;
  return { ...c, opId: op.inputs[0]!, existing: false, from: undefined };
}

/**
 * Says why a change must not be made on this profile (a cache after a random op), or undefined
 * when it may.
 */
export type RejectChange = (change: PlanChange, profile: Profile) => string | undefined;

/** The plan without the changes `reject` refuses: their knobs leave the overrides, the reason goes to the notes. */
function withoutRejected(plan: Plan, profile: Profile, options: ModelOptions, reject: RejectChange | undefined): Plan {
  if (!reject) return plan;
  // A plan that reorders is judged on the pipeline as reshaped (a cache the reorder frees from a random op above it).
  const shaped = reshapedFor(profile, plan.changes, options);
  const refused = plan.changes.map((c) => [c, reject(c, shaped)] as const).filter(([, why]) => why !== undefined);
  if (refused.length === 0) return plan;
  const overrides: Overrides = {};
  for (const [id, o] of Object.entries(plan.overrides)) overrides[id] = { ...o };
  const written = profile.run.overrides;
  for (const [c] of refused) {
    const o = overrides[c.opId];
    if (!o) continue;
    // Only the knob the change itself sets leaves; what the run was given stays.
    if (c.kind === 'cache' && written[c.opId]?.cache === undefined) delete o.cache;
    if (Object.keys(o).length === 0) delete overrides[c.opId];
  }
  const changes = plan.changes.filter((c) => !refused.some(([r]) => r === c));
  const p = changes.length > 0 ? predict(profile, overrides, options) : undefined;
  return {
    ...plan,
    changes,
    overrides,
    predictedRate: p?.rate ?? plan.currentRate,
    predictedBound: p?.bound ?? plan.predictedBound,
    predictedBottleneck: p?.bottleneck ?? plan.predictedBottleneck,
    notes: [...(plan.notes ?? []), ...refused.map(([, why]) => why!)],
  };
}

/**
 * Whether a run for this purpose calibrates worker tasks and prices moves (the runner's probes).
 * Only the first profile does: a later pass runs the same fns on the same machine, so it inherits
 * what the first measured (`inheritProbes`), and a verification run only compares rates. Callers
 * (the CLI, the language server, the benchmarks) ask here, so they run alike.
 */
export function probesFor(purpose: 'profile' | 'replan' | 'verify'): boolean {
  return purpose === 'profile';
}

/**
 * A later pass's profile, completed with what only the first run measured (it ran without
 * probes): each operator's move cost, observed randomness and the heap its elements hold, by
 * operator id, and the worker task calibration. What the later run measured itself is kept.
 */
export function inheritProbes(next: Profile, first: Profile): Profile {
  const byId = new Map(first.ops.map((o) => [o.id, o]));
  const machine = { ...next.machine };
  if (machine.workerDispatchSeconds === undefined && first.machine.workerDispatchSeconds !== undefined) machine.workerDispatchSeconds = first.machine.workerDispatchSeconds;
  if (machine.workerTaskOverheadSeconds === undefined && first.machine.workerTaskOverheadSeconds !== undefined) machine.workerTaskOverheadSeconds = first.machine.workerTaskOverheadSeconds;
  const ops = next.ops.map((op) => {
    const was = byId.get(op.id);
    if (!was || was.kind !== op.kind) return op;
    return {
      ...op,
      ...(op.moveCost === undefined && was.moveCost !== undefined ? { moveCost: was.moveCost } : {}),
      ...(op.randomObserved === undefined && was.randomObserved !== undefined ? { randomObserved: was.randomObserved } : {}),
      // An op moved to worker threads by the first plan is sampled by no one in the later run.
      ...(op.held === undefined && was.held !== undefined ? { held: was.held } : {}),
      ...(op.moveBlocked === undefined && was.moveBlocked !== undefined ? { moveBlocked: was.moveBlocked } : {}),
    };
  });
  return { ...next, machine, ops };
}

/**
 * The changes a second pass runs first. A cache changes which work is left: after it, the ops
 * below it serve from memory and the ops after it run on a main thread no longer busy with the
 * cached work, hot in the CPU's caches (audio's SpecAugment cost half as much per call as in the
 * run as written). What the first run measured of those ops does not hold then, so the changes to
 * them wait for the run with the cache, whose plan proposes what they need.
 */
export function stagedChanges(plan: Plan, profile: Profile): PlanChange[] {
  const caches = plan.changes.filter((c) => c.kind === 'cache');
  if (caches.length === 0 || caches.length === plan.changes.length) return plan.changes;
  const after = new Set<string>();
  for (const c of caches) for (const id of downstreamOf(profile, c.opId)) after.add(id);
  return plan.changes.filter((c) => c.kind === 'cache' || !after.has(c.opId));
}

/** A later run's reason, said as what the run with the plan applied measured. */
function remeasured(reason: string): string {
  return `With the plan applied, the next run measured: ${reason}`;
}

/**
 * A later pass's change to the knob an earlier pass changed: its value, with the source's value
 * as the starting point, and its reason said as what the run with the plan measured (it speaks
 * of that run's knobs: "pulls 11 of its inner datasets" where the source has 2).
 */
function refined(earlier: PlanChange, later: PlanChange): PlanChange {
  // The runs never had the conversion: its reason is the model's, not a measurement.
  if (later.kind === 'convert') return later;
  const reason = remeasured(later.reason);
  if (later.kind === 'parallelism' && earlier.kind === 'parallelism') return { ...later, from: earlier.from, reason };
  if (later.kind === 'cycleLength' && earlier.kind === 'cycleLength') return { ...later, from: earlier.from, reason };
  return { ...later, reason };
}

/**
 * The speed-up `run` measured over `first` as a person reads it ("1.6× ± 0.2 on the same
 * elements"), when it is faster beyond the spread by verification's own rule (./paired.ts
 * `sideFaster`); undefined when it is no reliable gain.
 */
export function measuredGain(run: Profile, first: Profile): string | undefined {
  const x = sideOf(run, 1);
  const base = sideOf(first, 0);
  if (!sideFaster(x, base)) return undefined;
  const s = compareSides(x, base);
  return `${formatSpeedup(s.speedup, s.halfWidth)} ${s.paired ? 'on the same elements' : 'by pooled rates'}${withoutBestWords(x, base)}`;
}

/**
 * Profiles, plans, and re-profiles with the plan applied up to `passes` times in all. Stops early
 * when a run fails or a plan proposes nothing. `reject` vetoes changes the model proposed (they
 * leave the plan with a note). `profile` runs the pipeline with the complete
 * overrides (the user's plus the plan's); `pass` is 1 for the run as written.
 */
export async function planInPasses(profile: (overrides: Overrides, pass: number) => Promise<Profile>, passes: number, options: ModelOptions, userOverrides: Overrides, reject?: RejectChange): Promise<PlannedRun> {
  const first = await profile(userOverrides, 1);
  const analysis = analyze(first, options);
  let last = first;
  let history = options.history ?? [];
  let current = withoutRejected(planOf(first, options), first, options, reject);
  // A fn the move probe ran far cheaper in a worker is tried there by the next pass when no core
  // is free for the plan to move it (see `trialPlan`): that run prices the move, not the probe.
  const trial = passes > 1 && !first.error ? trialPlan(first, options, current) : undefined;
  if (trial) current = withoutRejected(trial, first, options, reject);
  // With a pass to come, a plan with a cache runs the cache first (`stagedChanges`).
  const staged = passes > 1 ? stagedChanges(current, first) : current.changes;
  const changes = new Map<string, PlanChange>(staged.map((c) => [changeKey(c), c]));
  let runOverrides = staged.length < current.changes.length ? overridesFor(first, staged, options) : current.overrides;
  let taken = 1;
  const runs: Profile[] = [first];
  /** Notes on earlier passes' changes a later pass undid. */
  const undone: string[] = [];
  // A conversion alone sets no knob the runner can apply: another pass would run the pipeline as it was.
  // A reorder's knobs are the reshaped pipeline's, which no pass (overrides on the file as written) runs.
  while (taken < passes && !first.error && current.changes.some((c) => c.kind !== 'convert') && !current.changes.some((c) => c.kind === 'reorder')) {
    const run = await profile({ ...userOverrides, ...runOverrides }, taken + 1);
    taken++;
    if (run.error) {
      // The staged run failed: the plan stays the first pass's whole plan, which verification
      // measures (and reports) as it would have without the stage.
      if (taken === 2) for (const c of current.changes) changes.set(changeKey(c), c);
      break;
    }
    const next = inheritProbes(run, first);
    const ranWith = runOverrides;
    // Earlier runs at other knob values let the model see how latency grows with calls in flight.
    const withHistory = { ...options, history: [...(options.history ?? []), ...runs] };
    current = withoutRejected(planOf(next, withHistory), next, withHistory, reject);
    runOverrides = current.overrides;
    history = withHistory.history;
    runs.push(next);
    last = next;
    /** Moves this pass would undo that its run measured faster than as written: they stay, for verification to settle. */
    const kept: string[] = [];
    // A later pass refines an earlier change of the same kind on the same operator.
    for (const c of current.changes) {
      const asWritten = relativeToSource(c, next);
      if (asWritten.kind === 'placement') {
        // A placement carries its own parallelism; one that puts the fn back where the source
        // has it (an earlier pass's worker pool measured costing more than it saves) undoes the
        // earlier change, and the source needs none.
        changes.delete(changeKey({ kind: 'parallelism', opId: asWritten.opId }));
        if (first.ops.find((o) => o.id === asWritten.opId)?.placement === asWritten.to) {
          const earlier = changes.get(changeKey(asWritten));
          // The model prices the way back from the runs' per-call figures, which two runs take on
          // different stretches of the data, whose elements may differ in cost several times; what
          // the run with the move measured against the run as written outweighs that estimate, and
          // verification then compares the two on the same elements.
          const gain = earlier && ranWith[asWritten.opId] ? measuredGain(run, first) : undefined;
          if (earlier && gain) {
            kept.push(asWritten.opId);
            undone.push(`The passes kept ${changeTitle(earlier, first)} although, from the run with it, the model would put the fn back on the main thread: that run measured ${gain}.`);
            continue;
          }
          changes.delete(changeKey(asWritten));
          // Said, or the plan reads as if nothing had been tried ("the pipeline already runs at
          // what this machine allows") where a run measured the move and undid it.
          if (earlier) undone.push(`${changeTitle(earlier, first)} was tried in the run with the plan applied and left out: ${asWritten.reason}`);
          continue;
        }
      }
      if (asWritten.kind === 'parallelism') {
        // The thread count of a pool an earlier pass created is that move's own: one change, "run
        // map(f) in N worker threads", as the fix writes it.
        const move = changes.get(changeKey({ kind: 'placement', opId: asWritten.opId }));
        if (move?.kind === 'placement' && move.to === 'worker') {
          changes.set(changeKey(move), { ...move, parallelism: asWritten.to, reason: `${move.reason} ${remeasured(asWritten.reason)}` });
          continue;
        }
      }
      const earlier = changes.get(changeKey(asWritten));
      changes.set(changeKey(asWritten), earlier ? refined(earlier, asWritten) : asWritten);
    }
    if (kept.length > 0) {
      const overrides: Overrides = { ...current.overrides };
      for (const id of kept) overrides[id] = { ...ranWith[id] };
      const p = predict(next, overrides, withHistory);
      current = { ...current, overrides, predictedRate: p.rate, predictedBound: p.bound, predictedBottleneck: p.bottleneck };
      runOverrides = overrides;
    }
  }
  const notes = [...(current.notes ?? []), ...undone];
  let final: Plan = { ...current, currentRate: analysis.measuredRate, changes: [...changes.values()], ...(notes.length > 0 ? { notes } : {}) };
  if (final.changes.length === 0 && last !== first) {
    // A later pass undid every change: the pipeline stays as written, and so does its rate. The
    // last pass's prediction is for its own run's knobs put back, priced from another run: what
    // the run as written measured is the better figure for it.
    final = { ...final, overrides: { ...userOverrides }, predictedRate: analysis.measuredRate, predictedBound: analysis.bound, predictedBottleneck: analysis.bottleneck };
  }
  return { first, analysis, last, history, passes: taken, plan: final };
}

/**
 * For a plan nobody will measure (`--no-verify`): a later pass predicts the plan from a run of it,
 * and when that prediction is no better than what the run as written measured, nothing measured
 * says the plan helps, so it proposes no change (the model's own gain rule, against the run as
 * written rather than the run with the plan). Verification does not need this: it compares the
 * two on the same elements, where two runs' pooled rates can differ by the data they covered (the
 * text example measured 160–270/s as written in runs of the same code). Not when planning for
 * other cores than the runs had: the two figures are then for different machines.
 */
export function withoutUnpromising(planned: PlannedRun, options: ModelOptions, userOverrides: Overrides): PlannedRun {
  const { first, last, analysis, plan } = planned;
  if (last === first || plan.changes.length === 0 || options.cores !== undefined || plan.predictedRate > analysis.measuredRate * (1 + MODEL_CONSTANTS.minGain)) return planned;
  const tried = plan.changes.map((c) => changeTitle(c, first)).join('; ');
  const measured = last.run.seconds > 0 ? last.run.elements / last.run.seconds : 0;
  const unit = rootUnit(first);
  const why = `The run with the plan applied (${tried}) measured ${formatRate(measured, unit)}, and from it the model predicts ${formatRate(plan.predictedRate, unit)} for the plan: no more than the ${formatRate(analysis.measuredRate, unit)} measured as written, so the model proposes no change.`;
  return {
    ...planned,
    plan: { ...plan, changes: [], overrides: { ...userOverrides }, predictedRate: analysis.measuredRate, predictedBound: analysis.bound, predictedBottleneck: analysis.bottleneck, notes: [...(plan.notes ?? []), why] },
  };
}
