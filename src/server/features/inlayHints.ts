/**
 * Inlay hints: the operator numbers at the end of each operator call, for people who prefer them
 * to code lenses (setting `plumber.inlayHints.enabled`).
 */
import type { InlayHint, Range } from 'vscode-languageserver';
import type { Settings } from '../../shared/settings';
import { labelOf, type PipelineView } from '../views';
import { opSummary } from './codeLens';

function inRange(line: number, range: Range): boolean {
  return line >= range.start.line && line <= range.end.line;
}

/** Hints for the operators of `file` inside `range`. */
export function inlayHints(views: PipelineView[], file: string, range: Range, settings: Settings['inlayHints']): InlayHint[] {
  if (!settings.enabled) return [];
  const out: InlayHint[] = [];
  const seen = new Set<number>();
  for (const v of views) {
    if (!v.record || v.record.profile.error) continue;
    for (const op of v.graph.ops) {
      if (op.file !== file || seen.has(op.name.start) || !inRange(op.own.range.end.line, range)) continue;
      const text = opSummary(v, op.id, false);
      if (!text) continue;
      seen.add(op.name.start);
      out.push({
        position: op.own.range.end,
        label: text,
        paddingLeft: true,
        tooltip: v.stale
          ? `${labelOf(v, op)}: the file changed since the last Plumber profile; profile again for numbers`
          : `${labelOf(v, op)}: measured by the last Plumber profile (rates in the pipeline's ${v.unit ?? 'el'}/s)`,
      });
    }
  }
  return out;
}
