/**
 * The extension's entry point. Activation only wires things up and starts the language server in
 * the background, so it costs a few milliseconds; everything else happens when the server is ready.
 */
import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import type { PipelineSummary, ProfileUpdatedParams } from '../shared/protocol';
import type { Settings } from '../shared/settings';
import { registerCommands, type CommandContext } from './commands';
import { ReportPanel } from './report/panel';
import { PlumberServer, type ServerState } from './server';
import { readSettings } from './settings';
import { PlumberStatusBar } from './statusBar';
import { BottlenecksProvider, type BottleneckNode } from './views/bottlenecks';
import { HeatBars } from './heatBars';

/** What `activate` returns: a small API the e2e suite (and other extensions) can use. */
export interface PlumberApi {
  /** Milliseconds `activate` took, measured inside it. */
  activationMs: number;
  serverState(): ServerState;
  /** Resolves when the server is ready. */
  whenServerReady(timeoutMs?: number): Promise<void>;
  /** The server's process id while it runs. */
  serverPid(): number | undefined;
  onDidChangeServerState: vscode.Event<ServerState>;
  /** The Bottlenecks tree, as the view sees it. */
  bottlenecks: { getChildren(node?: BottleneckNode): Promise<BottleneckNode[]>; getTreeItem(node: BottleneckNode): vscode.TreeItem; refresh(): Promise<void> };
  /** Fires after the server announced new profile results and the tree reloaded them. */
  onDidUpdateProfiles: vscode.Event<ProfileUpdatedParams>;
  /** Messages shown to the person, newest last. */
  messages: ReadonlyArray<{ kind: string; message: string }>;
  statusBarText(): string;
  settings(): Settings;
  /** The report shown in the webview, if it is open. */
  reportPipeline(): PipelineSummary | undefined;
  /** The heat bars drawn in a visible editor: each operator line and its share (empty when the mode is off or the numbers are stale). */
  heatBars(uri: string): ReadonlyArray<{ line: number; share: number }>;
  /** Sends a custom `plumber/…` request straight to the server (rejects while it is not ready). */
  request<P, R>(method: string, params: P): Promise<R>;
}

export function activate(context: vscode.ExtensionContext): PlumberApi {
  const started = performance.now();
  const log = vscode.window.createOutputChannel('Plumber', { log: true });
  const serverModule = vscode.Uri.joinPath(context.extensionUri, 'dist', 'server', 'server.js').fsPath;
  const server = new PlumberServer(serverModule, log);
  const tree = new BottlenecksProvider(server);
  const status = new PlumberStatusBar(server);
  const report = new ReportPanel(context.extensionUri, server, log);
  const messages: Array<{ kind: string; message: string }> = [];
  const warned = new Set<string>();
  const updated = new vscode.EventEmitter<ProfileUpdatedParams>();

  const ctx: CommandContext = {
    server,
    tree,
    status,
    report,
    log,
    notify(kind, message, ...actions) {
      messages.push({ kind, message });
      if (kind === 'error') return vscode.window.showErrorMessage(message, ...actions);
      if (kind === 'warning') return vscode.window.showWarningMessage(message, ...actions);
      return vscode.window.showInformationMessage(message, ...actions);
    },
  };

  let settings = readSettings(log, warned, (m, ...a) => ctx.notify('warning', m, ...a));
  const view = vscode.window.createTreeView('plumber.bottlenecks', { treeDataProvider: tree, showCollapseAll: true });
  const heat = new HeatBars(
    () => settings.codeLens.enabled && settings.codeLens.heatBars,
    () => tree.current,
  );
  context.subscriptions.push(
    log,
    server,
    tree,
    status,
    report,
    updated,
    view,
    heat,
    // The heat bars follow the tree's data: every reload (a profile, a staleness flip) redraws them.
    tree.onDidChangeTreeData(() => heat.render()),
    ...registerCommands(ctx),
    server.onDidChangeState((state) => {
      status.render();
      void vscode.commands.executeCommand('setContext', 'plumber.serverReady', state === 'ready');
      if (state === 'ready') void tree.refresh();
    }),
    server.onNotification(
      (m) => m.ProfileUpdatedNotification,
      (params: ProfileUpdatedParams) => {
        void tree.refresh().then(() => {
          const last = tree.current.find((p) => p.uri === params.uri && params.pipelines.includes(p.name));
          if (last) status.setLast(last);
          report.refreshIfShowing();
          updated.fire(params);
        });
      },
    ),
    // Granting trust lets the server run pipelines from now on; VS Code reloads on revoking it.
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      log.info('The workspace is now trusted: profiling is enabled.');
      server.notifyTrust(true);
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('plumber')) return;
      settings = readSettings(log, warned, (m, ...a) => ctx.notify('warning', m, ...a));
      heat.render();
    }),
  );

  if (existsSync(serverModule)) {
    server.startInBackground();
  } else {
    log.error(`The Plumber language server is missing at ${serverModule}. Rebuild the extension (npm run build) or reinstall it.`);
    server.markFailed('the server bundle is missing');
  }

  const activationMs = performance.now() - started;
  log.info(`Plumber activated in ${activationMs.toFixed(1)} ms; the server starts in the background.`);
  return {
    activationMs,
    serverState: () => server.state,
    whenServerReady: (timeoutMs) => server.whenReady(timeoutMs),
    serverPid: () => server.pid,
    onDidChangeServerState: server.onDidChangeState,
    bottlenecks: { getChildren: (n) => tree.getChildren(n), getTreeItem: (n) => tree.getTreeItem(n), refresh: () => tree.refresh() },
    onDidUpdateProfiles: updated.event,
    messages,
    statusBarText: () => status.text,
    settings: () => settings,
    reportPipeline: () => report.current?.pipeline,
    request: (method, params) => server.requestMethod(method, params),
    heatBars: (uri) => heat.drawn.get(uri) ?? [],
  };
}

export function deactivate(): void {
  // Disposables in context.subscriptions stop the server.
}
