/**
 * The reorder edit moves the filter's call, comments kept, to just before the map in the same
 * chain; it refuses operators that are not one straight chain in one file; and it says where each
 * operator's id lands in the reshaped text.
 */
import * as assert from 'node:assert/strict';
import { applyEdits, editsForChanges, type FixContext } from '../../../src/engine/fixes/edits';
import { idAt, movedOffset, reorderCut } from '../../../src/engine/fixes/reorder';
import type { GraphOp, PipelineGraph } from '../../../src/engine/graph/types';
import type { PlanChange } from '../../../src/shared/analysis';
import { graphOf } from './virtualGraph';

function setup(lines: string[], name: string): { p: PipelineGraph; text: string; ctx: FixContext; op(label: string): GraphOp } {
  const { graph, text } = graphOf(lines, 'reorder-virtual.ts');
  const p = graph.pipelines.find((x) => x.name === name)!;
  const ctx: FixContext = { pipeline: p, graphOf: () => graph, textOf: () => text, opFor: (id) => graph.pipelines.flatMap((q) => q.ops).find((o) => o.id === id) };
  const op = (label: string): GraphOp => p.ops.find((o) => o.label === label) ?? assert.fail(`no ${label}: ${p.ops.map((o) => o.label).join(', ')}`);
  return { p, text, ctx, op };
}

const SOURCE = [
  "import { range } from 'plumber-data';",
  'const row = (i: number) => ({ id: i, label: i % 3 });',
  'const decode = (x: { id: number; label: number }) => ({ ...x, image: new Uint8Array(4) });',
  'const isValid = (x: { label: number }) => x.label !== 0;',
  'export const lines = range(300)',
  '  .map(row)',
  '  .map(decode)',
  '  // drop the unlabelled ones',
  '  .filter(isValid, { parallelism: 1 })',
  '  .batch(4);',
  'export const oneLine = range(300).map(row).map(decode).filter(isValid).batch(4);',
  'const base = range(300).map(row).map(decode);',
  'export const split = base.filter(isValid);',
];

describe('server fixes: reorder', () => {
  it('moves the filter with its comment to just before the map, one operator per line', () => {
    const { text, ctx, op } = setup(SOURCE, 'lines');
    const change: PlanChange = { kind: 'reorder', opId: op('filter(isValid)').id, before: op('map(decode)').id, reason: '' };
    const out = editsForChanges([change], ctx);
    assert.ok(out.ok, !out.ok ? out.reason : '');
    const after = applyEdits(text, out.edits);
    assert.match(after, /export const lines = range\(300\)\n {2}\.map\(row\)\n {2}\/\/ drop the unlabelled ones\n {2}\.filter\(isValid, \{ parallelism: 1 \}\)\n {2}\.map\(decode\)\n {2}\.batch\(4\);/);
  });

  it('moves the filter on a one-line chain', () => {
    const { text, ctx, op } = setup(SOURCE, 'oneLine');
    const out = editsForChanges([{ kind: 'reorder', opId: op('filter(isValid)').id, before: op('map(decode)').id, reason: '' }], ctx);
    assert.ok(out.ok);
    assert.match(applyEdits(text, out.edits), /export const oneLine = range\(300\)\.map\(row\)\.filter\(isValid\)\.map\(decode\)\.batch\(4\);/);
  });

  it('writes the reorder together with a knob of the map it crosses, as plumber fix applies a plan', () => {
    const { text, ctx, op } = setup(SOURCE, 'lines');
    const decode = op('map(decode)');
    const changes: PlanChange[] = [
      { kind: 'reorder', opId: op('filter(isValid)').id, before: decode.id, reason: '' },
      { kind: 'parallelism', opId: decode.id, from: undefined, to: 4, reason: '' },
    ];
    const out = editsForChanges(changes, ctx);
    assert.ok(out.ok, !out.ok ? out.reason : '');
    assert.match(applyEdits(text, out.edits), /\.map\(row\)\n {2}\/\/ drop the unlabelled ones\n {2}\.filter\(isValid, \{ parallelism: 1 \}\)\n {2}\.map\(decode, \{ parallelism: 4 \}\)\n {2}\.batch\(4\);/);
  });

  it('refuses operators that are not one straight chain', () => {
    const { ctx, op, p } = setup(SOURCE, 'split');
    const decode = p.ops.find((o) => o.label === 'map(decode)')!;
    const out = editsForChanges([{ kind: 'reorder', opId: op('filter(isValid)').id, before: decode.id, reason: '' }], ctx);
    assert.equal(out.ok, false);
    assert.match(!out.ok ? out.reason : '', /not one straight chain/);
  });

  it('says where each operator id lands in the reshaped text', () => {
    const { text, ctx, op } = setup(SOURCE, 'lines');
    const change = { kind: 'reorder' as const, opId: op('filter(isValid)').id, before: op('map(decode)').id, reason: '' };
    const cut = reorderCut(change, ctx);
    assert.ok(!('reason' in cut));
    const out = editsForChanges([change], ctx);
    assert.ok(out.ok);
    const after = applyEdits(text, out.edits);
    const at = (o: GraphOp): string => idAt(after, movedOffset(cut, o.name.start));
    assert.equal(at(op('map(row)')), '6:4');
    assert.equal(at(op('filter(isValid)')), '8:4');
    assert.equal(at(op('map(decode)')), '9:4');
    assert.equal(at(op('batch(4)')), '10:4');
    assert.equal(op('map(decode)').id, '7:4');
  });
});

describe('server fixes: reorder of a shuffle and of a map', () => {
  const LINES = [
    "import { range } from 'plumber-data';",
    'const decode = (x: number) => ({ id: x, image: new Uint8Array(4) });',
    'const tokenize = (x: { id: number; image: Uint8Array }) => ({ ...x, tokens: [String(x.id)] });',
    'const resize = (x: { id: number; image: Uint8Array }) => ({ ...x, image: x.image.subarray(0, 2) });',
    'export const shuffled = range(300)',
    '  .map(decode)',
    '  .shuffle(1000, { keepPosition: false })',
    '  .batch(4);',
    'export const maps = range(300).map(decode).map(tokenize, { parallelism: 2 }).map(resize).batch(4);',
  ];

  it('moves the shuffle with its options to just before the decode it filled behind', () => {
    const { text, ctx, op } = setup(LINES, 'shuffled');
    const out = editsForChanges([{ kind: 'reorder', opId: op('shuffle(1000)').id, before: op('map(decode)').id, reason: '', firstBatchSeconds: 0.1 }], ctx);
    assert.ok(out.ok, !out.ok ? out.reason : '');
    assert.match(applyEdits(text, out.edits), /export const shuffled = range\(300\)\n {2}\.shuffle\(1000, \{ keepPosition: false \}\)\n {2}\.map\(decode\)\n {2}\.batch\(4\);/);
  });

  it('moves a shrinking map before the map it commutes with, leaving that map’s knobs where they are', () => {
    const { text, ctx, op } = setup(LINES, 'maps');
    const out = editsForChanges([{ kind: 'reorder', opId: op('map(resize)').id, before: op('map(tokenize)').id, reason: '' }], ctx);
    assert.ok(out.ok, !out.ok ? out.reason : '');
    assert.match(applyEdits(text, out.edits), /export const maps = range\(300\)\.map\(decode\)\.map\(resize\)\.map\(tokenize, \{ parallelism: 2 \}\)\.batch\(4\);/);
  });
});
