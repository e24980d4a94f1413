import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ProfileResult } from '../../../src/shared/protocol';
import type { BottleneckNode } from '../../../src/client/views/bottlenecks';
import { fixtureUri, openFixture, plumber, until } from '../helpers';

/** The 0-based line of the first line of `doc` that contains `text`. */
function lineOf(doc: vscode.TextDocument, text: string): number {
  const line = doc
    .getText()
    .split('\n')
    .findIndex((l) => l.includes(text));
  assert.ok(line >= 0, `the fixture has a line with ${text}`);
  return line;
}

async function profiled(file: string, pipeline: string): Promise<number> {
  const result = await vscode.commands.executeCommand<ProfileResult>('plumber.profilePipeline', fixtureUri(file), pipeline);
  const outcome = result?.outcomes?.find((o) => o.pipeline === pipeline);
  assert.ok(outcome?.ok, `profiling ${pipeline} in ${file} failed: ${outcome?.error ?? JSON.stringify(result)}`);
  assert.ok(outcome.rate! > 0, 'a positive rate was measured');
  return outcome.rate!;
}

/** The code lenses of `file` once one shows a rate, as line → titles. */
async function lensesByLine(file: string): Promise<Map<number, string[]>> {
  return until(
    async () => {
      const lenses = (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', fixtureUri(file), 100)) ?? [];
      if (!lenses.some((l) => /el\/s/.test(l.command?.title ?? ''))) return undefined;
      const byLine = new Map<number, string[]>();
      for (const l of lenses) byLine.set(l.range.start.line, [...(byLine.get(l.range.start.line) ?? []), l.command?.title ?? '']);
      return byLine;
    },
    30_000,
    `a code lens with a rate in ${file}`,
  );
}

describe('Pipelines written with Node streams and async generators', () => {
  let streamsRate = 0;

  it('profiles a Node-streams pipeline as written and names its map as the bottleneck on its own line', async () => {
    const doc = (await openFixture('streams.ts')).document;
    await (await plumber()).whenServerReady(60_000);
    streamsRate = await profiled('streams.ts', 'lookups');
    const byLine = await lensesByLine('streams.ts');
    const mapLine = lineOf(doc, '.map(lookup');
    const titles = [...byLine.entries()].map(([l, t]) => `${l + 1}: ${t.join(' | ')}`).join('\n');
    console.log(`PLUMBER_E2E streams lenses:\n${titles}`);
    assert.ok(
      (byLine.get(mapLine) ?? []).some((t) => /bottleneck/i.test(t)),
      `the lens on the map's line names the bottleneck:\n${titles}`,
    );
    for (const [line, t] of byLine) if (line !== mapLine) assert.ok(!t.some((x) => /bottleneck/i.test(x)), `no other line is called the bottleneck:\n${titles}`);
    assert.ok(
      (byLine.get(lineOf(doc, '.filter(')) ?? []).some((t) => /el\/s/.test(t)),
      `the filter has its own rate:\n${titles}`,
    );
  });

  it('lists the stream stages in the Bottlenecks tree with the map first', async () => {
    const api = await plumber();
    await api.bottlenecks.refresh();
    const roots = await api.bottlenecks.getChildren();
    const node = roots.find((n): n is Extract<BottleneckNode, { type: 'pipeline' }> => n.type === 'pipeline' && n.pipeline.name === 'lookups');
    assert.ok(node, `the tree lists "lookups": ${JSON.stringify(roots.map((n) => api.bottlenecks.getTreeItem(n).label))}`);
    const ops = (await api.bottlenecks.getChildren(node)).filter((n) => n.type === 'op');
    assert.ok(ops.length >= 2, 'the stages are listed');
    assert.match(String(api.bottlenecks.getTreeItem(ops[0]).label), /map/, 'the map comes first');
  });

  it('offers a fix in the stream’s own knob, concurrency, and the file keeps working with it', async () => {
    const editor = await openFixture('streams.ts');
    const doc = editor.document;
    const line = lineOf(doc, '.map(lookup');
    const range = new vscode.Range(line, 0, line, doc.lineAt(line).text.length);
    const actions = (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', doc.uri, range, vscode.CodeActionKind.QuickFix.value)) ?? [];
    const fix = actions.find((a) => a.title.startsWith('Apply Plumber fix') && a.edit);
    assert.ok(fix, `a Plumber fix is offered; got ${JSON.stringify(actions.map((a) => a.title))}`);
    console.log(`PLUMBER_E2E streams quick fix: ${fix.title}`);
    assert.match(fix.title, /concurrency/, 'the fix speaks the stream’s own knob');
    assert.ok(await vscode.workspace.applyEdit(fix.edit!), 'the edit applies');
    const mapLine = doc.lineAt(line).text;
    const m = /concurrency:\s*(\d+)/.exec(mapLine);
    assert.ok(m && Number(m[1]) > 1, `concurrency went up from 1: ${mapLine}`);
    assert.ok(!/parallelism/.test(doc.getText()), 'no plumber-data knob was written into a Node-streams chain');
    assert.ok(await doc.save(), 'the fixed file saves');
    const after = await profiled('streams.ts', 'lookups');
    console.log(`PLUMBER_E2E streams after the fix: ${after.toFixed(1)} el/s (before ${streamsRate.toFixed(1)} el/s)`);
    assert.ok(after > streamsRate, 'the fixed pipeline measured faster than before');
  });

  it('profiles an async-generator chain and names the stage that does the work', async () => {
    const doc = (await openFixture('generators.ts')).document;
    await profiled('generators.ts', 'records');
    const byLine = await lensesByLine('generators.ts');
    const titles = [...byLine.entries()].map(([l, t]) => `${l + 1}: ${t.join(' | ')}`).join('\n');
    console.log(`PLUMBER_E2E generator lenses:\n${titles}`);
    const composeLine = lineOf(doc, 'return checksum(parse(read(');
    assert.ok(
      (byLine.get(composeLine) ?? []).some((t) => /checksum/.test(t) && /bottleneck/i.test(t)),
      `the composing line's lens names checksum as the bottleneck:\n${titles}`,
    );
  });
});

describe('A tfjs-data pipeline converted to plumber-data', () => {
  let before = 0;

  it('profiles it as written and names the sequential mapAsync on its line', async () => {
    const doc = (await openFixture('tfjs.ts')).document;
    await (await plumber()).whenServerReady(60_000);
    before = await profiled('tfjs.ts', 'records');
    const byLine = await lensesByLine('tfjs.ts');
    const titles = [...byLine.entries()].map(([l, t]) => `${l + 1}: ${t.join(' | ')}`).join('\n');
    console.log(`PLUMBER_E2E tfjs lenses:\n${titles}`);
    const line = lineOf(doc, '.mapAsync(lookup)');
    assert.ok(
      (byLine.get(line) ?? []).some((t) => /mapAsync|lookup/.test(t) && /bottleneck/i.test(t)),
      `the mapAsync's lens names the bottleneck:\n${titles}`,
    );
  });

  it('previews "Convert to plumber-data", applies it, and the converted file type-checks and measures faster', async () => {
    const editor = await openFixture('tfjs.ts');
    const doc = editor.document;
    const line = lineOf(doc, '.mapAsync(lookup)');
    const range = new vscode.Range(line, 0, line, doc.lineAt(line).text.length);
    const actions = (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', doc.uri, range, vscode.CodeActionKind.QuickFix.value)) ?? [];
    const convert = actions.find((a) => a.title.startsWith('Convert to plumber-data') && a.edit);
    assert.ok(convert, `"Convert to plumber-data" is offered; got ${JSON.stringify(actions.map((a) => a.title))}`);
    console.log(`PLUMBER_E2E tfjs convert: ${convert.title}`);
    assert.match(convert.title, /verified/, 'only a conversion verification measured is offered');
    // The edit asks for confirmation: VS Code opens the refactor preview, and the person applies it there.
    const applying = vscode.workspace.applyEdit(convert.edit!);
    await until(
      async () => {
        try {
          await vscode.commands.executeCommand('refactorPreview.apply');
          return true;
        } catch {
          return undefined;
        }
      },
      20_000,
      'the refactor preview to open',
    );
    assert.ok(await applying, 'the previewed edit applies');
    const text = doc.getText();
    assert.match(text, /from ['"]plumber-data['"]/, 'the file imports plumber-data');
    assert.match(text, /toTfDataset\(/, 'consumers still receive a tfjs Dataset');
    assert.match(text, /export const records\b/, 'the export keeps its name');
    assert.ok(await doc.save(), 'the converted file saves');
    const root = path.resolve(doc.uri.fsPath, '../../../..');
    const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
    // Type-checking takes seconds: run it beside the extension host, not on its thread.
    await promisify(execFile)(process.execPath, [tsc, '--noEmit', '--strict', '--skipLibCheck', '--esModuleInterop', '--module', 'commonjs', '--moduleResolution', 'node', '--target', 'es2022', doc.uri.fsPath], {
      cwd: root,
    });
    const after = await profiled('tfjs.ts', 'records');
    console.log(`PLUMBER_E2E tfjs converted: ${after.toFixed(1)} el/s (as written ${before.toFixed(1)} el/s)`);
    assert.ok(after > before, 'the converted pipeline measured faster than as written');
  });
});
