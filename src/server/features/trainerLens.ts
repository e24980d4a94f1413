/**
 * The lens on a training loop's pipeline: "trainer 38 steps/s · waits 62% on input · plan: +55%"
 * — how fast the loop trained, the share of its time it waited for input, and what the plan for the
 * trainer predicts over as written ("plan: no change" when the trainer, not the input, holds it
 * back). Shown on the pipeline's head when its profile was a training run (`profile.trainer`).
 */
import type { CodeLens } from 'vscode-languageserver';
import type { TrainerVerdict } from '../../shared/analysis';
import type { PipelineView } from '../views';
import { COMMANDS } from './codeLens';
import { STALE_WORDS } from './glance';

/** Steps per second in the few digits a lens has room for. */
function steps(r: number): string {
  return `${r.toLocaleString('en-US', { maximumFractionDigits: r >= 100 ? 0 : r >= 10 ? 1 : 2 })} steps/s`;
}

/** The lens's words for a verdict. */
export function trainerLensTitle(v: TrainerVerdict): string {
  const gain = v.asWrittenPredictedStepsPerSec > 0 ? v.predictedStepsPerSec / v.asWrittenPredictedStepsPerSec - 1 : 0;
  const plan = !v.changed ? 'plan: no change' : gain > 0.005 ? `plan: +${Math.round(gain * 100)}%` : `plan: give ${v.workers === 0 ? 'all' : 'some'} worker threads back`;
  return `trainer ${steps(v.stepsPerSec)} · waits ${Math.round(v.inputBound * 100)}% on input · ${plan}`;
}

/** The resolved lens for a view whose profile was a training run (none otherwise). */
export function trainerLenses(v: PipelineView): CodeLens[] {
  const rec = v.record;
  if (!rec || rec.profile.error || !rec.profile.trainer) return [];
  const verdict = rec.plan?.trainer ?? rec.analysis?.trainer;
  if (!verdict) return [];
  const title = v.stale ? `trainer: ${STALE_WORDS}` : trainerLensTitle(verdict);
  return [{ range: v.graph.head.range, command: { title, command: v.stale ? COMMANDS.profile : COMMANDS.report, arguments: [v.uri, v.graph.name] } }];
}
