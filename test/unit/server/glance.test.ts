/**
 * Issue 14, the editor tells the truth at a glance: stale numbers are hidden everywhere at once
 * (and come back on undo), rates are in the pipeline's unit, labels are the source text, nothing
 * is offered without a predicted gain, the hover shows the model's what-if, and a fix that
 * changes several places asks for the refactor preview.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CodeLens } from 'vscode-languageserver';
import { codeActions } from '../../../src/server/features/codeActions';
import { codeLenses, resolveCodeLens } from '../../../src/server/features/codeLens';
import { diagnostics } from '../../../src/server/features/diagnostics';
import { fixAll } from '../../../src/server/features/fixAll';
import { hover } from '../../../src/server/features/hover';
import { inlayHints } from '../../../src/server/features/inlayHints';
import { pipelines } from '../../../src/server/features/pipelines';
import { alternatives, opRateWords, sourceLabel, whatIf, whatIfWords } from '../../../src/server/features/glance';
import { Session } from '../../../src/server/session';
import { DEFAULT_SETTINGS } from '../../../src/shared/settings';
import type { Plan } from '../../../src/shared/analysis';
import type { GraphOp } from '../../../src/engine/graph/types';
import { FIXTURES } from './helpers';
import { handMade } from './handmade';

const FILE = path.join(FIXTURES, 'project', 'pipelines.ts');
const URI = pathToFileURL(FILE).href;
const TEXT = readFileSync(FILE, 'utf8');
const ALL_LINES = { start: { line: 0, character: 0 }, end: { line: 999, character: 0 } };
const DECODE_LINE = 12;
/** The lines of `images`, from its head to its batch. */
const IMAGES = { start: { line: 11, character: 0 }, end: { line: 13, character: 0 } };

/**
 * `images` profiled by hand, counted as it would be: the pipeline counts batches of 8, so the
 * operators before `batch(8)` see 8 elements per pipeline element (visit ratio 8).
 */
function profiled(edit: (plan: Plan) => Plan = (p) => p): Session {
  const s = new Session(() => undefined);
  s.update(URI, 1, TEXT);
  const images = s.views(URI).find((v) => v.graph.name === 'images')!.graph;
  const hand = handMade(images, 'map(decode)', (id) => [
    { kind: 'parallelism', opId: id('map(decode)'), from: 1, to: 2, reason: 'two cores are idle' },
    { kind: 'prefetch', opId: id('batch(8)'), existing: false, size: 4, reason: 'the consumer waits' },
  ]);
  const batchId = images.ops.find((o) => o.kind === 'batch')!.id;
  const analysis = { ...hand.analysis, ops: hand.analysis.ops.map((a) => (a.opId === batchId ? a : { ...a, visitRatio: 8, measuredRate: a.measuredRate * 8 })) };
  s.store.setProfile(URI, 'images', { ...hand, analysis, plan: edit(hand.plan), text: TEXT, at: '2026-11-30T18:00:00.000Z' }, 'defaults');
  return s;
}

function titles(s: Session): string[] {
  const views = s.views(URI);
  return codeLenses(views, FILE, DEFAULT_SETTINGS.codeLens)
    .map((l: CodeLens) => resolveCodeLens(l, views))
    .filter((l) => l.range.start.line >= 11 && l.range.start.line <= 13)
    .map((l) => `${l.range.start.line}: ${l.command!.title}`);
}

const EDITED = TEXT.replace('parallelism: 1 }) // decoder', 'parallelism: 2 }) // decoder');

describe('The editor at a glance (issue 14)', () => {
  describe('when the document differs from the profiled text', () => {
    it('says "stale — profile again" on every lens and inlay hint, with no numbers and no Apply all', () => {
      const s = profiled();
      s.update(URI, 2, EDITED);
      assert.deepEqual(titles(s), ['11: Pipeline: stale — profile again', "11: files('data/*.bin'): stale — profile again", '12: stale — profile again', '13: stale — profile again']);
      const hints = inlayHints(s.views(URI), FILE, ALL_LINES, { enabled: true }).filter((h) => h.position.line <= 13);
      assert.ok(hints.length === 3 && hints.every((h) => h.label === 'stale — profile again'));
    });

    it('offers no quick fix and refuses Apply all, and the tree lists no numbers or fixes', () => {
      const s = profiled();
      s.update(URI, 2, EDITED);
      assert.deepEqual(codeActions(s.views(URI), FILE, IMAGES, s.actionDeps(true)), []);
      assert.match(fixAll(s.views(URI), { uri: URI, pipeline: 'images' }, s.actionDeps(true)).reason!, /changed since it was profiled/);
      const tree = pipelines(s.views(URI), FILE, []).find((p) => p.name === 'images')!;
      assert.equal(tree.stale, true);
      assert.ok(tree.ops.every((o) => o.rate === undefined && o.bound === undefined && o.fixTitle === undefined));
      assert.equal(tree.advice, undefined);
    });

    it('turns the bottleneck warning into a note that names the numbers as old, with no fix beside it', () => {
      const s = profiled();
      const warning = diagnostics(URI, FILE, s.views(URI), [], DEFAULT_SETTINGS.diagnostics).find((d) => d.code === 'plumber/bottleneck')!;
      assert.equal(warning.severity, 2);
      assert.match(String(warning.message), /Measured 310 batches\/s, bound 2\.1k batches\/s, 2\.1k batches\/s predicted with the fixes/);
      s.update(URI, 2, EDITED);
      const note = diagnostics(URI, FILE, s.views(URI), [], DEFAULT_SETTINGS.diagnostics).find((d) => d.code === 'plumber/bottleneck')!;
      assert.equal(note.severity, 3);
      assert.match(String(note.message), /^Bottleneck of images when last profiled \(stale — profile again: the file changed since\): /);
      assert.deepEqual(note.relatedInformation, []);
    });

    it('brings every number and offer back when an undo returns to the profiled text', () => {
      const s = profiled();
      const fresh = titles(s);
      s.update(URI, 2, EDITED);
      assert.notDeepEqual(titles(s), fresh);
      s.update(URI, 3, TEXT);
      assert.deepEqual(titles(s), fresh);
      assert.ok(codeActions(s.views(URI), FILE, { start: { line: DECODE_LINE, character: 0 }, end: { line: DECODE_LINE, character: 0 } }, s.actionDeps(true)).some((a) => a.title.startsWith('Apply all')));
    });
  });

  describe("rates in the pipeline's unit", () => {
    it("writes an operator's own count first, then the pipeline's unit and its bound, so operators compare", () => {
      const s = profiled();
      assert.deepEqual(titles(s), [
        '11: Pipeline 310 batches/s · bound 2.1k',
        '11: Profile again',
        '11: Apply all Plumber fixes (est. 6.8×, not verified)',
        "11: files('data/*.bin'): 2.5k el/s = 310 batches/s · bound 9k · 5% CPU",
        '12: 9.6k el/s = 1.2k batches/s · bound 2.1k · 61% CPU · bottleneck: main thread',
        '13: 310 batches/s · bound 9k · 5% CPU',
      ]);
    });

    it('gives the tree the same numbers, the operator holding the pipeline back first', () => {
      const tree = pipelines(profiled().views(URI), FILE, []).find((p) => p.name === 'images')!;
      assert.equal(tree.unit, 'batches');
      const first = tree.ops[0]!;
      assert.equal(first.label, 'map(decode, { parallelism: 1 })');
      assert.equal(first.rootRate, 1200);
      assert.ok(tree.ops.every((o, i) => i === 0 || (o.bound ?? Infinity) >= (tree.ops[i - 1]!.bound ?? Infinity)));
    });

    it('says "41 el/s = 1.3 batches/s · bound 1.4" for a decode that sees 32 images per batch', () => {
      const an = { opId: 'x', visitRatio: 32, measuredRate: 41, ratePerCore: 1, cpuPerRootElement: 1, cpuShare: 0.9, mainThreadPerRootElement: 1, bound: 1.4, placement: 'main' as const, isBottleneck: true };
      assert.equal(opRateWords(an, 'batches'), '41 el/s = 1.3 batches/s · bound 1.4');
      assert.equal(opRateWords({ ...an, visitRatio: 1, measuredRate: 1.3 }, 'batches'), '1.3 batches/s · bound 1.4');
    });
  });

  describe('labels from the source text', () => {
    const at = (text: string, call: string): string => {
      const start = text.indexOf(call);
      const op = { label: 'graph label', own: { start, end: start + call.length } } as unknown as GraphOp;
      return sourceLabel(op, text);
    };

    it('keeps the arguments as written', () => {
      assert.equal(at('range(0, 1_000_000).map(f)', 'range(0, 1_000_000)'), 'range(0, 1_000_000)');
      assert.equal(at('x.map(fetchRecord, {\n  parallelism: 1, // one\n})', 'map(fetchRecord, {\n  parallelism: 1, // one\n})'), 'map(fetchRecord, { parallelism: 1, })');
    });

    it('shortens long arguments to their shape', () => {
      const call = 'map((record) => { const x = record.value * 2; return x + 1; }, { parallelism: 4, deterministic: false })';
      assert.equal(at(`d.${call}`, call), 'map((record) => …, { parallelism: 4, … })');
      assert.equal(at('d.filter(function keepEveryOtherRecordPlease(x) { return x % 2 === 0; })', 'filter(function keepEveryOtherRecordPlease(x) { return x % 2 === 0; })'), 'filter(function keepEveryOtherRecordPlease)');
    });

    it("falls back to the graph's label when the text no longer holds the call", () => {
      assert.equal(sourceLabel({ label: 'map(decode)', own: { start: 50, end: 90 } } as unknown as GraphOp, 'short'), 'map(decode)');
    });
  });

  describe('offers only what is predicted to gain', () => {
    it('offers no lens, quick fix or Apply all for a plan the model predicts at 1.0×', () => {
      const s = profiled((p) => ({ ...p, predictedRate: p.currentRate * 1.02 }));
      assert.ok(
        titles(s).every((t) => !t.includes('Apply all') && !t.includes('1.0×')),
        titles(s).join(' | '),
      );
      assert.deepEqual(codeActions(s.views(URI), FILE, IMAGES, s.actionDeps(true)), []);
      assert.match(fixAll(s.views(URI), { uri: URI, pipeline: 'images' }, s.actionDeps(true)).reason!, /no changes/);
    });

    it('offers a change predicted at 1.0× alone only inside Apply all, where it gains with the others', () => {
      const s = profiled((p) => ({ ...p, changes: p.changes.map((c) => ({ ...c, predictedRate: c.kind === 'prefetch' ? p.currentRate : 1800 })) }));
      const actions = codeActions(s.views(URI), FILE, IMAGES, s.actionDeps(true)).map((a) => a.title);
      assert.ok(
        actions.some((t) => t.startsWith('Apply Plumber fix: set parallelism')),
        actions.join(' | '),
      );
      assert.ok(!actions.some((t) => t.startsWith('Apply Plumber fix: insert prefetch')), actions.join(' | '));
      assert.ok(actions.some((t) => t.startsWith('Apply all Plumber fixes (est. 6.8×')));
    });
  });

  describe('the refactor preview', () => {
    it('asks for confirmation on an edit that changes more than one place, and applies one knob at once', () => {
      const s = profiled();
      const all = fixAll(s.views(URI), { uri: URI, pipeline: 'images' }, s.actionDeps(true));
      assert.deepEqual(
        Object.values(all.edit!.changeAnnotations!).map((a) => a.needsConfirmation),
        [true],
      );
      const one = codeActions(s.views(URI), FILE, { start: { line: DECODE_LINE, character: 0 }, end: { line: DECODE_LINE, character: 0 } }, s.actionDeps(true))[0]!;
      assert.match(one.title, /^Apply Plumber fix: set parallelism/);
      assert.equal(one.edit!.changeAnnotations, undefined);
    });

    it('applies at once when the preview setting is off', () => {
      const s = profiled();
      s.settings = { ...s.settings, fixes: { preview: false } };
      const all = fixAll(s.views(URI), { uri: URI, pipeline: 'images' }, s.actionDeps(true));
      assert.deepEqual(
        Object.values(all.edit!.changeAnnotations!).map((a) => a.needsConfirmation),
        [false],
      );
    });
  });

  describe('what-if in the hover', () => {
    it('tries halves and doubles of the current value within the cap', () => {
      assert.deepEqual(alternatives(1, 8), [1, 2, 4, 8]);
      assert.deepEqual(alternatives(4, 16), [1, 2, 4, 8, 16]);
      assert.deepEqual(alternatives(36, 8), [1, 9, 18, 36]);
    });

    it("writes each value's predicted pipeline rate with the current value marked", () => {
      assert.equal(
        whatIfWords(
          'parallelism',
          2,
          [
            { value: 1, rate: 0.4 },
            { value: 2, rate: 1.2 },
            { value: 4, rate: 1.3, limit: 'cores busy' },
          ],
          'batches',
        ),
        'parallelism 1 → 0.4 batches/s · **2** (now) → 1.2 batches/s · 4 → 1.3 batches/s (cores busy)',
      );
    });

    it("asks the model for a map's parallelism from the profile, and the hover marks it as predicted", () => {
      const s = profiled();
      const view = s.views(URI).find((v) => v.graph.name === 'images')!;
      const decode = view.graph.ops.find((o) => o.kind === 'map')!;
      const rows = whatIf(view.record!.profile, decode.id, 'parallelism', 1)!;
      assert.deepEqual(
        rows.map((r) => r.value),
        [1, 2, 4, 8],
      );
      assert.ok(rows.every((r) => Number.isFinite(r.rate) && r.rate >= 0));
      const text = (hover(s.views(URI), FILE, { line: DECODE_LINE, character: 4 })!.contents as { value: string }).value;
      assert.match(text, /\*\*What if\*\* \(predicted by the model from this profile, not measured\):\n- parallelism \*\*1\*\* \(now\) → [\d.k]+ batches\/s · 2 → /);
    });

    it('shows no what-if on stale numbers', () => {
      const s = profiled();
      s.update(URI, 2, EDITED);
      const text = (hover(s.views(URI), FILE, { line: DECODE_LINE, character: 4 })!.contents as { value: string }).value;
      assert.doesNotMatch(text, /What if/);
    });
  });
});
