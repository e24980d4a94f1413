/**
 * The real parts of the cluster tests: a redis-server on a free loopback port and worker
 * processes (`plumber-data worker`, from source under tsx), each a separate OS process that the
 * suite kills and waits for in its after hooks.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { gone } from '../../helpers/processes';

const ROOT = join(__dirname, '..', '..', '..');
export const TRANSFORMS = join(__dirname, 'fixtures', 'transforms.ts');
export const CLI = join(ROOT, 'src', 'data', 'cluster', 'cli.ts');

/** A port nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Resolves when `p` prints a line matching `re` on stdout; rejects if it exits first. */
function waitFor(p: ChildProcess, re: RegExp, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const onData = (b: Buffer): void => {
      out += b.toString();
      const m = re.exec(out);
      if (m !== null) {
        p.stdout?.off('data', onData);
        resolve(m[0]);
      }
    };
    p.stdout?.on('data', onData);
    p.stderr?.on('data', (b: Buffer) => (err += b.toString()));
    p.once('exit', (code, signal) => reject(new Error(`${what} exited (${code ?? signal}) before it was ready:\n${out}${err}`)));
  });
}

/** Every process a suite started, so its after hook can end them all. */
export class Processes {
  private readonly all: ChildProcess[] = [];

  async redis(port: number): Promise<ChildProcess> {
    const p = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.all.push(p);
    await waitFor(p, /Ready to accept connections/, 'redis-server');
    return p;
  }

  async worker(port: number, name: string, concurrency: number, lockMs = 1000, more: string[] = []): Promise<ChildProcess> {
    const args = ['--import', 'tsx', CLI, 'worker', '--redis', `redis://127.0.0.1:${port}`, '--name', name, '--module', TRANSFORMS, '--concurrency', String(concurrency), '--lock-ms', String(lockMs), ...more];
    const p = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    this.all.push(p);
    await waitFor(p, /serving cluster/, 'the worker');
    // Keep draining its output, or a chatty worker would block on a full pipe.
    p.stdout?.resume();
    return p;
  }

  /** Kills one process (SIGKILL: no goodbye, as when a host dies) and waits until it is gone. */
  async kill(p: ChildProcess): Promise<boolean> {
    p.kill('SIGKILL');
    return gone(p.pid as number);
  }

  async killAll(): Promise<void> {
    for (const p of this.all) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    for (const p of this.all) await gone(p.pid as number);
    this.all.length = 0;
  }
}
