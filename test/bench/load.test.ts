import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const FIXTURE = join(__dirname, 'fixtures', 'under-load.ts');

/** A stand-in benchmark under `threads` of background load, with its output as lines. */
class Bench {
  readonly child: ChildProcess;
  readonly lines: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private waiters: Array<() => void> = [];

  constructor(threads: number) {
    this.child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, String(threads)], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
    let partial = '';
    this.child.stdout!.on('data', (c: Buffer) => {
      const parts = (partial + c.toString()).split('\n');
      partial = parts.pop()!;
      this.lines.push(...parts);
      for (const w of this.waiters.splice(0)) w();
    });
    this.exited = new Promise((done) => this.child.on('exit', (code, signal) => done({ code, signal })));
  }

  /** Resolves with the first line that matches, once it has been printed. */
  async line(pattern: RegExp): Promise<RegExpMatchArray> {
    for (;;) {
      for (const l of this.lines) {
        const m = l.match(pattern);
        if (m) return m;
      }
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  /** The pid of the process burning the background threads, from the benchmark's own log. */
  async burnerPid(): Promise<number> {
    return Number((await this.line(/burning in process (\d+)/))[1]);
  }
}

/** Whether the process runs (a zombie, dead but not yet reaped by its new parent, does not). */
function running(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return false;
  try {
    const state = readFileSync(stat, 'utf8').split(') ')[1]?.[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** User + system CPU ticks the process has used. */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 50));

/** Resolves once the process no longer runs; only the test's timeout bounds the wait. */
async function gone(pid: number): Promise<void> {
  while (running(pid)) await tick();
}

describe('the background load of --load', function () {
  // Each case starts a Node process and a burner; the limit only stops a hang.
  this.timeout(120_000);
  const started: Bench[] = [];
  afterEach(() => {
    for (const b of started.splice(0)) if (b.child.exitCode === null && b.child.signalCode === null) b.child.kill('SIGKILL');
  });
  const bench = (threads: number): Bench => {
    const b = new Bench(threads);
    started.push(b);
    return b;
  };

  it('burns CPU in a process of its own while the work runs, and is gone when the work ends', async () => {
    const b = bench(2);
    const pid = await b.burnerPid();
    await b.line(/^work: started/);
    const before = cpuTicks(pid);
    while (cpuTicks(pid) < before + 5) await tick();
    b.child.stdin!.end('finish\n');
    assert.deepEqual(await b.exited, { code: 0, signal: null });
    assert.equal(running(pid), false, 'the burner outlived the benchmark');
    const end = b.lines.findIndex((l) => /load average at end/.test(l));
    assert.ok(end > b.lines.indexOf('work: started'), 'the load average at the end is printed after the work');
  });

  it('is gone when the work throws', async () => {
    const b = bench(1);
    const pid = await b.burnerPid();
    await b.line(/^work: started/);
    b.child.stdin!.end('fail\n');
    assert.equal((await b.exited).code, 1);
    assert.equal(running(pid), false, 'the burner outlived the failed benchmark');
    assert.ok(b.lines.includes('work: the work failed'));
  });

  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    it(`aborts the work and is gone on ${signal}`, async () => {
      const b = bench(1);
      const pid = await b.burnerPid();
      await b.line(/^work: started/);
      b.child.kill(signal);
      assert.equal((await b.exited).code, code);
      await gone(pid);
      const aborted = b.lines.indexOf('work: aborted');
      assert.ok(aborted >= 0, 'the work was not told to stop, so its runs would outlive the benchmark');
      assert.ok(b.lines.findIndex((l) => l.includes(`stopped by ${signal}`)) > aborted, 'the stop is reported after the work was aborted');
    });
  }

  it('ends by itself when the benchmark is killed outright', async () => {
    const b = bench(1);
    const pid = await b.burnerPid();
    b.child.kill('SIGKILL');
    await b.exited;
    await gone(pid);
    assert.equal(running(pid), false);
  });

  it('starts no process at load 0 and still prints the load average at start and end', async () => {
    const b = bench(0);
    await b.line(/^work: started/);
    b.child.stdin!.end('finish\n');
    assert.equal((await b.exited).code, 0);
    assert.ok(!b.lines.some((l) => /burning in process/.test(l)));
    assert.ok(b.lines.some((l) => /^load 0: load average at start/.test(l)));
    assert.ok(b.lines.some((l) => /^load 0: load average at end/.test(l)));
  });
});
