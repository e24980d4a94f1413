import * as assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import { findPipelines, importModule } from '../../../src/runner/discover';
import { FIXTURES, matchesFixture, open, summarise } from '../server/helpers';

const GRAPH = path.join(FIXTURES, 'graph');

describe('server graph', () => {
  for (const name of readdirSync(GRAPH)) {
    it(`extracts the pipelines of the ${name} fixture as expected.json says`, () => {
      const dir = path.join(GRAPH, name);
      const { graph } = open(path.join(dir, 'input.ts'));
      matchesFixture(summarise(graph, dir), path.join(dir, 'expected.json'));
    });
  }

  it('gives each operator the id the runner computes: 1-based line and column of the method name', () => {
    const { graph } = open(path.join(GRAPH, 'one-chain', 'input.ts'));
    const train = graph.pipelines.find((p) => p.name === 'train')!;
    // `export const train = files(` — files starts at column 22 of line 7; `  .map(` — map at column 4 of line 8.
    assert.deepEqual(
      train.ops.slice(0, 2).map((o) => o.id),
      ['7:22', '8:4'],
    );
    assert.equal(train.rootId, '12:4');
  });

  it('reads literal knobs, expressions it must not overwrite, and absent knobs', () => {
    const { graph } = open(path.join(GRAPH, 'one-chain', 'input.ts'));
    const map = graph.pipelines[0]!.ops.find((o) => o.kind === 'map')!;
    assert.equal(map.knobs['parallelism']?.state, 'expression');
    assert.deepEqual(map.knobs['deterministic']?.state === 'literal' && map.knobs['deterministic'].value, true);
    assert.equal(map.knobs['placement']?.state, 'absent');
  });

  it('ids operators of an imported chain by their path relative to the pipeline file', () => {
    const { graph } = open(path.join(GRAPH, 'imported', 'input.ts'));
    const csv = graph.pipelines.find((p) => p.name === 'csv')!;
    assert.deepEqual(
      csv.ops.map((o) => o.id),
      ['lib/base.ts:7:21', 'lib/base.ts:7:41', '4:25', '4:35'],
    );
  });

  it('does not mistake a user function named from for plumber-data', () => {
    const { graph } = open(path.join(GRAPH, 'aliases', 'input.ts'));
    assert.equal(
      graph.pipelines.some((p) => p.name === 'notAPipeline'),
      false,
    );
    assert.deepEqual(graph.pipelines.map((p) => p.name).sort(), ['a', 'b', 'c', 'd']);
  });

  it('finds the pipelines a CommonJS file exports under the names the runner finds them by', async () => {
    // module.exports.x, exports.x, and a later `module.exports = { … }` that replaces both
    // (a shorthand for a local chain, one for a factory, one written in place).
    const dir = mkdtempSync(path.join(os.tmpdir(), 'plumber-cjs-graph-'));
    try {
      const file = path.join(dir, 'pipelines.js');
      symlinkSync(path.join(__dirname, '../../../node_modules'), path.join(dir, 'node_modules'), 'dir');
      const text = [
        "const { range } = require('plumber-data');",
        'module.exports.lost = range(3).map((x) => x * 2);',
        'const local = range(10).map((x) => x + 1);',
        'function make() { return range(5).batch(2); }',
        'module.exports = { local, make, inPlace: range(4).take(2), helper: (n) => range(n) };',
        'module.exports.late = range(6).skip(1);',
        'exports.gone = range(7);',
      ].join('\n');
      writeFileSync(file, text);
      const ws = new GraphWorkspace();
      ws.setText(file, text);
      const exported = ws.graphOf(file).pipelines.filter((p) => p.exported);
      assert.deepEqual(
        exported.map((p) => [p.name, p.factory, p.ops.map((o) => o.kind).join(' → ')]),
        [
          ['local', false, 'range → map'],
          ['make', true, 'range → batch'],
          ['inPlace', false, 'range → take'],
          ['late', false, 'range → skip'],
        ],
      );
      const { pipelines } = await findPipelines(await importModule(file));
      assert.deepEqual(pipelines.map((p) => p.name).sort(), exported.map((p) => p.name).sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds every kind of randomness in map functions', () => {
    const { graph } = open(path.join(GRAPH, 'randomness', 'input.ts'));
    const reasons = graph.pipelines[0]!.ops.map((o) => o.random?.reason ?? '-');
    assert.deepEqual(reasons, ['-', 'math-random', 'ctx-rng', 'ctx-rng', 'crypto', 'random-option', 'shuffle', '-', '-']);
  });

  it("marks a map random when its fn calls the project's own function that calls Math.random(), and not when the helper is deterministic", () => {
    const ws = new GraphWorkspace();
    const file = path.join(GRAPH, 'helper-random-virtual.ts');
    ws.setText(
      file,
      [
        "import { range } from 'plumber-data';",
        'function noise(): number { return Math.random() - 0.5; }',
        'function jitter(x: number): number { return x + noise(); }',
        'function twice(x: number): number { return x * 2; }',
        'function scale(x: number): number { return twice(x) + 1; }',
        'export const train = range(10).map(jitter).map(scale);',
      ].join('\n'),
    );
    const [jitter, scale] = ws.graphOf(file).pipelines[0]!.ops.filter((o) => o.kind === 'map');
    assert.equal(jitter!.random?.reason, 'math-random');
    assert.equal(jitter!.random?.detail, 'it calls noise(), which calls Math.random()');
    assert.equal(scale!.random, undefined);
  });

  it('updates one document incrementally as the user types, reusing the project', () => {
    const file = path.join(GRAPH, 'split-chain', 'input.ts');
    const { ws, graph } = open(file);
    const before = graph.pipelines.find((p) => p.name === 'evens')!.ops.length;
    const edited = ws.sourceFile(file)!.getFullText().replace('ds = ds.prefetch(2);', 'ds = ds.prefetch(2);\nds = ds.take(3);');
    ws.setText(file, edited);
    const after = ws.graphOf(file).pipelines.find((p) => p.name === 'evens')!;
    assert.equal(after.ops.length, before + 1);
    assert.equal(after.ops[after.ops.length - 1]!.kind, 'take');
    assert.equal(ws.project.getSourceFiles().filter((s) => s.getFilePath() === file).length, 1);
  });

  it('returns partial results, never throws, on half-typed code', () => {
    const ws = new GraphWorkspace();
    const file = path.join(GRAPH, 'bad-input', 'input.ts');
    const { graph } = open(file, ws);
    assert.ok(graph.pipelines.length >= 1, 'the complete chains of a broken file are still found');
  });

  it('follows circular imports without hanging', () => {
    const { graph } = open(path.join(FIXTURES, 'circular', 'a.ts'));
    const loop = graph.pipelines.find((p) => p.name === 'loop')!;
    assert.deepEqual(
      loop.ops.map((o) => o.kind),
      ['from', 'map', 'take', 'batch'],
    );
  });

  it('reads a 10,000-line file and a minified one-line file', () => {
    const ws = new GraphWorkspace();
    const big = path.join(FIXTURES, 'graph', 'generated-big.ts');
    const body = Array.from({ length: 2000 }, (_, i) => `export const p${i} = range(${i + 1})\n  .map((x) => x + ${i})\n  .batch(4)\n  .prefetch(2);\n`).join('');
    ws.setText(big, `import { range } from 'plumber-data';\n${body}`);
    assert.equal(ws.graphOf(big).pipelines.length, 2000);
    const min = path.join(FIXTURES, 'graph', 'generated-min.js');
    ws.setText(min, `const{range:r}=require("plumber-data");${Array.from({ length: 200 }, (_, i) => `exports.m${i}=r(9).map(x=>x*${i}).batch(2);`).join('')}`);
    assert.ok(ws.graphOf(min).pipelines.length >= 200);
  });
});
