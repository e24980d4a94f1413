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
const NVIM = (process.env['PATH'] ?? '')
  .split(path.delimiter)
  .map((d) => path.join(d, 'nvim'))
  .find(isExecutable);
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

/** What test/nvim/lsp.lua saw and did, as it wrote it to $PLUMBER_OUT. */
interface NeovimResult {
  error?: string;
  lensesBefore: string[];
  lensesAfter: string[];
  actions: string[];
  applied: string;
  text: string;
}

/** The map's kind and knobs of a pipeline file's first pipeline, as the graph reads them. */
function pipelineShape(file: string, text: string): string {
  const ws = new GraphWorkspace();
  ws.setText(file, text);
  const ops = ws.graphOf(file).pipelines[0]!.ops;
  assert.ok(
    ops.some((o) => o.kind === 'map'),
    `the graph reads no map in ${file}`,
  );
  return ops.map((o) => o.kind).join(',') + JSON.stringify(ops.find((o) => o.kind === 'map')!.knobs);
}

/**
 * Copies a fixture project, lets Neovim profile `pipeline` of its `name` with `settings` and apply
 * the first Plumber quick fix on the line marked "// the slow step", and checks what every such fix must do: lenses before
 * and after, a real edit through Neovim's own workspace-edit code, saved, the marked comment kept,
 * and the pipeline changed.
 */
function applyFixInNeovim(fixture: string, settings: object, name = 'pipeline.ts', pipeline = 'numbers'): NeovimResult & { saved: string } {
  if (!NVIM) throw missingNeovim();
  const root = mkdtempSync(path.join(os.tmpdir(), 'plumber-nvim-'));
  try {
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
    const dir = path.join(root, 'project');
    const source = path.join(ROOT, 'test', 'fixtures', 'server', fixture);
    cpSync(source, dir, { recursive: true });
    const file = path.join(dir, name);
    const out = path.join(root, 'result.json');
    const r = spawnSync(NVIM, ['--headless', '--noplugin', '-u', 'NONE', '-i', 'NONE', '-n', '-c', `luafile ${path.join(ROOT, 'test', 'nvim', 'lsp.lua')}`], {
      // A run lock of its own: the machine-wide one would make this test wait for whatever other
      // Plumber runs (benchmarks, other suites) hold it.
      env: { ...process.env, PLUMBER_SERVER: SERVER, PLUMBER_FILE: file, PLUMBER_PIPELINE: pipeline, PLUMBER_OUT: out, PLUMBER_SETTINGS: JSON.stringify(settings), PLUMBER_RUN_LOCK: path.join(root, 'run.lock') },
      encoding: 'utf8',
      timeout: 330_000,
    });
    assert.ok(existsSync(out), `Neovim wrote no result (exit ${r.status}): ${r.stderr}${r.stdout}`);
    const result = JSON.parse(readFileSync(out, 'utf8')) as NeovimResult;
    assert.equal(result.error, undefined);
    assert.deepEqual(result.lensesBefore, ['Profile']);
    assert.ok(
      result.lensesAfter.some((t) => t.includes('bottleneck')),
      result.lensesAfter.join('\n'),
    );
    assert.match(result.applied, /^Apply Plumber fix: /);
    const saved = readFileSync(file, 'utf8');
    assert.equal(saved.trimEnd(), result.text.trimEnd());
    assert.match(saved, /\/\/ the slow step/);
    const original = path.join(source, name);
    assert.notEqual(pipelineShape(file, saved), pipelineShape(original, readFileSync(original, 'utf8')), 'the fix changed the pipeline');
    return { ...result, saved };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe('Neovim as the client', function () {
  // Limits that only guard a hang: profiling, planning and verifying take long on a busy machine.
  this.timeout(360_000);

  // The fixture waits on a timer with one call in flight: more in flight is faster however busy
  // the cores are, so verification keeps the fix on any machine.
  it('shows lenses and applies a verified "Apply Plumber fix" to the buffer', function () {
    const result = applyFixInNeovim('latency', { profile: { seconds: 1 } });
    assert.match(result.applied, /parallelism/);
    assert.ok(
      result.actions.some((t) => /verified \d/.test(t)),
      result.actions.join('\n'),
    );
    assert.doesNotMatch(result.saved, /parallelism: 1\b/);
  });

  // Neovim 0.7 cannot answer workspace/configuration: what it sent at start must hold. With
  // verification off (sent only at start) the fix is the model's own, marked not verified; the
  // latency-bound fixture keeps the model's gain far above any noise of a busy machine.
  it("keeps the settings it sent at start: the model's fix is offered and applied, marked not verified", function () {
    const result = applyFixInNeovim('latency', { profile: { seconds: 1 }, plan: { verify: false } });
    assert.match(result.applied, /parallelism/);
    assert.ok(
      result.actions.some((t) => t.includes('not verified')),
      result.actions.join('\n'),
    );
    assert.ok(!result.actions.some((t) => /verified \d/.test(t)), result.actions.join('\n'));
    assert.doesNotMatch(result.saved, /parallelism: 1\b/);
  });

  // A Node-streams chain as people write it (test/fixtures/server/dialects/streams.ts): 2 ms lookups
  // with one in flight. The fix is in the stream's own knob, `concurrency`, and verification keeps
  // it on any machine, as for the plumber-data fixture above.
  it('shows lenses on a Node-streams chain and applies its verified concurrency fix', function () {
    const result = applyFixInNeovim('dialects', { profile: { seconds: 1 } }, 'streams.ts', 'users');
    assert.match(result.applied, /concurrency/);
    assert.ok(
      result.actions.some((t) => /verified \d/.test(t)),
      result.actions.join('\n'),
    );
    const n = /\.map\(lookup, \{ concurrency: (\d+) \}\)/.exec(result.saved);
    assert.ok(n && Number(n[1]) > 1, result.saved);
    assert.doesNotMatch(result.saved, /parallelism/);
  });
});
