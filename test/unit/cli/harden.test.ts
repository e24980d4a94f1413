import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { alive } from '../../helpers/processes';

const ROOT = path.resolve(__dirname, '../../..');
const BIN = path.join(ROOT, 'bin/plumber.js');
const PIPELINES = path.join(ROOT, 'test/fixtures/pipelines');
const SHORT = ['--seconds', '1', '--warmup', '0.3'];

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts the built `plumber` bin; `done` resolves with its exit and output. */
function start(args: string[], env: Record<string, string> = {}): { child: ChildProcess; done: Promise<Result> } {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<Result>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

function plumber(...args: string[]): Promise<Result> {
  return start(args).done;
}

/** Polls until `check` holds, giving up after a bound far above what it should take. */
async function eventually(check: () => boolean, boundMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + boundMs;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return check();
}

/**
 * Runs `plumber <command>` on a pipeline that blocks the runner's main thread after starting a
 * child process, and returns once the pipeline is spinning, with the runner's and the child's pids.
 */
async function spinning(command: string[], name: string): Promise<{ cli: ChildProcess; done: Promise<Result>; runner: number; grandchild: number; pidFile: string }> {
  const pidFile = path.join(os.tmpdir(), `plumber-test-${process.pid}-${name}.pid`);
  fs.rmSync(pidFile, { force: true });
  const { child, done } = start([...command, path.join(PIPELINES, 'harden-spins.ts'), '--seconds', '30', '--warmup', '0', '--quiet'], { PLUMBER_TEST_PIDFILE: pidFile });
  assert.ok(await eventually(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').includes(' '), 30_000), 'the pipeline never started');
  const [runner, grandchild] = fs.readFileSync(pidFile, 'utf8').split(' ').map(Number);
  return { cli: child, done, runner, grandchild, pidFile };
}

describe('plumber (the built CLI) when things go wrong', function () {
  this.timeout(90_000);

  for (const [command, signal, code] of [
    ['profile', 'SIGTERM', 143],
    ['plan', 'SIGHUP', 129],
    ['check', 'SIGTERM', 143],
  ] as const) {
    it(`ends every process of \`plumber ${command}\` on ${signal} while the pipeline blocks its main thread, and exits with ${code}`, async () => {
      const extra = command === 'check' ? ['--min-rate', '1'] : [];
      const s = await spinning([command, ...extra], `${command}-${signal}`);
      try {
        assert.ok(alive(s.runner) && alive(s.grandchild));
        s.cli.kill(signal);
        const r = await s.done;
        assert.equal(r.code, code, `exit ${r.code} signal ${r.signal}: ${r.stderr}`);
        assert.ok(await eventually(() => !alive(s.runner) && !alive(s.grandchild)), `runner ${s.runner} or its child ${s.grandchild} outlived the command`);
      } finally {
        for (const pid of [s.runner, s.grandchild]) if (alive(pid)) process.kill(pid, 'SIGKILL');
        fs.rmSync(s.pidFile, { force: true });
      }
    });
  }

  it('ends the runner and what it started when the command is killed with SIGKILL while the pipeline blocks its main thread', async () => {
    const s = await spinning(['profile'], 'sigkill');
    try {
      s.cli.kill('SIGKILL');
      await s.done;
      // The runner's own watchdog thread notices its parent is gone, although its main thread never yields.
      assert.ok(await eventually(() => !alive(s.runner) && !alive(s.grandchild)), `runner ${s.runner} or its child ${s.grandchild} outlived its parent`);
    } finally {
      for (const pid of [s.runner, s.grandchild]) if (alive(pid)) process.kill(pid, 'SIGKILL');
      fs.rmSync(s.pidFile, { force: true });
    }
  });

  it('refuses time flags beyond what a timer can wait, with the range', async () => {
    for (const flag of ['--timeout', '--seconds', '--warmup']) {
      for (const command of ['profile', 'plan']) {
        const r = await plumber(command, path.join(PIPELINES, 'harden-tiny.ts'), flag, '2200000');
        assert.equal(r.code, 2, `${command} ${flag}: ${r.stderr}`);
        assert.match(r.stderr, new RegExp(`${flag} must be a number .*(to|at most) \\d+, got "2200000"`));
        assert.doesNotMatch(r.stderr, /did not finish/);
      }
    }
  });

  it('passes `check --min-rate 1` on a fast source that ends on the last element of warm-up', async () => {
    const r = await plumber('check', path.join(PIPELINES, 'harden-short.ts'), '--min-rate', '1', '--warmup', '1000', '--seconds', '1', '--quiet');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /≥ 1(\.00)?\/s: ok/);
  });

  it('says the sample is too small, with its own exit code, when the source has fewer elements than a rate needs', async () => {
    const r = await plumber('check', path.join(PIPELINES, 'harden-tiny.ts'), '--min-rate', '1', '--quiet');
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /the source ended after 10 elements \(at least \d+ are needed for a rate\)/);
    const json = await plumber('check', path.join(PIPELINES, 'harden-tiny.ts'), '--min-rate', '1', '--quiet', '--json');
    assert.equal(json.code, 3);
    assert.equal((JSON.parse(json.stdout) as { tooFewElements: boolean }).tooFewElements, true);
  });

  it('refuses `--override …=exportName:constructor`, naming the functions the module exports', async () => {
    const r = await plumber('profile', path.join(PIPELINES, 'harden-export.ts'), ...SHORT, '--override', '8:40=placement:worker', '--override', '8:40=exportName:constructor');
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /exports no function named "constructor"\. Its exported functions: double\./);
  });

  it('says a cache override on /etc/passwd is not a cache, without advice to delete it', async () => {
    const plain = await plumber('profile', path.join(PIPELINES, 'harden-export.ts'), ...SHORT, '--json', '--quiet');
    const map = (JSON.parse(plain.stdout) as { ops: { id: string; kind: string }[] }).ops.find((o) => o.kind === 'map');
    assert.ok(map, plain.stderr);
    const r = await plumber('profile', path.join(PIPELINES, 'harden-export.ts'), ...SHORT, '--override', `${map.id}=cache:/etc/passwd`, '--quiet');
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /\/etc\/passwd is not a plumber-data cache file/);
    assert.doesNotMatch(r.stderr, /delete|remove it/i);
  });

  it('says a directory given as the pipeline is a directory, with no internal stack path', async () => {
    const r = await plumber('profile', PIPELINES);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /pipelines is a directory; give the pipeline's \.ts\/\.js file\./);
    assert.doesNotMatch(r.stderr, /modules\/esm|node:internal|\(at /);
  });
});
