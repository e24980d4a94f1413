/**
 * Quick fixes from the plan: "Apply Plumber fix: …" for each change on the operators in the range,
 * and "Apply all Plumber fixes" for the pipeline, as versioned WorkspaceEdits. When a fix cannot
 * apply (no profile, a stale profile, a knob written as an expression) the action is still offered,
 * disabled, with the reason — if the client can show disabled actions.
 */
import { CodeActionKind, type CodeAction, type Range, type WorkspaceEdit } from 'vscode-languageserver';
import type { Plan, PlanChange } from '../../shared/analysis';
import type { FixContext } from '../../engine/fixes/edits';
import { editsWithConversion } from '../../engine/convert/fix';
import { toWorkspaceEdit, type FileVersion } from '../workspaceEdit';
import type { GraphOp } from '../../engine/graph/types';
import type { PipelineView } from '../views';
import { FIX_PREFIX } from '../../shared/words';
import { applyAllTitle, offerTitle, offeredChanges, planFigure, predictsGain } from './advice';

export interface CodeActionDeps {
  /** The engine's view of a pipeline (text, graphs, id lookup). */
  fixContext(view: PipelineView): FixContext;
  fileInfo(file: string): FileVersion;
  /** The client shows `disabled` actions (codeAction.disabledSupport). */
  disabledSupport: boolean;
  /** Ask the client to preview an edit that changes more than one place (setting `plumber.fixes.preview`). */
  preview?: boolean;
}

function touches(op: GraphOp, range: Range): boolean {
  const r = op.own.range;
  return r.start.line <= range.end.line && r.end.line >= range.start.line;
}

const STALE = 'The file changed since it was profiled: profile the pipeline again to get fixes for the current code.';
const NO_PROFILE = 'No profile yet: run “Plumber: Profile Pipeline” first; fixes come from measured numbers.';

/** The edit (or the reason there is none) for some changes of one pipeline. */
export function fixEdit(view: PipelineView, changes: PlanChange[], title: string, deps: CodeActionDeps): { edit?: CodeAction['edit']; reason?: string } {
  if (view.stale) return { reason: STALE };
  const outcome = editsWithConversion(changes, deps.fixContext(view));
  if (!outcome.ok) return { reason: outcome.reason };
  if (outcome.edits.length === 0) return { reason: 'The source already has these settings.' };
  // A conversion rewrites the chain: it is always previewed before it applies.
  const preview = deps.preview || changes.some((c) => c.kind === 'convert');
  const description = [...changes.map((c) => c.reason), ...(outcome.notes ?? [])].join(' ');
  return { edit: confirmIfMany(toWorkspaceEdit(outcome.edits, deps.fileInfo, { label: title, description }), { preview }) };
}

/** The quick-fix title of a conversion, with the plan's figure ("est. 3.1×, verified 2.8× ± 0.2"). */
function convertTitle(plan: Plan): string {
  const figure = planFigure(plan);
  return `Convert to plumber-data${figure ? ` (${figure})` : ''}`;
}

/**
 * An edit that changes more than one place (it then carries a change annotation) asks for
 * confirmation, so VS Code opens its refactor preview and the person sees the diff first; a
 * single-knob edit has no annotation and applies at once.
 */
export function confirmIfMany(edit: WorkspaceEdit, deps: Pick<CodeActionDeps, 'preview'>): WorkspaceEdit {
  if (!deps.preview || !edit.changeAnnotations) return edit;
  const annotations = Object.fromEntries(Object.entries(edit.changeAnnotations).map(([id, a]) => [id, { ...a, needsConfirmation: true }]));
  return { ...edit, changeAnnotations: annotations };
}

/** Code actions for `range` in `file`. */
export function codeActions(views: PipelineView[], file: string, range: Range, deps: CodeActionDeps): CodeAction[] {
  const out: CodeAction[] = [];
  const push = (action: CodeAction, reason: string | undefined): void => {
    if (reason) {
      if (deps.disabledSupport) out.push({ ...action, disabled: { reason } });
    } else {
      out.push(action);
    }
  };
  for (const v of views) {
    const ops = v.graph.ops.filter((o) => o.file === file && touches(o, range));
    const onHead = v.graph.head.range.start.line <= range.end.line && v.graph.head.range.end.line >= range.start.line;
    if (ops.length === 0 && !onHead) continue;
    const rec = v.record;
    // Numbers from before the last edit offer nothing: the lenses say "stale — profile again".
    if (rec && v.stale) continue;
    if (!rec || rec.profile.error || !rec.plan) {
      if (ops.length > 0 || onHead) push({ title: `${FIX_PREFIX}profile ${v.graph.name} first`, kind: CodeActionKind.QuickFix }, rec?.profile.error ? `The last profile failed: ${rec.profile.error.message}` : NO_PROFILE);
      continue;
    }
    const plan = rec.plan;
    // Only what verification kept (or, unverified, what the model proposed): a change measured to
    // lose is never offered, not even disabled.
    const offered = offeredChanges(plan);
    const ids = new Set(ops.map((o) => o.id));
    for (const change of offered) {
      if (change.kind === 'convert') {
        // A quick fix on the whole pipeline: offered on any of the chain's operators and on its head.
        if (!onHead && !change.opIds.some((id) => ids.has(v.byProfileId.get(id)?.id ?? ''))) continue;
        const title = convertTitle(plan);
        const { edit, reason } = fixEdit(v, [change], title, deps);
        push({ title, kind: CodeActionKind.QuickFix, ...(edit ? { edit } : {}) }, reason);
        continue;
      }
      const target = v.byProfileId.get(change.opId);
      if (!target || !ids.has(target.id)) continue;
      // A change the model predicts no gain from on its own is applied only with the others (Apply all).
      if (change.predictedRate !== undefined && !predictsGain(change.predictedRate, plan.currentRate)) continue;
      const title = offerTitle(change, plan, rec.profile);
      const { edit, reason } = fixEdit(v, [change], title, deps);
      push({ title, kind: CodeActionKind.QuickFix, isPreferred: rec.analysis?.bottleneck.opId === change.opId, ...(edit ? { edit } : {}) }, reason);
    }
    if (offered.length > 0) {
      const title = applyAllTitle(plan);
      const { edit, reason } = fixEdit(v, offered, title, deps);
      push({ title, kind: CodeActionKind.QuickFix, ...(edit ? { edit } : {}) }, reason);
    }
  }
  return out;
}
