import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runProfile } from '../../../src/runner/spawn';
import { endRun, makePidFile, newRunMark, procInfo, removePidFile } from '../../../src/runner/procs';

const ROOT = path.resolve(__dirname, '../../..');

const PIPELINES = path.resolve(__dirname, '../../fixtures/pipelines');

/** True while the process runs: it exists and has not ended as a zombie waiting for its parent. */
function running(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The private directory of a live runner's pid file, from the request in its command line. */
function runDirOf(runner: number): string {
  const argv = fs.readFileSync(`/proc/${runner}/cmdline`, 'utf8').split('\0').filter(Boolean);
  const request = JSON.parse(argv[argv.length - 1]) as { childPidFile: string };
  return path.dirname(request.childPidFile);
}

/** Waits until the process no longer runs, giving up after a bound far above what it should take. */
async function ended(pid: number, boundMs = 5000): Promise<boolean> {
  const deadline = Date.now() + boundMs;
  while (running(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return !running(pid);
}

describe('a run ends its own processes and no others', function () {
  this.timeout(60_000);
  // Processes a test started or expects ended, by pid and start time: the clean-up never kills a pid reused since.
  const strays = new Map<number, number | undefined>();
  const stray = (...pids: number[]): void => {
    for (const pid of pids) strays.set(pid, procInfo(pid)?.start);
  };
  const planted: string[] = [];
  after(() => {
    for (const [pid, start] of strays) if (running(pid) && start !== undefined && procInfo(pid)?.start === start) process.kill(pid, 'SIGKILL');
    for (const f of planted) fs.rmSync(f, { force: true });
  });

  it('leaves alone a process listed in a pid file another account planted under the name runs once used', async () => {
    const victim = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' });
    stray(victim.pid!);
    // Runs once numbered their pid files per process from 1: cover the numbers this process could have reached.
    for (let n = 1; n <= 300; n++) {
      const f = path.join(os.tmpdir(), `plumber-run-${process.pid}-${n}.pids`);
      fs.writeFileSync(f, `${victim.pid}\n`);
      planted.push(f);
    }
    const profile = await runProfile({ file: path.join(PIPELINES, 'bad/ok.ts'), seconds: 0.3, warmupSeconds: 0.1, probes: false });
    assert.equal(profile.error, undefined, profile.error?.message);
    assert.ok(running(victim.pid!) && victim.exitCode === null && victim.signalCode === null, `Plumber killed pid ${victim.pid}, which was not the run's`);
  });

  it('ends a grandchild the pipeline started through setsid in a shell, and says so', async () => {
    const pidFile = path.join(os.tmpdir(), `plumber-test-${process.pid}-setsid.pid`);
    planted.push(pidFile);
    process.env.PLUMBER_TEST_PIDFILE = pidFile;
    try {
      let dir = '';
      const profile = await runProfile({ file: path.join(PIPELINES, 'procs-setsid.ts'), seconds: 0.3, warmupSeconds: 0.1, probes: false, onStart: (runner) => (dir = runDirOf(runner)) });
      const pid = Number(fs.readFileSync(pidFile, 'utf8'));
      stray(pid);
      assert.equal(profile.error, undefined, profile.error?.message);
      assert.ok(await ended(pid), `the setsid grandchild ${pid} outlived the run`);
      assert.deepEqual(profile.run.warnings, [`pid ${pid} (sleep 1000) left the run's process group; Plumber ended it.`]);
      assert.ok(dir !== '' && !fs.existsSync(dir), `the run's private directory ${dir} was left behind`);
    } finally {
      delete process.env.PLUMBER_TEST_PIDFILE;
    }
  });

  it('prints on the terminal the process `plumber profile` ended for leaving the run', async () => {
    const pidFile = path.join(os.tmpdir(), `plumber-test-${process.pid}-setsid-cli.pid`);
    planted.push(pidFile);
    const cli = spawn(process.execPath, [path.join(ROOT, 'bin/plumber.js'), 'profile', path.join(PIPELINES, 'procs-setsid.ts'), '--seconds', '0.3', '--warmup', '0.1', '--quiet'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, PLUMBER_TEST_PIDFILE: pidFile },
    });
    let stderr = '';
    cli.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => cli.on('close', resolve));
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    stray(pid);
    assert.equal(code, 0, stderr);
    assert.ok(await ended(pid), `the setsid grandchild ${pid} outlived the command`);
    assert.ok(stderr.includes(`plumber: pid ${pid} (sleep 1000) left the run's process group; Plumber ended it.\n`), stderr);
  });

  it("ends a setsid grandchild from the runner's watchdog when the command is killed with SIGKILL while the pipeline blocks its main thread", async () => {
    const pidFile = path.join(os.tmpdir(), `plumber-test-${process.pid}-setsid-watchdog.pid`);
    planted.push(pidFile);
    fs.rmSync(pidFile, { force: true });
    const cli = spawn(process.execPath, [path.join(ROOT, 'bin/plumber.js'), 'profile', path.join(PIPELINES, 'procs-setsid-spins.ts'), '--seconds', '30', '--warmup', '0', '--quiet'], {
      stdio: 'ignore',
      env: { ...process.env, PLUMBER_TEST_PIDFILE: pidFile },
    });
    const closed = new Promise((resolve) => cli.on('close', resolve));
    const deadline = Date.now() + 30_000;
    while (!(fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').includes(' ')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const [runner, grandchild] = fs.readFileSync(pidFile, 'utf8').split(' ').map(Number);
    stray(runner, grandchild);
    assert.ok(running(runner) && running(grandchild), 'the pipeline never started its grandchild');
    const dir = runDirOf(runner);
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700, 'the pid file is not in a directory only its owner can enter');
    cli.kill('SIGKILL');
    await closed;
    assert.ok(await ended(runner, 10_000), `the runner ${runner} outlived its parent`);
    assert.ok(await ended(grandchild, 10_000), `the setsid grandchild ${grandchild} outlived the run`);
    assert.ok(!fs.existsSync(dir), `the run's private directory ${dir} was left behind`);
  });

  it('never signals a recorded pid whose process started at another time than the one recorded: the pid was reused', () => {
    // A stand-in runner and a process it recorded, each in a group of its own.
    const runner = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' });
    const other = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' });
    stray(runner.pid!, other.pid!);
    const pidFile = makePidFile();
    try {
      const run = { runnerPid: runner.pid!, runnerStart: procInfo(runner.pid!)!.start, mark: newRunMark(), pidFile };
      fs.writeFileSync(pidFile, `${other.pid} ${procInfo(other.pid!)!.start + 1}\n`);
      assert.deepEqual(endRun(run), []);
      assert.ok(running(other.pid!), 'a process the run did not start was killed');
      fs.writeFileSync(pidFile, `${other.pid} ${procInfo(other.pid!)!.start}\n`);
      assert.deepEqual(
        endRun(run).map((e) => e.pid),
        [other.pid],
      );
    } finally {
      removePidFile(pidFile);
    }
  });
});
