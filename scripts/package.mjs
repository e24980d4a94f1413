// Packages the extension as VSIX files, one per VS Code platform.
//
// What a VSIX carries is package.json's "files", the allowlist npm packs too (vsce takes it in place
// of a .vscodeignore, and will not combine the two): the bundles, the icon, the report's stylesheet,
// the grammar, the README's screenshots (VS Code's extension page shows README-relative images
// from inside the VSIX, as --no-rewrite-relative-links keeps them), and tsx with esbuild, which
// npm leaves to the installing project (it never packs node_modules). The VSIX leaves out the CLI
// (bin/, dist/cli/): the extension never runs it.
//
// The VSIX cannot be universal: the runner loads TypeScript pipelines through tsx, resolved next to
// dist/ (src/runner/spawn.ts), and tsx needs esbuild's platform binary (@esbuild/<platform>;
// esbuild/bin/esbuild, a second copy only for esbuild's own CLI, stays out). Each target gets its
// own VSIX, from a staging folder with that target's esbuild binary, the only one there.
// Usage: node scripts/package.mjs                  this machine's platform → artifacts/plumber.vsix
//        node scripts/package.mjs --target T …     each T → artifacts/plumber-T.vsix
//        node scripts/package.mjs --all            every target in TARGETS
//   --out DIR: write the VSIX files there instead of artifacts/;
//   --no-build: package the bundles as they are built (the default builds them for production).
// A binary for another platform comes from the npm registry (`npm pack`), kept in .cache/esbuild/.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(ROOT, 'package.json'));

/** VS Code's platform targets (`vsce package --target`) → the esbuild package that runs there. */
export const TARGETS = {
  'linux-x64': 'linux-x64',
  'linux-arm64': 'linux-arm64',
  'linux-armhf': 'linux-arm',
  // esbuild's Linux binaries are static: they run on musl too (esbuild itself picks them there).
  'alpine-x64': 'linux-x64',
  'alpine-arm64': 'linux-arm64',
  'darwin-x64': 'darwin-x64',
  'darwin-arm64': 'darwin-arm64',
  'win32-x64': 'win32-x64',
  'win32-arm64': 'win32-arm64',
};

/** What "files" admits for the npm package only: the `plumber` CLI. */
const CLI_ONLY = ['bin/', 'dist/cli/'];

/** This machine's VS Code target. */
export function hostTarget() {
  const arch = process.arch === 'arm' ? 'armhf' : process.arch;
  return `${process.platform}-${arch}`;
}

/** The folder of an installed package, resolved from the repository root. */
function packageDir(name) {
  return dirname(require.resolve(`${name}/package.json`));
}

/**
 * The folder of `@esbuild/<platform>` at the version the installed esbuild wants: the installed one
 * when it is this machine's, else unpacked from the registry's tarball into .cache/esbuild/.
 */
function esbuildBinary(platform) {
  const name = `@esbuild/${platform}`;
  const version = JSON.parse(readFileSync(join(packageDir('esbuild'), 'package.json'), 'utf8')).version;
  try {
    const dir = packageDir(name);
    if (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version === version) return dir;
  } catch {
    // Not installed here: another platform's.
  }
  const dir = join(ROOT, '.cache', 'esbuild', `${platform}-${version}`);
  if (!existsSync(join(dir, 'package.json'))) {
    const tarballs = join(ROOT, '.cache', 'esbuild');
    mkdirSync(dir, { recursive: true });
    const file = execFileSync('npm', ['pack', `${name}@${version}`, '--pack-destination', tarballs, '--silent'], { cwd: tarballs, encoding: 'utf8' })
      .trim()
      .split('\n')
      .pop();
    execFileSync('tar', ['-xzf', join(tarballs, file), '-C', dir, '--strip-components=1']);
    rmSync(join(tarballs, file));
  }
  return dir;
}

/**
 * A folder vsce can package for `target`: the manifest (without the workspace, which is not
 * staged), what "files" may admit but the CLI, and the production dependencies (tsx, esbuild)
 * with the target's esbuild binary. vsce lists the dependencies with `npm list`, then "files"
 * picks what goes in.
 */
function stage(target) {
  const dir = mkdtempSync(join(tmpdir(), `plumber-vsix-${target}-`));
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  delete manifest.workspaces;
  manifest.files = manifest.files.filter((f) => !CLI_ONLY.some((c) => f.startsWith(c)));
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
  for (const f of ['README.md', 'CHANGELOG.md', 'LICENSE', 'dist', 'media', 'syntaxes']) cpSync(join(ROOT, f), join(dir, f), { recursive: true });
  for (const c of CLI_ONLY) rmSync(join(dir, c), { recursive: true, force: true });
  for (const name of ['tsx', 'esbuild']) cpSync(packageDir(name), join(dir, 'node_modules', name), { recursive: true });
  cpSync(esbuildBinary(TARGETS[target]), join(dir, 'node_modules', '@esbuild', TARGETS[target]), { recursive: true });
  return dir;
}

/** Packages one target into `out`. */
function packageTarget(target, out) {
  const dir = stage(target);
  try {
    const vsce = join(packageDir('@vscode/vsce'), 'vsce');
    execFileSync(process.execPath, [vsce, 'package', '--target', target, '--no-rewrite-relative-links', '-o', out], { cwd: dir, stdio: 'inherit' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const asked = args.includes('--all') ? Object.keys(TARGETS) : args.flatMap((a, i) => (args[i - 1] === '--target' ? [a] : []));
  for (const t of asked) {
    if (!(t in TARGETS)) {
      console.error(`package: unknown target ${t}; one of ${Object.keys(TARGETS).join(', ')}.`);
      process.exit(2);
    }
  }
  const host = hostTarget();
  if (asked.length === 0 && !(host in TARGETS)) {
    console.error(`package: no VS Code target for this machine (${host}); name one with --target.`);
    process.exit(2);
  }
  if (!args.includes('--no-build')) execFileSync(process.execPath, ['esbuild.mjs', '--production'], { cwd: ROOT, stdio: 'inherit' });
  const outAt = args.indexOf('--out');
  const out = outAt >= 0 ? resolve(args[outAt + 1]) : join(ROOT, 'artifacts');
  mkdirSync(out, { recursive: true });
  if (asked.length === 0) packageTarget(host, join(out, 'plumber.vsix'));
  for (const t of asked) packageTarget(t, join(out, `plumber-${t}.vsix`));
}
