/**
 * The Plumber language server: wiring only. Each handler calls one feature (src/server/features/)
 * with plain inputs from the session, inside a guard that logs a failure and returns an empty
 * result, so one broken feature never takes the server down.
 */
import {
  CodeActionKind,
  CodeLensRefreshRequest,
  DidChangeWatchedFilesNotification,
  InlayHintRefreshRequest,
  ErrorCodes,
  LSPErrorCodes,
  ProposedFeatures,
  ResponseError,
  TextDocumentSyncKind,
  TextDocuments,
  createConnection,
  type CancellationToken,
  type ClientCapabilities,
  type InitializeResult,
  type WorkDoneProgressReporter,
} from 'vscode-languageserver/node';
import * as path from 'node:path';
import { format, inspect } from 'node:util';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { diagnose } from '../engine/diagnose';
import { runProfile } from '../runner/spawn';
import {
  ClearProfileRequest,
  FixAllRequest,
  PipelinesRequest,
  ProfileRequest,
  ProfileUpdatedNotification,
  ReportRequest,
  TrustChangedNotification,
  type ClearProfileParams,
  type FixAllParams,
  type FixAllResult,
  type PipelinesParams,
  type PipelinesResult,
  type ProfileParams,
  type ProfileResult,
  type ReportParams,
  type ReportResult,
  type TrustChangedParams,
} from '../shared/protocol';
import { normalizeSettings } from '../shared/settings';
import { codeActions } from './features/codeActions';
import { codeLenses, resolveCodeLens, type LensData } from './features/codeLens';
import { fixAll } from './features/fixAll';
import { uriToFile } from './features/format';
import { hover } from './features/hover';
import { inlayHints } from './features/inlayHints';
import { pipelines } from './features/pipelines';
import { UNTRUSTED, profilePipelines } from './features/profile';
import { report } from './features/report';
import { activity, noteEdit, quiet, uriOf } from './pacing';
import { FramingGuard } from './framing';
import { RunQueue } from './runQueue';
import { Session } from './session';
import { trustFromInit, trustFromNotification } from './trust';

// Over stdio the client's bytes pass through the framing guard first (see framing.ts). Given its
// own streams, the library no longer routes console output away from stdout, where it would
// corrupt the replies: that is done here, into the client's log.
const overStdio = process.argv.includes('--stdio');
const connection = overStdio ? createConnection(ProposedFeatures.all, process.stdin.pipe(new FramingGuard((m) => connection.console.error(m))), process.stdout) : createConnection(ProposedFeatures.all);
if (overStdio) {
  const say =
    (write: (message: string) => void) =>
    (...args: unknown[]): void =>
      write(format(...args));
  console.log = say((m) => connection.console.log(m));
  console.info = say((m) => connection.console.info(m));
  console.debug = say((m) => connection.console.log(m));
  console.warn = say((m) => connection.console.warn(m));
  console.error = say((m) => connection.console.error(m));
  console.trace = say((m) => connection.console.log(`${m}\n${new Error().stack ?? ''}`));
  console.dir = (item: unknown) => connection.console.log(inspect(item));
}
const documents = new TextDocuments(TextDocument);
const session = new Session((m) => connection.console.error(m));
let caps: ClientCapabilities = {};
/** The `settings` of `initializationOptions`: what a client that cannot answer workspace/configuration (Neovim 0.7) keeps. */
let initSettings: unknown;

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** Run a feature once typing paused; on failure log it and answer `fallback`. */
function guard<P, R>(name: string, fallback: R, fn: (params: P, token: CancellationToken) => R | Promise<R>) {
  return async (params: P, token: CancellationToken): Promise<R> => {
    activity();
    try {
      await quiet(uriOf(params));
      if (token.isCancellationRequested) return fallback;
      return await fn(params, token);
    } catch (error) {
      connection.console.error(`Plumber ${name} failed and returned nothing: ${describe(error)}`);
      return fallback;
    }
  };
}

connection.onInitialize((params): InitializeResult => {
  caps = params.capabilities;
  const init = params.initializationOptions as { trusted?: unknown; settings?: unknown } | undefined;
  // Clients without Workspace Trust (Neovim, a plain LSP client) started the server themselves and
  // send no `trusted`: trusted. A client that sends it trusts only with a boolean `true`.
  session.trusted = trustFromInit(init);
  // Settings sent at start apply to the very first requests, before workspace/configuration answers.
  initSettings = init?.settings;
  if (init?.settings) session.settings = normalizeSettings(init.settings).settings;
  return {
    capabilities: {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      codeLensProvider: { resolveProvider: true },
      codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix], resolveProvider: false },
      hoverProvider: true,
      inlayHintProvider: { resolveProvider: false },
    },
    serverInfo: { name: 'plumber-language-server', version: '0.1.0' },
  };
});

async function loadSettings(pushed?: unknown): Promise<void> {
  let raw: unknown = pushed;
  if (caps.workspace?.configuration) {
    try {
      raw = await connection.workspace.getConfiguration('plumber');
    } catch (error) {
      connection.console.warn(`Plumber could not read its settings, using defaults: ${describe(error)}`);
    }
  }
  // Without an answer or a push, the settings sent at start still hold: replacing them with the
  // defaults made a Neovim user's model.cores and plan.verify vanish once the server initialized.
  const { settings, invalid } = normalizeSettings(raw ?? initSettings ?? {});
  session.settings = settings;
  if (invalid.length > 0) connection.console.warn(`Plumber ignored settings of the wrong type (defaults used): ${invalid.join(', ')}`);
}

connection.onInitialized(() => {
  void loadSettings().then(refreshAll);
  // Chains imported from files that are not open are read from disk: hear when those change.
  if (caps.workspace?.didChangeWatchedFiles?.dynamicRegistration) {
    void connection.client.register(DidChangeWatchedFilesNotification.type, { watchers: [{ globPattern: '**/*.{ts,mts,cts,tsx,js,mjs,cjs}' }] }).catch(() => undefined);
  }
});

connection.onDidChangeWatchedFiles((params) => {
  try {
    for (const change of params.changes) session.workspace.changedOnDisk(uriToFile(change.uri));
    for (const d of documents.all()) scheduleDiagnostics(d.uri);
  } catch (error) {
    connection.console.error(`Plumber could not reload changed files: ${describe(error)}`);
  }
});

connection.onDidChangeConfiguration((params: { settings?: { plumber?: unknown } | null }) => {
  void loadSettings(params.settings?.plumber)
    .then(refreshAll)
    .catch((error: unknown) => connection.console.error(`Plumber could not apply new settings: ${describe(error)}`));
});

connection.onNotification(TrustChangedNotification, (params: TrustChangedParams) => {
  session.trusted = trustFromNotification(params);
});

// Diagnostics wait for typing to pause; features asked in between read the latest text.
const pending = new Map<string, NodeJS.Timeout>();
function scheduleDiagnostics(uri: string, delayMs = 250): void {
  clearTimeout(pending.get(uri));
  pending.set(
    uri,
    setTimeout(() => {
      pending.delete(uri);
      publishDiagnostics(uri);
    }, delayMs),
  );
}

function publishDiagnostics(uri: string): void {
  try {
    if (!documents.get(uri)) return;
    void connection.sendDiagnostics({ uri, diagnostics: session.diagnostics(uri) });
  } catch (error) {
    connection.console.error(`Plumber diagnostics failed: ${describe(error)}`);
  }
}

function refreshAll(): void {
  for (const d of documents.all()) scheduleDiagnostics(d.uri, 0);
  if (caps.workspace?.codeLens?.refreshSupport) void connection.sendRequest(CodeLensRefreshRequest.type).catch(() => undefined);
  if (caps.workspace?.inlayHint?.refreshSupport) void connection.sendRequest(InlayHintRefreshRequest.type).catch(() => undefined);
}

function profilesChanged(uri: string, names: string[]): void {
  if (names.length === 0) return;
  void connection.sendNotification(ProfileUpdatedNotification, { uri, pipelines: names });
}

documents.onDidChangeContent((e) => {
  try {
    noteEdit(e.document.uri);
    const flipped = session.update(e.document.uri, e.document.version, e.document.getText());
    profilesChanged(e.document.uri, flipped);
    // A profile that just went stale must drop its "Apply all" lens and say "stale" now, not at
    // the editor's next lens request (VS Code keeps resolved lens titles until then).
    if (flipped.length > 0 && caps.workspace?.codeLens?.refreshSupport) void connection.sendRequest(CodeLensRefreshRequest.type).catch(() => undefined);
    scheduleDiagnostics(e.document.uri);
  } catch (error) {
    connection.console.error(`Plumber could not track an edit: ${describe(error)}`);
  }
});

documents.onDidClose((e) => {
  clearTimeout(pending.get(e.document.uri));
  session.close(e.document.uri);
  void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
});

connection.onCodeLens(guard('code lenses', [], (p: { textDocument: { uri: string } }) => codeLenses(session.views(p.textDocument.uri), uriToFile(p.textDocument.uri), session.settings.codeLens)));

connection.onCodeLensResolve(
  guard('code lens', { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } } }, (lens) => {
    const data = lens.data as LensData | undefined;
    return resolveCodeLens(lens, data ? session.views(data.uri) : []);
  }),
);

connection.languages.inlayHint.on(
  guard('inlay hints', [], (p: { textDocument: { uri: string }; range: import('vscode-languageserver').Range }) =>
    inlayHints(session.views(p.textDocument.uri), uriToFile(p.textDocument.uri), p.range, session.settings.inlayHints),
  ),
);

connection.onHover(guard('hover', null, (p) => hover(session.views(p.textDocument.uri), uriToFile(p.textDocument.uri), p.position)));

connection.onCodeAction(
  guard('code actions', [], (p) => {
    const disabledSupport = caps.textDocument?.codeAction?.disabledSupport === true;
    return codeActions(session.views(p.textDocument.uri), uriToFile(p.textDocument.uri), p.range, session.actionDeps(disabledSupport));
  }),
);

connection.onRequest(
  PipelinesRequest,
  guard('pipelines', { pipelines: [] } as PipelinesResult, (p: PipelinesParams): PipelinesResult => {
    const uris = p.uri ? [p.uri] : documents.all().map((d) => d.uri);
    return { pipelines: uris.flatMap((uri) => pipelines(session.views(uri), uriToFile(uri), session.lints(uri))) };
  }),
);

connection.onRequest(ReportRequest, async (p: ReportParams): Promise<ReportResult> => {
  const view = session.views(p.uri).find((v) => v.graph.name === p.pipeline);
  if (!view) throw new ResponseError(ErrorCodes.InvalidParams, `There is no pipeline named ${p.pipeline} in ${p.uri} any more.`);
  return report(view, uriToFile(p.uri), session.lints(p.uri), session.store.get(p.uri)?.history.get(p.pipeline) ?? []);
});

connection.onRequest(
  FixAllRequest,
  guard('fix all', { reason: 'Plumber could not compute the fixes; see the Plumber output channel.' } as FixAllResult, (p: FixAllParams) => fixAll(session.views(p.uri), p, session.actionDeps(false))),
);

connection.onRequest(
  ClearProfileRequest,
  guard('clear profile', null, (p: ClearProfileParams) => {
    for (const cleared of session.store.clear(p.uri)) profilesChanged(cleared.uri, cleared.pipelines);
    refreshAll();
    return null;
  }),
);

// Profiles measure the machine's cores: one at a time (see runQueue.ts).
const profiles = new RunQueue();

connection.onRequest(ProfileRequest, async (p: ProfileParams, token: CancellationToken): Promise<ProfileResult> => {
  if (!session.trusted) throw new ResponseError(LSPErrorCodes.RequestFailed, UNTRUSTED);
  const abort = new AbortController();
  token.onCancellationRequested(() => abort.abort());
  let progress: WorkDoneProgressReporter | undefined;
  if (p.workDoneToken !== undefined) {
    progress = connection.window.attachWorkDoneProgress(p.workDoneToken);
  } else if (caps.window?.workDoneProgress) {
    const created = await connection.window.createWorkDoneProgress().catch(() => undefined);
    created?.token.onCancellationRequested(() => abort.abort());
    progress = created;
  }
  progress?.begin('Plumber: profiling', 0, 'starting the runner', true);
  let ended = false;
  let waited = false;
  const endProgress = (): void => {
    if (!ended) progress?.done();
    ended = true;
  };
  // "the profile of numbers" (one pipeline) or "the profile of pipeline.ts" (every pipeline of the file).
  const label = p.pipeline ?? path.basename(uriToFile(p.uri));
  try {
    const queued = await profiles.run(
      label,
      async () => {
        // A request that waited replaces "waiting for …" with what the begin message said.
        if (waited) progress?.report(0, 'starting the runner');
        // Settings and trust as they are when the run starts, not when it was queued. The progress
        // ends before the next queued run starts, so the client sees the runs one after another.
        try {
          return await profilePipelines(p, {
            trusted: session.trusted,
            settings: session.settings,
            store: session.store,
            views: (uri) => session.views(uri),
            graphs: session.workspace,
            run: (opts) => runProfile({ ...opts, onWarning: (text) => connection.console.warn(`Plumber: ${text}`) }),
            diagnose,
            progress: (message, percentage) => progress?.report(percentage ?? 0, message),
            signal: abort.signal,
          });
        } finally {
          endProgress();
        }
      },
      {
        signal: abort.signal,
        onWait: (running, ahead) => {
          waited = true;
          progress?.report(0, `waiting for the profile of ${running} to finish${ahead > 1 ? ` (${ahead - 1} more queued before this one)` : ''}`);
        },
      },
    );
    if (!queued.started) throw new ResponseError(LSPErrorCodes.RequestCancelled, `The profile of ${label} was cancelled before it started.`);
    const result = queued.value;
    profilesChanged(
      p.uri,
      result.outcomes.map((o) => o.pipeline).filter((n) => n !== ''),
    );
    refreshAll();
    return result;
  } catch (error) {
    if (error instanceof ResponseError) throw error;
    connection.console.error(`Plumber profile failed: ${describe(error)}`);
    throw new ResponseError(LSPErrorCodes.RequestFailed, error instanceof Error ? error.message : String(error));
  } finally {
    endProgress();
  }
});

process.on('unhandledRejection', (reason) => connection.console.error(`Plumber: unhandled rejection: ${describe(reason)}`));
process.on('uncaughtException', (error) => connection.console.error(`Plumber: uncaught exception: ${describe(error)}`));

documents.listen(connection);
connection.listen();
