/**
 * No import cycles in src/: a module that imports, through others, a module that imports it is
 * one room split in two (and under CommonJS one of them sees the other half-loaded). The imports
 * are read with the TypeScript compiler's own pre-processor and resolver, so a path maps to the
 * file tsc would load; `import type` counts too, as one fact in the wrong room.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** A module graph: each file (relative to the root, with `/`) and the files it imports. */
type Graph = Map<string, string[]>;

/** The imports of every TypeScript file under `dir` that resolve to a file of the same tree. */
function importGraph(dir: string): Graph {
  const options: ts.CompilerOptions = { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16, resolveJsonModule: true, allowJs: false };
  const files = (fs.readdirSync(path.join(ROOT, dir), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).map((f) => path.join(ROOT, dir, f));
  const known = new Set(files);
  const graph: Graph = new Map();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    const targets = new Set<string>();
    for (const { fileName } of importedFiles) {
      const resolved = ts.resolveModuleName(fileName, file, options, ts.sys).resolvedModule?.resolvedFileName;
      if (resolved && known.has(path.resolve(resolved))) targets.add(rel(path.resolve(resolved)));
    }
    graph.set(rel(file), [...targets].sort());
  }
  return graph;
}

function rel(file: string): string {
  return path.relative(ROOT, file).split(path.sep).join('/');
}

/** The cycles of `graph`: its strongly connected components of more than one file, or of a file that imports itself (Tarjan). */
function cyclesOf(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return cycles;
}

describe('import cycles', () => {
  it('finds a cycle through three files, a file that imports itself, and none in a tree', () => {
    const g: Graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
      ['f', ['d']],
    ]);
    assert.deepEqual(cyclesOf(g), [['a', 'b', 'c'], ['e']]);
    const tree: Graph = new Map([
      ['a', ['b', 'c']],
      ['b', ['c']],
      ['c', []],
    ]);
    assert.deepEqual(cyclesOf(tree), []);
  });

  it('reads the imports of src/ as tsc resolves them', () => {
    const g = importGraph('src');
    assert.ok(g.get('src/model/index.ts')!.length > 0, 'the model index imports its files');
    assert.ok(g.get('src/shared/profile.ts')!.includes('src/data/tracing.ts'), '`import type` is an import');
  });

  it('has none in src/', () => {
    const cycles = cyclesOf(importGraph('src'));
    assert.deepEqual(cycles, [], `import cycles (files that import each other, directly or through others):\n${cycles.map((c) => '  ' + c.join(' ↔ ')).join('\n')}`);
  });
});
