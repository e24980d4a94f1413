/**
 * A real third-party client: Neovim headless (Debian `neovim`) attaches to the built server, asks
 * for code lenses, profiles, and applies a quick fix through its own workspace-edit code.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { accessSync, constants, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GraphWorkspace } from '../../src/engine/graph/workspace';
import { ROOT, SERVER } from './client';

/** Neovim on PATH, as `npm test`'s set-up (scripts/setup-test-deps.mjs) looks for it. */
const NVIM = (process.env['PATH'] ?? '').split(path.delimiter).map((d) => path.join(d, 'nvim')).find(isExecutable);
function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A missing tool is named with the command that installs it; a stack trace would only distract. */
function missingNeovim(): Error {
  const error = new Error('Neovim (nvim) is not on PATH: run `node scripts/setup-test-deps.mjs` (as root it installs it), or `sudo apt-get install -y neovim`.');
  error.stack = error.message;
  return error;
}

describe('Neovim as the client', function () {
  this.timeout(120_000);

  it('shows lenses and applies "Apply Plumber fix" to the buffer', function () {
    if (!NVIM) throw missingNeovim();
    const root = mkdtempSync(path.join(os.tmpdir(), 'plumber-nvim-'));
    try {
      symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
      const dir = path.join(root, 'project');
      cpSync(path.join(ROOT, 'test', 'fixtures', 'server', 'cli'), dir, { recursive: true });
      const file = path.join(dir, 'pipeline.ts');
      const out = path.join(root, 'result.json');
      const r = spawnSync(NVIM, ['--headless', '--noplugin', '-u', 'NONE', '-i', 'NONE', '-n', '-c', `luafile ${path.join(ROOT, 'test', 'nvim', 'lsp.lua')}`], {
        env: { ...process.env, PLUMBER_SERVER: SERVER, PLUMBER_FILE: file, PLUMBER_OUT: out },
        encoding: 'utf8',
        timeout: 110_000,
      });
      assert.ok(existsSync(out), `Neovim wrote no result (exit ${r.status}): ${r.stderr}${r.stdout}`);
      const result = JSON.parse(readFileSync(out, 'utf8')) as { error?: string; lensesBefore: string[]; lensesAfter: string[]; applied: string; text: string };
      assert.equal(result.error, undefined);
      assert.deepEqual(result.lensesBefore, ['Profile']);
      assert.ok(result.lensesAfter.some((t) => t.includes('bottleneck')), result.lensesAfter.join('\n'));
      assert.match(result.applied, /^Apply Plumber fix: /);
      const saved = readFileSync(file, 'utf8');
      assert.equal(saved.trimEnd(), result.text.trimEnd());
      assert.match(saved, /\/\/ the slow step/);
      const ws = new GraphWorkspace();
      ws.setText(file, saved);
      const map = ws.graphOf(file).pipelines[0]!.ops.find((o) => o.kind === 'map')!;
      const before = new GraphWorkspace();
      const original = path.join(ROOT, 'test', 'fixtures', 'server', 'cli', 'pipeline.ts');
      before.setText(original, readFileSync(original, 'utf8'));
      const ops = (g: GraphWorkspace, f: string): string => g.graphOf(f).pipelines[0]!.ops.map((o) => o.kind).join(',') + JSON.stringify(g.graphOf(f).pipelines[0]!.ops.find((o) => o.kind === 'map')!.knobs['parallelism']);
      assert.notEqual(ops(ws, file), ops(before, original), `the fix changed the pipeline: ${JSON.stringify(map.knobs)}`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
