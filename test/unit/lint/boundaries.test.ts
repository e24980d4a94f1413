/**
 * The layer boundaries in eslint.config.mjs, checked through ESLint itself on one-line modules
 * placed (virtually) in each folder: each rule must reject what crosses it and admit what does not.
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

  /** Whether `specifier`, imported from a module at `file`, is refused by the boundary rules. */
  async function refused(file: string, specifier: string, form: 'import' | 'export' = 'import'): Promise<boolean> {
    const code = form === 'import' ? `import '${specifier}';\n` : `export * from '${specifier}';\n`;
    const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
    return result!.messages.some((m) => m.ruleId === '@typescript-eslint/no-restricted-imports');
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
    for (const layer of ['engine', 'server', 'client', 'cli', 'runner']) {
      assert.equal(await refused('src/shared/probe.ts', `../${layer}/x`), true, `src/shared may not import src/${layer}`);
    }
    assert.equal(await refused('src/shared/probe.ts', './opId'), false);
    assert.equal(await refused('src/shared/probe.ts', 'vscode-jsonrpc'), false);
  });

  it('keeps plumber-data self-contained at every depth', async () => {
    assert.equal(await refused('src/data/probe.ts', './errors'), false);
    assert.equal(await refused('src/data/probe.ts', '../shared/profile'), true);
    assert.equal(await refused('src/data/internal/probe.ts', '../tracing'), false);
    assert.equal(await refused('src/data/internal/probe.ts', '../../shared/profile'), true);
    assert.equal(await refused('src/data/internal/ops/probe.ts', '../../errors'), false);
    assert.equal(await refused('src/data/internal/ops/probe.ts', '../../../model'), true);
  });
});
