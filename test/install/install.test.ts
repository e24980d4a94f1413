/**
 * The packages as a user installs them: plumber-data and the root package (the `plumber` CLI and
 * the extension) packed with `npm pack` and installed into a fresh project outside the repository
 * (scripts/install-test.mjs), then used from there: the library from CommonJS, from an ES module
 * and from TypeScript's point of view, its `plumber-data` bin, and `npx plumber plan` on a
 * TypeScript pipeline. Needs the bundles built (`npm run test:install` builds them) and npm's
 * registry or cache for the dependencies.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  leftover: boolean;
}
interface InstallTest {
  ROOT: string;
  prepare(dir: string): Promise<{ project: string; tarballs: { data: string; cli: string } }>;
  run(command: string, args: string[], o: { cwd: string; timeoutMs?: number }): Promise<Run>;
}

const SCRIPT = path.resolve(__dirname, '..', '..', 'scripts', 'install-test.mjs');
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

/** The files in a tarball, without npm's leading `package/`. */
function contents(tarball: string): string[] {
  return execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ''));
}

/** The JSON line a usage program printed, after checking it ended well and left nothing behind. */
function printed(r: Run): { values: number[]; threads: number[]; oneCopy?: boolean } {
  assert.equal(r.code, 0, `exit ${r.code ?? r.signal}:\n${r.stderr}`);
  assert.equal(r.leftover, false, 'a process outlived the program');
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as { values: number[]; threads: number[]; oneCopy?: boolean };
}

const DOUBLED = Array.from({ length: 40 }, (_, i) => 2 * i);

describe('installed from the packed tarballs into a fresh project', function () {
  this.timeout(60_000);
  let install: InstallTest;
  let dir: string;
  let project: string;
  let tarballs: { data: string; cli: string };

  before(async function () {
    this.timeout(240_000);
    install = (await import(SCRIPT)) as InstallTest;
    dir = mkdtempSync(path.join(os.tmpdir(), 'plumber-install-'));
    ({ project, tarballs } = await install.prepare(dir));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('packs plumber-data with its builds, types, ES module entry, bin, README and LICENSE, and neither its source nor source maps', () => {
    const files = contents(tarballs.data);
    for (const f of ['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts', 'dist/worker.js', 'dist/reader-worker.js', 'dist/cluster-cli.js', 'esm/index.mjs', 'esm/index.d.mts', 'cluster/bin.js']) {
      assert.ok(files.includes(f), `${f} is not in the tarball`);
    }
    // The production build has no source maps: a map left from a development build stays out too.
    assert.deepEqual(
      files.filter((f) => (f.endsWith('.ts') && !f.endsWith('.d.ts')) || f.endsWith('.map')),
      [],
      'TypeScript source or a source map in the tarball',
    );
    const installed = path.join(project, 'node_modules', 'plumber-data');
    assert.equal(readFileSync(path.join(installed, 'LICENSE'), 'utf8'), readFileSync(path.join(install.ROOT, 'LICENSE'), 'utf8'));
  });

  it('packs the root package with only what the CLI and the extension run', () => {
    const files = contents(tarballs.cli);
    for (const f of [
      'package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'bin/plumber.js',
      'dist/cli/main.js',
      'dist/runner/main.js',
      'dist/runner/start.js',
      'dist/server/server.js',
      'dist/client/extension.js',
      'media/plumber.png',
    ]) {
      assert.ok(files.includes(f), `${f} is not in the tarball`);
    }
    const stray = files.filter((f) => /^(src|test|bench|scripts|examples|node_modules)\//.test(f) || f.endsWith('.map') || (f.endsWith('.ts') && !f.endsWith('.d.ts')));
    assert.deepEqual(stray, []);
  });

  it('runs a worker-thread map from CommonJS (require)', async () => {
    const out = printed(await install.run(process.execPath, ['usage.cjs'], { cwd: project }));
    assert.deepEqual(out.values, DOUBLED);
    assert.ok(out.threads.length > 0 && !out.threads.includes(0), `ran on threads ${JSON.stringify(out.threads)}, not only in workers`);
  });

  it('runs a worker-thread map from an ES module (import), on the same copy of the library as require', async () => {
    const out = printed(await install.run(process.execPath, ['usage.mjs'], { cwd: project }));
    assert.deepEqual(out.values, DOUBLED);
    assert.ok(out.threads.length > 0 && !out.threads.includes(0), `ran on threads ${JSON.stringify(out.threads)}, not only in workers`);
    assert.equal(out.oneCopy, true, 'import and require reached different copies of plumber-data');
  });

  it('gives TypeScript the types through each condition: require to dist/index.d.ts, import to esm/index.d.mts', async () => {
    const tsc = path.join(install.ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = await install.run(process.execPath, [tsc, '-p', 'tsconfig.json', '--explainFiles'], { cwd: project });
    assert.equal(r.code, 0, r.stdout);
    // --explainFiles prints each file, then (indented) every import that brought it in.
    const blocks = r.stdout.split(/\n(?=\S)/);
    const resolved = (from: string): string | undefined => blocks.find((b) => b.includes(`Imported via 'plumber-data' from file '${from}'`))?.split('\n')[0];
    assert.match(resolved('types.cts') ?? 'nothing', /node_modules\/plumber-data\/dist\/index\.d\.ts$/);
    assert.match(resolved('types.mts') ?? 'nothing', /node_modules\/plumber-data\/esm\/index\.d\.mts$/);
  });

  it("starts plumber-data's bin (the cluster worker) from node_modules/.bin", async () => {
    const r = await install.run(npx, ['--no', 'plumber-data', 'worker'], { cwd: project });
    // No --redis: the worker's own usage, which only the built CLI in the package prints.
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^usage: plumber-data worker --redis /m);
    assert.equal(r.leftover, false);
  });

  it('plans a TypeScript pipeline with `npx plumber plan`, naming the pipeline and its bottleneck', async () => {
    const r = await install.run(npx, ['--no', 'plumber', 'plan', 'pipeline.ts', '--passes', '1', '--no-verify', '--seconds', '1', '--warmup', '0.3', '--quiet'], { cwd: project, timeoutMs: 90_000 });
    assert.equal(r.code, 0, `exit ${r.code ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /squares/);
    assert.match(r.stdout, /map\(slowSquare\).*◀ bottleneck/);
    assert.equal(r.leftover, false, 'a process outlived plumber plan');
  }).timeout(120_000);
});
