/**
 * The language server connection: starts the server in the background, restarts it with back-off
 * after a crash, and gives up (saying so) after a few crashes in a short time.
 */
import * as vscode from 'vscode';
import type { ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import type { CancellationToken, LanguageClient } from 'vscode-languageclient/node';
import type { NotificationType, RequestParam, RequestType } from 'vscode-jsonrpc';
import type * as ProtocolModule from '../shared/protocol';
import { CRASH_WINDOW_MS, CrashPolicy, MAX_CRASHES } from './crashPolicy';
import type { TrustChangedParams } from '../shared/protocol';

/** The plumber/* constants as the language client bundle carries them (src/client/lsp.ts). */
export type Protocol = typeof ProtocolModule;

export type ServerState = 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped';

export { MAX_CRASHES };

/** Thrown by `request` while the server cannot answer; its message is meant for a person. */
export class ServerNotReadyError extends Error {}

type Lsp = typeof import('./lsp');

/**
 * Loads the language client bundle. It is a separate file (esbuild entry src/client/lsp.ts) so that
 * activation does not pay for parsing it. The path is computed so esbuild leaves the require alone.
 */
function loadLsp(): Lsp {
  return require(path.join(__dirname, 'languageClient.js')) as Lsp;
}

export class PlumberServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private lsp: Lsp | undefined;
  private process: ChildProcess | undefined;
  private readonly crashes = new CrashPolicy();
  private restartTimer: NodeJS.Timeout | undefined;
  private disposed = false;
  private _state: ServerState = 'stopped';
  private _lastError: string | undefined;
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  /** Fires on every state change (starting → ready, ready → restarting, …). */
  readonly onDidChangeState = this.stateEmitter.event;
  private readonly notificationHandlers: Array<[(p: Protocol) => NotificationType<unknown>, (params: unknown) => void]> = [];

  constructor(
    private readonly serverModule: string,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /**
   * Registers a server → client notification handler, now or when the client is created.
   * `message` picks the constant, e.g. `(m) => m.ProfileUpdatedNotification`: the constants live
   * in the language client bundle, which activation does not load (see src/client/lsp.ts).
   */
  onNotification<P>(message: (protocol: Protocol) => NotificationType<P>, handler: (params: P) => void): vscode.Disposable {
    const entry: [(p: Protocol) => NotificationType<unknown>, (params: unknown) => void] = [message as (p: Protocol) => NotificationType<unknown>, handler as (params: unknown) => void];
    this.notificationHandlers.push(entry);
    let registered = this.client?.onNotification(message(this.library.protocol), handler);
    return new vscode.Disposable(() => {
      registered?.dispose();
      registered = undefined;
      const i = this.notificationHandlers.indexOf(entry);
      if (i >= 0) this.notificationHandlers.splice(i, 1);
    });
  }

  /** The library module, once loaded (after the first start). */
  get library(): Lsp {
    return (this.lsp ??= loadLsp());
  }

  private ensureClient(): LanguageClient {
    if (this.client) return this.client;
    const lsp = this.library;
    // The hooks answer for this client only: one replaced after a crash may still report its close.
    const current = (): boolean => this.client === client;
    const client: LanguageClient = lsp.createLanguageClient(this.serverModule, this.log, {
      onProcess: (child) => (this.process = child),
      onUnexpectedClose: () => {
        if (current()) this.onUnexpectedClose();
      },
      // Evaluated on each (re)start, so a restarted server learns the current trust state.
      initializationOptions: () => ({ trusted: vscode.workspace.isTrusted, settings: vscode.workspace.getConfiguration().get('plumber') }),
    });
    for (const [message, handler] of this.notificationHandlers) client.onNotification(message(lsp.protocol), handler);
    client.onDidChangeState((e) => {
      if (e.newState === lsp.State.Running && current()) {
        this._lastError = undefined;
        this.setState('ready');
      }
    });
    this.client = client;
    return client;
  }

  get state(): ServerState {
    return this._state;
  }
  /** Why the server is down, when it is. */
  get lastError(): string | undefined {
    return this._lastError;
  }
  /** True when the server gave up after repeated crashes. */
  get gaveUp(): boolean {
    return this._state === 'failed' && this.crashes.count >= MAX_CRASHES;
  }
  /** The server process id while it runs. */
  get pid(): number | undefined {
    return this._state === 'ready' ? this.process?.pid : undefined;
  }
  /** The running client (only while ready: callers check `state` first). */
  get languageClient(): LanguageClient {
    return this.ensureClient();
  }

  /**
   * Starts the server without waiting for it: activation must stay cheap, so even loading the
   * client library waits for the next turn of the event loop.
   */
  startInBackground(): void {
    this.setState('starting');
    setImmediate(() => {
      if (this.disposed) return;
      try {
        this.ensureClient()
          .start()
          .catch((error: unknown) => this.onStartFailed(error));
      } catch (error) {
        this.onStartFailed(error);
      }
    });
  }

  /** Resolves when the server is ready, or rejects with a sentence when it failed. */
  async whenReady(timeoutMs = 30_000): Promise<void> {
    if (this._state === 'ready') return;
    if (this._state === 'failed') throw new ServerNotReadyError(this.notReadyMessage());
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        sub.dispose();
        reject(new ServerNotReadyError(`The Plumber server did not start within ${timeoutMs / 1000} s.`));
      }, timeoutMs);
      const sub = this.onDidChangeState((s) => {
        if (s === 'ready' || s === 'failed') {
          clearTimeout(timer);
          sub.dispose();
          if (s === 'ready') resolve();
          else reject(new ServerNotReadyError(this.notReadyMessage()));
        }
      });
    });
  }

  /** A sentence for a person explaining why a command cannot run now. */
  notReadyMessage(): string {
    switch (this._state) {
      case 'starting':
        return 'The Plumber server is still starting; try again in a moment.';
      case 'restarting':
        return 'The Plumber server stopped unexpectedly and is restarting; try again in a moment.';
      case 'failed':
        return this.crashes.count >= MAX_CRASHES
          ? `The Plumber server crashed ${MAX_CRASHES} times and was not restarted (${this._lastError ?? 'no exit code'}). Check "Plumber: Show Output", then run "Plumber: Restart Server".`
          : `The Plumber server could not start (${this._lastError ?? 'no reason given'}). Check "Plumber: Show Output", then run "Plumber: Restart Server".`;
      default:
        return 'The Plumber server is not running. Run "Plumber: Restart Server".';
    }
  }

  /**
   * Sends a custom request, or throws ServerNotReadyError with a sentence when the server is down.
   * `message` picks the constant, e.g. `(m) => m.ProfileRequest`, so the compiler checks the
   * params and the result against it.
   */
  async request<P, R>(message: (protocol: Protocol) => RequestType<P, R, void>, params: P, token?: CancellationToken): Promise<R> {
    if (this._state !== 'ready' || !this.client) throw new ServerNotReadyError(this.notReadyMessage());
    const type = message(this.library.protocol);
    // RequestParam<P> only widens `null` params to allow `undefined`: every P is one.
    const p = params as RequestParam<P>;
    return token ? this.client.sendRequest(type, p, token) : this.client.sendRequest(type, p);
  }

  /**
   * The same by method name, unchecked: only for the test API (`PlumberApi.request`), which sends
   * whatever a test asks. Extension code uses `request` with a protocol constant.
   */
  async requestMethod<P, R>(method: string, params: P, token?: CancellationToken): Promise<R> {
    if (this._state !== 'ready' || !this.client) throw new ServerNotReadyError(this.notReadyMessage());
    return token ? this.client.sendRequest<R>(method, params, token) : this.client.sendRequest<R>(method, params);
  }

  /** Tells the server the workspace's trust changed (it runs no workspace code while untrusted). */
  notifyTrust(trusted: boolean): void {
    if (this._state !== 'ready' || !this.client) return; // a (re)starting server reads trust from initializationOptions
    const params: TrustChangedParams = { trusted };
    this.client.sendNotification(this.library.protocol.TrustChangedNotification, params).catch((e: unknown) => this.log.warn(`Could not send the trust change: ${String(e)}`));
  }

  /** Marks the server as unable to start (e.g. its bundle is missing); Restart Server tries again. */
  markFailed(reason: string): void {
    this._lastError = reason;
    this.setState('failed');
  }

  /** Restarts on request: forgets earlier crashes. */
  async restart(): Promise<void> {
    this.cancelPendingRestart();
    this.crashes.reset();
    this.setState('restarting');
    // A fresh client, as after a crash: one whose start failed cannot start again (it writes its
    // handshake to the dead process's stream), and Restart Server answered "failed".
    const old = this.client;
    this.client = undefined;
    if (old) {
      if (old.state === this.library.State.Running) {
        try {
          await old.stop(5_000);
        } catch (error) {
          this.log.warn(`Stopping the server failed: ${String(error)}`);
          this.process?.kill('SIGKILL');
        }
      }
      old.dispose(1_000).catch(() => undefined);
    }
    this.setState('starting');
    await this.ensureClient()
      .start()
      .catch((error: unknown) => this.onStartFailed(error));
  }

  private onUnexpectedClose(): void {
    if (this.disposed) return;
    // One crash can be reported twice (the connection's reader and writer both close). Counted
    // twice it scheduled two starts: the second, on a client the first had started, failed, and
    // the server was shown stopped after one crash (an end-to-end run that killed it 5 times).
    if (this.restartTimer !== undefined) return;
    const decision = this.crashes.record(Date.now());
    const code = this.process?.exitCode;
    const signal = this.process?.signalCode;
    this._lastError = `last exit: ${signal ?? (code === null || code === undefined ? 'unknown' : `code ${code}`)}`;
    if (decision.action === 'give-up') {
      this.log.error(`The Plumber server crashed ${decision.crashes} times in ${CRASH_WINDOW_MS / 60_000} minutes; not restarting it (${this._lastError}).`);
      this.setState('failed');
      return;
    }
    const delay = decision.delayMs;
    this.log.warn(`The Plumber server stopped unexpectedly (${this._lastError}); restarting in ${delay} ms.`);
    this.setState('restarting');
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.disposed) return;
      // A fresh client for the new process: the one whose server was killed may still be winding
      // down its connection, and starting it again wrote the new handshake to the dead stream
      // ("Cannot call write after a stream was destroyed"), which left the server shown stopped.
      const old = this.client;
      this.client = undefined;
      old?.dispose(1_000).catch(() => undefined);
      this.ensureClient()
        .start()
        .catch((error: unknown) => this.onStartFailed(error));
    }, delay);
  }

  private onStartFailed(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.log.error(`The Plumber server failed to start: ${message}`);
    // A start that fails while the server runs (a second start of a started client) changes nothing.
    if (this.client?.state === this.library.State.Running) return;
    // A server that died as its handshake ended (killed right after it came up), or a restart's
    // process that died at once, crashed like any other: counted, and restarted after the back-off.
    // Taken for "could not start", it left the server shown stopped after a single crash.
    if (this._state === 'ready' || this._state === 'restarting') {
      this.onUnexpectedClose();
      return;
    }
    if (this._state !== 'failed') {
      this._lastError = message;
      this.setState('failed');
    }
  }

  private cancelPendingRestart(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
  }

  private setState(state: ServerState): void {
    if (state === this._state) return;
    this._state = state;
    this.stateEmitter.fire(state);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.cancelPendingRestart();
    this.setState('stopped');
    this.stateEmitter.dispose();
    try {
      await this.client?.dispose(2_000);
    } catch {
      this.process?.kill('SIGKILL');
    }
  }
}
