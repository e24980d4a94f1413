import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { CodeAction, TextDocumentEdit, TextEdit, WorkspaceEdit } from 'vscode-languageserver';
import { codeActions } from '../../../src/server/features/codeActions';
import { codeLenses, resolveCodeLens, type LensData } from '../../../src/server/features/codeLens';
import { diagnostics } from '../../../src/server/features/diagnostics';
import { fixAll } from '../../../src/server/features/fixAll';
import { hover } from '../../../src/server/features/hover';
import { inlayHints } from '../../../src/server/features/inlayHints';
import { pipelines } from '../../../src/server/features/pipelines';
import { profilePipelines, UNTRUSTED } from '../../../src/server/features/profile';
import { report } from '../../../src/server/features/report';
import { Session } from '../../../src/server/session';
import { DEFAULT_SETTINGS } from '../../../src/shared/settings';
import { FIXTURES } from './helpers';
import { handMade } from './handmade';

const FILE = path.join(FIXTURES, 'project', 'pipelines.ts');
const URI = pathToFileURL(FILE).href;
const TEXT = readFileSync(FILE, 'utf8');
const ALL_LINES = { start: { line: 0, character: 0 }, end: { line: 999, character: 0 } };

/** A session with the fixture open at version 1 and `images` profiled by hand. */
function profiled(): Session {
  const s = new Session(() => undefined);
  s.update(URI, 1, TEXT);
  const images = s.views(URI).find((v) => v.graph.name === 'images')!.graph;
  const hand = handMade(images, 'map(decode)', (id) => [
    { kind: 'parallelism', opId: id('map(decode)'), from: 1, to: 2, reason: 'two cores are idle' },
    { kind: 'prefetch', opId: id('batch(8)'), existing: false, size: 4, reason: 'the consumer waits' },
  ]);
  s.store.setProfile(URI, 'images', { ...hand, text: TEXT, at: '2026-11-29T18:00:00.000Z' }, 'defaults');
  return s;
}

function applyEdit(text: string, edit: WorkspaceEdit): string {
  const change = edit.documentChanges![0] as TextDocumentEdit;
  return TextDocument.applyEdits(TextDocument.create(URI, 'typescript', 1, text), change.edits as TextEdit[]);
}

const titles = (actions: CodeAction[]): string[] => actions.map((a) => a.title);

describe('server features', () => {
  it('shows the pipeline rate, bound, Profile and Apply all (est. 6.8×, not verified) on the head of a profiled pipeline', () => {
    const s = profiled();
    const views = s.views(URI);
    const lenses = codeLenses(views, FILE, DEFAULT_SETTINGS.codeLens).map((l) => resolveCodeLens(l, views));
    const head = lenses.filter((l) => (l.data as LensData).target !== 'op' && l.range.start.line === 11).map((l) => l.command?.title);
    assert.deepEqual(head, ['Pipeline 310 batches/s · bound 2.1k', 'Profile again', 'Apply all Plumber fixes (est. 6.8×, not verified)']);
    const applyAll = lenses.find((l) => l.command?.command === 'plumber.applyAllFixes')!;
    assert.deepEqual(applyAll.command!.arguments, [URI, 'images']);
  });

  it('shows rate, CPU share and the bottleneck reason on the operator line', () => {
    const s = profiled();
    const views = s.views(URI);
    const op = codeLenses(views, FILE, DEFAULT_SETTINGS.codeLens)
      .map((l) => resolveCodeLens(l, views))
      .find((l) => l.range.start.line === 12)!;
    assert.equal(op.command!.title, '1.2k batches/s · bound 2.1k · 61% CPU · bottleneck: main thread');
  });

  it('names a source that shares the pipeline head line, so its numbers are not read as the pipeline rate', () => {
    const s = profiled();
    const views = s.views(URI);
    const lenses = codeLenses(views, FILE, DEFAULT_SETTINGS.codeLens).map((l) => resolveCodeLens(l, views));
    const source = lenses.find((l) => (l.data as LensData).target === 'op' && l.range.start.line === 11);
    assert.ok(source, 'the source operator on the head line has a lens');
    assert.match(source.command!.title, /^files\('data\/\*\.bin'\): [\d.]+k? batches\/s · bound /);
    const below = lenses.find((l) => l.range.start.line === 12)!;
    assert.doesNotMatch(below.command!.title, /^map/);
  });

  it('offers only "Profile" on pipelines that were never profiled, and nothing when lenses are off', () => {
    const s = profiled();
    const views = s.views(URI).filter((v) => v.graph.name === 'numbers');
    const lenses = codeLenses(views, FILE, DEFAULT_SETTINGS.codeLens).map((l) => resolveCodeLens(l, views));
    assert.deepEqual(
      lenses.map((l) => l.command!.title),
      ['Profile'],
    );
    assert.deepEqual(codeLenses(s.views(URI), FILE, { ...DEFAULT_SETTINGS.codeLens, enabled: false }), []);
  });

  it('applies "Apply Plumber fix: set parallelism of map(decode) to 2" as a versioned edit', () => {
    const s = profiled();
    const actions = codeActions(s.views(URI), FILE, { start: { line: 12, character: 3 }, end: { line: 12, character: 3 } }, s.actionDeps(true));
    assert.deepEqual(titles(actions), ['Apply Plumber fix: set parallelism of map(decode) to 2', 'Apply all Plumber fixes (est. 6.8×, not verified)']);
    const fix = actions[0]!;
    assert.equal(fix.isPreferred, true);
    assert.equal((fix.edit!.documentChanges![0] as TextDocumentEdit).textDocument.version, 1);
    assert.match(applyEdit(TEXT, fix.edit!), /\.map\(decode, \{ parallelism: 2 \}\) \/\/ decoder/);
  });

  it('annotates the multi-edit "Apply all" so the client can preview it', () => {
    const s = profiled();
    const all = codeActions(s.views(URI), FILE, { start: { line: 12, character: 0 }, end: { line: 12, character: 0 } }, s.actionDeps(true))[1]!;
    const edits = (all.edit!.documentChanges![0] as TextDocumentEdit).edits;
    assert.equal(edits.length, 2);
    assert.ok(edits.every((e) => 'annotationId' in e));
    assert.equal(Object.values(all.edit!.changeAnnotations!)[0]!.label, 'Apply all Plumber fixes (est. 6.8×, not verified)');
    const text = applyEdit(TEXT, all.edit!);
    assert.match(text, /parallelism: 2/);
    assert.match(text, /\.batch\(8\)\n {2}\.prefetch\(4\); \/\/ batches/);
  });

  it('offers no fix once the file changed since the profile, and says "stale — profile again" instead of the numbers', () => {
    const s = profiled();
    s.update(URI, 2, TEXT.replace('// decoder', '// decoder, edited'));
    const range = { start: { line: 12, character: 0 }, end: { line: 12, character: 0 } };
    assert.deepEqual(codeActions(s.views(URI), FILE, range, s.actionDeps(true)), []);
    assert.deepEqual(codeActions(s.views(URI), FILE, range, s.actionDeps(false)), []);
    const views = s.views(URI);
    const lenses = codeLenses(views, FILE, DEFAULT_SETTINGS.codeLens).map((l) => resolveCodeLens(l, views));
    assert.ok(lenses.some((l) => l.command!.title === 'Pipeline: stale — profile again'));
    assert.equal(
      lenses.some((l) => l.command!.command === 'plumber.applyAllFixes'),
      false,
    );
  });

  it('keeps the old numbers on the right operators after lines move (in the hover, marked stale), by kind and position in the chain', () => {
    const s = profiled();
    s.update(URI, 2, `// a new first line\n${TEXT}`);
    const views = s.views(URI);
    const op = codeLenses(views, FILE, DEFAULT_SETTINGS.codeLens)
      .map((l) => resolveCodeLens(l, views))
      .find((l) => l.range.start.line === 13)!;
    assert.equal(op.command!.title, 'stale — profile again');
    const text = (hover(views, FILE, { line: 13, character: 4 })!.contents as { value: string }).value;
    assert.match(text, /\*\*Stale — profile again\*\*: measured before your last edit/);
    assert.match(text, /1\.2k batches\/s · bound 2\.1k · 61% of CPU/);
  });

  it('disables a fix that would overwrite a computed knob, saying so', () => {
    const s = new Session(() => undefined);
    s.update(URI, 1, TEXT);
    const computed = s.views(URI).find((v) => v.graph.name === 'computed')!.graph;
    const hand = handMade(computed, 'map(heavy)', (id) => [{ kind: 'parallelism', opId: id('map(heavy)'), from: 3, to: 2, reason: 'r' }]);
    s.store.setProfile(URI, 'computed', { ...hand, text: TEXT, at: 'now' }, '');
    const line = computed.ops[1]!.name.range.start.line;
    const [fix] = codeActions(s.views(URI), FILE, { start: { line, character: 0 }, end: { line, character: 0 } }, s.actionDeps(true));
    assert.match(fix!.disabled!.reason, /expression `threads`/);
  });

  it('offers a disabled fix that asks for a profile first', () => {
    const s = new Session(() => undefined);
    s.update(URI, 1, TEXT);
    const [only] = codeActions(
      s.views(URI).filter((v) => v.graph.name === 'numbers'),
      FILE,
      ALL_LINES,
      s.actionDeps(true),
    );
    assert.match(only!.disabled!.reason, /No profile yet/);
  });

  it('hovers with the measured numbers, the bound and the model’s reasoning', () => {
    const s = profiled();
    const h = hover(s.views(URI), FILE, { line: 12, character: 4 })!;
    const text = (h.contents as { value: string }).value;
    assert.match(text, /\*\*map\(decode, \\\{ parallelism\\: 1 \\\}\)\*\*/);
    assert.match(text, /1\.2k batches\/s · bound 2\.1k · 61% of CPU/);
    assert.match(text, /the bottleneck/);
    assert.match(text, /\*\*Why:\*\* map\(decode\) runs on the main thread/);
    // The title quotes source text, so it is escaped markdown; it renders as "Apply Plumber fix: …".
    assert.match(text, /Apply Plumber fix\\: set parallelism of map\(decode\) to 2/);
  });

  it('puts a bottleneck warning with related fixes next to the lints', () => {
    const s = profiled();
    const list = diagnostics(URI, FILE, s.views(URI), s.lints(URI), DEFAULT_SETTINGS.diagnostics);
    const b = list.find((d) => d.code === 'plumber/bottleneck')!;
    assert.equal(b.range.start.line, 12);
    assert.equal(b.severity, 2);
    assert.deepEqual(
      b.relatedInformation!.map((r) => r.location.range.start.line),
      [12, 13],
    );
    assert.ok(list.some((d) => d.code === 'plumber/no-prefetch-at-end'));
    assert.deepEqual(diagnostics(URI, FILE, s.views(URI), s.lints(URI), { enabled: false }), []);
  });

  it('shows inlay hints at the end of operator calls only when enabled', () => {
    const s = profiled();
    assert.deepEqual(inlayHints(s.views(URI), FILE, ALL_LINES, DEFAULT_SETTINGS.inlayHints), []);
    const hints = inlayHints(s.views(URI), FILE, ALL_LINES, { enabled: true });
    const map = hints.find((h) => h.position.line === 12)!;
    assert.equal(map.label, '1.2k batches/s · bound 2.1k · 61% CPU · bottleneck');
  });

  it('lists pipelines for the tree with operators ranked by their bound', () => {
    const s = profiled();
    const images = pipelines(s.views(URI), FILE, s.lints(URI)).find((p) => p.name === 'images')!;
    assert.equal(images.ops[0]!.label, 'map(decode, { parallelism: 1 })');
    assert.equal(images.ops[0]!.severity, 'bottleneck');
    assert.equal(images.ops[0]!.fixTitle, 'Apply Plumber fix: set parallelism of map(decode) to 2');
    assert.equal(images.predictedRate, 2108);
  });

  it('reports the critical path through the bottleneck', () => {
    const s = profiled();
    const view = s.views(URI).find((v) => v.graph.name === 'images')!;
    const r = report(view, FILE, s.lints(URI), []);
    assert.deepEqual(
      r.criticalPath,
      view.graph.ops.map((o) => o.id),
    );
  });

  it('builds one edit for "Apply all Plumber fixes" with its title', () => {
    const s = profiled();
    const r = fixAll(s.views(URI), { uri: URI, pipeline: 'images' }, s.actionDeps(false));
    assert.equal(r.title, 'Apply all Plumber fixes (2 changes, est. 6.8×, not verified)');
    assert.match(applyEdit(TEXT, r.edit as WorkspaceEdit), /\.prefetch\(4\)/);
    assert.match(fixAll(s.views(URI), { uri: URI, pipeline: 'numbers' }, s.actionDeps(false)).reason!, /not been profiled/);
  });

  it('refuses to profile in an untrusted workspace', async () => {
    const s = profiled();
    await assert.rejects(
      profilePipelines(
        { uri: URI },
        {
          trusted: false,
          settings: DEFAULT_SETTINGS,
          store: s.store,
          views: (u) => s.views(u),
          run: () => Promise.reject(new Error('must not run')),
          diagnose: () => Promise.reject(new Error('must not diagnose')),
        },
      ),
      (e: Error) => e.message === UNTRUSTED,
    );
  });
});
