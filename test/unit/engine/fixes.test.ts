/**
 * Fix correctness: every quick fix applied to the fixture project leaves code that type-checks
 * (`tsc --noEmit`, plumber-data's real types), whose re-extracted graph has exactly the intended
 * knobs, with comments and formatting kept.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { PlanChange } from '../../../src/shared/analysis';
import { applyEdits, editsForChanges, type FixOutcome } from '../../../src/engine/fixes/edits';
import type { GraphOp, PipelineGraph } from '../../../src/engine/graph/types';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import { FIXTURES } from '../server/helpers';

const PROJECT = path.join(FIXTURES, 'project');
const ROOT = path.resolve(__dirname, '../../..');

interface Case {
  title: string;
  file: string;
  pipeline: string;
  changes(p: PipelineGraph, op: (label: string) => GraphOp): PlanChange[];
  expect(p: PipelineGraph, text: string): void;
  /** Files the case adds to its copy of the project first (name → text). */
  add?: Record<string, string>;
}

/** A cheap fn someone put in worker threads by hand. */
const POOLED = `import { range } from 'plumber-data';

export function scale(x: number): number {
  return x * 2;
}

export const pooled = range(100)
  .map(scale, { parallelism: 4, placement: 'worker', module: __filename }) // off the main thread
  .batch(10);
`;

/** Two maps in worker threads, one after the other. */
const FUSABLE = `import { range } from 'plumber-data';

export function shift(x: number): number {
  return x + 1;
}

export function scale(x: number): number {
  return x * 2;
}

export const fusable = range(100)
  .map(shift, { parallelism: 2, placement: 'worker', module: __filename }) // first
  .map(scale, { parallelism: 2, placement: 'worker', module: __filename }) // second
  .batch(10);
`;

/** Shards read record by record inside an interleave: the interleave's knobs are the levers. */
const SHARDS = `import { from, range } from 'plumber-data';

export async function* readShard(i: number): AsyncGenerator<number> {
  for (let r = 0; r < 3; r++) yield i * 3 + r;
}

export const shards = range(8)
  .interleave((i) => from(readShard(i)).map((x) => x * 2), { cycleLength: 2 }) // shards open at once
  .batch(4);

export const bare = range(8)
  .interleave((i) => [i, i + 1])
  .batch(4);
`;

function knob(op: GraphOp | undefined, key: string): unknown {
  const k = op?.knobs[key];
  return k?.state === 'literal' ? k.value : k?.state === 'expression' ? `expr:${k.text}` : undefined;
}
const byLabel = (p: PipelineGraph, label: string): GraphOp | undefined => p.ops.find((o) => o.label === label);
const kinds = (p: PipelineGraph): string => p.ops.map((o) => o.kind).join(' → ');

const CASES: Case[] = [
  {
    title: 'replaces a literal parallelism in place, keeping the trailing comment',
    file: 'pipelines.ts',
    pipeline: 'images',
    changes: (_p, op) => [{ kind: 'parallelism', opId: op('map(decode)').id, from: 1, to: 2, reason: 'r' }],
    expect: (p, text) => {
      assert.equal(knob(byLabel(p, 'map(decode)'), 'parallelism'), 2);
      assert.match(text, /\.map\(decode, \{ parallelism: 2 \}\) \/\/ decoder\n/);
    },
  },
  {
    title: 'inserts prefetch on its own line after the last operator, before the semicolon and comment',
    file: 'pipelines.ts',
    pipeline: 'images',
    changes: (_p, op) => [{ kind: 'prefetch', opId: op('batch(8)').id, existing: false, size: 4, reason: 'r' }],
    expect: (p, text) => {
      assert.equal(kinds(p), 'files → map → batch → prefetch');
      assert.equal(knob(p.ops[3], 'bufferSize'), 4);
      assert.match(text, /\.batch\(8\)\n {2}\.prefetch\(4\); \/\/ batches\n/);
    },
  },
  {
    title: 'inserts cache after a map whose line ends with a comment, on a new line',
    file: 'pipelines.ts',
    pipeline: 'images',
    changes: (_p, op) => [{ kind: 'cache', opId: op('map(decode)').id, estimatedBytes: 1e6, reason: 'r' }],
    expect: (p, text) => {
      assert.equal(kinds(p), 'files → map → cache → batch');
      assert.match(text, /\/\/ decoder\n {2}\.cache\(\)\n {2}\.batch\(8\)/);
    },
  },
  {
    title: 'inserts a disk cache with its path, as the plan has it (relative to the pipeline file)',
    file: 'pipelines.ts',
    pipeline: 'images',
    changes: (_p, op) => [{ kind: 'cache', opId: op('map(decode)').id, estimatedBytes: 5e9, path: '.cache/plumber/images-12_4.plumbercache', reason: 'r' }],
    expect: (p, text) => {
      assert.equal(kinds(p), 'files → map → cache → batch');
      assert.match(text, /\/\/ decoder\n {2}\.cache\('\.cache\/plumber\/images-12_4\.plumbercache'\)\n {2}\.batch\(8\)/);
    },
  },
  {
    title: 'adds an options object when the map has none',
    file: 'pipelines.ts',
    pipeline: 'numbers',
    changes: (_p, op) => [{ kind: 'parallelism', opId: op('map(heavy)').id, from: undefined, to: 2, reason: 'r' }],
    expect: (p, text) => {
      assert.equal(knob(byLabel(p, 'map(heavy)'), 'parallelism'), 2);
      assert.match(text, /range\(1000\)\.map\(heavy, \{ parallelism: 2 \}\)\.batch\(16\);/);
    },
  },
  {
    title: 'moves a map of a same-file export to worker threads with __filename in CommonJS',
    file: 'pipelines.ts',
    pipeline: 'numbers',
    changes: (_p, op) => [{ kind: 'placement', opId: op('map(heavy)').id, to: 'worker', parallelism: 2, reason: 'r' }],
    expect: (p) => {
      const map = byLabel(p, 'map(heavy)');
      assert.equal(knob(map, 'placement'), 'worker');
      assert.equal(knob(map, 'parallelism'), 2);
      assert.equal(knob(map, 'module'), 'expr:__filename');
    },
  },
  {
    title: 'inserts prefetch inline in a one-line chain',
    file: 'pipelines.ts',
    pipeline: 'numbers',
    changes: (_p, op) => [{ kind: 'prefetch', opId: op('map(heavy)').id, existing: false, size: 3, reason: 'r' }],
    expect: (p, text) => {
      assert.equal(kinds(p), 'range → map → prefetch → batch');
      assert.match(text, /\.map\(heavy\)\.prefetch\(3\)\.batch\(16\);/);
    },
  },
  {
    title: 'adds worker options one per line to a multi-line options object, keeping its comment',
    file: 'pipelines.ts',
    pipeline: 'multi',
    changes: (_p, op) => [{ kind: 'placement', opId: op('map(heavy)').id, to: 'worker', parallelism: 2, reason: 'r' }],
    expect: (p, text) => {
      const map = byLabel(p, 'map(heavy)');
      assert.equal(knob(map, 'placement'), 'worker');
      assert.equal(knob(map, 'deterministic'), true);
      assert.match(text, /deterministic: true, \/\/ keep order\n {4}parallelism: 2,\n {4}placement: 'worker',\n {4}module: __filename,\n {2}\}\)/);
    },
  },
  {
    title: 'moves an imported function to worker threads with require.resolve of its module',
    file: 'pipelines.ts',
    pipeline: 'images',
    changes: (_p, op) => [{ kind: 'placement', opId: op('map(decode)').id, to: 'worker', parallelism: 2, reason: 'r' }],
    expect: (p) => {
      const map = byLabel(p, 'map(decode)');
      assert.equal(knob(map, 'parallelism'), 2);
      assert.equal(knob(map, 'module'), `expr:require.resolve('./transforms')`);
    },
  },
  {
    title: 'uses import.meta.url for a same-file export in an ES module',
    file: 'esm/pipeline.ts',
    pipeline: 'esm',
    changes: (_p, op) => [{ kind: 'placement', opId: op('map(work)').id, to: 'worker', parallelism: 2, reason: 'r' }],
    expect: (p) => assert.equal(knob(byLabel(p, 'map(work)'), 'module'), 'expr:import.meta.url'),
  },
  {
    title: 'exports a same-file function that is not exported yet when moving it to worker threads',
    file: 'pipelines.ts',
    pipeline: 'squares',
    changes: (_p, op) => [{ kind: 'placement', opId: op('map(square)').id, to: 'worker', parallelism: 2, reason: 'r' }],
    expect: (p, text) => {
      const map = byLabel(p, 'map(square)');
      assert.equal(knob(map, 'placement'), 'worker');
      assert.equal(map?.fn?.exportName, 'square');
      assert.match(text, /\/\/ A helper that is not exported yet: moving it to workers must export it\.\nexport function square\(/);
    },
  },
  {
    title: 'changes the size of an existing prefetch',
    file: 'pipelines.ts',
    pipeline: 'multi',
    changes: (_p, op) => [{ kind: 'prefetch', opId: op('prefetch(2)').id, existing: true, from: 2, size: 8, reason: 'r' }],
    expect: (p) => assert.equal(knob(p.ops[p.ops.length - 1], 'bufferSize'), 8),
  },
  {
    title: 'applies a whole plan at once: parallelism, cache and prefetch',
    file: 'pipelines.ts',
    pipeline: 'images',
    changes: (_p, op) => [
      { kind: 'parallelism', opId: op('map(decode)').id, from: 1, to: 2, reason: 'r' },
      { kind: 'cache', opId: op('map(decode)').id, estimatedBytes: 1, reason: 'r' },
      { kind: 'prefetch', opId: op('batch(8)').id, existing: false, size: 4, reason: 'r' },
    ],
    expect: (p, text) => {
      assert.equal(kinds(p), 'files → map → cache → batch → prefetch');
      assert.equal(knob(byLabel(p, 'map(decode)'), 'parallelism'), 2);
      assert.match(text, /\/\/ decoder/);
      assert.match(text, /\/\/ batches/);
    },
  },
  {
    title: 'moves a worker-placed map back to the main thread in place, keeping its module and comment',
    file: 'pooled.ts',
    add: { 'pooled.ts': POOLED },
    pipeline: 'pooled',
    changes: (_p, op) => [{ kind: 'placement', opId: op('map(scale)').id, to: 'main', parallelism: 1, reason: 'r' }],
    expect: (p, text) => {
      const map = byLabel(p, 'map(scale)');
      assert.equal(knob(map, 'placement'), 'main');
      assert.equal(knob(map, 'parallelism'), 1);
      assert.match(text, /\.map\(scale, \{ parallelism: 1, placement: 'main', module: __filename \}\) \/\/ off the main thread\n/);
    },
  },
  {
    title: "raises an interleave's cycleLength in place, keeping the comment",
    file: 'shards.ts',
    add: { 'shards.ts': SHARDS },
    pipeline: 'shards',
    changes: (p) => [{ kind: 'cycleLength', opId: p.ops.find((o) => o.kind === 'interleave')!.id, from: 2, to: 16, reason: 'r' }],
    expect: (p, text) => {
      assert.equal(
        knob(
          p.ops.find((o) => o.kind === 'interleave'),
          'cycleLength',
        ),
        16,
      );
      assert.match(text, /\{ cycleLength: 16 \}\) \/\/ shards open at once\n/);
    },
  },
  {
    title: "sets an interleave's cycleLength and parallelism together, adding the options object it lacks",
    file: 'shards.ts',
    add: { 'shards.ts': SHARDS },
    pipeline: 'bare',
    changes: (p) => {
      const id = p.ops.find((o) => o.kind === 'interleave')!.id;
      return [
        { kind: 'cycleLength', opId: id, from: undefined, to: 8, reason: 'r' },
        { kind: 'parallelism', opId: id, from: undefined, to: 8, reason: 'r' },
      ];
    },
    expect: (p, text) => {
      const interleave = p.ops.find((o) => o.kind === 'interleave');
      assert.equal(knob(interleave, 'cycleLength'), 8);
      assert.equal(knob(interleave, 'parallelism'), 8);
      assert.match(text, /\.interleave\(\(i\) => \[i, i \+ 1\], \{ cycleLength: 8, parallelism: 8 \}\)/);
    },
  },
  {
    title: 'writes fuse: true on the later of two adjacent worker maps, keeping its other options',
    file: 'fused.ts',
    add: { 'fused.ts': FUSABLE },
    pipeline: 'fusable',
    changes: (_p, op) => [{ kind: 'fuse', opId: op('map(scale)').id, with: op('map(shift)').id, reason: 'r' }],
    expect: (p, text) => {
      assert.equal(knob(byLabel(p, 'map(scale)'), 'fuse'), true);
      assert.equal(knob(byLabel(p, 'map(shift)'), 'fuse'), undefined);
      assert.match(text, /\.map\(scale, \{ parallelism: 2, placement: 'worker', module: __filename, fuse: true \}\) \/\/ second/);
    },
  },
  {
    title: 'sets deterministic: false in place of a written deterministic: true',
    file: 'pipelines.ts',
    pipeline: 'multi',
    changes: (_p, op) => [{ kind: 'deterministic', opId: op('map(heavy)').id, to: false, reason: 'r' }],
    expect: (p, text) => {
      assert.equal(knob(byLabel(p, 'map(heavy)'), 'deterministic'), false);
      assert.match(text, /deterministic: false, \/\/ keep order/);
    },
  },
];

function prepare(dir: string, c: Case): { outcome: FixOutcome; file: string } {
  const file = path.join(dir, c.file);
  const ws = new GraphWorkspace();
  ws.setText(file, readFileSync(file, 'utf8'));
  const p = ws.graphOf(file).pipelines.find((x) => x.name === c.pipeline)!;
  const op = (label: string): GraphOp => {
    const found = byLabel(p, label);
    if (!found) throw new Error(`no ${label} in ${c.pipeline}: ${p.ops.map((o) => o.label).join(', ')}`);
    return found;
  };
  const outcome = editsForChanges(c.changes(p, op), {
    pipeline: p,
    graphOf: (f) => ws.graphOf(f),
    textOf: (f) => ws.sourceFile(f)!.getFullText(),
    opFor: (id) => p.ops.find((o) => o.id === id),
  });
  return { outcome, file };
}

describe('server fixes on the fixture project', function () {
  this.timeout(120_000);
  let root: string;
  before(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'plumber-fixes-'));
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  CASES.forEach((c, i) => {
    it(c.title, () => {
      const dir = path.join(root, `case-${i}`);
      cpSync(PROJECT, dir, { recursive: true });
      for (const [name, text] of Object.entries(c.add ?? {})) writeFileSync(path.join(dir, name), text);
      const { outcome, file } = prepare(dir, c);
      assert.ok(outcome.ok, outcome.ok ? '' : outcome.reason);
      const byFile = new Map<string, typeof outcome.edits>();
      for (const e of outcome.edits) byFile.set(e.file, [...(byFile.get(e.file) ?? []), e]);
      for (const [f, edits] of byFile) writeFileSync(f, applyEdits(readFileSync(f, 'utf8'), edits));
      const fresh = new GraphWorkspace();
      fresh.setText(file, readFileSync(file, 'utf8'));
      const p = fresh.graphOf(file).pipelines.find((x) => x.name === c.pipeline)!;
      c.expect(p, readFileSync(file, 'utf8'));
      // Everything else in the file is untouched: the other pipelines keep their operators.
      const others = fresh
        .graphOf(file)
        .pipelines.filter((x) => x.name !== c.pipeline)
        .map((x) => x.ops.length);
      const original = new GraphWorkspace();
      const origFile = path.join(PROJECT, c.file);
      original.setText(origFile, c.add?.[c.file] ?? readFileSync(origFile, 'utf8'));
      assert.deepEqual(
        others,
        original
          .graphOf(origFile)
          .pipelines.filter((x) => x.name !== c.pipeline)
          .map((x) => x.ops.length),
      );
    });
  });

  it('refuses to overwrite a knob written as an expression, saying where to change it', () => {
    const { outcome } = prepare(PROJECT, { ...CASES[0]!, pipeline: 'computed', changes: (_p, op) => [{ kind: 'parallelism', opId: op('map(heavy)').id, from: undefined, to: 2, reason: 'r' }] });
    assert.equal(outcome.ok, false);
    assert.match(!outcome.ok ? outcome.reason : '', /expression `threads`/);
  });

  it('refuses to move an inline function to worker threads', () => {
    const { outcome } = prepare(PROJECT, { ...CASES[0]!, pipeline: 'inline', changes: (_p, op) => [{ kind: 'placement', opId: op('map(…)').id, to: 'worker', parallelism: 2, reason: 'r' }] });
    assert.equal(outcome.ok, false);
    assert.match(!outcome.ok ? outcome.reason : '', /inline/);
  });

  it('leaves every fixed copy type-checking against plumber-data', () => {
    writeFileSync(path.join(root, 'tsconfig.json'), JSON.stringify({ extends: path.join(PROJECT, 'tsconfig.json'), include: ['case-*/**/*.ts'] }));
    try {
      execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', root], { encoding: 'utf8' });
    } catch (error) {
      assert.fail(`tsc found errors in the fixed files:\n${(error as { stdout?: string }).stdout ?? String(error)}`);
    }
  });
});
