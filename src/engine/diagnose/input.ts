/**
 * What diagnose takes and gives: the caller's run function and limits, the diagnosis, and the
 * progress steps it reports on the way.
 */
import type { Analysis, ModelOptions, Plan, PlanChange } from '../../shared/analysis';
import type { Overrides, Profile, ProfileError } from '../../shared/profile';
import type { ConvertChange } from '../convert/types';

export type RunPurpose = 'profile' | 'replan' | 'verify';

/** One step of a diagnosis, for progress reports: which phase, what it does, and which run (1-based) it is about. */
export interface DiagnoseStep {
  phase: 'profile' | 'replan' | 'verify';
  message: string;
  run: number;
}

/** How long a run should measure, when diagnose decides it (verification runs, and later passes after an unsettled first run). */
export interface RunBudget {
  /**
   * Seconds of measured window after warm-up: a verification run's, or a later pass's when shorter
   * than the pass's usual window (see `replanSeconds`).
   */
  seconds?: number;
  /** Root elements the run should warm up on at least (see `warmupElementsFor`). */
  warmupElements?: number;
  /**
   * The run is of the pipeline converted to plumber-data by this change (its knobs written in the
   * converted text), not of the file as written: verification's runs of a `convert` change.
   */
  convert?: ConvertChange;
  /** The run is of the pipeline reshaped by this reorder (a sibling file, ../reshape/sibling.ts), with the overrides said in the original's ids. */
  reorder?: Extract<PlanChange, { kind: 'reorder' }>;
}

export interface DiagnoseInput {
  /**
   * Runs the pipeline once with these overrides (complete: user overrides + changes) and returns
   * its profile. For verification runs `budget` says how long to measure: long enough for the
   * configuration's expected rate to fill the window with elements (see `verifyRunSeconds`).
   */
  run(overrides: Overrides, purpose: RunPurpose, budget?: RunBudget): Promise<Profile>;
  userOverrides?: Overrides;
  /**
   * Why a change of the plan cannot be made at all, known from the source before any run (a
   * conversion the rewrite refuses), or undefined when it can: such a change is dropped with its
   * reason as a note ("… not offered: <reason>"), never verified (./unoffered.ts).
   */
  unoffered?(change: PlanChange, first?: Profile, plan?: Plan): Promise<string | undefined>;
  /** Model options (cores, memory budget, `randomOps`…), the same for every pass and prediction. */
  options?: ModelOptions;
  /** Profile runs before verification: plan, re-trace with the plan, plan again (default 2). */
  passes?: number;
  /** Measure the plan against the pipeline as written before keeping any change (default true). */
  verify?: boolean;
  /**
   * Wall seconds the whole diagnosis aims for (default DEFAULT_BUDGET_SECONDS): the passes run as
   * asked, and verification takes what they leave. The first A/B pair always runs, so a plan is
   * never kept unmeasured; after a first pair under a drifting load the second may take
   * PAIR_FLOOR_SECONDS whatever is left, unless the passes left nothing; further runs start only
   * when they fit.
   */
  budgetSeconds?: number;
  /** Wall budget for the verification runs alone, seconds: replaces what `budgetSeconds` leaves them. */
  verifyBudgetSeconds?: number;
  signal?: AbortSignal;
  onStep?(step: DiagnoseStep): void;
  /** Seconds on a monotonic clock (default `performance.now() / 1000`): only the time budget reads it; tests script it. */
  clock?(): number;
}

export interface Diagnosis {
  /** The profile as written (with user overrides). */
  first: Profile;
  /** The analysis of `first`. */
  analysis: Analysis;
  /** The final plan: `plan.verification` is set when verified, and `plan.changes` then holds only what verification kept. */
  plan: Plan;
  /** The profile the final plan came from. */
  last: Profile;
  /** Every run in order. */
  profiles: Profile[];
  /** When the first run failed (then `plan` has no changes). */
  error?: ProfileError;
}

/** A run one of the passes took, with the overrides it was given. */
export interface PassRun {
  overrides: Overrides;
  profile: Profile;
  /** Wall seconds the run took, start-up and teardown included. */
  seconds: number;
}
