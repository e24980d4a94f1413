import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ProfileResult } from '../../../src/shared/protocol';
import type { BottleneckNode } from '../../../src/client/views/bottlenecks';
import { fixtureUri, nextEvent, openFixture, plumber } from '../helpers';

type OpNode = Extract<BottleneckNode, { type: 'op' }>;

async function viaTreeOps(): Promise<OpNode[]> {
  const api = await plumber();
  await api.bottlenecks.refresh();
  const pipeline = (await api.bottlenecks.getChildren()).find((n) => n.type === 'pipeline' && n.pipeline.name === 'viaTree');
  assert.ok(pipeline, 'the tree lists viaTree');
  return (await api.bottlenecks.getChildren(pipeline)).filter((n): n is OpNode => n.type === 'op');
}

describe('Actions in the Bottlenecks tree', () => {
  it('profiles every pipeline of a file with Profile All Pipelines in File', async () => {
    await openFixture('tree.ts');
    const result = await vscode.commands.executeCommand<ProfileResult>('plumber.profileFile', fixtureUri('tree.ts'));
    assert.deepEqual(
      result.outcomes.map((o) => [o.pipeline, o.ok]),
      [['viaTree', true]],
    );
  });

  it("applies an operator's fix from its inline action, then refuses stale fixes until profiled again", async () => {
    const api = await plumber();
    const doc = (await openFixture('tree.ts')).document;
    const before = doc.getText();
    const fixable = (await viaTreeOps()).find((n) => api.bottlenecks.getTreeItem(n).contextValue === 'plumber.op.fixable');
    assert.ok(fixable, 'an operator offers the inline Apply fix action');
    const stale = nextEvent(api.onDidUpdateProfiles, (p) => p.uri === doc.uri.toString(), 10_000, 'the server to mark the profile stale');
    assert.equal(await vscode.commands.executeCommand('plumber.applyFix', fixable), true);
    assert.notEqual(doc.getText(), before, 'the file changed');
    console.log(`PLUMBER_E2E tree fix: ${fixable.op.fixTitle}`);
    await stale;
    const after = await viaTreeOps();
    assert.ok(
      after.every((n) => api.bottlenecks.getTreeItem(n).contextValue === 'plumber.op'),
      'no inline fix while the numbers are stale',
    );
    const refusal = await vscode.commands.executeCommand<{ refused: string; message: string }>('plumber.applyFix', after[0]);
    assert.equal(refusal.refused, 'stale');
    assert.match(refusal.message, /profile it again/);
    await vscode.commands.executeCommand('workbench.action.files.revert');
  });
});
