import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import { DEFAULT_SETTINGS } from '../../../src/shared/settings';
import { EXTENSION_ID, fixtureUri, nextEvent, plumber, until } from '../helpers';

describe('Commands and settings', () => {
  it('registers every command package.json contributes', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const pkg = JSON.parse(readFileSync(vscode.Uri.joinPath(ext.extensionUri, 'package.json').fsPath, 'utf8')) as { contributes: { commands: Array<{ command: string; category: string }> } };
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const c of pkg.contributes.commands) {
      assert.ok(registered.has(c.command), `${c.command} is registered`);
      assert.equal(c.category, 'Plumber');
    }
  });

  it('clears the profile: the tree loses its rates', async () => {
    const api = await plumber();
    const result = await vscode.commands.executeCommand('plumber.clearProfile', fixtureUri());
    assert.equal(result, true);
    const roots = await api.bottlenecks.getChildren();
    const records = roots.find((n) => n.type === 'pipeline' && n.pipeline.name === 'records');
    assert.ok(records && records.type === 'pipeline');
    assert.equal(records.pipeline.rate, undefined, 'no rate after Clear Profile');
    assert.equal(api.statusBarText(), '$(pulse) Plumber');
  });

  it('falls back to the default for a setting of the wrong type, and warns once', async () => {
    const api = await plumber();
    const config = vscode.workspace.getConfiguration('plumber');
    const changed = nextEvent(vscode.workspace.onDidChangeConfiguration, (e) => e.affectsConfiguration('plumber.profile.seconds'), 10_000, 'the configuration change');
    await config.update('profile.seconds', 'soon', vscode.ConfigurationTarget.Workspace);
    await changed;
    try {
      const warning = await until(() => api.messages.find((m) => m.kind === 'warning' && m.message.includes('plumber.profile.seconds')), 5_000, 'the settings warning');
      assert.match(warning.message, /wrong type or is out of range, so the default is used/);
      assert.equal(api.settings().profile.seconds, DEFAULT_SETTINGS.profile.seconds);
    } finally {
      await config.update('profile.seconds', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });
});
