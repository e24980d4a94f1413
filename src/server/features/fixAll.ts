/**
 * plumber/fixAll: the one edit that applies every change of the plan, for a pipeline or for every
 * profiled pipeline of the document (used by the "Apply all Plumber fixes" lens and command).
 */
import type { FixAllParams, FixAllResult } from '../../shared/protocol';
import type { PlannedEdit } from '../../engine/fixes/edits';
import { editsWithConversion } from '../../engine/convert/fix';
import { toWorkspaceEdit } from '../workspaceEdit';
import type { PipelineView } from '../views';
import { confirmIfMany, type CodeActionDeps } from './codeActions';
import { applyAllTitle, offeredChanges, verdictOf } from './advice';
import type { Plan } from '../../shared/analysis';

export function fixAll(views: PipelineView[], params: FixAllParams, deps: CodeActionDeps): FixAllResult {
  const chosen = views.filter((v) => params.pipeline === undefined || v.graph.name === params.pipeline);
  if (chosen.length === 0) return { reason: params.pipeline ? `There is no pipeline named ${params.pipeline} in this file any more.` : 'This file has no pipelines.' };
  const edits: PlannedEdit[] = [];
  const reasons: string[] = [];
  let count = 0;
  let only: Plan | undefined;
  let converting = false;
  for (const v of chosen) {
    const plan = v.record?.plan;
    if (!v.record || v.record.profile.error || !plan) {
      reasons.push(`${v.graph.name} has not been profiled yet: profile it first.`);
      continue;
    }
    if (v.stale) {
      reasons.push(`${v.graph.name} changed since it was profiled: profile it again.`);
      continue;
    }
    const offered = offeredChanges(plan);
    const verdict = verdictOf(plan);
    if (verdict === 'no-gain' || verdict === 'error') {
      reasons.push(`Plumber offers no fix for ${v.graph.name}: ${plan.verification!.summary}.`);
      continue;
    }
    if (offered.length === 0) {
      reasons.push(`The plan for ${v.graph.name} has no changes: its knobs are already right.`);
      continue;
    }
    const outcome = editsWithConversion(offered, deps.fixContext(v));
    converting ||= outcome.ok && offered.some((c) => c.kind === 'convert');
    if (!outcome.ok) {
      reasons.push(outcome.reason);
      continue;
    }
    // Pipelines can share operators (a helper): apply each edit once.
    for (const e of outcome.edits) if (!edits.some((x) => x.file === e.file && x.start === e.start && x.end === e.end && x.newText === e.newText)) edits.push(e);
    count += offered.length;
    only = chosen.length === 1 ? plan : undefined;
  }
  if (edits.length === 0) return { reason: reasons.join(' ') || 'Nothing to fix.' };
  // One pipeline: its figure ("est. 1.8×, verified 1.7× ± 0.1"); several: the count only, since
  // their figures do not add up.
  const title = only ? applyAllTitle(only, count) : `Apply all Plumber fixes (${count} change${count === 1 ? '' : 's'})`;
  // A conversion rewrites a chain: always previewed before it applies.
  return { edit: confirmIfMany(toWorkspaceEdit(edits, deps.fileInfo, { label: title }), { preview: deps.preview || converting }), title };
}
