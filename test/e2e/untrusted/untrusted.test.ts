import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { UNTRUSTED_MESSAGE } from '../../../src/client/commands';
import { fixtureUri, openFixture, plumber } from '../helpers';

describe('An untrusted workspace', () => {
  it('opens in Restricted Mode', () => {
    assert.equal(vscode.workspace.isTrusted, false, 'code-server ran with Workspace Trust on and the folder was never trusted');
  });

  it('still activates Plumber and starts its server for static analysis', async () => {
    await openFixture();
    const api = await plumber();
    await api.whenServerReady(60_000);
    assert.equal(api.serverState(), 'ready');
  });

  it('refuses to profile, with a message saying why and what to do', async () => {
    const api = await plumber();
    const result = await vscode.commands.executeCommand<{ refused: string; message: string }>('plumber.profilePipeline', fixtureUri(), 'records');
    assert.equal(result.refused, 'untrusted');
    assert.equal(result.message, UNTRUSTED_MESSAGE);
    assert.ok(
      api.messages.some((m) => m.kind === 'warning' && m.message === UNTRUSTED_MESSAGE),
      'the warning was shown',
    );
    const whole = await vscode.commands.executeCommand<{ refused: string }>('plumber.profileFile', fixtureUri());
    assert.equal(whole.refused, 'untrusted');
  });

  it('is refused by the server too, should a request reach it directly', async () => {
    const api = await plumber();
    await assert.rejects(api.request('plumber/profile', { uri: fixtureUri().toString(), pipeline: 'records' }), /untrusted/);
  });

  it('lists the pipeline from static analysis, with no measured rate since nothing ran', async () => {
    const api = await plumber();
    await api.bottlenecks.refresh();
    const roots = await api.bottlenecks.getChildren();
    const records = roots.find((n) => n.type === 'pipeline' && n.pipeline.name === 'records');
    assert.ok(records && records.type === 'pipeline', 'the server found the pipeline without running it');
    assert.equal(records.pipeline.rate, undefined);
    assert.equal(api.bottlenecks.getTreeItem(records).description, 'not profiled');
  });
});
