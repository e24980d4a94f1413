/** What the e2e tests share: the extension's API, the fixture, and waiting on real signals. */
import * as vscode from 'vscode';
import type { PlumberApi } from '../../src/client/extension';

export const EXTENSION_ID = 'plumber-dev.plumber';

/** The fixture workspace's pipeline file (run.mjs copies test/e2e/fixtures/workspace into out/). */
export function fixtureUri(name = 'pipeline.ts'): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error('The e2e run must open the fixture workspace folder.');
  return vscode.Uri.joinPath(folder.uri, name);
}

/** Activates the extension (if needed) and returns its API. */
export async function plumber(): Promise<PlumberApi> {
  const ext = vscode.extensions.getExtension<PlumberApi>(EXTENSION_ID);
  if (!ext) throw new Error(`${EXTENSION_ID} is not loaded: check extensionDevelopmentPath and engines.vscode.`);
  return ext.activate();
}

/** Opens the fixture in an editor. */
export async function openFixture(name = 'pipeline.ts'): Promise<vscode.TextEditor> {
  const doc = await vscode.workspace.openTextDocument(fixtureUri(name));
  return vscode.window.showTextDocument(doc);
}

/** Resolves with the first event value that satisfies `accept`, or rejects after `timeoutMs`. */
export function nextEvent<T>(event: vscode.Event<T>, accept: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`));
    }, timeoutMs);
    const sub = event((value) => {
      if (!accept(value)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(value);
    });
  });
}

/**
 * Polls `probe` until it returns a value (not undefined). For state that VS Code exposes without an
 * event (e.g. code lenses computed on request); each probe is a real request, not a sleep.
 */
export async function until<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * State one test file leaves for a later one (each file is bundled on its own, so a module-level
 * export would be a separate copy): kept on globalThis for the run.
 */
export function shared(): { firstRate?: number } {
  const key = Symbol.for('plumber.e2e.shared');
  const g = globalThis as unknown as Record<symbol, { firstRate?: number }>;
  return (g[key] ??= {});
}
