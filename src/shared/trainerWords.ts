/**
 * The words the editor uses for a training loop's verdict (`TrainerVerdict`): the glance line the
 * lens, the Bottlenecks tree and the report's headline share ("trainer 38 steps/s · waits 62% on
 * input · plan: +55%"), and the report's lines on the verdict, the target rate and what the plan
 * does for it. Kept in src/shared so the server (lens, tree data) and the report webview say the
 * same thing from the same verdict.
 */
import type { TrainerVerdict } from './analysis';
import { formatRatio, formatSeconds, formatShare, formatSteps } from './words';

/** What binds the loop, in words (`TrainerVerdict.limit`). */
export const LIMIT_WORDS: Record<TrainerVerdict['limit'], string> = {
  trainer: 'the trainer itself',
  'main-thread': 'the main thread the trainer and the pipeline share',
  pipeline: 'the pipeline',
  cpu: 'the cores',
};

/**
 * The plan's gain over the model's rate for the loop as written (0 when it predicts none): the
 * figure the glance line shows, compared within the model, as the plan was chosen.
 */
export function trainerGain(v: TrainerVerdict): number {
  return v.asWrittenPredictedStepsPerSec > 0 ? v.predictedStepsPerSec / v.asWrittenPredictedStepsPerSec - 1 : 0;
}

/** The plan part of the glance line: "plan: +55%", "plan: no change", or "plan: give some worker threads back". */
export function trainerPlanWords(v: TrainerVerdict): string {
  const gain = trainerGain(v);
  if (!v.changed) return 'plan: no change';
  return gain > 0.005 ? `plan: +${Math.round(gain * 100)}%` : `plan: give ${v.workers === 0 ? 'all' : 'some'} worker threads back`;
}

/** The glance line: "trainer 38 steps/s · waits 62% on input · plan: +55%" (the lens, the tree, the report's headline). */
export function trainerHeadline(v: TrainerVerdict): string {
  return `trainer ${formatSteps(v.stepsPerSec)} · waits ${formatShare(v.inputBound)} on input · ${trainerPlanWords(v)}`;
}

/** What the report shows of a verdict, one sentence each. */
export interface TrainerReportLines {
  /** The glance line (`trainerHeadline`). */
  headline: string;
  /** The model's verdict sentence (`TrainerVerdict.summary`). */
  verdict: string;
  /** The rate the plan aims at, and why that one. */
  target: string;
  /** What the plan does for the trainer and what binds it then. */
  plan: string;
}

/** The report's lines for a verdict: the headline, the verdict, the target rate and the plan. */
export function trainerReportLines(v: TrainerVerdict): TrainerReportLines {
  // The target is the unstarved rate unless no configuration reaches it on these cores (the model's
  // own tolerance decides which; a target below it by more than rounding says so).
  const reachable = v.targetStepsPerSec >= v.unstarvedStepsPerSec * 0.995;
  const target = reachable
    ? `Target: ${formatSteps(v.targetStepsPerSec)}, the trainer's rate when never starved (${formatSeconds(v.trainerSecondsPerStep)} of its own per step).`
    : `Target: ${formatSteps(v.targetStepsPerSec)}, the fastest any configuration is predicted to feed it on these cores (never starved it would take ${formatSteps(v.unstarvedStepsPerSec)}).`;
  const threads = `${v.workers} worker thread${v.workers === 1 ? '' : 's'}`;
  const ratio = formatRatio(v.predictedStepsPerSec / Math.max(v.asWrittenPredictedStepsPerSec, 1e-9));
  const plan = v.changed
    ? `Plan: ${formatSteps(v.predictedStepsPerSec)} predicted (${ratio} the model's ${formatSteps(v.asWrittenPredictedStepsPerSec)} as written) with ${threads}; then bound by ${LIMIT_WORDS[v.limit]}.`
    : `Plan: no change (${formatSteps(v.predictedStepsPerSec)} predicted with ${threads}, bound by ${LIMIT_WORDS[v.limit]}).`;
  return { headline: trainerHeadline(v), verdict: `${v.summary.charAt(0).toUpperCase()}${v.summary.slice(1)}`, target, plan };
}
