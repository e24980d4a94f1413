#!/usr/bin/env node
// The end-to-end run: installs code-server if needed, builds the extension and the suites, then runs
//   1. the trusted suite inside the real extension host (test/e2e/suite), through
//      @vscode/test-electron's runTests with code-server behind scripts/e2e/code.mjs,
//   2. the untrusted suite in a second session with Workspace Trust on (test/e2e/untrusted),
//   3. the Playwright UI tests, which save screenshots: the fixture (test/e2e/ui/workbench.ui.mjs),
//      examples/images (example.ui.mjs), and Workspace Trust granted in the UI (trust.ui.mjs).
//   4. with --vsix: `npm run package`, then the VSIX installed into a fresh code-server (test/e2e/ui/vsix.ui.mjs).
// Usage: node scripts/e2e/run.mjs [--no-build] [--vsix] [--desktop] [--only=suite|untrusted|ui|vsix]
//   --desktop: the extension-host suite in desktop VS Code, which runTests downloads (needs the network).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './codeServer.mjs';
import { runSuite } from './extensionTests.mjs';

const args = process.argv.slice(2);
const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const desktop = args.includes('--desktop');
const started = Date.now();
const step = (s) => console.log(`\n== e2e: ${s} (${((Date.now() - started) / 1000).toFixed(0)} s)`);

step('code-server');
try {
  execFileSync('bash', [join(ROOT, 'scripts/e2e/install.sh')], { stdio: 'inherit' });
} catch (e) {
  // install.sh (or the set-up it calls) has already said what is missing and what to run.
  console.error('e2e: stopped: the VS Code suites cannot run without the set-up above.');
  process.exit(e.status ?? 1);
}

if (!args.includes('--no-build')) {
  // The production build: the suite measures activation on the bundles the VSIX ships.
  step('build (production)');
  execFileSync(process.execPath, ['esbuild.mjs', '--production'], { cwd: ROOT, stdio: 'inherit' });
}

step('compile the suites');
const esbuild = await import('esbuild');
const entries = ['suite', 'untrusted'].flatMap((dir) =>
  readdirSync(join(ROOT, 'test/e2e', dir))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(ROOT, 'test/e2e', dir, f)),
);
rmSync(join(ROOT, 'out/test/e2e'), { recursive: true, force: true });
await esbuild.build({
  entryPoints: entries,
  outdir: join(ROOT, 'out/test/e2e'),
  outbase: join(ROOT, 'test/e2e'),
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: 'inline',
  // mocha is resolved from the repo's node_modules at run time; vscode is the host's.
  external: ['vscode', 'mocha'],
  logLevel: 'warning',
});

// A fresh copy of the fixture each run: the suite edits and saves it. It lives inside the repo
// (out/ is git-ignored) so `plumber-data` resolves from the repo's node_modules.
const workspace = join(ROOT, 'out/e2e/workspace');
const fresh = () => {
  rmSync(workspace, { recursive: true, force: true });
  mkdirSync(workspace, { recursive: true });
  cpSync(join(ROOT, 'test/e2e/fixtures/workspace'), workspace, { recursive: true });
  return workspace;
};

const shotsDir = join(ROOT, 'artifacts/screenshots');
const results = [];
const output = [];

/** Runs `fn` while copying what this process prints into `output`, for the summary. */
async function capturing(fn) {
  const write = process.stdout.write;
  let text = '';
  process.stdout.write = (chunk, ...rest) => {
    text += String(chunk);
    return write.call(process.stdout, chunk, ...rest);
  };
  try {
    return await fn();
  } finally {
    process.stdout.write = write;
    output.push(...text.split('\n'));
  }
}

/**
 * Runs one Playwright UI script (after `before`, if given) and records its exit code with the
 * last thing it printed to stderr, so the summary at the end, which is all a CI log may keep,
 * says why a step failed.
 */
function uiTest(name, [script, ...rest], before) {
  let why = '';
  let code = 0;
  try {
    before?.();
    const r = spawnSync(process.execPath, [join(ROOT, script), ...rest], { stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    process.stderr.write(r.stderr ?? '');
    code = r.status ?? 1;
    if (code !== 0) {
      // The scripts end with "<name> UI test failed at "<step>": <why>" (the why may run on over lines).
      const lines = (r.error?.message ?? r.stderr ?? '').split('\n').filter((l) => l.trim());
      why = (lines.find((l) => / failed at /.test(l)) ?? lines.at(-1) ?? '').trim().slice(0, 400);
    }
  } catch (e) {
    code = e.status ?? 1;
    why = e instanceof Error ? e.message.split('\n')[0] : String(e);
  }
  results.push([name, code, why]);
}

// The suites run through @vscode/test-electron's runTests (extensionTests.mjs): against code-server
// here, against a downloaded desktop VS Code with --desktop.
if (!only || only === 'suite') {
  step(`extension-host suite, trusted workspace${desktop ? ' (desktop VS Code)' : ''}`);
  const code = await capturing(() => runSuite({ folder: fresh(), extensionTestsPath: join(ROOT, 'out/test/e2e/suite/index'), desktop }));
  results.push(['trusted suite', code]);
}
if ((!only || only === 'untrusted') && desktop) {
  console.log('e2e: the untrusted suite needs Workspace Trust, which runTests turns off in desktop VS Code: run without --desktop for it.');
} else if (!only || only === 'untrusted') {
  step('extension-host suite, untrusted workspace (Workspace Trust on, folder not trusted)');
  const code = await capturing(() => runSuite({ folder: fresh(), extensionTestsPath: join(ROOT, 'out/test/e2e/untrusted/index'), trust: true }));
  results.push(['untrusted suite', code]);
}
if (!only || only === 'ui') {
  // Pictures of an earlier failure would mislead whoever looks at this run's.
  for (const f of existsSync(shotsDir) ? readdirSync(shotsDir) : []) if (f.includes('failure')) rmSync(join(shotsDir, f));
  step('Playwright UI test');
  uiTest('UI test', ['test/e2e/ui/workbench.ui.mjs', fresh()]);
  // Issue 14: Apply All through the refactor preview, stale lenses right after, undo, what-if hover, heat bars.
  step('Playwright UI test of the editor at a glance');
  uiTest('UI test of the editor at a glance', ['test/e2e/ui/glance.ui.mjs', fresh()]);
  // The same on examples/images: the README's pictures. Its JPEGs are generated once (about 12 s).
  step('Playwright UI test on examples/images');
  uiTest('UI test on examples/images', ['test/e2e/ui/example.ui.mjs'], () =>
    execFileSync(process.execPath, ['--import', 'tsx', '-e', "require('./examples/images/prepare').ensureImages()"], { cwd: ROOT, stdio: 'inherit' }),
  );
  step('Playwright UI test of pipelines in other dialects (Node streams, tfjs-data)');
  uiTest('UI test of dialect pipelines', ['test/e2e/ui/dialects.ui.mjs', fresh()]);
  step('Playwright UI test of Workspace Trust (refused, then trusted in the UI, then profiled)');
  uiTest('UI test of Workspace Trust', ['test/e2e/ui/trust.ui.mjs', fresh()]);
}

if (only === 'vsix' || (!only && args.includes('--vsix'))) {
  step('package and install the VSIX');
  let code = 0;
  try {
    execFileSync('npm', ['run', '--silent', 'package'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    execFileSync(process.execPath, [join(ROOT, 'test/e2e/ui/vsix.ui.mjs'), fresh()], { stdio: 'inherit' });
  } catch (e) {
    code = e.status ?? 1;
  }
  results.push(['VSIX install', code]);
}

step('summary');
for (const l of output.filter((l) => /PLUMBER_(ACTIVATION|E2E )/.test(l))) console.log(l.trim());
// Mocha's failures in the extension-host suites ("  1) suite", its test, its error), so the end of
// the log says which test failed and how.
const failures = output.filter((l) => /^\s+\d+\) |^\s+(Assertion)?Error\b|^\s+\w*Error: /.test(l)).slice(0, 30);
for (const l of failures) console.log(`mocha: ${l.trim()}`);
for (const [name, code, why] of results) console.log(`${code === 0 ? 'ok  ' : 'FAIL'} ${name} (exit ${code})${code !== 0 && why ? `: ${why}` : ''}`);
console.log(`total ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exit(results.every(([, c]) => c === 0) ? 0 : 1);
