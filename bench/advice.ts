/**
 * What the benchmarks call "plumber": the configuration Plumber's engine keeps for a pipeline, as
 * a user gets it. Both benchmarks go through `plumberAdvice`, so the engine entry point they
 * measure is named in one place.
 */
import { changeTitle } from '../src/model';
import { planInPasses } from '../src/cli/passes';
import type { ModelOptions, Plan } from '../src/shared/analysis';
import type { Overrides, Profile } from '../src/shared/profile';

/** Runs the pipeline with extra overrides; `purpose` says why (the engine names its runs). */
export type RunWith = (overrides: Overrides, purpose: string) => Promise<Profile>;

export interface Advice {
  /** The profile of the pipeline as written. */
  first: Profile;
  plan: Plan;
  /** The runner overrides of the kept configuration: what "plumber" measures. */
  overrides: Overrides;
  /** The plan's predicted rate for the kept configuration. */
  predicted: number;
  /** The rate verification measured for the kept configuration; undefined when nothing was verified. */
  verified?: number;
  /** Wall seconds the user waits for the advice: profiling, planning and verification. */
  profileSeconds: number;
  /** The kept changes, one title each. */
  changes: string[];
  /** Why the engine gave up, when it did (the advice is then the pipeline as written). */
  error?: string;
}

export interface AdviceOptions {
  passes: number;
  options?: ModelOptions;
  signal?: AbortSignal;
}

/**
 * Profiles, plans and (once the engine verifies) verifies, timing the whole as one wait.
 * Until src/engine/diagnose.ts lands this plans in passes as `plumber plan` does.
 */
export async function plumberAdvice(run: RunWith, o: AdviceOptions): Promise<Advice> {
  const t0 = performance.now();
  const planned = await planInPasses((overrides) => run(overrides, o.passes > 1 ? 'pass' : 'profile'), o.passes, o.options ?? {}, {});
  const profileSeconds = (performance.now() - t0) / 1000;
  const { first, plan } = planned;
  return {
    first,
    plan,
    overrides: plan.overrides,
    predicted: plan.predictedRate,
    verified: plan.verification?.kept.measured.rate,
    profileSeconds,
    changes: plan.changes.map((c) => changeTitle(c, first)),
    error: first.error?.message,
  };
}
