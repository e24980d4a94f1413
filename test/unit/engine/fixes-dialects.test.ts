/**
 * Fixes in a dialect's own knobs (src/engine/fixes/edits.ts): a Node stream operator's calls in
 * flight are written as `concurrency` and its buffer as `highWaterMark` (the names the graph gives
 * in `GraphOp.optionNames`), a tfjs-data chain gets `.prefetch(n)` inserted or resized, and a change
 * outside the operator's levers (a worker placement for a tfjs-data map) or a conversion is refused
 * with a sentence. The graph operators are made by hand from the source text, with the spans the
 * extractor gives (method name, whole call, options object, knob literals), and then read by the
 * extractor from the dialect fixtures (test/fixtures/pipelines/dialects).
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { applyEdits, editsForChanges, type FixContext, type FixOutcome } from '../../../src/engine/fixes/edits';
import type { FileGraph, GraphOp, Knob, OptionsSite, PipelineGraph, Span } from '../../../src/engine/graph/types';
import type { Dialect, Lever } from '../../../src/shared/profile';
import type { PlanChange } from '../../../src/shared/analysis';
import { open } from '../server/helpers';

const FILE = '/work/project/pipeline.ts';

/** The span of the `nth` occurrence (0-based) of `needle` in `text`, at or after `from`. */
function span(text: string, needle: string, from = 0, nth = 0): Span {
  let start = text.indexOf(needle, from);
  for (let i = 0; i < nth; i++) start = text.indexOf(needle, start + 1);
  assert.ok(start >= 0, `"${needle}" is not in the text`);
  const end = start + needle.length;
  const pos = (offset: number) => {
    const before = text.slice(0, offset);
    const line = before.split('\n').length - 1;
    return { line, character: offset - (before.lastIndexOf('\n') + 1) };
  };
  return { start, end, range: { start: pos(start), end: pos(end) } };
}

/** A literal knob written as `valueText` inside `within`. */
function literal(text: string, within: Span, valueText: string): Knob {
  const s = span(text, valueText, within.start);
  return { state: 'literal', value: Number.isNaN(Number(valueText)) ? valueText : Number(valueText), text: valueText, span: s };
}

/** A one-line options object `{ … }` inside `within`. */
function objectSite(text: string, within: Span, objectText: string, lastProperty?: string): OptionsSite {
  const s = span(text, objectText, within.start);
  return {
    state: 'object',
    span: s,
    closeBrace: s.end - 1,
    ...(lastProperty !== undefined ? { lastPropertyEnd: span(text, lastProperty, s.start).end } : {}),
    trailingComma: false,
    multiline: false,
    indent: '',
  };
}

interface OpSpec {
  kind: GraphOp['kind'];
  /** The method or callee name as written, and which occurrence of it in the text (0-based). */
  name: string;
  nth?: number;
  label: string;
  /** The whole call as written, from the chain's start to this operator's closing parenthesis. */
  callEnd: string;
  dialect: Dialect;
  levers: Lever[];
  optionNames?: Record<string, string>;
  optionKeys?: string[];
  knobs?: (own: Span) => Record<string, Knob>;
  options?: (own: Span) => OptionsSite | undefined;
  lineIndent?: string;
}

/** The pipeline of `specs` (source first) written in `text`, each op pulling from the one before. */
function pipelineOf(text: string, chainStart: string, specs: OpSpec[]): PipelineGraph {
  const start = text.indexOf(chainStart);
  const ops: GraphOp[] = [];
  let cursor = start;
  specs.forEach((s, index) => {
    const name = span(text, s.name, cursor, s.nth ?? 0);
    const endAt = text.indexOf(s.callEnd, name.start) + s.callEnd.length;
    const call = span(text, text.slice(start, endAt), start);
    const own = span(text, text.slice(name.start, endAt), name.start);
    cursor = endAt;
    const id = `${name.range.start.line + 1}:${name.range.start.character + 1}`;
    ops.push({
      id,
      kind: s.kind,
      file: FILE,
      name,
      call,
      own,
      label: s.label,
      knobs: s.knobs?.(own) ?? {},
      ...(s.options ? { options: s.options(own) } : {}),
      ...(s.optionKeys ? { optionKeys: s.optionKeys } : {}),
      ...(s.lineIndent !== undefined ? { lineIndent: s.lineIndent } : {}),
      inputs: index === 0 ? [] : [ops[index - 1].id],
      index,
      dialect: s.dialect,
      levers: s.levers,
      ...(s.optionNames ? { optionNames: s.optionNames } : {}),
    });
  });
  const head = span(text, 'export const');
  return { name: 'pipeline', exported: true, factory: false, file: FILE, head, ops, rootId: ops[ops.length - 1].id, partial: false, dialect: specs[0].dialect };
}

function fix(text: string, p: PipelineGraph, changes: PlanChange[]): FixOutcome {
  const graph: FileGraph = { file: FILE, moduleKind: 'esm', pipelines: [p], typed: false };
  const ctx: FixContext = { pipeline: p, graphOf: () => graph, textOf: () => text, opFor: (id) => p.ops.find((o) => o.id === id) };
  return editsForChanges(changes, ctx);
}

function fixed(text: string, p: PipelineGraph, changes: PlanChange[]): string {
  const out = fix(text, p, changes);
  assert.ok(out.ok, out.ok ? '' : out.reason);
  return applyEdits(text, out.edits);
}

const opId = (p: PipelineGraph, label: string): string => {
  const op = p.ops.find((o) => o.label === label);
  assert.ok(op, `no operator ${label}`);
  return op.id;
};

const NODE_NAMES = { parallelism: 'concurrency', prefetch: 'highWaterMark' };
const NODE_KEYS = ['concurrency', 'highWaterMark', 'signal'];

/** A Node stream's `.map(fn, options?)`: levers parallelism and prefetch, spelt its own way. */
function nodeMap(label: string, extra: Partial<OpSpec>): OpSpec {
  return { kind: 'map', name: 'map', label, callEnd: ')', dialect: 'node-streams', levers: ['parallelism', 'prefetch'], optionNames: NODE_NAMES, optionKeys: NODE_KEYS, ...extra };
}

const SOURCE: OpSpec = { kind: 'from', name: 'from', label: 'from(ids)', callEnd: 'from(ids)', dialect: 'node-streams', levers: [] };

describe('fixes in a dialect’s own knobs', () => {
  describe('Node streams', () => {
    it('writes concurrency for a parallelism change, replacing the literal in place', () => {
      const text = `export const lookups = () => Readable.from(ids).map(lookup, { concurrency: 1 }); // one at a time\n`;
      const p = pipelineOf(text, 'Readable.from', [
        SOURCE,
        nodeMap('map(lookup)', { callEnd: '})', knobs: (own) => ({ parallelism: literal(text, own, '1') }), options: (own) => objectSite(text, own, '{ concurrency: 1 }', 'concurrency: 1') }),
      ]);
      const out = fixed(text, p, [{ kind: 'parallelism', opId: opId(p, 'map(lookup)'), from: 1, to: 8, reason: 'r' }]);
      assert.equal(out, `export const lookups = () => Readable.from(ids).map(lookup, { concurrency: 8 }); // one at a time\n`);
    });

    it('adds `, { concurrency: n }` when the operator has no options object', () => {
      const text = `export const lookups = () => Readable.from(ids).map(lookup);\n`;
      const p = pipelineOf(text, 'Readable.from', [SOURCE, nodeMap('map(lookup)', { options: (own) => ({ state: 'absent', insertAt: span(text, 'lookup)', own.start).start + 'lookup'.length, needsComma: true }) })]);
      const out = fixed(text, p, [{ kind: 'parallelism', opId: opId(p, 'map(lookup)'), from: 1, to: 8, reason: 'r' }]);
      assert.equal(out, `export const lookups = () => Readable.from(ids).map(lookup, { concurrency: 8 });\n`);
    });

    it('adds concurrency beside the options already written', () => {
      const text = `export const lookups = () => Readable.from(ids).map(lookup, { signal });\n`;
      const p = pipelineOf(text, 'Readable.from', [SOURCE, nodeMap('map(lookup)', { callEnd: '})', options: (own) => objectSite(text, own, '{ signal }', 'signal') })]);
      const out = fixed(text, p, [{ kind: 'parallelism', opId: opId(p, 'map(lookup)'), from: 1, to: 8, reason: 'r' }]);
      assert.equal(out, `export const lookups = () => Readable.from(ids).map(lookup, { signal, concurrency: 8 });\n`);
    });

    it('writes highWaterMark for a prefetch change, with a concurrency change in the same object', () => {
      const text = `export const lookups = () => Readable.from(ids).map(lookup, { concurrency: 2 });\n`;
      const p = pipelineOf(text, 'Readable.from', [
        SOURCE,
        nodeMap('map(lookup)', { callEnd: '})', knobs: (own) => ({ parallelism: literal(text, own, '2') }), options: (own) => objectSite(text, own, '{ concurrency: 2 }', 'concurrency: 2') }),
      ]);
      const id = opId(p, 'map(lookup)');
      const out = fixed(text, p, [
        { kind: 'parallelism', opId: id, from: 2, to: 16, reason: 'r' },
        { kind: 'prefetch', opId: id, existing: false, size: 32, reason: 'r' },
      ]);
      assert.equal(out, `export const lookups = () => Readable.from(ids).map(lookup, { concurrency: 16, highWaterMark: 32 });\n`);
    });

    it('replaces a highWaterMark already written (the graph keys it as plumber-data’s bufferSize), never adding a second one', () => {
      const text = `export const rows = () => Readable.from(lines(), { highWaterMark: 1 }).map(parse);\n`;
      const source: OpSpec = {
        ...SOURCE,
        label: 'from(lines())',
        callEnd: '})',
        levers: ['prefetch'],
        optionNames: { prefetch: 'highWaterMark' },
        optionKeys: ['highWaterMark', 'objectMode'],
        knobs: (own) => ({ bufferSize: literal(text, own, '1') }),
        options: (own) => objectSite(text, own, '{ highWaterMark: 1 }', 'highWaterMark: 1'),
      };
      const p = pipelineOf(text, 'Readable.from', [source, nodeMap('map(parse)', { levers: ['prefetch'] })]);
      const out = fixed(text, p, [{ kind: 'prefetch', opId: opId(p, 'from(lines())'), existing: false, size: 4, reason: 'r' }]);
      assert.equal(out, `export const rows = () => Readable.from(lines(), { highWaterMark: 4 }).map(parse);\n`);
    });

    it('spells the knobs as Node does when the graph gave no optionNames', () => {
      const text = `export const lookups = () => Readable.from(ids).map(lookup);\n`;
      const p = pipelineOf(text, 'Readable.from', [SOURCE, nodeMap('map(lookup)', { optionNames: undefined, options: (own) => ({ state: 'absent', insertAt: own.end - 1, needsComma: true }) })]);
      const id = opId(p, 'map(lookup)');
      const out = fixed(text, p, [
        { kind: 'parallelism', opId: id, from: 1, to: 4, reason: 'r' },
        { kind: 'prefetch', opId: id, existing: false, size: 8, reason: 'r' },
      ]);
      assert.equal(out, `export const lookups = () => Readable.from(ids).map(lookup, { concurrency: 4, highWaterMark: 8 });\n`);
    });

    it('refuses to overwrite a concurrency written as an expression, naming it as written', () => {
      const text = `export const lookups = () => Readable.from(ids).map(lookup, { concurrency: n });\n`;
      const p = pipelineOf(text, 'Readable.from', [
        SOURCE,
        nodeMap('map(lookup)', {
          callEnd: '})',
          knobs: (own) => ({ parallelism: { state: 'expression', text: 'n', span: span(text, 'n }', own.start) } }),
          options: (own) => objectSite(text, own, '{ concurrency: n }', 'concurrency: n'),
        }),
      ]);
      const out = fix(text, p, [{ kind: 'parallelism', opId: opId(p, 'map(lookup)'), from: 1, to: 8, reason: 'r' }]);
      assert.deepEqual(out, { ok: false, reason: 'concurrency of map(lookup) is the expression `n`; Plumber does not overwrite code it cannot read. Set it to 8 there.' });
    });

    it('refuses a change the operator’s library has no knob for, pointing at conversion', () => {
      const text = `export const lookups = () => Readable.from(ids).map(lookup);\n`;
      const p = pipelineOf(text, 'Readable.from', [SOURCE, nodeMap('map(lookup)', { options: (own) => ({ state: 'absent', insertAt: own.end - 1, needsComma: true }) })]);
      const out = fix(text, p, [{ kind: 'cache', opId: opId(p, 'map(lookup)'), estimatedBytes: 1e6, reason: 'r' }]);
      assert.deepEqual(out, { ok: false, reason: 'node-streams has no cache knob for map(lookup); only converting the pipeline to plumber-data makes this change.' });
    });
  });

  describe('tfjs-data', () => {
    const tfjs = (kind: GraphOp['kind'], name: string, label: string, callEnd: string, extra: Partial<OpSpec> = {}): OpSpec => ({ kind, name, label, callEnd, dialect: 'tfjs-data', levers: ['prefetch'], ...extra });

    it('inserts .prefetch(n) after an operator of a one-line chain', () => {
      const text = `export const train = tf.data.generator(samples).map(augment).batch(32);\n`;
      const p = pipelineOf(text, 'tf.data', [tfjs('from', 'generator', 'generator(samples)', 'generator(samples)'), tfjs('map', 'map', 'map(augment)', 'map(augment)'), tfjs('batch', 'batch', 'batch(32)', 'batch(32)')]);
      const out = fixed(text, p, [{ kind: 'prefetch', opId: opId(p, 'map(augment)'), existing: false, size: 4, reason: 'r' }]);
      assert.equal(out, `export const train = tf.data.generator(samples).map(augment).prefetch(4).batch(32);\n`);
    });

    it('inserts .prefetch(n) on its own line in a chain written one operator per line', () => {
      const text = `export const train = tf.data\n  .generator(samples)\n  .map(augment) // CPU-heavy\n  .batch(32);\n`;
      const p = pipelineOf(text, 'tf.data', [
        tfjs('from', 'generator', 'generator(samples)', 'generator(samples)', { lineIndent: '  ' }),
        tfjs('map', 'map', 'map(augment)', 'map(augment)', { lineIndent: '  ' }),
        tfjs('batch', 'batch', 'batch(32)', 'batch(32)', { lineIndent: '  ' }),
      ]);
      const out = fixed(text, p, [{ kind: 'prefetch', opId: opId(p, 'map(augment)'), existing: false, size: 4, reason: 'r' }]);
      assert.equal(out, `export const train = tf.data\n  .generator(samples)\n  .map(augment) // CPU-heavy\n  .prefetch(4)\n  .batch(32);\n`);
    });

    it('resizes an existing prefetch(n)', () => {
      const text = `export const train = tf.data.generator(samples).map(augment).prefetch(2);\n`;
      const p = pipelineOf(text, 'tf.data', [
        tfjs('from', 'generator', 'generator(samples)', 'generator(samples)'),
        tfjs('map', 'map', 'map(augment)', 'map(augment)'),
        tfjs('prefetch', 'prefetch', 'prefetch(2)', 'prefetch(2)', { knobs: (own) => ({ bufferSize: literal(text, own, '2') }) }),
      ]);
      const out = fixed(text, p, [{ kind: 'prefetch', opId: opId(p, 'prefetch(2)'), existing: true, from: 2, size: 8, reason: 'r' }]);
      assert.equal(out, `export const train = tf.data.generator(samples).map(augment).prefetch(8);\n`);
    });

    it('refuses to place a tfjs-data map in worker threads, and leaves a conversion to the rewrite', () => {
      const text = `export const train = tf.data.generator(samples).map(augment).batch(32);\n`;
      const p = pipelineOf(text, 'tf.data', [tfjs('from', 'generator', 'generator(samples)', 'generator(samples)'), tfjs('map', 'map', 'map(augment)', 'map(augment)'), tfjs('batch', 'batch', 'batch(32)', 'batch(32)')]);
      const mapId = opId(p, 'map(augment)');
      assert.deepEqual(fix(text, p, [{ kind: 'placement', opId: mapId, to: 'worker', parallelism: 2, reason: 'r' }]), {
        ok: false,
        reason: 'tfjs-data has no placement knob for map(augment); only converting the pipeline to plumber-data makes this change.',
      });
      assert.deepEqual(fix(text, p, [{ kind: 'parallelism', opId: mapId, from: 1, to: 4, reason: 'r' }]), {
        ok: false,
        reason: 'tfjs-data has no parallelism knob for map(augment); only converting the pipeline to plumber-data makes this change.',
      });
      const convert: PlanChange = { kind: 'convert', opId: p.rootId, from: 'tfjs-data', opIds: p.ops.map((o) => o.id), then: [{ kind: 'placement', opId: mapId, to: 'worker', parallelism: 2, reason: 'r' }], reason: 'r' };
      assert.deepEqual(fix(text, p, [convert]), { ok: false, reason: 'Converting batch(32) to plumber-data is not an edit of its knobs.' });
    });
  });
});

describe('fixes in a dialect’s own knobs, on the graph the extractor reads', () => {
  const DIR = path.resolve(__dirname, '../../fixtures/pipelines/dialects');

  function extracted(file: string, name: string): { text: string; p: PipelineGraph; ctx: FixContext } {
    const full = path.join(DIR, file);
    const { graph } = open(full);
    const p = graph.pipelines.find((x) => x.name === name);
    assert.ok(p, `${name} in ${graph.pipelines.map((x) => x.name).join(', ')}`);
    const text = readFileSync(full, 'utf8');
    return { text, p, ctx: { pipeline: p, graphOf: () => graph, textOf: () => text, opFor: (id) => p.ops.find((o) => o.id === id) } };
  }

  function edited(e: ReturnType<typeof extracted>, changes: PlanChange[]): string {
    const out = editsForChanges(changes, e.ctx);
    assert.ok(out.ok, out.ok ? '' : out.reason);
    return applyEdits(e.text, out.edits);
  }

  it('Node streams: sets concurrency and highWaterMark where they are written, and adds them where they are not', () => {
    const e = extracted('streams-chain.ts', 'records');
    const id = (label: string) => opId(e.p, label);
    const out = edited(e, [
      { kind: 'parallelism', opId: id('map(lookup)'), from: 1, to: 8, reason: 'r' },
      { kind: 'prefetch', opId: id('map(lookup)'), existing: false, size: 16, reason: 'r' },
      { kind: 'prefetch', opId: e.p.ops.find((o) => o.kind === 'from' && o.dialect === 'node-streams')!.id, existing: false, size: 32, reason: 'r' },
    ]);
    assert.equal(
      out,
      e.text.replace('Readable.from(ids(), { highWaterMark: 8 })', 'Readable.from(ids(), { highWaterMark: 32 })').replace('.map(lookup, { concurrency: 1 })', '.map(lookup, { concurrency: 8, highWaterMark: 16 })'),
    );
  });

  it('tfjs-data: inserts prefetch(n) on its own line, resizes the prefetch written, and refuses a worker placement', () => {
    const e = extracted('tfjs-data.ts', 'train');
    const decode = opId(e.p, 'map(decode)');
    const prefetch = e.p.ops.find((o) => o.kind === 'prefetch')!.id;
    const out = edited(e, [
      { kind: 'prefetch', opId: decode, existing: false, size: 2, reason: 'r' },
      { kind: 'prefetch', opId: prefetch, existing: true, from: 4, size: 8, reason: 'r' },
    ]);
    assert.equal(out, e.text.replace('  .map(decode)\n', '  .map(decode)\n  .prefetch(2)\n').replace('  .prefetch(4);', '  .prefetch(8);'));
    assert.deepEqual(editsForChanges([{ kind: 'placement', opId: decode, to: 'worker', parallelism: 2, reason: 'r' }], e.ctx), {
      ok: false,
      reason: 'tfjs-data has no placement knob for map(decode); only converting the pipeline to plumber-data makes this change.',
    });
  });
});
