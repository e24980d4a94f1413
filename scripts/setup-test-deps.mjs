#!/usr/bin/env node
// The system tools `npm test` needs that npm cannot install. Run before the tests (`pretest`):
// when one is missing, root with apt-get installs it (`apt-get update` first, quietly); anyone else
// is told the exact command and the run stops at once, before anything else starts, naming each
// missing tool and what it is for. A missing tool must never surface later as a stack trace.
//
//   node scripts/setup-test-deps.mjs [--for=e2e] [--check]
//     --for=e2e  only what the real-VS-Code suites need (scripts/e2e/install.sh calls this)
//     --check    report what is missing and exit 1, never install
//
// Detection looks the executables up on PATH and the Kerberos header in the include folders, so it
// can be tested with a PATH of a temp folder (test/unit/scripts/setupTestDeps.test.ts).
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** install.sh writes this stamp once code-server is installed; after that its build needs are met. */
const CODE_SERVER_STAMP = join(ROOT, '.vscode-e2e', '.installed-4.100.3');

/**
 * What the tests need from the system, as Debian packages. `needed` says when (some are only needed
 * to build code-server once), `found` whether the machine already has it.
 * @typedef {{ PATH: string, includeDirs: string[], codeServerInstalled: boolean, chromium?: string }} Machine
 * @typedef {{ pkg: string, what: string, why: string, e2e: boolean, needed: (m: Machine) => boolean, found: (m: Machine) => boolean }} Requirement
 * @type {Requirement[]}
 */
export const REQUIREMENTS = [
  {
    pkg: 'chromium',
    what: 'chromium',
    why: "the VS Code suites drive code-server's workbench in headless Chromium",
    e2e: true,
    needed: () => true,
    // PLUMBER_E2E_CHROMIUM names another Chromium build; scripts/e2e/codeServer.mjs uses the same.
    found: (m) => (m.chromium ? isExecutable(m.chromium) : which('chromium', m.PATH) !== undefined),
  },
  {
    pkg: 'ripgrep',
    what: 'rg',
    why: "code-server's search uses it (its own postinstall would download ripgrep from GitHub)",
    e2e: true,
    needed: () => true,
    found: (m) => which('rg', m.PATH) !== undefined,
  },
  {
    pkg: 'libkrb5-dev',
    what: 'krb5.h',
    why: "code-server's kerberos module is built against it (once, when code-server is installed)",
    e2e: true,
    needed: (m) => !m.codeServerInstalled,
    found: (m) => m.includeDirs.some((d) => existsSync(join(d, 'krb5.h')) || existsSync(join(d, 'krb5', 'krb5.h'))),
  },
  {
    pkg: 'neovim',
    what: 'nvim',
    why: 'the Neovim test uses it as a real third-party LSP client',
    e2e: false,
    needed: () => true,
    found: (m) => which('nvim', m.PATH) !== undefined,
  },
  {
    pkg: 'redis-server',
    what: 'redis-server',
    why: 'tests of multi-host pipelines start their own Redis instance',
    e2e: false,
    needed: () => true,
    found: (m) => which('redis-server', m.PATH) !== undefined,
  },
];

function isExecutable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable called `name` on `PATH`, like `command -v`. */
export function which(name, PATH = process.env.PATH ?? '') {
  for (const dir of PATH.split(delimiter)) {
    if (dir && isExecutable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** This machine, as the detection sees it. */
export function thisMachine(env = process.env) {
  const extra = [env.CPATH, env.C_INCLUDE_PATH].filter(Boolean).flatMap((p) => p.split(delimiter));
  return {
    PATH: env.PATH ?? '',
    includeDirs: [...extra, '/usr/include', '/usr/local/include'],
    codeServerInstalled: existsSync(CODE_SERVER_STAMP),
    chromium: env.PLUMBER_E2E_CHROMIUM,
  };
}

/** The requirements that `machine` needs and does not have (only the e2e ones with `e2eOnly`). */
export function missing(machine, { e2eOnly = false } = {}) {
  return REQUIREMENTS.filter((r) => (!e2eOnly || r.e2e) && r.needed(machine) && !r.found(machine));
}

/** The command that installs `pkgs` on Debian, as the person at the keyboard would type it. */
export function installCommand(pkgs, { root = false } = {}) {
  const sudo = root ? '' : 'sudo ';
  return `${sudo}apt-get update && ${sudo}apt-get install -y --no-install-recommends ${pkgs.join(' ')}`;
}

function describe(list) {
  return list.map((r) => `  ${r.pkg.padEnd(13)} ${r.what === r.pkg ? '' : `(${r.what}) `}${r.why}`).join('\n');
}

/** Runs apt-get quietly; resolves with whether it succeeded (its output is shown only on failure). */
function apt(args, env) {
  // Another apt-get may hold the lock (CI installs its own packages first): wait for it, don't fail.
  const r = spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', '-y', '-qq', ...args], {
    env: { ...env, DEBIAN_FRONTEND: 'noninteractive' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (r.status !== 0) process.stderr.write(`${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? `${r.error.message}\n` : ''}`);
  return r.status === 0;
}

function main(argv) {
  const e2eOnly = argv.includes('--for=e2e');
  const checkOnly = argv.includes('--check');
  const env = process.env;
  const need = missing(thisMachine(env), { e2eOnly });
  if (need.length === 0) return 0;
  const pkgs = need.map((r) => r.pkg);
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const canInstall = !checkOnly && root && which('apt-get', env.PATH) !== undefined;
  const stop = (list, reason) => {
    console.error(`\nThe tests need system packages that are missing${reason}:\n${describe(list)}\n`);
    console.error(
      `Install them, then run the tests again:\n\n  ${installCommand(
        list.map((r) => r.pkg),
        { root },
      )}\n`,
    );
    return 1;
  };
  if (!canInstall) {
    const reason = checkOnly ? '' : root ? ' (and there is no apt-get to install them)' : ' (installing them needs root)';
    return stop(need, reason);
  }
  console.log(`setup: installing ${pkgs.join(', ')} with apt-get`);
  const installed = apt(['update'], env) && apt(['install', '--no-install-recommends', ...pkgs], env);
  const still = missing(thisMachine(env), { e2eOnly });
  if (!installed) return stop(still.length ? still : need, ' (apt-get failed; its output is above)');
  if (still.length) return stop(still, ' (apt-get installed them, but they are still not found)');
  console.log(`setup: installed ${pkgs.join(', ')}`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exit(main(process.argv.slice(2)));
}
