import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ProfileResult } from '../../../src/shared/protocol';
import { fixtureUri, nextEvent, openFixture, plumber, until } from '../helpers';

const FILE = 'glance.ts';

/** The resolved lens titles of glance.ts. */
async function lensTitles(): Promise<string[]> {
  const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', fixtureUri(FILE), 100);
  return (lenses ?? []).map((l) => l.command?.title ?? '');
}

async function quickFixesAt(doc: vscode.TextDocument, line: number): Promise<string[]> {
  const range = new vscode.Range(line, 0, line, doc.lineAt(line).text.length);
  const actions = (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', doc.uri, range, vscode.CodeActionKind.QuickFix.value)) ?? [];
  return actions.map((a) => a.title);
}

const plumberConfig = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('plumber');

describe('The editor tells the truth at a glance', () => {
  let doc: vscode.TextDocument;
  let profiledText: string;
  let mapLine: number;

  before(async () => {
    // The model's plan alone (no verification runs): the flow must not depend on how busy the machine is.
    await plumberConfig().update('plan.verify', false, vscode.ConfigurationTarget.Workspace);
    doc = (await openFixture(FILE)).document;
    profiledText = doc.getText();
    mapLine = profiledText.split('\n').findIndex((l) => l.includes('.map(fetchRecord'));
    await (await plumber()).whenServerReady(60_000);
    const result = await vscode.commands.executeCommand<ProfileResult>('plumber.profilePipeline', fixtureUri(FILE), 'glance');
    assert.ok(result.outcomes[0]?.ok, `the profile failed: ${result.outcomes[0]?.error}`);
  });

  after(async () => {
    await plumberConfig().update('plan.verify', undefined, vscode.ConfigurationTarget.Workspace);
    await plumberConfig().update('codeLens.heatBars', undefined, vscode.ConfigurationTarget.Workspace);
  });

  it("shows every rate in the pipeline's unit, the op's own count beside it, under labels as written", async () => {
    const titles = await until(
      async () => {
        const t = await lensTitles();
        return t.some((x) => x.startsWith('Apply all Plumber fixes')) ? t : undefined;
      },
      20_000,
      'the lenses of the profiled pipeline',
    );
    console.log(`PLUMBER_E2E glance lenses: ${titles.join(' | ')}`);
    assert.ok(
      titles.some((t) => /^Pipeline [\d.,]+k? batches\/s · bound /.test(t)),
      titles.join(' | '),
    );
    assert.ok(
      titles.some((t) => /^[\d.,]+k? el\/s = [\d.,]+k? batches\/s · bound [\d.,]+k? · \d+% CPU · bottleneck/.test(t)),
      titles.join(' | '),
    );
    assert.ok(
      titles.some((t) => t.startsWith('range(0, 1_000_000): ')),
      `the source on the head line is labelled as written: ${titles.join(' | ')}`,
    );
    assert.ok(!titles.some((t) => /est\. 1\.0×/.test(t)), 'no offer without a predicted gain');
    const api = await plumber();
    await api.bottlenecks.refresh();
    const pipeline = (await api.bottlenecks.getChildren()).find((n) => n.type === 'pipeline' && n.pipeline.name === 'glance');
    assert.ok(pipeline && pipeline.type === 'pipeline');
    const ops = await api.bottlenecks.getChildren(pipeline);
    const first = ops[0]!;
    assert.ok(first.type === 'op');
    assert.equal(first.op.label, 'map(fetchRecord, { parallelism: 1 })', 'the bottleneck is first, labelled as written');
    assert.match(String(api.bottlenecks.getTreeItem(first).description), /el\/s = [\d.,]+k? batches\/s · bound /);
  });

  it("shows the model's predicted rate for other values of a knob in its hover, marked as predicted", async () => {
    const character = doc.lineAt(mapLine).text.indexOf('parallelism') + 2;
    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', doc.uri, new vscode.Position(mapLine, character));
    const text = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
    console.log(`PLUMBER_E2E what-if: ${text.split('\n').find((l) => l.startsWith('- parallelism')) ?? '(none)'}`);
    assert.match(text, /\*\*What if\*\* \(predicted by the model from this profile, not measured\)/);
    assert.match(text, /- parallelism \*\*1\*\* \(now\) → [\d.,]+k? batches\/s · 2 → /);
  });

  it('says "stale — profile again" everywhere right after Apply All, offers no fix, and brings it all back at the profiled text', async () => {
    const api = await plumber();
    const staleNow = nextEvent(api.onDidUpdateProfiles, (p) => p.uri === doc.uri.toString() && p.pipelines.includes('glance'), 20_000, 'the server to mark the profile stale');
    assert.equal(await vscode.commands.executeCommand('plumber.applyAllFixes', fixtureUri(FILE), 'glance'), true);
    assert.notEqual(doc.getText(), profiledText, 'the fixes changed the file');
    await staleNow;
    const stale = await lensTitles();
    console.log(`PLUMBER_E2E lenses after Apply All: ${stale.join(' | ')}`);
    assert.ok(stale.includes('Pipeline: stale — profile again'), stale.join(' | '));
    assert.ok(!stale.some((t) => /el\/s|batches\/s|Apply all/.test(t)), `no old number and no offer: ${stale.join(' | ')}`);
    assert.ok(stale.filter((t) => t.endsWith('stale — profile again')).length >= 3, 'every operator lens says so');
    assert.deepEqual(
      (await quickFixesAt(doc, mapLine)).filter((t) => t.startsWith('Apply')),
      [],
      'the fix offers are gone',
    );
    const tree = api.bottlenecks;
    const pipeline = (await tree.getChildren()).find((n) => n.type === 'pipeline' && n.pipeline.name === 'glance')!;
    assert.equal(tree.getTreeItem(pipeline).description, 'stale — profile again');
    assert.match(api.statusBarText(), /stale — profile again/);

    // Back to the text that was profiled (what an undo does): the numbers and offers return.
    const fresh = nextEvent(api.onDidUpdateProfiles, (p) => p.uri === doc.uri.toString() && p.pipelines.includes('glance'), 20_000, 'the server to mark the profile fresh again');
    const all = new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length));
    const restore = new vscode.WorkspaceEdit();
    restore.replace(doc.uri, all, profiledText);
    assert.ok(await vscode.workspace.applyEdit(restore));
    await fresh;
    const back = await lensTitles();
    assert.ok(back.some((t) => t.startsWith('Apply all Plumber fixes')) && back.some((t) => /^Pipeline [\d.,]+k? batches\/s/.test(t)), back.join(' | '));
  });

  it('draws heat bars instead of operator lenses when asked, hottest on the bottleneck', async () => {
    const api = await plumber();
    await plumberConfig().update('codeLens.heatBars', true, vscode.ConfigurationTarget.Workspace);
    const bars = await until(
      () => {
        const b = api.heatBars(doc.uri.toString());
        return b.length > 0 ? b : undefined;
      },
      20_000,
      'heat bars in the editor',
    );
    console.log(`PLUMBER_E2E heat bars: ${bars.map((b) => `line ${b.line + 1}: ${Math.round(b.share * 100)}%`).join(', ')}`);
    const hottest = [...bars].sort((a, b) => b.share - a.share)[0]!;
    assert.equal(hottest.line, mapLine, 'the hottest line is the bottleneck map');
    const titles = await until(
      async () => {
        const t = await lensTitles();
        return t.some((x) => /· bound /.test(x) && !x.startsWith('Pipeline')) ? undefined : t;
      },
      20_000,
      'the operator lenses to give way to the heat bars',
    );
    assert.ok(
      titles.some((t) => t.startsWith('Pipeline ')),
      'the pipeline lens stays',
    );
  });
});
