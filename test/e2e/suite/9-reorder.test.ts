import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ProfileResult } from '../../../src/shared/protocol';
import { fixtureUri, openFixture, plumber } from '../helpers';

/** The 0-based line of the first line of `doc` that contains `text`. */
function lineOf(doc: vscode.TextDocument, text: string): number {
  const line = doc
    .getText()
    .split('\n')
    .findIndex((l) => l.includes(text));
  assert.ok(line >= 0, `the fixture has a line with ${text}`);
  return line;
}

describe('Reordering a pipeline', () => {
  it('offers moving the filter before the map it does not depend on, previews the edit and applies it', async () => {
    const doc = (await openFixture('reorder.ts')).document;
    await (await plumber()).whenServerReady(60_000);
    const result = await vscode.commands.executeCommand<ProfileResult>('plumber.profilePipeline', fixtureUri('reorder.ts'), 'labelled');
    const outcome = result?.outcomes?.find((o) => o.pipeline === 'labelled');
    assert.ok(outcome?.ok, `profiling failed: ${outcome?.error ?? JSON.stringify(result)}`);
    const line = lineOf(doc, '.filter(isLabelled');
    const range = new vscode.Range(line, 0, line, doc.lineAt(line).text.length);
    const actions = (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', doc.uri, range, vscode.CodeActionKind.QuickFix.value)) ?? [];
    const fix = actions.find((a) => a.title.startsWith('Apply Plumber fix: move filter(isLabelled) before map(decode)') && a.edit);
    if (!fix) {
      // What the plan said instead, for the failure: the pipeline's lens and the filter's hover.
      const lenses = (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri, 100)) ?? [];
      const hovers = (await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', doc.uri, new vscode.Position(line, doc.lineAt(line).text.indexOf('filter') + 1))) ?? [];
      const hover = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : 'value' in c ? c.value : ''))).join('\n');
      assert.fail(`the reorder is offered; got ${JSON.stringify(actions.map((a) => a.title))}\nlenses: ${lenses.map((l) => l.command?.title).join(' | ')}\nhover: ${hover}`);
    }
    // The preview: the edit's text, before anything changes in the file.
    const edits = fix.edit!.get(doc.uri);
    assert.ok(edits.length > 0, 'the fix carries its edit');
    assert.ok(
      edits.some((e) => e.newText.includes('.filter(isLabelled)')),
      `the edit writes the filter's call elsewhere: ${JSON.stringify(edits.map((e) => e.newText))}`,
    );
    assert.ok(lineOf(doc, '.map(decode)') < lineOf(doc, '.filter(isLabelled'), 'nothing changed before applying');
    console.log(`PLUMBER_E2E reorder quick fix: ${fix.title}`);
    assert.ok(await vscode.workspace.applyEdit(fix.edit!), 'the edit applies');
    assert.ok(lineOf(doc, '.filter(isLabelled') < lineOf(doc, '.map(decode)'), `the filter now runs before the decode:\n${doc.getText()}`);
    assert.ok(lineOf(doc, '.map(record)') < lineOf(doc, '.filter(isLabelled'), 'and after the record it reads');
    assert.ok(await doc.save(), 'the reordered file saves');
  });
});
