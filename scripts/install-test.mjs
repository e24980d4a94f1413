// The fresh-project install, as a user does it: packs plumber-data (src/data) and the root package
// (the `plumber` CLI and the extension) with `npm pack`, and installs both tarballs into a new
// project outside the repository, with their dependencies from the npm registry (or npm's cache).
// test/install/install.test.ts runs what it installed; `npm run test:install` builds and runs that.
// Usage on its own: node scripts/install-test.mjs [DIR] — prepares DIR (default: a temp folder)
// and prints where the project is, for a look by hand.
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The files of the fresh project: a package.json and the small programs the test runs. */
const PROJECT = join(ROOT, 'test', 'install', 'project');

/**
 * The environment for a command in the fresh project: this one's, without what `npm run` sets for
 * the repository (npm_config_*, npm_package_*), which would point npm back at the workspace, and
 * without NODE_OPTIONS (mocha's tsx must not help the installed package load anything).
 */
export function freshEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && k !== 'NODE_OPTIONS') env[k] = v;
  return env;
}

/**
 * Runs a command in its own process group and collects its output. When it ends (or at
 * `timeoutMs`, when it is killed) whatever is left of its group is killed too, and `leftover` says
 * whether anything was: nothing a command starts may outlive it.
 */
export function run(command, args, { cwd, timeoutMs = 60_000 } = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, env: freshEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const leftover = killGroup(child.pid);
      resolvePromise({ code, signal, stdout, stderr, timedOut, leftover });
    });
  });
}

/** Kills a process group; true when some process of it was still there. */
function killGroup(pid) {
  try {
    process.kill(-pid, 'SIGKILL');
    return true;
  } catch {
    return false; // ESRCH: the group is empty.
  }
}

/** Runs a command that must succeed; throws with its output when it does not. */
async function must(command, args, options) {
  const r = await run(command, args, options);
  if (r.code !== 0) throw new Error(`${command} ${args.join(' ')} (in ${options.cwd}) exited with ${r.code ?? r.signal}${r.timedOut ? ' (timed out)' : ''}:\n${r.stdout}${r.stderr}`);
  return r;
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** `npm pack` of the package in `dir` into `out`; the tarball's path. */
async function pack(dir, out) {
  const before = new Set(readdirSync(out));
  await must(npm, ['pack', '--ignore-scripts', '--pack-destination', out, '--silent'], { cwd: dir, timeoutMs: 120_000 });
  const made = readdirSync(out).filter((f) => f.endsWith('.tgz') && !before.has(f));
  if (made.length !== 1) throw new Error(`npm pack in ${dir} made ${made.length} tarballs`);
  return join(out, made[0]);
}

/**
 * Packs both packages (their bundles must be built: `node esbuild.mjs`) into `dir`/tarballs and
 * installs them into the project `dir`/project. Returns the paths.
 */
export async function prepare(dir) {
  const tarballs = join(dir, 'tarballs');
  const project = join(dir, 'project');
  mkdirSync(tarballs, { recursive: true });
  const data = await pack(join(ROOT, 'src', 'data'), tarballs);
  const cli = await pack(ROOT, tarballs);
  cpSync(PROJECT, project, { recursive: true });
  await must(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', data, cli], { cwd: project, timeoutMs: 150_000 });
  return { project, tarballs: { data, cli } };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ? resolve(process.argv[2]) : mkdtempSync(join(tmpdir(), 'plumber-install-'));
  const { project } = await prepare(dir);
  console.log(project);
}
