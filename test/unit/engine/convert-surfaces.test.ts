/**
 * The surfaces of a conversion: the editor's "Convert to plumber-data" quick fix (a WorkspaceEdit
 * that asks for the refactor preview, with the plan's verified figure), also through "Apply all",
 * and never for a conversion verification did not measure.
 */
import * as assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import type { TextDocumentEdit } from 'vscode-languageserver';
import { codeActions, type CodeActionDeps } from '../../../src/server/features/codeActions';
import { fixAll } from '../../../src/server/features/fixAll';
import type { PipelineView } from '../../../src/server/views';
import { applyEdits } from '../../../src/engine/fixes/edits';
import { editsWithConversion } from '../../../src/engine/convert/fix';
import type { PipelineGraph } from '../../../src/engine/graph/types';
import type { Plan, Verification } from '../../../src/shared/analysis';
import { handMade } from '../server/handmade';
import { convertOf, opOf, readChain, TFJS } from './convertGraph';

const FILE = '/project/src/digits.ts';
const URI = pathToFileURL(FILE).href;

/** The digits pipeline profiled, its plan the conversion with the map in 2 worker threads; verified (3.0× ± 0.2) unless `verified` is false. */
function view(verified: boolean): PipelineView {
  const graph: PipelineGraph = readChain(FILE, TFJS, 'digits', 'tfjs-data');
  const decode = graph.ops.find((o) => o.label.startsWith('map(decode'))!;
  const hand = handMade(graph, decode.label, () => [{ ...convertOf(graph, 'tfjs-data', [{ kind: 'placement', opId: opOf(graph, 'map(decode'), to: 'worker', parallelism: 2, reason: 'r' }]), predictedRate: 1000 }]);
  const asWritten = { rate: 310, halfWidth: 9, windows: 8 };
  const v: Verification = {
    verdict: 'gain',
    asWritten,
    kept: { changes: [`convert:${graph.rootId}`], measured: { rate: 930, halfWidth: 40, windows: 8 }, predictedRate: 1000 },
    tried: [{ changes: [], measured: asWritten }],
    speedup: 3,
    speedupHalfWidth: 0.2,
    dropped: [],
    summary: 'verified 3.0× ± 0.2',
    seconds: 8,
  };
  const plan: Plan = { ...hand.plan, predictedRate: 1000, ...(verified ? { verification: v } : {}) };
  const byProfileId = new Map(graph.ops.map((o) => [o.id, o]));
  return { uri: URI, graph, record: { profile: hand.profile, analysis: hand.analysis, plan, text: TFJS, at: '2026-12-05T12:00:00.000Z' }, stale: false, byGraphId: new Map(), byProfileId };
}

const deps: CodeActionDeps = {
  fixContext: (v) => ({ pipeline: v.graph, graphOf: (f) => ({ file: f, moduleKind: 'cjs', pipelines: [v.graph], typed: false }), textOf: () => TFJS, opFor: (id) => v.byProfileId.get(id) }),
  fileInfo: () => ({ uri: URI, version: 3, text: TFJS }),
  disabledSupport: true,
};

/** Line (0-based) of `needle` in the fixture. */
const lineOf = (needle: string): number => TFJS.split('\n').findIndex((l) => l.includes(needle));

describe('convert to plumber-data: the editor and Apply all', () => {
  it('offers "Convert to plumber-data" with the verified figure on any operator of the chain, as an edit the refactor preview shows first', () => {
    const v = view(true);
    for (const needle of ['.filter(', 'export const digits']) {
      const line = lineOf(needle);
      const actions = codeActions([v], FILE, { start: { line, character: 2 }, end: { line, character: 2 } }, deps);
      const convert = actions.find((a) => a.title.startsWith('Convert to plumber-data'));
      assert.ok(convert, `no conversion offered on line ${line}: ${actions.map((a) => a.title).join(' | ')}`);
      assert.match(convert.title, /^Convert to plumber-data \(est\. [\d.]+×, verified 3(\.0)?× ± 0\.2\)$/);
      assert.equal(convert.disabled, undefined);
      const edit = convert.edit!;
      assert.equal(Object.values(edit.changeAnnotations!)[0]!.needsConfirmation, true);
      // The preview says what stays tfjs, and why.
      assert.match(Object.values(edit.changeAnnotations!)[0]!.description ?? '', /Converted up to batch\(2\): tfjs's batch stacks elements into tensors/);
      const docEdit = edit.documentChanges![0] as TextDocumentEdit;
      assert.deepEqual(docEdit.textDocument, { uri: URI, version: 3 });
      assert.equal(docEdit.edits.length, 2);
    }
  });

  it('writes the same text as the rewrite, and the same through Apply all', () => {
    const v = view(true);
    const out = editsWithConversion(v.record!.plan!.changes, deps.fixContext(v));
    assert.ok(out.ok);
    const text = applyEdits(TFJS, out.edits);
    assert.match(text, /toTfDataset\(from\(\[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12\]\)\n {2}\.map\(decode, \{ parallelism: 2, placement: 'worker', module: __filename \}\)/);
    const all = fixAll([v], { uri: URI }, deps);
    assert.ok(all.edit, all.reason);
    assert.equal(Object.values(all.edit.changeAnnotations!)[0]!.needsConfirmation, true);
  });

  it('leaves out the dialect’s own changes on the operators the conversion rewrites', () => {
    const v = view(true);
    const plan = v.record!.plan!;
    const prefetch = { kind: 'prefetch' as const, opId: opOf(v.graph, 'prefetch'), existing: true, from: 2, size: 8, reason: 'r' };
    const out = editsWithConversion([prefetch, ...plan.changes], deps.fixContext(v));
    assert.ok(out.ok, out.ok ? '' : out.reason);
    assert.match(applyEdits(TFJS, out.edits), /\.prefetch\(2\), tf\)/);
  });

  it('never offers a conversion verification did not measure', () => {
    const v = view(false);
    const line = lineOf('.filter(');
    const actions = codeActions([v], FILE, { start: { line, character: 2 }, end: { line, character: 2 } }, deps);
    assert.deepEqual(
      actions.filter((a) => /Convert|Apply all/.test(a.title)),
      [],
    );
    assert.ok(fixAll([v], { uri: URI }, deps).reason);
  });
});
