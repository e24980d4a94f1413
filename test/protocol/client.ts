/**
 * A plain LSP client over the built server's stdio (vscode-languageserver-protocol/node), for the
 * protocol tests and the benchmark: what any third-party editor would do.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import {
  ConfigurationRequest,
  InitializeRequest,
  StreamMessageReader,
  StreamMessageWriter,
  createProtocolConnection,
  type ClientCapabilities,
  type MessageConnection,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
} from 'vscode-languageserver-protocol/node';

export const ROOT = path.resolve(__dirname, '../..');
export const SERVER = path.join(ROOT, 'dist', 'server', 'server.js');

export interface TestClient {
  connection: ProtocolConnection;
  child: ChildProcess;
  stderr: string[];
  /** Resolves when the server next asks the client to refresh its code lenses. */
  nextLensRefresh(): Promise<void>;
  /** Resolves with the next diagnostics published for `uri` that satisfy `accept`. */
  diagnostics(uri: string, accept?: (p: PublishDiagnosticsParams) => boolean): Promise<PublishDiagnosticsParams>;
  /** Resolves with the next notification of `method` whose params satisfy `accept`. */
  notification<T>(method: string, accept?: (p: T) => boolean): Promise<T>;
  stop(): Promise<void>;
}

export const CAPABILITIES: ClientCapabilities = {
  textDocument: {
    codeAction: { disabledSupport: true, codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix'] } } },
    codeLens: {},
    hover: { contentFormat: ['markdown'] },
    inlayHint: {},
    publishDiagnostics: { relatedInformation: true },
  },
  workspace: { configuration: true, workspaceEdit: { documentChanges: true, changeAnnotationSupport: {} }, codeLens: { refreshSupport: true } },
  window: { workDoneProgress: true },
};

/** Start the built server and initialize it. `settings` answers workspace/configuration for `plumber`. */
export async function startServer(settings: unknown = {}, initializationOptions: unknown = { trusted: true }, rootUri: string | null = null): Promise<TestClient> {
  const child = spawn(process.execPath, [SERVER, '--stdio'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  child.stderr!.on('data', (d: Buffer) => stderr.push(d.toString()));
  const connection = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const waiters: Array<{ method: string; accept: (p: unknown) => boolean; resolve: (p: unknown) => void }> = [];
  const dispatch = (method: string, params: unknown): void => {
    for (const w of [...waiters]) {
      if (w.method === method && w.accept(params)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(params);
      }
    }
  };
  // Every notification goes through one dispatcher (the star handler of the underlying JSON-RPC connection).
  (connection as unknown as MessageConnection).onNotification((method: string, params: unknown) => dispatch(method, params));
  connection.onRequest(ConfigurationRequest.type, (p) => p.items.map((i) => (i.section === 'plumber' ? settings : null)));
  let lensRefreshed: Array<() => void> = [];
  connection.onRequest('workspace/codeLens/refresh', () => {
    const waiting = lensRefreshed;
    lensRefreshed = [];
    for (const resolve of waiting) resolve();
    return null;
  });
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.listen();
  await connection.sendRequest(InitializeRequest.type, { processId: process.pid, rootUri, capabilities: CAPABILITIES, initializationOptions });
  await connection.sendNotification('initialized', {});
  const notification = <T>(method: string, accept: (p: T) => boolean = () => true): Promise<T> =>
    new Promise<T>((resolve) => waiters.push({ method, accept: accept as (p: unknown) => boolean, resolve: resolve as (p: unknown) => void }));
  return {
    connection,
    child,
    stderr,
    nextLensRefresh: () => new Promise<void>((resolve) => lensRefreshed.push(resolve)),
    notification,
    diagnostics: (uri, accept = () => true) => notification<PublishDiagnosticsParams>('textDocument/publishDiagnostics', (p) => p.uri === uri && accept(p)),
    async stop() {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      try {
        await connection.sendRequest('shutdown');
        await connection.sendNotification('exit');
      } catch {
        child.kill();
      }
      await exited;
      connection.dispose();
    },
  };
}
