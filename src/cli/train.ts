/**
 * How `plumber profile` and `plumber plan` show a training loop: the split of its time between
 * waiting for input and its own steps, the trainer's rate when never starved, and the verdict.
 */
import type { TrainerVerdict } from '../shared/analysis';
import type { Profile } from '../shared/profile';
import { fmtPerElement } from './table';

/** Steps per second for a person: 3 significant figures, thousands grouped. */
export function fmtSteps(r: number): string {
  if (!Number.isFinite(r)) return '∞ steps/s';
  const digits = r >= 100 ? 0 : r >= 10 ? 1 : 2;
  return `${r.toLocaleString('en-US', { maximumFractionDigits: digits })} steps/s`;
}

const pct = (x: number): string => `${Math.round(x * 100)}%`;

/** The loop as the profile measured it (no model): steps, the input-bound share, and where the main thread went. */
export function renderTrainerProfile(profile: Profile): string | undefined {
  const t = profile.trainer;
  if (!t || t.steps <= 0 || t.seconds <= 0) return undefined;
  return [
    `Training loop: ${t.steps.toLocaleString('en-US')} steps in ${t.seconds.toFixed(2)} s (${fmtSteps(t.steps / t.seconds)}), after ${t.warmupSteps} warm-up steps`,
    `  waiting for input: ${pct(t.waitSeconds / t.seconds)} of its time (${fmtPerElement(t.waitSeconds / t.steps)} per step, longest ${fmtPerElement(t.maxWaitSeconds)}; main thread busy ${pct(t.waitSeconds > 0 ? t.waitMainCpuSeconds / t.waitSeconds : 0)} of it)`,
    `  in its own steps:  ${pct(t.stepSeconds / t.seconds)} (${fmtPerElement(t.stepSeconds / t.steps)} per step; main thread busy ${pct(t.stepSeconds > 0 ? t.stepMainCpuSeconds / t.stepSeconds : 0)} of it)`,
  ].join('\n');
}

/** The model's verdict on the loop: one headline and what the plan does for it. */
export function renderTrainerVerdict(v: TrainerVerdict): string {
  const head = `Trainer: ${fmtSteps(v.stepsPerSec)} · waits ${pct(v.inputBound)} on input · never starved ${fmtSteps(v.unstarvedStepsPerSec)}`;
  const plan = v.changed
    ? `Plan for the trainer: ${fmtSteps(v.predictedStepsPerSec)} predicted (${(v.predictedStepsPerSec / Math.max(v.asWrittenPredictedStepsPerSec, 1e-9)).toFixed(2)}× the model's ${fmtSteps(v.asWrittenPredictedStepsPerSec)} as written) with ${v.workers} worker thread${v.workers === 1 ? '' : 's'}; then bound by ${LIMIT_WORDS[v.limit]}.`
    : `Plan for the trainer: no change (${fmtSteps(v.predictedStepsPerSec)} predicted, bound by ${LIMIT_WORDS[v.limit]}).`;
  return [head, `Verdict: ${v.summary}`, plan].join('\n');
}

const LIMIT_WORDS: Record<TrainerVerdict['limit'], string> = {
  trainer: 'the trainer itself',
  'main-thread': 'the main thread the trainer and the pipeline share',
  pipeline: 'the pipeline',
  cpu: 'the cores',
};
