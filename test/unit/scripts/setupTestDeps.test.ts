/**
 * The set-up `npm test` runs first (scripts/setup-test-deps.mjs), exercised with a PATH of a temp
 * folder instead of uninstalling anything: the tools it needs are missing there, and a fake
 * `apt-get` in the same folder "installs" them by creating them.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'setup-test-deps.mjs');
const IS_ROOT = process.getuid?.() === 0;

interface SetupModule {
  missing(m: { PATH: string; includeDirs: string[]; codeServerInstalled: boolean; chromium?: string }, o?: { e2eOnly?: boolean }): Array<{ pkg: string }>;
}

/** A fake apt-get: logs its arguments, and on `install` creates each package's tool in its own folder. */
function fakeApt(dir: string, { fail = false, create = true } = {}): string {
  const log = path.join(dir, 'apt.log');
  const tools: Record<string, string> = { chromium: 'chromium', ripgrep: 'rg', neovim: 'nvim', 'redis-server': 'redis-server' };
  writeFileSync(
    path.join(dir, 'apt-get'),
    `#!${process.execPath}
const fs = require('node:fs'), path = require('node:path');
const args = process.argv.slice(2).filter((a, i, all) => a !== '-o' && all[i - 1] !== '-o' && !a.startsWith('-'));
fs.appendFileSync(${JSON.stringify(log)}, args.join(' ') + '\\n');
if (${fail} && args[0] === 'install') { console.error('E: Unable to locate package'); process.exit(100); }
const tools = ${JSON.stringify(tools)};
if (${create} && args[0] === 'install') for (const p of args.slice(1)) {
  const file = path.join(${JSON.stringify(dir)}, tools[p] ?? p);
  fs.writeFileSync(file, '#!/bin/sh\\n');
  fs.chmodSync(file, 0o755);
}
`,
  );
  chmodSync(path.join(dir, 'apt-get'), 0o755);
  return log;
}

function runSetup(dir: string, args: string[] = []): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], {
    // Only the temp folder is on PATH; CPATH adds no header, and the system's krb5.h (if any) is
    // only needed before code-server is installed, so it does not change what is asked for here.
    env: { PATH: dir, HOME: dir },
    encoding: 'utf8',
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('the set-up npm test does first', function () {
  this.timeout(30_000);
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'plumber-setup-'));
    symlinkSync(process.execPath, path.join(dir, 'node'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('finds a tool only when it is an executable on PATH', async () => {
    const { missing } = (await import(SCRIPT)) as SetupModule;
    const machine = { PATH: dir, includeDirs: [dir], codeServerInstalled: true };
    assert.deepEqual(
      missing(machine).map((r) => r.pkg),
      ['chromium', 'ripgrep', 'neovim', 'redis-server'],
    );
    writeFileSync(path.join(dir, 'nvim'), '');
    assert.ok(
      missing(machine).some((r) => r.pkg === 'neovim'),
      'a file that is not executable is not the tool',
    );
    chmodSync(path.join(dir, 'nvim'), 0o755);
    assert.deepEqual(
      missing(machine).map((r) => r.pkg),
      ['chromium', 'ripgrep', 'redis-server'],
    );
    assert.deepEqual(
      missing(machine, { e2eOnly: true }).map((r) => r.pkg),
      ['chromium', 'ripgrep'],
    );
  });

  it('asks for the Kerberos headers only while code-server still has to be built', async () => {
    const { missing } = (await import(SCRIPT)) as SetupModule;
    const pkgs = (codeServerInstalled: boolean, includeDirs: string[]): string[] => missing({ PATH: dir, includeDirs, codeServerInstalled }, { e2eOnly: true }).map((r) => r.pkg);
    assert.ok(pkgs(false, [dir]).includes('libkrb5-dev'));
    assert.ok(!pkgs(true, [dir]).includes('libkrb5-dev'));
    writeFileSync(path.join(dir, 'krb5.h'), '');
    assert.ok(!pkgs(false, [dir]).includes('libkrb5-dev'));
  });

  it('stops at once without apt-get, naming each missing tool and the exact command, with no stack trace', () => {
    const { status, out } = runSetup(dir);
    assert.equal(status, 1);
    for (const pkg of ['chromium', 'ripgrep', 'neovim', 'redis-server']) assert.match(out, new RegExp(`^  ${pkg} `, 'm'));
    assert.match(out, /apt-get update && (sudo )?apt-get install -y --no-install-recommends chromium ripgrep neovim redis-server/);
    assert.doesNotMatch(out, /^\s+at /m, 'no stack trace');
  });

  it('installs what is missing with apt-get as root, updating first, and then needs nothing more', function () {
    const log = fakeApt(dir);
    const first = runSetup(dir);
    if (!IS_ROOT) {
      // Not root: the same stop, with sudo in the command, and apt-get never run.
      assert.equal(first.status, 1);
      assert.match(first.out, /sudo apt-get install/);
      assert.throws(() => readFileSync(log));
      return;
    }
    assert.equal(first.status, 0, first.out);
    assert.deepEqual(readFileSync(log, 'utf8').trim().split('\n'), ['update', 'install chromium ripgrep neovim redis-server']);
    const second = runSetup(dir);
    assert.equal(second.status, 0, second.out);
    assert.equal(readFileSync(log, 'utf8').trim().split('\n').length, 2, 'the second run found everything and ran no apt-get');
  });

  it('asks only for what the VS Code suites need with --for=e2e', function () {
    const log = fakeApt(dir);
    const r = runSetup(dir, ['--for=e2e']);
    if (!IS_ROOT) return assert.equal(r.status, 1);
    assert.equal(r.status, 0, r.out);
    assert.deepEqual(readFileSync(log, 'utf8').trim().split('\n'), ['update', 'install chromium ripgrep']);
  });

  it('stops with the command to run when apt-get fails or installs nothing usable', function () {
    if (!IS_ROOT) return;
    fakeApt(dir, { fail: true });
    const failed = runSetup(dir);
    assert.equal(failed.status, 1);
    assert.match(failed.out, /apt-get failed/);
    assert.match(failed.out, /apt-get install -y --no-install-recommends chromium ripgrep neovim redis-server/);
    fakeApt(dir, { create: false });
    const nothing = runSetup(dir);
    assert.equal(nothing.status, 1);
    assert.match(nothing.out, /still not found/);
  });

  it('does nothing on --check but report', function () {
    const log = fakeApt(dir);
    const r = runSetup(dir, ['--check']);
    assert.equal(r.status, 1);
    assert.match(r.out, /chromium/);
    assert.throws(() => readFileSync(log), 'apt-get was not run');
  });
});
