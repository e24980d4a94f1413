/**
 * The layer rules of ARCHITECTURE.md and the size bars in eslint.config.mjs, checked through ESLint
 * itself on small modules placed (virtually) in each folder: each rule must reject what crosses it
 * and admit what does not.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { ESLint } from 'eslint';

const ROOT = path.resolve(__dirname, '..', '..', '..');

describe('the layer boundaries', function () {
  this.timeout(60_000);
  let eslint: ESLint;

  before(() => {
    // The virtual files are in no tsconfig: lint them without type information (the boundary rule
    // needs none; no-floating-promises does, and runs on the real files in `npm run lint`).
    eslint = new ESLint({
      cwd: ROOT,
      overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parserOptions: { projectService: false } }, rules: { '@typescript-eslint/no-floating-promises': 'off' } }],
    });
  });

  /** The messages of `rule` on `code`, linted as if it were the module at `file`. */
  async function messages(file: string, code: string, rule: string): Promise<{ severity: number }[]> {
    const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
    return result!.messages.filter((m) => m.ruleId === rule);
  }

  /** Whether `specifier`, imported from a module at `file`, is refused by the boundary rules. */
  async function refused(file: string, specifier: string, form: 'import' | 'export' | 'type' = 'import'): Promise<boolean> {
    const code = { import: `import '${specifier}';\n`, export: `export * from '${specifier}';\n`, type: `import type { X } from '${specifier}';\n` }[form];
    return (await messages(file, code, '@typescript-eslint/no-restricted-imports')).length > 0;
  }

  it('keeps the model pure: only its own files and src/shared', async () => {
    assert.equal(await refused('src/model/probe.ts', './plan'), false);
    assert.equal(await refused('src/model/probe.ts', '../shared/profile'), false);
    for (const s of ['node:fs', 'fs', 'vscode', 'ts-morph', '../engine/join', '../data/tracing', '../runner/spawn', 'piscina']) {
      assert.equal(await refused('src/model/probe.ts', s), true, `src/model may not import ${s}`);
    }
    assert.equal(await refused('src/model/probe.ts', '../server/state', 'export'), true, 'a re-export is an import too');
  });

  it('lets only src/client import vscode', async () => {
    assert.equal(await refused('src/client/probe.ts', 'vscode'), false);
    for (const dir of ['server', 'engine', 'engine/graph', 'runner', 'cli', 'shared', 'data']) {
      assert.equal(await refused(`src/${dir}/probe.ts`, 'vscode'), true, `src/${dir} may not import vscode`);
    }
  });

  it('keeps ts-morph under src/engine/graph', async () => {
    assert.equal(await refused('src/engine/graph/probe.ts', 'ts-morph'), false);
    for (const dir of ['server', 'engine', 'engine/fixes', 'client', 'runner', 'cli', 'shared']) {
      assert.equal(await refused(`src/${dir}/probe.ts`, 'ts-morph'), true, `src/${dir} may not import ts-morph`);
    }
  });

  it('keeps src/shared below the layers it connects', async () => {
    for (const layer of ['engine', 'server', 'client', 'cli', 'runner', 'model']) {
      assert.equal(await refused('src/shared/probe.ts', `../${layer}/x`), true, `src/shared may not import src/${layer}`);
      assert.equal(await refused('src/shared/probe.ts', `../${layer}/x`, 'type'), true, `src/shared may not import src/${layer}'s types`);
    }
    assert.equal(await refused('src/shared/probe.ts', './opId'), false);
    assert.equal(await refused('src/shared/probe.ts', 'vscode-jsonrpc'), false);
  });

  it("lets src/shared name plumber-data's types, and nothing else of it", async () => {
    for (const s of ['../data/tracing', 'plumber-data']) {
      assert.equal(await refused('src/shared/probe.ts', s, 'type'), false, `src/shared may import type from ${s}`);
      assert.equal(await refused('src/shared/probe.ts', s), true, `src/shared may not import values from ${s}`);
    }
    assert.equal(await refused('src/shared/probe.ts', '../data/internal/core'), true);
    assert.equal(await refused('src/shared/probe.ts', '../data/internal/core', 'type'), true, 'not even the types of its internals');
  });

  it("lets the runner import only src/shared and plumber-data's tracing contract", async () => {
    for (const s of ['./spawn', '../shared/profile', '../data/tracing', '../data', '../data/index', 'plumber-data', 'node:worker_threads', 'tsx/esm/api']) {
      assert.equal(await refused('src/runner/probe.ts', s), false, `src/runner may import ${s}`);
    }
    for (const s of ['../data/internal/core', '../data/internal/rng', '../data/dataset', '../model', '../model/describe', '../engine/diagnose', '../server/x', '../cli/x', '../client/x']) {
      assert.equal(await refused('src/runner/probe.ts', s), true, `src/runner may not import ${s}`);
    }
    assert.equal(await refused('src/runner/sub/probe.ts', '../../shared/profile'), false, 'one folder down');
    assert.equal(await refused('src/runner/sub/probe.ts', '../../model/describe'), true, 'one folder down');
    assert.equal(await refused('src/runner/sub/probe.ts', '../../data/internal/core'), true, 'one folder down');
  });

  it('keeps the engine below every surface', async () => {
    for (const dir of ['engine', 'engine/fixes', 'engine/graph']) {
      const up = '../'.repeat(dir.split('/').length);
      for (const surface of ['server', 'cli', 'client']) {
        assert.equal(await refused(`src/${dir}/probe.ts`, `${up}${surface}/x`), true, `src/${dir} may not import src/${surface}`);
      }
      for (const s of ['runner/spawn', 'model', 'shared/profile']) {
        assert.equal(await refused(`src/${dir}/probe.ts`, `${up}${s}`), false, `src/${dir} may import src/${s}`);
      }
    }
  });

  it('keeps the server and the CLI apart', async () => {
    assert.equal(await refused('src/server/probe.ts', '../cli/diagnoseRun'), true);
    assert.equal(await refused('src/server/features/probe.ts', '../../cli/main'), true);
    assert.equal(await refused('src/cli/probe.ts', '../server/features/profile'), true);
    assert.equal(await refused('src/server/features/probe.ts', '../../engine/diagnose'), false);
    assert.equal(await refused('src/cli/probe.ts', '../engine/diagnose'), false);
    assert.equal(await refused('src/cli/probe.ts', '../runner/spawn'), false);
  });

  it('lets benchmarks call the engine and never a surface', async () => {
    for (const surface of ['cli/diagnoseRun', 'server/server', 'client/extension']) {
      assert.equal(await refused('bench/probe.ts', `../src/${surface}`), true, `bench may not import src/${surface}`);
      assert.equal(await refused('bench/model/probe.ts', `../../src/${surface}`), true, `bench/model may not import src/${surface}`);
    }
    for (const s of ['engine/diagnose', 'runner/spawn', 'model', 'shared/profile']) {
      assert.equal(await refused('bench/model/probe.ts', `../../src/${s}`), false, `bench may import src/${s}`);
    }
    assert.equal(await refused('bench/server/probe.ts', '../../test/protocol'), false, 'the server benchmark speaks LSP to it');
  });

  it('keeps plumber-data self-contained at every depth', async () => {
    assert.equal(await refused('src/data/probe.ts', './errors'), false);
    assert.equal(await refused('src/data/probe.ts', '../shared/profile'), true);
    assert.equal(await refused('src/data/internal/probe.ts', '../tracing'), false);
    assert.equal(await refused('src/data/internal/probe.ts', '../../shared/profile'), true);
    assert.equal(await refused('src/data/internal/ops/probe.ts', '../../errors'), false);
    assert.equal(await refused('src/data/internal/ops/probe.ts', '../../../model'), true);
    assert.equal(await refused('src/data/cluster/probe.ts', '../../runner/tracer'), true);
  });

  it('holds files to 600 lines and functions to 150 under src/', async () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `export const x${i} = ${i};`).join('\n') + '\n';
    assert.equal((await messages('src/engine/probe.ts', lines(600), 'max-lines')).length, 0);
    assert.equal((await messages('src/engine/probe.ts', lines(601), 'max-lines')).length, 1, 'a file of 601 lines');
    const fn = (n: number) => ['export function f(): number {', ...Array.from({ length: n - 3 }, (_, i) => `  void ${i};`), '  return 0;', '}', ''].join('\n');
    assert.equal((await messages('src/model/probe.ts', fn(150), 'max-lines-per-function')).length, 0);
    assert.equal((await messages('src/model/probe.ts', fn(151), 'max-lines-per-function')).length, 1, 'a function of 151 lines');
    assert.equal((await messages('bench/probe.ts', lines(601), 'max-lines')).length, 0, 'the bars are for src/');
  });

  it('makes every rule an error, for files that broke one before as for any other', async () => {
    const [stall] = await messages('src/runner/stall.ts', "import '../model/describe';\n", '@typescript-eslint/no-restricted-imports');
    assert.equal(stall?.severity, 2, 'the runner importing the model is an error');
    const [bench] = await messages('bench/probe.ts', "import '../src/cli/main';\n", '@typescript-eslint/no-restricted-imports');
    assert.equal(bench?.severity, 2, 'a benchmark importing a surface is an error');
  });
});
