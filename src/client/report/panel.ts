/** The report webview host: one panel, refreshed after each profile of the pipeline it shows. */
import * as vscode from 'vscode';
import { Commands } from '../../shared/commands';
import type { ReportParams, ReportResult } from '../../shared/protocol';
import type { PlumberServer } from '../server';
import { makeNonce, reportHtml } from './html';
import type { FromWebview, ToWebview } from './messages';

export class ReportPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private target: { uri: string; pipeline: string } | undefined;
  private last: ReportResult | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly server: PlumberServer,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** The report last sent to the page (for the e2e suite). */
  get current(): ReportResult | undefined {
    return this.panel ? this.last : undefined;
  }

  async show(uri: string, pipeline: string): Promise<void> {
    this.target = { uri, pipeline };
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel('plumber.report', `Plumber: ${pipeline}`, vscode.ViewColumn.Beside, {
        enableScripts: true,
        localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist', 'media'), vscode.Uri.joinPath(this.extensionUri, 'media')],
        retainContextWhenHidden: false,
      });
      this.panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'plumber.svg');
      const webview = this.panel.webview;
      webview.html = reportHtml({
        cspSource: webview.cspSource,
        nonce: makeNonce(),
        scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'media', 'report.js')).toString(),
        styleUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'report', 'report.css')).toString(),
        title: `Plumber: ${pipeline}`,
      });
      webview.onDidReceiveMessage((m: FromWebview) => this.onMessage(m));
      this.panel.onDidDispose(() => {
        this.panel = undefined;
        this.last = undefined;
      });
    } else {
      this.panel.title = `Plumber: ${pipeline}`;
      this.panel.reveal(undefined, true);
    }
    await this.update();
  }

  /** Called after a profile: redraw if the panel is open. */
  refreshIfShowing(): void {
    if (this.panel) void this.update();
  }

  private async update(): Promise<void> {
    if (!this.panel || !this.target) return;
    try {
      const params: ReportParams = { uri: this.target.uri, pipeline: this.target.pipeline };
      this.last = await this.server.request((m) => m.ReportRequest, params);
      await this.post({ type: 'report', report: this.last });
    } catch (error) {
      const message = `Plumber could not load the report: ${error instanceof Error ? error.message : String(error)}`;
      this.log.error(message);
      await this.post({ type: 'error', message });
    }
  }

  private post(message: ToWebview): Thenable<boolean> {
    return this.panel ? this.panel.webview.postMessage(message) : Promise.resolve(false);
  }

  private onMessage(m: FromWebview): void {
    if (!this.target) return;
    const { uri, pipeline } = this.target;
    switch (m.type) {
      case 'ready':
        if (this.last) void this.post({ type: 'report', report: this.last });
        return;
      case 'reveal': {
        const op = this.last?.pipeline.ops.find((o) => o.id === m.opId);
        if (op) void vscode.commands.executeCommand(Commands.revealRange, op.uri, op.range);
        return;
      }
      case 'applyAllFixes':
        void vscode.commands.executeCommand(Commands.applyAllFixes, uri, pipeline);
        return;
      case 'profile':
        void vscode.commands.executeCommand(Commands.profilePipeline, uri, pipeline);
        return;
    }
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
