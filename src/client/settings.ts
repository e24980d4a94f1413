/** Reads `plumber.*` through the shared normaliser and warns once about wrong-typed values. */
import * as vscode from 'vscode';
import { normalizeSettings, type Settings } from '../shared/settings';

/** The current settings; keys of the wrong type fall back to their defaults with a warning. */
export function readSettings(log: vscode.LogOutputChannel, warned: Set<string>, warn: (message: string, ...actions: string[]) => Thenable<string | undefined>): Settings {
  const { settings, invalid } = normalizeSettings(vscode.workspace.getConfiguration().get('plumber'));
  const fresh = invalid.filter((k) => !warned.has(k));
  if (fresh.length > 0) {
    fresh.forEach((k) => warned.add(k));
    const message = `Plumber ignored ${fresh.join(', ')}: the value has the wrong type or is out of range, so the default is used. Fix it in Settings.`;
    log.warn(message);
    void warn(message, 'Open Settings').then((a) => a && vscode.commands.executeCommand('workbench.action.openSettings', fresh[0]));
  }
  return settings;
}
