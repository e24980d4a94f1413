/**
 * The Bottlenecks tree: pipelines → operators ranked by how much they hold the pipeline back.
 * It asks the server for `plumber/pipelines` and refreshes on `plumber/profileUpdated`.
 */
import * as vscode from 'vscode';
import type { OpSummary, PipelineSummary, PipelinesParams } from '../../shared/protocol';
import type { PlumberServer } from '../server';
import { Commands } from '../../shared/commands';
import { describeOp, describePipeline, formatRate, formatRateIn, formatShare, rankOps, trainerRow } from './format';

export type BottleneckNode =
  | { type: 'pipeline'; pipeline: PipelineSummary }
  | { type: 'op'; pipeline: PipelineSummary; op: OpSummary; rank: number }
  /** A training run's verdict, above the operators that feed the loop. */
  | { type: 'trainer'; pipeline: PipelineSummary; label: string; tooltip: string }
  | { type: 'message'; text: string; detail?: string };

const SEVERITY_ICON: Record<OpSummary['severity'], vscode.ThemeIcon> = {
  bottleneck: new vscode.ThemeIcon('flame', new vscode.ThemeColor('errorForeground')),
  warning: new vscode.ThemeIcon('warning', new vscode.ThemeColor('editorWarning.foreground')),
  ok: new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed')),
  unknown: new vscode.ThemeIcon('circle-outline'),
};

export class BottlenecksProvider implements vscode.TreeDataProvider<BottleneckNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<BottleneckNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private pipelines: PipelineSummary[] = [];
  private loaded: Promise<void> | undefined;

  constructor(private readonly server: PlumberServer) {}

  /** Reloads from the server and redraws. Resolves when the new data is in. */
  refresh(): Promise<void> {
    this.loaded = this.load();
    return this.loaded.then(() => this.changed.fire(undefined));
  }

  /** The pipelines as last loaded (for the status bar and the test API). */
  get current(): readonly PipelineSummary[] {
    return this.pipelines;
  }

  private async load(): Promise<void> {
    if (this.server.state !== 'ready') return;
    try {
      const params: PipelinesParams = {};
      const result = await this.server.request((m) => m.PipelinesRequest, params);
      this.pipelines = result.pipelines;
    } catch {
      // The server went away mid-request; the next state change refreshes again.
    }
  }

  getTreeItem(node: BottleneckNode): vscode.TreeItem {
    if (node.type === 'message') {
      const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
      item.description = node.detail;
      item.iconPath = new vscode.ThemeIcon('error');
      return item;
    }
    if (node.type === 'trainer') {
      const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
      item.id = `${node.pipeline.uri}#${node.pipeline.name}#trainer`;
      item.iconPath = new vscode.ThemeIcon('pulse');
      item.tooltip = node.tooltip;
      // The report has the verdict's target rate and what the plan does for it.
      item.command = { command: Commands.showReport, title: 'Show Report', arguments: [node.pipeline.uri, node.pipeline.name] };
      return item;
    }
    if (node.type === 'pipeline') {
      const p = node.pipeline;
      const item = new vscode.TreeItem(p.name, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `${p.uri}#${p.name}`;
      item.description = describePipeline(p);
      item.iconPath = new vscode.ThemeIcon(p.error ? 'error' : 'symbol-event');
      item.tooltip = pipelineTooltip(p);
      item.contextValue = p.rate !== undefined && !p.stale ? 'plumber.pipeline.profiled' : 'plumber.pipeline';
      item.command = { command: Commands.revealRange, title: 'Go to Pipeline', arguments: [p.uri, p.range] };
      return item;
    }
    const { op, pipeline } = node;
    const item = new vscode.TreeItem(op.label, vscode.TreeItemCollapsibleState.None);
    item.id = `${pipeline.uri}#${pipeline.name}#${op.id}`;
    item.description = describeOp(op, pipeline.stale, pipeline.unit);
    item.iconPath = SEVERITY_ICON[op.severity];
    item.tooltip = opTooltip(op, pipeline);
    // Fixes are computed from the profile: after an edit they may no longer fit, so hide the action.
    item.contextValue = op.fixTitle && !pipeline.stale ? 'plumber.op.fixable' : 'plumber.op';
    item.command = { command: Commands.revealRange, title: 'Go to Operator', arguments: [op.uri, op.range] };
    return item;
  }

  async getChildren(node?: BottleneckNode): Promise<BottleneckNode[]> {
    if (!node) {
      if (!this.loaded) this.loaded = this.load();
      await this.loaded;
      // An empty list lets the welcome view (with its Profile button) show.
      return this.pipelines.map((pipeline) => ({ type: 'pipeline', pipeline }));
    }
    if (node.type !== 'pipeline') return [];
    const p = node.pipeline;
    const children: BottleneckNode[] = [];
    if (p.error) children.push({ type: 'message', text: 'Profile failed', detail: p.error });
    const trainer = trainerRow(p);
    if (trainer) children.push({ type: 'trainer', pipeline: p, ...trainer });
    rankOps(p.ops).forEach((op, rank) => children.push({ type: 'op', pipeline: p, op, rank }));
    return children;
  }

  dispose(): void {
    this.changed.dispose();
  }
}

function pipelineTooltip(p: PipelineSummary): vscode.MarkdownString {
  const md = new vscode.MarkdownString(`**${p.name}**\n\n`);
  if (p.error) md.appendMarkdown(`Profile failed: ${p.error}\n\n`);
  if (p.rate !== undefined) md.appendMarkdown(`Measured: ${formatRateIn(p.rate, p.unit)}  \n`);
  if (p.bound !== undefined) md.appendMarkdown(`Bound (model): ${formatRateIn(p.bound, p.unit)}  \n`);
  if (p.predictedRate !== undefined && p.verdict !== 'no-gain' && p.verdict !== 'error') md.appendMarkdown(`With every fix (predicted): ${formatRateIn(p.predictedRate, p.unit)}  \n`);
  if (p.advice) md.appendMarkdown(`Fixes: ${p.advice}  \n`);
  if (p.memory) md.appendMarkdown(`Memory: ${p.memory}  \n`);
  const trainer = trainerRow(p);
  if (trainer) md.appendMarkdown(`Training loop: ${trainer.label}  \n`);
  if (p.profiledAt) md.appendMarkdown(`Profiled ${new Date(p.profiledAt).toLocaleString()}`);
  if (p.stale) md.appendMarkdown('\n\nThe file changed since this profile; profile again before applying fixes.');
  return md;
}

function opTooltip(op: OpSummary, p: PipelineSummary): vscode.MarkdownString {
  const md = new vscode.MarkdownString(`**${op.label}** (${op.kind})\n\n`);
  if (op.reason) md.appendMarkdown(`${op.reason}\n\n`);
  if (op.rate !== undefined) md.appendMarkdown(`Measured: ${formatRate(op.rate)}${op.rootRate !== undefined ? ` = ${formatRateIn(op.rootRate, p.unit)} of the pipeline` : ''}  \n`);
  if (op.cpuShare !== undefined) md.appendMarkdown(`CPU share (measured): ${formatShare(op.cpuShare)}  \n`);
  if (op.bound !== undefined) md.appendMarkdown(`Allows the pipeline at most (model): ${formatRateIn(op.bound, p.unit)}  \n`);
  if (op.memory) md.appendMarkdown(`Memory: ${op.memory}  \n`);
  if (op.fixTitle) md.appendMarkdown(`\n${p.stale ? '(stale) ' : ''}${op.fixTitle}`);
  return md;
}
