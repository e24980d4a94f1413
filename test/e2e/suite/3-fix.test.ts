import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ProfileResult } from '../../../src/shared/protocol';
import { fixtureUri, openFixture, plumber, shared } from '../helpers';

describe('Applying a Plumber fix', () => {
  it("offers a quick fix at the bottleneck that raises the map's parallelism", async () => {
    const editor = await openFixture();
    const doc = editor.document;
    const line = doc
      .getText()
      .split('\n')
      .findIndex((l) => l.includes('.map(fetchRecord'));
    assert.ok(line >= 0);
    const range = new vscode.Range(line, 0, line, doc.lineAt(line).text.length);
    const actions = (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', doc.uri, range, vscode.CodeActionKind.QuickFix.value)) ?? [];
    const fix = actions.find((a) => a.title.startsWith('Apply Plumber fix') && a.edit);
    assert.ok(fix, `a Plumber fix is offered; got ${JSON.stringify(actions.map((a) => a.title))}`);
    console.log(`PLUMBER_E2E quick fix: ${fix.title}`);
    const applied = await vscode.workspace.applyEdit(fix.edit!);
    assert.ok(applied, 'the edit applies');
    const mapLine = doc.lineAt(line).text;
    const m = /parallelism:\s*(\d+)/.exec(mapLine);
    assert.ok(m, `the map keeps a parallelism literal: ${mapLine}`);
    assert.ok(Number(m[1]) > 1, `the parallelism went up from 1: ${mapLine}`);
    assert.ok(await doc.save(), 'the fixed file saves');
  });

  it('measures a higher rate when profiled again', async () => {
    const firstRate = shared().firstRate;
    assert.ok(firstRate, 'the first profile ran');
    const result = await vscode.commands.executeCommand<ProfileResult>('plumber.profilePipeline', fixtureUri(), 'records');
    const outcome = result.outcomes.find((o) => o.pipeline === 'records');
    assert.ok(outcome?.ok, `the second profile failed: ${outcome?.error}`);
    console.log(`PLUMBER_E2E second profile: ${outcome.rate!.toFixed(1)} el/s (first ${firstRate.toFixed(1)} el/s, ${(outcome.rate! / firstRate).toFixed(1)}×)`);
    assert.ok(outcome.rate! > firstRate * 1.5, `expected well above ${firstRate.toFixed(1)} el/s, got ${outcome.rate!.toFixed(1)}`);
  });

  it('applies every remaining fix with Apply All Plumber Fixes, or says there is none', async () => {
    const api = await plumber();
    const before = (await openFixture()).document.getText();
    const result = await vscode.commands.executeCommand<boolean | { refused: string; message: string }>('plumber.applyAllFixes', fixtureUri(), 'records');
    const after = vscode.workspace.textDocuments.find((d) => d.uri.toString() === fixtureUri().toString())!.getText();
    if (result === true) assert.notEqual(after, before, 'the file changed');
    else {
      assert.ok(result && typeof result === 'object', `the command returned ${String(result)}`);
      assert.equal(result.refused, 'no-fix');
      assert.equal(after, before, 'nothing changed');
      assert.ok(
        api.messages.some((m) => m.message === result.message),
        'the person was told why',
      );
    }
  });
});
