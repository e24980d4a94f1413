import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { PipelineSummary } from '../../../src/shared/protocol';
import { fixtureUri, nextEvent, plumber } from '../helpers';

describe('Server crashes', () => {
  it('restarts a killed server, and commands say it is not ready meanwhile', async () => {
    const api = await plumber();
    await api.whenServerReady();
    const pid = api.serverPid();
    assert.ok(pid);
    const restarting = nextEvent(api.onDidChangeServerState, (s) => s === 'restarting', 10_000, 'the restarting state');
    process.kill(pid, 'SIGKILL');
    await restarting;
    assert.match(api.statusBarText(), /sync~spin/, 'the status bar shows the restart');
    const refusal = await vscode.commands.executeCommand<{ refused: string; message: string }>('plumber.profilePipeline', fixtureUri(), 'records');
    assert.equal(refusal.refused, 'not-ready');
    assert.match(refusal.message, /restarting/);
    await nextEvent(api.onDidChangeServerState, (s) => s === 'ready', 30_000, 'the server to come back');
    const newPid = api.serverPid();
    assert.ok(newPid && newPid !== pid, 'a new server process runs');
    await api.bottlenecks.refresh();
    const roots = await api.bottlenecks.getChildren();
    const names = roots.map((n) => (n.type === 'pipeline' ? (n.pipeline as PipelineSummary).name : ''));
    assert.ok(names.includes('records'), `the new server answers: ${names.join(', ')}`);
  });
});
