/**
 * The language client proper, built into its own bundle (dist/client/languageClient.js) and loaded
 * after activation: vscode-languageclient is ~400 KB of code, and activation should not wait for it.
 */
import * as vscode from 'vscode';
import { fork, type ChildProcess } from 'node:child_process';
import { CloseAction, ErrorAction, LanguageClient, State, WorkDoneProgress, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';

export { State, WorkDoneProgress };
/**
 * The plumber/* message constants, from this bundle: they are built on the same vscode-jsonrpc
 * copy as the client library (which compares parameter structures by identity), and the
 * activation bundle stays free of vscode-jsonrpc (it only imports the protocol's types).
 */
export * as protocol from '../shared/protocol';

export interface ClientHooks {
  /** The server process was started (we own it, so we know its pid). */
  onProcess(child: ChildProcess): void;
  /** The connection closed without a stop() from us: a crash. */
  onUnexpectedClose(): void;
  /** Fresh on each (re)start: trust state and settings. */
  initializationOptions(): unknown;
}

/** Creates (does not start) the client for the server at `serverModule`. */
export function createLanguageClient(serverModule: string, log: vscode.LogOutputChannel, hooks: ClientHooks): LanguageClient {
  // A function as server options lets us own the child process: we know its pid (the e2e suite
  // kills it to check the restart) and we pass ELECTRON_RUN_AS_NODE for desktop VS Code, whose
  // execPath is Electron rather than Node.
  const serverOptions: ServerOptions = async () => {
    const child = fork(serverModule, ['--stdio'], { silent: true, env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, execArgv: [] });
    hooks.onProcess(child);
    return child;
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'typescript' },
      { scheme: 'file', language: 'javascript' },
    ],
    synchronize: { configurationSection: 'plumber' },
    outputChannel: log,
    initializationOptions: () => hooks.initializationOptions(),
    errorHandler: {
      error: () => ({ action: ErrorAction.Continue }),
      closed: () => {
        hooks.onUnexpectedClose();
        // We restart ourselves, with back-off; the library's own message would be a second one.
        return { action: CloseAction.DoNotRestart, handled: true };
      },
    },
  };
  return new LanguageClient('plumber', 'Plumber', serverOptions, clientOptions);
}
