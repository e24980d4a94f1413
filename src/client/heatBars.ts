/**
 * Heat bars (setting `plumber.codeLens.heatBars`): each profiled operator's line gets a background
 * and an overview-ruler mark whose strength is the share of its time it is busy at the pipeline's
 * rate, instead of a lens above it, so the code does not move. Drawn from the same
 * `plumber/pipelines` data as the Bottlenecks tree, and cleared when the numbers go stale.
 */
import * as vscode from 'vscode';
import type { PipelineSummary } from '../shared/protocol';
import { heatOf } from './views/format';

/** Steps of heat: enough that a person sees the order, few enough to share decoration types. */
const LEVELS = 10;

export class HeatBars implements vscode.Disposable {
  private readonly types: vscode.TextEditorDecorationType[] = [];
  private readonly subs: vscode.Disposable[] = [];
  /** What was last drawn, by document URI: each line and its share (for the e2e suite). */
  readonly drawn = new Map<string, Array<{ line: number; share: number }>>();

  constructor(
    private readonly enabled: () => boolean,
    private readonly pipelines: () => readonly PipelineSummary[],
  ) {
    for (let level = 1; level <= LEVELS; level++) {
      const alpha = (0.06 + (0.44 * level) / LEVELS).toFixed(2);
      this.types.push(
        vscode.window.createTextEditorDecorationType({
          isWholeLine: true,
          backgroundColor: `rgba(255, 96, 0, ${alpha})`,
          overviewRulerColor: `rgba(255, 96, 0, ${alpha})`,
          overviewRulerLane: vscode.OverviewRulerLane.Left,
          // A left border as the gutter-side bar: wider is hotter.
          borderStyle: 'solid',
          borderColor: `rgba(255, 96, 0, ${Math.min(1, Number(alpha) * 2).toFixed(2)})`,
          borderWidth: `0 0 0 ${Math.max(1, Math.round((level / LEVELS) * 8))}px`,
        }),
      );
    }
    this.subs.push(vscode.window.onDidChangeVisibleTextEditors(() => this.render()));
  }

  /** Redraws every visible editor (after a refresh of the pipelines, a setting change, an editor opening). */
  render(): void {
    const on = this.enabled();
    this.drawn.clear();
    for (const editor of vscode.window.visibleTextEditors) {
      const byLevel: vscode.DecorationOptions[][] = this.types.map(() => []);
      const lines: Array<{ line: number; share: number }> = [];
      if (on) {
        const uri = editor.document.uri.toString();
        for (const p of this.pipelines()) {
          for (const h of heatOf(p)) {
            if (h.op.uri !== uri) continue;
            const level = Math.max(1, Math.round(h.share * LEVELS));
            const line = h.op.range.start.line;
            byLevel[level - 1]!.push({ range: new vscode.Range(line, 0, line, 0), hoverMessage: h.words });
            lines.push({ line, share: h.share });
          }
        }
      }
      this.types.forEach((t, i) => editor.setDecorations(t, byLevel[i]!));
      this.drawn.set(editor.document.uri.toString(), lines);
    }
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
    for (const t of this.types) t.dispose();
  }
}
