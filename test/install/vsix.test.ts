/**
 * The VSIX as `npm run package` makes it (scripts/package.mjs), for this machine's platform: what
 * it carries and which platform it says it is for. Packages the bundles as built (`--no-build`);
 * the e2e suite's `--vsix` run installs a production one into code-server.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'package.mjs');

interface PackageModule {
  TARGETS: Record<string, string>;
  hostTarget(): string;
}

describe('the VSIX for this platform', function () {
  this.timeout(120_000);
  let dir: string;
  let files: string[];
  let manifest: string;
  let pkg: PackageModule;

  before(async () => {
    pkg = (await import(SCRIPT)) as PackageModule;
    dir = mkdtempSync(path.join(os.tmpdir(), 'plumber-vsix-'));
    execFileSync(process.execPath, [SCRIPT, '--no-build', '--out', dir], { cwd: ROOT, stdio: 'ignore', timeout: 100_000 });
    const vsix = path.join(dir, 'plumber.vsix');
    files = execFileSync('unzip', ['-Z1', vsix], { encoding: 'utf8' }).split('\n').filter(Boolean);
    manifest = execFileSync('unzip', ['-p', vsix, 'extension.vsixmanifest'], { encoding: 'utf8' });
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('says which platform it is for: the one whose esbuild binary it carries, and no other', () => {
    const target = pkg.hostTarget();
    assert.match(manifest, new RegExp(`TargetPlatform="${target}"`));
    const binaries = [...new Set(files.filter((f) => f.startsWith('extension/node_modules/@esbuild/')).map((f) => f.split('/')[3]))];
    assert.deepEqual(binaries, [pkg.TARGETS[target]]);
  });

  it('carries the bundles the extension runs, tsx and esbuild for the runner, and the icon', () => {
    for (const f of [
      'dist/client/extension.js',
      'dist/client/languageClient.js',
      'dist/server/server.js',
      'dist/runner/main.js',
      'dist/runner/start.js',
      'dist/media/report.js',
      'media/plumber.png',
      'media/report/report.css',
      'node_modules/tsx/package.json',
      'node_modules/esbuild/lib/main.js',
    ]) {
      assert.ok(files.includes(`extension/${f}`), `${f} is not in the VSIX`);
    }
    assert.match(manifest, /<Icon>extension\/media\/plumber\.png<\/Icon>/);
  });

  it('leaves out the CLI, the sources, the tests, source maps and esbuild’s own CLI binary', () => {
    const stray = files.filter((f) => /^extension\/(bin|dist\/cli|src|test|bench|scripts|examples)\//.test(f) || f.endsWith('.map') || f.startsWith('extension/node_modules/esbuild/bin/'));
    assert.deepEqual(stray, []);
  });
});
