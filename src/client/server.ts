/**
 * The language server connection: starts the server in the background, restarts it with back-off
 * after a crash, and gives up (saying so) after a few crashes in a short time.
 */
import * as vscode from 'vscode';
import { fork, type ChildProcess } from 'node:child_process';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  State,
  type CancellationToken,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { CRASH_WINDOW_MS, CrashPolicy, MAX_CRASHES } from './crashPolicy';
import { TrustChangedNotification, type TrustChangedParams } from '../shared/protocol';

export type ServerState = 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped';

export { MAX_CRASHES };

/** Thrown by `request` while the server cannot answer; its message is meant for a person. */
export class ServerNotReadyError extends Error {}

export class PlumberServer implements vscode.Disposable {
  private readonly client: LanguageClient;
  private process: ChildProcess | undefined;
  private readonly crashes = new CrashPolicy();
  private restartTimer: NodeJS.Timeout | undefined;
  private disposed = false;
  private _state: ServerState = 'stopped';
  private _lastError: string | undefined;
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  /** Fires on every state change (starting → ready, ready → restarting, …). */
  readonly onDidChangeState = this.stateEmitter.event;

  constructor(
    serverModule: string,
    private readonly log: vscode.LogOutputChannel,
  ) {
    // A function as server options lets us own the child process: we know its pid (the e2e
    // suite kills it to check the restart) and we pass ELECTRON_RUN_AS_NODE for desktop VS Code,
    // whose execPath is Electron rather than Node.
    const serverOptions: ServerOptions = async () => {
      const child = fork(serverModule, ['--stdio'], {
        silent: true,
        env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
        execArgv: [],
      });
      this.process = child;
      return child;
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'typescript' },
        { scheme: 'file', language: 'javascript' },
      ],
      synchronize: { configurationSection: 'plumber' },
      outputChannel: log,
      // Evaluated on each (re)start, so a restarted server learns the current trust state.
      initializationOptions: () => ({
        trusted: vscode.workspace.isTrusted,
        settings: vscode.workspace.getConfiguration().get('plumber'),
      }),
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          this.onUnexpectedClose();
          // We restart ourselves, with back-off; the library's own message would be a second one.
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    this.client = new LanguageClient('plumber', 'Plumber', serverOptions, clientOptions);
    this.client.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        this._lastError = undefined;
        this.setState('ready');
      }
    });
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
  get languageClient(): LanguageClient {
    return this.client;
  }

  /** Starts the server without waiting for it: activation must stay cheap. */
  startInBackground(): void {
    this.setState('starting');
    this.client.start().catch((error: unknown) => this.onStartFailed(error));
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

  /** Sends a custom request, or throws ServerNotReadyError with a sentence when the server is down. */
  async request<P, R>(method: string, params: P, token?: CancellationToken): Promise<R> {
    if (this._state !== 'ready') throw new ServerNotReadyError(this.notReadyMessage());
    return token ? this.client.sendRequest<R>(method, params, token) : this.client.sendRequest<R>(method, params);
  }

  /** Tells the server the workspace's trust changed (it runs no workspace code while untrusted). */
  notifyTrust(trusted: boolean): void {
    if (this._state !== 'ready') return; // a (re)starting server reads trust from initializationOptions
    const params: TrustChangedParams = { trusted };
    this.client.sendNotification(TrustChangedNotification, params).catch((e: unknown) => this.log.warn(`Could not send the trust change: ${String(e)}`));
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
    if (this.client.state === State.Running) {
      try {
        await this.client.stop(5_000);
      } catch (error) {
        this.log.warn(`Stopping the server failed: ${String(error)}`);
        this.process?.kill('SIGKILL');
      }
    }
    this.setState('starting');
    await this.client.start().catch((error: unknown) => this.onStartFailed(error));
  }

  private onUnexpectedClose(): void {
    if (this.disposed) return;
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
      this.client.start().catch((error: unknown) => this.onStartFailed(error));
    }, delay);
  }

  private onStartFailed(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.log.error(`The Plumber server failed to start: ${message}`);
    if (this._state !== 'restarting' && this._state !== 'failed') {
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
      await this.client.dispose(2_000);
    } catch {
      this.process?.kill('SIGKILL');
    }
  }
}
