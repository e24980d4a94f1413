/**
 * The lens on a training loop's pipeline: "trainer 38 steps/s · waits 62% on input · plan: +55%"
 * — how fast the loop trained, the share of its time it waited for input, and what the plan for the
 * trainer predicts over as written ("plan: no change" when the trainer, not the input, holds it
 * back). Shown on the pipeline's head when its profile was a training run (`profile.trainer`).
 */
import type { CodeLens } from 'vscode-languageserver';
import type { TrainerVerdict } from '../../shared/analysis';
import { trainerHeadline } from '../../shared/trainerWords';
import type { PipelineView } from '../views';
import { Commands } from '../../shared/commands';
import { STALE_WORDS } from '../../shared/words';

/** The lens's words for a verdict: the glance line the tree and the report share (src/shared/trainerWords.ts). */
export const trainerLensTitle = trainerHeadline;

/**
 * The verdict a view shows: the plan's (it targets the trainer) or else the analysis's, when its
 * last profile was a successful training run; none otherwise. The lens, the tree and the report
 * all read it here.
 */
export function trainerVerdictOf(v: PipelineView): TrainerVerdict | undefined {
  const rec = v.record;
  if (!rec || rec.profile.error || !rec.profile.trainer) return undefined;
  return rec.plan?.trainer ?? rec.analysis?.trainer;
}

/** The resolved lens for a view whose profile was a training run (none otherwise). */
export function trainerLenses(v: PipelineView): CodeLens[] {
  const verdict = trainerVerdictOf(v);
  if (!verdict) return [];
  const title = v.stale ? `trainer: ${STALE_WORDS}` : trainerLensTitle(verdict);
  return [{ range: v.graph.head.range, command: { title, command: v.stale ? Commands.profilePipeline : Commands.showReport, arguments: [v.uri, v.graph.name] } }];
}
