/** The status bar item: the server's state, or the last profile's result (click opens the report). */
import * as vscode from 'vscode';
import type { PipelineSummary } from '../shared/protocol';
import { Commands } from '../shared/commands';
import { MAX_CRASHES, type PlumberServer } from './server';
import { formatRateIn, statusText } from './views/format';

export class PlumberStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('plumber.status', vscode.StatusBarAlignment.Left, 10);
  private last: PipelineSummary | undefined;

  constructor(private readonly server: PlumberServer) {
    this.item.name = 'Plumber';
    this.render();
    this.item.show();
  }

  /** Remembers the most recently profiled pipeline and shows it. */
  setLast(p: PipelineSummary | undefined): void {
    this.last = p;
    this.render();
  }

  get text(): string {
    return this.item.text;
  }

  render(): void {
    const item = this.item;
    item.backgroundColor = undefined;
    switch (this.server.state) {
      case 'starting':
      case 'restarting':
        item.text = `$(sync~spin) Plumber`;
        item.tooltip = this.server.state === 'starting' ? 'The Plumber server is starting.' : 'The Plumber server stopped unexpectedly and is restarting.';
        item.command = Commands.showOutput;
        return;
      case 'failed':
      case 'stopped':
        item.text = this.server.gaveUp ? `$(error) Plumber: server crashed ${MAX_CRASHES}×, stopped` : `$(error) Plumber: server stopped`;
        item.tooltip = `${this.server.gaveUp ? `The Plumber server crashed ${MAX_CRASHES} times and is not restarted.` : this.server.notReadyMessage()} Click to restart it.`;
        item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
        item.command = Commands.restartServer;
        return;
      case 'ready':
        break;
    }
    const p = this.last;
    item.text = `$(pulse) ${statusText(p)}`;
    if (p?.error) item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    item.tooltip = p
      ? p.error
        ? `The last profile of ${p.name} failed: ${p.error}`
        : `${p.name}: measured ${formatRateIn(p.rate, p.unit)}, bound ${formatRateIn(p.bound, p.unit)}, predicted with fixes ${formatRateIn(p.predictedRate, p.unit)}. Click for the report.`
      : 'Plumber is ready. Profile a pipeline to see its rate.';
    item.command = p ? { command: Commands.showReport, title: 'Show Report', arguments: [p.uri, p.name] } : Commands.profilePipeline;
  }

  dispose(): void {
    this.item.dispose();
  }
}
