import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runProfile } from '../../../src/runner/spawn';
import type { RunProfileOptions } from '../../../src/runner/spawn';
import { acquireRunLock } from '../../../src/runner/runLock';
import type { Profile } from '../../../src/shared/profile';

const PIPELINES = path.resolve(__dirname, '../../fixtures/pipelines');
const ROOT = path.resolve(__dirname, '../../..');

/** A process that does nothing until killed: a live holder of the lock. */
function idleProcess(): ChildProcess {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((r) => child.once('exit', r));
}

function run(extra: Partial<RunProfileOptions> = {}): Promise<Profile> {
  return runProfile({ file: path.join(PIPELINES, 'harden-tiny.ts'), seconds: 0.3, warmupSeconds: 0.1, timeoutSeconds: 30, probes: false, ...extra });
}

describe('one Plumber run at a time on this machine', function () {
  this.timeout(60_000);
  let lockFile: string;
  let saved: string | undefined;

  beforeEach(() => {
    lockFile = path.join(os.tmpdir(), `plumber-test-${process.pid}-${Math.random().toString(36).slice(2)}.lock`);
    saved = process.env.PLUMBER_RUN_LOCK;
    process.env.PLUMBER_RUN_LOCK = lockFile;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.PLUMBER_RUN_LOCK;
    else process.env.PLUMBER_RUN_LOCK = saved;
    fs.rmSync(lockFile, { force: true });
    fs.rmSync(`${lockFile}.queue`, { recursive: true, force: true });
  });

  it('waits while another live process measures, says so with its pid, and starts only after it is gone', async () => {
    const holder = idleProcess();
    fs.writeFileSync(lockFile, `${holder.pid} other-run`);
    const events: string[] = [];
    const pending = run({
      onWaiting: (pid) => {
        events.push(`waiting for ${pid}`);
        holder.kill('SIGKILL');
        events.push('holder killed');
      },
      onStart: () => events.push('started'),
    });
    const profile = await pending;
    await exited(holder);
    assert.equal(profile.error, undefined, profile.error?.message);
    assert.deepEqual(events, [`waiting for ${holder.pid}`, 'holder killed', 'started']);
    assert.ok(!fs.existsSync(lockFile), 'the lock is released after the run');
  });

  it('takes over a lock whose holder is dead without waiting', async () => {
    const dead = idleProcess();
    dead.kill('SIGKILL');
    await exited(dead);
    fs.writeFileSync(lockFile, `${dead.pid} crashed-run`);
    const waits: number[] = [];
    const profile = await run({ onWaiting: (pid) => waits.push(pid) });
    assert.equal(profile.error, undefined, profile.error?.message);
    assert.deepEqual(waits, []);
    assert.ok(!fs.existsSync(lockFile));
  });

  it('runs two profiles of one process one after the other, never both at once', async () => {
    const events: string[] = [];
    const one = run({ onStart: () => events.push('one started') }).then((p) => (events.push('one ended'), p));
    const two = run({ onStart: () => events.push('two started') }).then((p) => (events.push('two ended'), p));
    const [a, b] = await Promise.all([one, two]);
    assert.equal(a.error, undefined, a.error?.message);
    assert.equal(b.error, undefined, b.error?.message);
    const started = events.filter((e) => e.endsWith('started'));
    assert.equal(started.length, 2);
    // Whichever started first ended before the other started.
    const first = started[0].split(' ')[0];
    assert.ok(events.indexOf(`${first} ended`) < events.indexOf(started[1]), events.join(', '));
  });

  it('releases the lock when the run fails, and when it is cancelled while waiting (leaving the holder its lock)', async () => {
    const failed = await run({ file: path.join(PIPELINES, 'bad/throws.ts') });
    assert.equal(failed.error?.kind, 'throw');
    assert.ok(!fs.existsSync(lockFile), 'released after an error');

    const holder = idleProcess();
    try {
      fs.writeFileSync(lockFile, `${holder.pid} other-run`);
      const controller = new AbortController();
      const cancelled = await run({ signal: controller.signal, onWaiting: () => controller.abort() });
      assert.equal(cancelled.error?.kind, 'cancelled');
      assert.equal(fs.readFileSync(lockFile, 'utf8'), `${holder.pid} other-run`);
    } finally {
      holder.kill('SIGKILL');
      await exited(holder);
    }
  });

  it('releases the lock when the CLI is stopped by a signal during the run', async () => {
    const pidFile = path.join(os.tmpdir(), `plumber-test-${process.pid}-lock-signal.pid`);
    fs.rmSync(pidFile, { force: true });
    const cli = spawn(process.execPath, [path.join(ROOT, 'bin/plumber.js'), 'profile', path.join(PIPELINES, 'harden-spins.ts'), '--seconds', '30', '--quiet'], {
      stdio: 'ignore',
      env: { ...process.env, PLUMBER_TEST_PIDFILE: pidFile, PLUMBER_RUN_LOCK: lockFile },
    });
    try {
      const deadline = Date.now() + 30_000;
      while (!fs.existsSync(pidFile) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(fs.readFileSync(lockFile, 'utf8').split(' ')[0], String(cli.pid), 'the CLI holds the lock while its pipeline runs');
      cli.kill('SIGTERM');
      await exited(cli);
      assert.ok(!fs.existsSync(lockFile), 'released on SIGTERM');
    } finally {
      fs.rmSync(pidFile, { force: true });
    }
  });

  it('hands a stale lock to exactly one of several takers', async () => {
    fs.writeFileSync(lockFile, '999999999 gone');
    const controller = new AbortController();
    const attempts = [1, 2, 3].map(() => acquireRunLock({ file: lockFile, signal: controller.signal }).catch(() => 'cancelled' as const));
    const first = await Promise.race(attempts);
    // The others wait for the holder: stop them, and only one lock was ever handed out.
    controller.abort();
    const all = await Promise.all(attempts);
    assert.ok(first && first !== 'cancelled');
    assert.equal(all.filter((l) => l !== 'cancelled').length, 1);
    assert.equal(fs.readFileSync(lockFile, 'utf8').split(' ')[0], String(process.pid));
    first.release();
    assert.ok(!fs.existsSync(lockFile));
  });
  it('serves waiters first come, first served: a holder that lets go and asks again goes behind the one already waiting', async () => {
    const holder = (await acquireRunLock({ file: lockFile }))!;
    const order: string[] = [];
    let waiting!: () => void;
    const isWaiting = new Promise<void>((r) => (waiting = r));
    const waiter = acquireRunLock({ file: lockFile, onWait: () => waiting() }).then((l) => (order.push('waiter'), l!));
    await isWaiting;
    // A benchmark's next run: release and ask again at once.
    holder.release();
    const again = acquireRunLock({ file: lockFile }).then((l) => (order.push('holder again'), l!));
    (await waiter).release();
    (await again).release();
    assert.deepEqual(order, ['waiter', 'holder again']);
    // Nobody waits any more: the queue holds no ticket.
    assert.deepEqual(fs.readdirSync(`${lockFile}.queue`), []);
  });

  it('does not let the ticket of a waiter that died block the queue', async () => {
    fs.mkdirSync(`${lockFile}.queue`, { recursive: true });
    fs.writeFileSync(path.join(`${lockFile}.queue`, '00000000000000001-999999999-dead'), '');
    const lock = await acquireRunLock({ file: lockFile });
    assert.ok(lock);
    lock.release();
    assert.deepEqual(fs.readdirSync(`${lockFile}.queue`), []);
  });
});
