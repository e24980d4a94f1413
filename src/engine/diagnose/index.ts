/**
 * The engine's front door: `diagnoseFile` (./file.ts) is what every surface calls with a file, an
 * export and options; `diagnose` (./routine.ts) is the routine behind it, for callers that bring
 * their own runs (tests, a training script's loop). The rooms behind them:
 * - ./budget.ts — the time budget and how long each run measures;
 * - ./trials.ts — the configurations measured so far;
 * - ./verify.ts, ./settle.ts — the A/B runs, and when one pair settles them;
 * - ./decide.ts — what is kept and what is dropped, as a pure function of what was measured;
 * - ./extras.ts — the configurations the model does not price, as a table tried by one loop;
 * - ./trainer.ts — a training loop's worker pool, sized by measuring its neighbours;
 * - ./keep.ts — the plan reduced to what was kept.
 */
export { probesFor } from '../passes';
export { staticRandomOps } from '../randomness';
export type { DiagnoseInput, DiagnoseStep, Diagnosis, RunBudget, RunPurpose } from './input';
export { DEFAULT_BUDGET_SECONDS, VERIFY_MAX_RUN_SECONDS, VERIFY_MIN_ELEMENTS, VERIFY_RUN_SECONDS, verifyRunSeconds, warmupElementsFor } from './budget';
export { diagnose } from './routine';
export { diagnoseFile, runRequestFor, sourceRandomOps, type DiagnoseFileInput, type FileDiagnosis, type FrontDoorRunRequest, type RunPolicyRequest, type RunSettings } from './file';
