/**
 * The command registry: one small handler per command. Every handler that needs the server says so
 * when it is not ready, and the Profile commands refuse in an untrusted workspace.
 */
import * as vscode from 'vscode';
import type { ClearProfileParams, FixAllParams, PipelineSummary, ProfileParams, ProfileResult, Range } from '../shared/protocol';
import { Commands, type CommandId } from '../shared/commands';
import { FIX_PREFIX } from '../shared/words';
import { ServerNotReadyError, type PlumberServer } from './server';
import type { PlumberStatusBar } from './statusBar';
import type { BottleneckNode, BottlenecksProvider } from './views/bottlenecks';
import { pipelineAt } from './views/format';
import type { ReportPanel } from './report/panel';

/** What the handlers share. */
export interface CommandContext {
  server: PlumberServer;
  tree: BottlenecksProvider;
  status: PlumberStatusBar;
  report: ReportPanel;
  log: vscode.LogOutputChannel;
  /** Shows a message to the person and records it (the e2e suite reads the record). */
  notify(kind: 'info' | 'warning' | 'error', message: string, ...actions: string[]): Thenable<string | undefined>;
}

/** Why a command did nothing, for callers such as tests and other commands. */
export interface Refusal {
  refused: 'untrusted' | 'not-ready' | 'no-pipeline' | 'stale' | 'no-fix' | 'cancelled' | 'failed';
  message: string;
}

export const UNTRUSTED_MESSAGE =
  "Plumber does not run pipelines in an untrusted workspace: profiling executes the workspace's code. Trust the workspace to profile; lints and the last results still work in Restricted Mode.";

type Handler = (ctx: CommandContext, ...args: unknown[]) => unknown;

/** One handler per contributed command: a command added to `Commands` without one does not compile. */
const handlers: Record<CommandId, Handler> = {
  [Commands.profilePipeline]: (ctx, uri, pipeline) => profile(ctx, asUri(uri), pipelineArg(uri, pipeline), false),
  [Commands.profileFile]: (ctx, uri) => profile(ctx, asUri(uri), undefined, true),
  [Commands.applyFix]: (ctx, nodeOrUri, pipeline, opId) => applyFix(ctx, nodeOrUri, asString(pipeline), asString(opId)),
  [Commands.applyAllFixes]: (ctx, uri, pipeline) => applyAllFixes(ctx, asUri(uri), pipelineArg(uri, pipeline)),
  [Commands.showReport]: (ctx, uri, pipeline) => showReport(ctx, asUri(uri), pipelineArg(uri, pipeline)),
  [Commands.clearProfile]: (ctx, uri) => clearProfile(ctx, asUri(uri)),
  [Commands.restartServer]: async (ctx) => {
    await ctx.server.restart();
    return ctx.server.state;
  },
  [Commands.showOutput]: (ctx) => ctx.log.show(true),
  [Commands.refreshBottlenecks]: (ctx) => ctx.tree.refresh(),
  [Commands.revealRange]: (_ctx, uri, range) => revealRange(asUri(uri), range as Range | undefined),
};

/** Registers every command; the disposables go into the extension's subscriptions. */
export function registerCommands(ctx: CommandContext): vscode.Disposable[] {
  return Object.entries(handlers).map(([id, handler]) =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await handler(ctx, ...args);
      } catch (error) {
        const message = error instanceof ServerNotReadyError ? error.message : `Plumber: ${id} failed: ${error instanceof Error ? error.message : String(error)}`;
        ctx.log.error(message);
        void ctx.notify(error instanceof ServerNotReadyError ? 'warning' : 'error', message, 'Show Output').then((a) => a && ctx.log.show(true));
        return { refused: error instanceof ServerNotReadyError ? 'not-ready' : 'failed', message } satisfies Refusal;
      }
    }),
  );
}

function asUri(value: unknown): vscode.Uri | undefined {
  if (value instanceof vscode.Uri) return value;
  if (typeof value === 'string' && value) return vscode.Uri.parse(value);
  if (value && typeof value === 'object' && 'pipeline' in value) return vscode.Uri.parse((value as { pipeline: PipelineSummary }).pipeline.uri);
  return vscode.window.activeTextEditor?.document.uri;
}

/** The pipeline name from (uri, name) arguments, or from a Bottlenecks tree node (inline actions pass the node). */
function pipelineArg(first: unknown, second: unknown): string | undefined {
  if (first && typeof first === 'object' && 'pipeline' in first) return (first as { pipeline: PipelineSummary }).pipeline.name;
  return asString(second);
}

function asString(value: unknown): string | undefined {
  return typeof value === 'string' && value ? value : undefined;
}

async function pipelinesOf(ctx: CommandContext, uri: vscode.Uri): Promise<PipelineSummary[]> {
  const result = await ctx.server.request((m) => m.PipelinesRequest, { uri: uri.toString() });
  return result.pipelines;
}

/** Picks the pipeline from the arguments, the cursor, or a quick pick when the file has several. */
async function choosePipeline(ctx: CommandContext, uri: vscode.Uri, name: string | undefined): Promise<PipelineSummary | Refusal> {
  const pipelines = await pipelinesOf(ctx, uri);
  if (pipelines.length === 0) {
    return {
      refused: 'no-pipeline',
      message: `Plumber found no pipeline in ${vscode.workspace.asRelativePath(uri)}. A pipeline is an exported chain of plumber-data, tfjs-data, Node-stream or async-generator stages (or a function with no parameters that returns one).`,
    };
  }
  if (name) {
    const found = pipelines.find((p) => p.name === name);
    return found ?? { refused: 'no-pipeline', message: `There is no pipeline named "${name}" in ${vscode.workspace.asRelativePath(uri)}; found ${pipelines.map((p) => p.name).join(', ')}.` };
  }
  const editor = vscode.window.activeTextEditor;
  if (pipelines.length === 1) return pipelines[0];
  if (editor && editor.document.uri.toString() === uri.toString()) return pipelineAt(pipelines, editor.selection.active.line)!;
  const pick = await vscode.window.showQuickPick(
    pipelines.map((p) => ({ label: p.name, description: `line ${p.range.start.line + 1}`, pipeline: p })),
    { placeHolder: 'Which pipeline?' },
  );
  return pick?.pipeline ?? { refused: 'cancelled', message: 'No pipeline chosen.' };
}

async function profile(ctx: CommandContext, uri: vscode.Uri | undefined, name: string | undefined, wholeFile: boolean): Promise<ProfileResult | Refusal> {
  if (!vscode.workspace.isTrusted) {
    void ctx.notify('warning', UNTRUSTED_MESSAGE, 'Manage Workspace Trust').then((a) => a && vscode.commands.executeCommand('workbench.trust.manage'));
    return { refused: 'untrusted', message: UNTRUSTED_MESSAGE };
  }
  if (ctx.server.state !== 'ready') throw new ServerNotReadyError(ctx.server.notReadyMessage());
  if (!uri) return refuse(ctx, { refused: 'no-pipeline', message: 'Open a pipeline file (TypeScript or JavaScript) to profile it.' });
  let pipeline: string | undefined;
  if (!wholeFile) {
    const chosen = await choosePipeline(ctx, uri, name);
    if ('refused' in chosen) return refuse(ctx, chosen);
    pipeline = chosen.name;
  }
  const what = pipeline ?? `every pipeline in ${vscode.workspace.asRelativePath(uri)}`;
  const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Profiling ${what}`, cancellable: true }, async (progress, token) => {
    const params: ProfileParams = { uri: uri.toString(), pipeline };
    const workDoneToken = `plumber-profile-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    params.workDoneToken = workDoneToken;
    const client = ctx.server.languageClient;
    // The server reports its phases through LSP work-done progress on our token.
    const sub = client.onProgress(ctx.server.library.WorkDoneProgress.type, workDoneToken, (value) => {
      if (value.kind !== 'end' && value.message) progress.report({ message: value.message });
    });
    try {
      return await ctx.server.request((m) => m.ProfileRequest, params, token);
    } catch (error) {
      // The person pressed Cancel: that is an answer, not an error to report.
      if (token.isCancellationRequested) return undefined;
      throw error;
    } finally {
      sub.dispose();
    }
  });
  if (!result) return { refused: 'cancelled', message: `Profiling ${what} was cancelled.` };
  await ctx.tree.refresh();
  const pipelines = ctx.tree.current.filter((p) => p.uri === uri.toString());
  const last = pipelines.find((p) => p.name === (pipeline ?? result.outcomes[0]?.pipeline));
  ctx.status.setLast(last);
  for (const outcome of result.outcomes) {
    if (!outcome.ok) {
      void ctx.notify('error', `Plumber could not profile ${outcome.pipeline}: ${outcome.error ?? 'the runner failed'}`, 'Show Output').then((a) => a && ctx.log.show(true));
    }
  }
  ctx.report.refreshIfShowing();
  return result;
}

function refuse(ctx: CommandContext, refusal: Refusal): Refusal {
  if (refusal.refused !== 'cancelled') void ctx.notify('warning', refusal.message);
  return refusal;
}

async function applyAllFixes(ctx: CommandContext, uri: vscode.Uri | undefined, pipeline: string | undefined): Promise<boolean | Refusal> {
  if (ctx.server.state !== 'ready') throw new ServerNotReadyError(ctx.server.notReadyMessage());
  if (!uri) return refuse(ctx, { refused: 'no-pipeline', message: 'Open a profiled pipeline file to apply its fixes.' });
  const params: FixAllParams = { uri: uri.toString(), pipeline };
  const result = await ctx.server.request((m) => m.FixAllRequest, params);
  if (!result.edit) {
    return refuse(ctx, { refused: 'no-fix', message: result.reason ?? 'Plumber has no fix to apply: profile the pipeline first.' });
  }
  const edit = await ctx.server.languageClient.protocol2CodeConverter.asWorkspaceEdit(result.edit);
  const applied = await vscode.workspace.applyEdit(edit);
  if (!applied) {
    return refuse(ctx, { refused: 'stale', message: 'The fixes no longer fit the file (it changed since the profile). Profile again, then apply the fixes.' });
  }
  ctx.log.info(`Applied ${result.title ?? 'all Plumber fixes'} to ${uri.toString()}.`);
  return true;
}

/** Applies the fix for one operator: the code action the server offers at its range. */
async function applyFix(ctx: CommandContext, nodeOrUri: unknown, pipeline: string | undefined, opId: string | undefined): Promise<boolean | Refusal> {
  if (ctx.server.state !== 'ready') throw new ServerNotReadyError(ctx.server.notReadyMessage());
  let uri: vscode.Uri | undefined;
  let range: vscode.Range | undefined;
  let title: string | undefined;
  const node = nodeOrUri as BottleneckNode | undefined;
  if (node && typeof node === 'object' && 'type' in node && node.type === 'op') {
    if (node.pipeline.stale) return refuse(ctx, { refused: 'stale', message: `${node.pipeline.name} changed since it was profiled; profile it again before applying fixes.` });
    uri = vscode.Uri.parse(node.op.uri);
    range = toRange(node.op.range);
    title = node.op.fixTitle;
  } else {
    uri = asUri(nodeOrUri);
    if (uri && opId && pipeline) {
      const p = (await pipelinesOf(ctx, uri)).find((x) => x.name === pipeline);
      const op = p?.ops.find((o) => o.id === opId);
      if (p?.stale) return refuse(ctx, { refused: 'stale', message: `${p.name} changed since it was profiled; profile it again before applying fixes.` });
      if (op) {
        range = toRange(op.range);
        title = op.fixTitle;
      }
    }
    const editor = vscode.window.activeTextEditor;
    if (!range && editor && uri && editor.document.uri.toString() === uri.toString()) range = editor.selection;
  }
  if (!uri || !range) return refuse(ctx, { refused: 'no-fix', message: 'Put the cursor on an operator with a Plumber fix, or use the Bottlenecks view.' });
  const actions = (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', uri, range, vscode.CodeActionKind.QuickFix.value)) ?? [];
  const plumberActions = actions.filter((a) => a.title.startsWith(FIX_PREFIX));
  const action = plumberActions.find((a) => a.title === title) ?? plumberActions[0];
  if (!action) return refuse(ctx, { refused: 'no-fix', message: 'Plumber has no fix here: profile the pipeline first, or the operator is not holding it back.' });
  if (action.edit && !(await vscode.workspace.applyEdit(action.edit))) {
    return refuse(ctx, { refused: 'stale', message: 'The fix no longer fits the file (it changed since the profile). Profile again, then apply the fix.' });
  }
  if (action.command) await vscode.commands.executeCommand(action.command.command, ...(action.command.arguments ?? []));
  return true;
}

async function showReport(ctx: CommandContext, uri: vscode.Uri | undefined, pipeline: string | undefined): Promise<boolean | Refusal> {
  if (ctx.server.state !== 'ready') throw new ServerNotReadyError(ctx.server.notReadyMessage());
  if (!uri) return refuse(ctx, { refused: 'no-pipeline', message: 'Open a pipeline file, or profile a pipeline, to see its report.' });
  const chosen = await choosePipeline(ctx, uri, pipeline);
  if ('refused' in chosen) return refuse(ctx, chosen);
  await ctx.report.show(uri.toString(), chosen.name);
  return true;
}

async function clearProfile(ctx: CommandContext, uri: vscode.Uri | undefined): Promise<boolean> {
  if (ctx.server.state !== 'ready') throw new ServerNotReadyError(ctx.server.notReadyMessage());
  const params: ClearProfileParams = { uri: uri?.toString() };
  await ctx.server.request((m) => m.ClearProfileRequest, params);
  ctx.status.setLast(undefined);
  await ctx.tree.refresh();
  return true;
}

function toRange(r: Range): vscode.Range {
  return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

async function revealRange(uri: vscode.Uri | undefined, range: Range | undefined): Promise<void> {
  if (!uri) return;
  const editor = await vscode.window.showTextDocument(uri, { preserveFocus: false });
  if (range) {
    const r = toRange(range);
    editor.selection = new vscode.Selection(r.start, r.start);
    editor.revealRange(r, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }
}
