import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ProfileResult } from '../../../src/shared/protocol';
import { MAX_CRASHES } from '../../../src/client/crashPolicy';
import { fixtureUri, nextEvent, openFixture, plumber } from '../helpers';

describe('Failures a person must see', () => {
  it('shows a failed profile in a notification and on the pipeline in the tree', async () => {
    const api = await plumber();
    await openFixture('broken.ts');
    const result = await vscode.commands.executeCommand<ProfileResult>('plumber.profilePipeline', fixtureUri('broken.ts'), 'broken');
    const outcome = result.outcomes.find((o) => o.pipeline === 'broken');
    assert.ok(outcome && !outcome.ok, 'the profile fails');
    assert.match(outcome.error ?? '', /corrupt/, `the error names the cause: ${outcome.error}`);
    assert.ok(
      api.messages.some((m) => m.kind === 'error' && m.message.startsWith('Plumber could not profile broken')),
      'an error notification was shown',
    );
    const roots = await api.bottlenecks.getChildren();
    const broken = roots.find((n) => n.type === 'pipeline' && n.pipeline.name === 'broken');
    assert.ok(broken);
    assert.equal(api.bottlenecks.getTreeItem(broken).description, 'profile failed');
    const children = await api.bottlenecks.getChildren(broken);
    assert.ok(children[0]?.type === 'message' && /corrupt/.test(children[0].detail ?? ''), 'the tree shows the error under the pipeline');
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  it(`stops restarting a server that keeps crashing, says so, and Restart Server brings it back`, async () => {
    const api = await plumber();
    for (let i = 0; i < MAX_CRASHES && api.serverState() !== 'failed'; i++) {
      await api.whenServerReady(30_000);
      const next = nextEvent(api.onDidChangeServerState, (s) => s === 'restarting' || s === 'failed', 10_000, 'the crash to be noticed');
      process.kill(api.serverPid()!, 'SIGKILL');
      await next;
    }
    assert.equal(api.serverState(), 'failed', `gave up after ${MAX_CRASHES} crashes`);
    assert.match(api.statusBarText(), new RegExp(`crashed ${MAX_CRASHES}×`));
    const refusal = await vscode.commands.executeCommand<{ refused: string; message: string }>('plumber.profilePipeline', fixtureUri(), 'records');
    assert.match(refusal.message, new RegExp(`crashed ${MAX_CRASHES} times .*Restart Server`));
    assert.equal(await vscode.commands.executeCommand('plumber.restartServer'), 'ready');
    assert.ok(api.serverPid());
  });
});
