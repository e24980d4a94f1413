/**
 * How `plumber profile` and `plumber plan` show a training loop: the split of its time between
 * waiting for input and its own steps, the trainer's rate when never starved, and the verdict.
 */
import type { TrainerVerdict } from '../shared/analysis';
import type { Profile } from '../shared/profile';
import { LIMIT_WORDS } from '../shared/trainerWords';
import { formatCount, formatElapsed, formatRatio, formatShare, formatSteps } from '../shared/words';
import { fmtPerElement } from './table';

/** The loop as the profile measured it (no model): steps, the input-bound share, and where the main thread went. */
export function renderTrainerProfile(profile: Profile): string | undefined {
  const t = profile.trainer;
  if (!t || t.steps <= 0 || t.seconds <= 0) return undefined;
  return [
    `Training loop: ${formatCount(t.steps)} steps in ${formatElapsed(t.seconds, 2)} (${formatSteps(t.steps / t.seconds)}), after ${t.warmupSteps} warm-up steps`,
    `  waiting for input: ${formatShare(t.waitSeconds / t.seconds)} of its time (${fmtPerElement(t.waitSeconds / t.steps)} per step, longest ${fmtPerElement(t.maxWaitSeconds)}; main thread busy ${formatShare(t.waitSeconds > 0 ? t.waitMainCpuSeconds / t.waitSeconds : 0)} of it)`,
    `  in its own steps:  ${formatShare(t.stepSeconds / t.seconds)} (${fmtPerElement(t.stepSeconds / t.steps)} per step; main thread busy ${formatShare(t.stepSeconds > 0 ? t.stepMainCpuSeconds / t.stepSeconds : 0)} of it)`,
    // The input's work the step clock holds (a prefetch running ahead): the model counts it as the input's.
    ...(t.pipelineStepSeconds > 0
      ? [`  of which the input's work inside the steps: ${formatShare(Math.min(t.stepSeconds, t.pipelineStepSeconds) / t.seconds)} (${fmtPerElement(t.pipelineStepSeconds / t.steps)} per step)`]
      : []),
  ].join('\n');
}

/** The model's verdict on the loop: one headline and what the plan does for it. */
export function renderTrainerVerdict(v: TrainerVerdict): string {
  const head = `Trainer: ${formatSteps(v.stepsPerSec)} · waits ${formatShare(v.inputBound)} on input · never starved ${formatSteps(v.unstarvedStepsPerSec)}`;
  const ratio = formatRatio(v.predictedStepsPerSec / Math.max(v.asWrittenPredictedStepsPerSec, 1e-9));
  const threads = `${v.workers} worker thread${v.workers === 1 ? '' : 's'}`;
  const plan = v.changed
    ? `Plan for the trainer: ${formatSteps(v.predictedStepsPerSec)} predicted (${ratio} the model's ${formatSteps(v.asWrittenPredictedStepsPerSec)} as written) with ${threads}; then bound by ${LIMIT_WORDS[v.limit]}.`
    : `Plan for the trainer: no change (${formatSteps(v.predictedStepsPerSec)} predicted, bound by ${LIMIT_WORDS[v.limit]}).`;
  return [head, `Verdict: ${v.summary}`, plan].join('\n');
}
