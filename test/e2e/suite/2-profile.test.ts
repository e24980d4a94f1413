import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ProfileResult } from '../../../src/shared/protocol';
import type { BottleneckNode } from '../../../src/client/views/bottlenecks';
import { fixtureUri, openFixture, plumber, shared, until } from '../helpers';

describe('Profiling a pipeline', () => {
  before(async () => {
    await openFixture();
    await (await plumber()).whenServerReady(60_000);
  });

  it('runs the real runner and returns a measured rate', async () => {
    const result = await vscode.commands.executeCommand<ProfileResult>('plumber.profilePipeline', fixtureUri(), 'records');
    assert.ok(result && 'outcomes' in result, `the command returned ${JSON.stringify(result)}`);
    const outcome = result.outcomes.find((o) => o.pipeline === 'records');
    assert.ok(outcome?.ok, `the profile failed: ${outcome?.error}`);
    assert.ok(outcome.rate! > 0, 'a positive rate was measured');
    shared().firstRate = outcome.rate;
    console.log(`PLUMBER_E2E first profile: ${outcome.rate!.toFixed(1)} el/s, predicted ${outcome.predictedRate?.toFixed(1)} el/s`);
  });

  it('shows code lenses with measured rates on the pipeline', async () => {
    const titles = await until(
      async () => {
        const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', fixtureUri(), 100);
        const t = (lenses ?? []).map((l) => l.command?.title ?? '');
        return t.some((x) => /el\/s/.test(x)) ? t : undefined;
      },
      20_000,
      'a code lens with a rate',
    );
    console.log(`PLUMBER_E2E lenses: ${titles.join(' | ')}`);
    assert.ok(
      titles.some((t) => /bottleneck/i.test(t)),
      `one lens names the bottleneck: ${titles.join(' | ')}`,
    );
    assert.ok(
      titles.some((t) => /Apply all Plumber fixes/i.test(t)),
      `the pipeline lens offers the fixes: ${titles.join(' | ')}`,
    );
  });

  it('lists the pipeline in the Bottlenecks tree with the bottleneck operator first', async () => {
    const api = await plumber();
    await api.bottlenecks.refresh();
    const roots = await api.bottlenecks.getChildren();
    const node = roots.find((n): n is Extract<BottleneckNode, { type: 'pipeline' }> => n.type === 'pipeline' && n.pipeline.name === 'records');
    assert.ok(node, `the tree lists "records": ${JSON.stringify(roots.map((n) => api.bottlenecks.getTreeItem(n).label))}`);
    const pipelineItem = api.bottlenecks.getTreeItem(node);
    assert.match(String(pipelineItem.description), /^[\d.,]+k? batches\/s/, 'the pipeline shows its rate in what it counts');
    const ops = (await api.bottlenecks.getChildren(node)).filter((n) => n.type === 'op');
    assert.ok(ops.length >= 2, 'the operators are listed');
    const first = api.bottlenecks.getTreeItem(ops[0]);
    assert.match(String(first.label), /map/, `the slow map comes first, got ${first.label}`);
    assert.equal((first.iconPath as vscode.ThemeIcon).id, 'flame', 'it carries the bottleneck icon');
    assert.match(String(first.description), /el\/s = [\d.,]+k? batches\/s · bound [\d.,]+k? · \d+% CPU/, `its own rate, its rate and bound in the pipeline's unit and its CPU share are shown: ${first.description}`);
    assert.equal(first.contextValue, 'plumber.op.fixable', 'it offers the inline Apply fix action');
    assert.equal(first.command?.command, 'plumber.revealRange', 'clicking it reveals the line');
  });

  it('shows the last result in the status bar', async () => {
    const api = await plumber();
    assert.match(api.statusBarText(), /records [\d.,]+k? batches\/s/);
  });

  it('opens the report for the pipeline', async () => {
    const api = await plumber();
    await vscode.commands.executeCommand('plumber.showReport', fixtureUri(), 'records');
    const shown = api.reportPipeline();
    assert.equal(shown?.name, 'records');
    assert.ok(shown.rate! > 0);
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });
});
