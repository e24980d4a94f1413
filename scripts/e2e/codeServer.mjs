// Starts code-server (installed by install.sh into .vscode-e2e/) and drives its workbench with
// headless Debian Chromium through playwright-core. Shared by the `code`-like launcher (code.mjs),
// the suite runner (run.mjs) and the UI test. See /work/shared/E2E.md for why this shape.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { which } from '../setup-test-deps.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const TOOLS = join(ROOT, '.vscode-e2e');
const CODE_SERVER = join(TOOLS, 'node_modules/code-server/out/node/entry.js');
/** Debian's Chromium (or PLUMBER_E2E_CHROMIUM), found as scripts/setup-test-deps.mjs finds it. */
function chromiumPath() {
  const path = process.env.PLUMBER_E2E_CHROMIUM ?? which('chromium');
  if (!path || !existsSync(path)) {
    // Playwright would only say "Target page, context or browser has been closed" later on.
    throw new Error(`Chromium is not installed (${path ?? 'no chromium on PATH'}): run \`node scripts/setup-test-deps.mjs --for=e2e\` (as root it installs it).`);
  }
  return path;
}

/** playwright-core from the tools folder (installed next to code-server), else the project's. */
export function loadPlaywright() {
  const require = createRequire(join(TOOLS, 'package.json'));
  try {
    return require('playwright-core');
  } catch {
    return createRequire(join(ROOT, 'package.json'))('playwright-core');
  }
}

function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (srv.address());
      srv.close(() => res(port));
    });
  });
}

async function waitForHealth(url, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`code-server exited with code ${child.exitCode} before it was ready`);
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`code-server did not answer ${url}/healthz within ${timeoutMs / 1000} s`);
}

/**
 * Starts code-server on a free port with throw-away user data.
 * @param {{ folder: string, trust?: boolean, settings?: Record<string, unknown>, install?: string[], log?: (line: string) => void }} options
 *   trust: keep Workspace Trust enabled (the folder then opens untrusted), instead of --disable-workspace-trust.
 *   install: .vsix files to install into the fresh extensions folder first, as a user would.
 */
export async function startCodeServer({ folder, trust = false, settings = {}, install = [], log = () => {} }) {
  const port = await freePort();
  // A short TMPDIR: the extension host's IPC socket path must stay under the 108-byte limit.
  const home = mkdtempSync(join(tmpdir(), 'pe2e-'));
  const userData = join(home, 'u');
  const extensions = join(home, 'x');
  mkdirSync(join(userData, 'User'), { recursive: true });
  mkdirSync(extensions, { recursive: true });
  writeFileSync(
    join(userData, 'User', 'settings.json'),
    JSON.stringify({
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'workbench.enableExperiments': false,
      'telemetry.telemetryLevel': 'off',
      'update.mode': 'none',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'security.workspace.trust.startupPrompt': 'never',
      'security.workspace.trust.banner': 'always',
      'git.enabled': false,
      'typescript.tsserver.experimental.enableProjectDiagnostics': false,
      ...settings,
    }),
  );
  const args = [
    CODE_SERVER,
    '--config',
    '/dev/null',
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--auth',
    'none',
    '--user-data-dir',
    userData,
    '--extensions-dir',
    extensions,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-getting-started-override',
    ...(trust ? [] : ['--disable-workspace-trust']),
    folder,
  ];
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, 'c'), XDG_DATA_HOME: join(home, 'd'), TMPDIR: home };
  for (const vsix of install) {
    execFileSync(process.execPath, [CODE_SERVER, '--config', '/dev/null', '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', vsix], { env, stdio: 'pipe' });
  }
  // Its own process group: the extension host and the language server outlive the browser, and
  // killing the group at the end takes them all down.
  const child = spawn(process.execPath, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d) => log(`[code-server] ${String(d).trimEnd()}`));
  child.stderr.on('data', (d) => log(`[code-server] ${String(d).trimEnd()}`));
  const url = `http://127.0.0.1:${port}`;
  /** Kills code-server, its extension hosts and their children, and removes the temp folders. */
  const stop = () => {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(home, { recursive: true, force: true });
  };
  try {
    // It answers in about a second on an idle machine; the limit only catches one that never starts.
    await waitForHealth(url, child, 120_000);
  } catch (e) {
    stop();
    throw e;
  }
  return { port, url, home, stop };
}

/** The workbench URL that opens `folder` with the extension under development (and its tests). */
export function workbenchUrl(server, { folder, extensionDevelopmentPath, extensionTestsPath }) {
  const remote = (p) => `vscode-remote://127.0.0.1:${server.port}${p}`;
  const payload = [['extensionDevelopmentPath', remote(extensionDevelopmentPath)]];
  if (extensionTestsPath) payload.push(['extensionTestsPath', remote(extensionTestsPath)]);
  return `${server.url}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

/** Launches headless Chromium with the flags that work on these machines. */
export async function launchBrowser() {
  const { chromium } = loadPlaywright();
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}

/**
 * Runs an extension test suite inside the real extension host and resolves with the exit code the
 * workbench reports through `window.codeAutomationExit`.
 * @param {{ folder: string, extensionDevelopmentPath: string, extensionTestsPath: string, trust?: boolean, timeoutMs?: number, log?: (line: string) => void }} o
 */
export async function runExtensionTests(o) {
  const log = o.log ?? ((l) => console.log(l));
  const limitMs = o.timeoutMs ?? 600_000;
  let server;
  let browser;
  let timer;
  try {
    server = await startCodeServer({ folder: o.folder, trust: o.trust, log: process.env.PLUMBER_E2E_VERBOSE ? log : () => {} });
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    let exit;
    const exited = new Promise((res) => (exit = res));
    // A browser that dies mid-run ends the run with a reason, instead of a later Playwright
    // "Target page, context or browser has been closed".
    page.on('crash', () => exit('the Chromium page crashed'));
    browser.on('disconnected', () => exit('Chromium exited'));
    await page.exposeFunction('codeAutomationExit', (code) => exit(Number(code)));
    let relaying = Boolean(process.env.PLUMBER_E2E_VERBOSE);
    page.on('console', (m) => {
      // The extension host's console (mocha's reporter) arrives as `%c INFO color: #33f …` lines;
      // relay them once the suite has started (mochaHost.ts prints the marker).
      const text = m.text().replace(/^%c\s*(INFO|ERR|WARN)\s+color: #[0-9a-f]+\s?/i, '');
      if (text.includes('PLUMBER_E2E_BEGIN')) relaying = true;
      else if (relaying) log(text);
    });
    await page.goto(workbenchUrl(server, o));
    // Only a guard against a run that hangs (nothing is asserted about time): generous, because a
    // loaded machine is slow, not wrong.
    const hung = new Promise((res) => (timer = setTimeout(() => res(`the suite did not finish within ${limitMs / 1000} s`), limitMs)));
    const code = await Promise.race([exited, hung]);
    if (typeof code === 'string') {
      log(`e2e: ${code}`);
      return 1;
    }
    return code;
  } catch (e) {
    log(`e2e: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  } finally {
    clearTimeout(timer);
    await browser?.close().catch(() => {});
    server?.stop();
  }
}
