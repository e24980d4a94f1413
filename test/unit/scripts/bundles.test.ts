/**
 * How the bundles are built (scripts/bundles.mjs): the production build (`npm run package`)
 * minifies what the extension runs, never the pipeline library its users import — an error the
 * library throws at them prints its source line, and that must be readable.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'bundles.mjs');

interface BundleOptions {
  entryPoints: string[];
  outfile: string;
  minify: boolean;
  [key: string]: unknown;
}
interface BundlesModule {
  bundles(o?: { production?: boolean }): BundleOptions[];
}

describe('bundles', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'plumber-bundles-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('minifies the extension in production, and never plumber-data', async () => {
    const { bundles } = (await import(SCRIPT)) as BundlesModule;
    const out = (o: BundleOptions): string => o.outfile;
    const production = bundles({ production: true });
    const library = production.filter((o) => out(o).startsWith('src/data/'));
    assert.deepEqual(library.map(out).sort(), ['src/data/dist/cluster-cli.js', 'src/data/dist/index.js', 'src/data/dist/reader-worker.js', 'src/data/dist/worker.js']);
    // The library's dependencies are installed beside it, never bundled into it.
    const dependencies = Object.keys((JSON.parse(readFileSync(path.join(ROOT, 'src/data/package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies);
    for (const o of library) assert.deepEqual(o.external, dependencies, `${out(o)} bundles a dependency`);
    for (const o of library) assert.equal(o.minify, false, `${out(o)} is minified`);
    assert.equal(production.find((o) => out(o) === 'dist/client/extension.js')?.minify, true);
    assert.ok(bundles().every((o) => o.minify === false));
  });

  it("builds the runner's timer worker as a bundle of its own beside the runner's, with the user's plumber-data left to the user's copy", async () => {
    const { bundles } = (await import(SCRIPT)) as BundlesModule;
    const timer = bundles().find((o) => o.outfile === 'dist/runner/timer.js');
    assert.ok(timer, 'no bundle writes dist/runner/timer.js');
    assert.deepEqual(timer.entryPoints, ['src/runner/moves/timerWorker.ts']);
    assert.ok((timer.external as string[]).includes('plumber-data'));
  });

  it("prints a short, readable error when the production library rejects a user's call", async function () {
    this.timeout(60_000);
    const { bundles } = (await import(SCRIPT)) as BundlesModule;
    const index = bundles({ production: true }).find((o) => o.outfile === 'src/data/dist/index.js')!;
    const outfile = path.join(dir, 'dist', 'index.js');
    await esbuild.build({ ...index, entryPoints: index.entryPoints.map((e) => path.join(ROOT, e)), outfile, logLevel: 'silent' });
    // Its external dependencies (piscina, tinyglobby, bullmq) from the project's node_modules.
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    const user = path.join(dir, 'user.js');
    writeFileSync(user, `const { range } = require(${JSON.stringify(outfile)});\nrange(0, 10).map(function double(x) { return 2 * x; }, { placement: 'worker' });\n`);
    const r = spawnSync(process.execPath, [user], { encoding: 'utf8', timeout: 30_000 });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /map\(double, \{ placement: 'worker' \}\) needs `module`/);
    // The message and a stack, not the bundle: a minified build printed 30 kB of it first.
    assert.ok(r.stderr.length < 4000, `stderr is ${r.stderr.length} characters:\n${r.stderr.slice(0, 300)}`);
  });
});
