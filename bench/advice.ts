/**
 * What the benchmarks call "plumber": the configuration Plumber's engine keeps for a pipeline, as
 * a user of `plumber plan` gets it — the engine's front door (src/engine/diagnoseFile.ts: the
 * static randomness of the source, then `diagnose`: profile → plan in passes → verify → keep the
 * best measured). Both benchmarks go through `plumberAdvice`, so the engine entry point they
 * measure is named once.
 */
import { diagnoseFile, type RunSettings } from '../src/engine/diagnose';
import { changeTitle } from '../src/model';
import type { ModelOptions, Plan } from '../src/shared/analysis';
import type { Overrides, Profile } from '../src/shared/profile';

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
  /** Wall seconds the user waits for the advice: reading the source, profiling, planning and verification. */
  profileSeconds: number;
  /** Of `profileSeconds`, the part spent reading the source for randomness (ts-morph), before any run. */
  sourceSeconds: number;
  /** The kept changes, one title each. */
  changes: string[];
  /** Verification's sentence for a person ("verified 1.7× ± 0.1", "no reliable gain …"), when it ran. */
  summary?: string;
  /** Why the engine gave up, when it did (the advice is then the pipeline as written). */
  error?: string;
}

export interface AdviceOptions {
  /** The pipeline file. */
  file: string;
  /** What the benchmark sets about each run; the engine's run policy decides the rest by purpose. */
  runs: RunSettings;
  /** Profile runs before verification; undefined: the engine's default, as `plumber plan`. */
  passes?: number;
  options?: ModelOptions;
  /** Wall budget of verification, seconds; undefined: the engine's default. */
  verifyBudgetSeconds?: number;
  signal?: AbortSignal;
}

/** Diagnoses the pipeline as `plumber plan` does, timing the whole as the one wait a user sees. */
export async function plumberAdvice(o: AdviceOptions): Promise<Advice> {
  const t0 = performance.now();
  const d = await diagnoseFile({
    file: o.file,
    runs: o.runs,
    ...(o.options ? { options: o.options } : {}),
    ...(o.passes !== undefined ? { passes: o.passes } : {}),
    ...(o.verifyBudgetSeconds !== undefined ? { verifyBudgetSeconds: o.verifyBudgetSeconds } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
  });
  const profileSeconds = (performance.now() - t0) / 1000;
  const { first, plan } = d;
  return {
    first,
    plan,
    overrides: plan.overrides,
    predicted: plan.predictedRate,
    verified: plan.verification?.kept.measured.rate,
    profileSeconds,
    sourceSeconds: d.sourceSeconds,
    changes: plan.changes.map((c) => changeTitle(c, first)),
    summary: plan.verification?.summary,
    error: d.error?.message,
  };
}
