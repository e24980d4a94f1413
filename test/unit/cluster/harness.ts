/**
 * The real parts of the cluster tests: a redis-server on a free loopback port and worker
 * processes (`plumber-data worker`, from source under tsx), each a separate OS process that the
 * suite kills and waits for in its after hooks.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort, gone, readyOn } from '../../helpers/processes';

export { freePort };

const ROOT = join(__dirname, '..', '..', '..');
export const TRANSFORMS = join(__dirname, 'fixtures', 'transforms.ts');
export const CLI = join(ROOT, 'src', 'data', 'cluster', 'cli.ts');

/** Every process a suite started, so its after hook can end them all. */
export class Processes {
  private readonly all: ChildProcess[] = [];

  async redis(port: number): Promise<ChildProcess> {
    const p = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.all.push(p);
    await readyOn(p, /Ready to accept connections/, 'redis-server');
    return p;
  }

  async worker(port: number, name: string, concurrency: number, lockMs = 1000, more: string[] = []): Promise<ChildProcess> {
    const args = ['--import', 'tsx', CLI, 'worker', '--redis', `redis://127.0.0.1:${port}`, '--name', name, '--module', TRANSFORMS, '--concurrency', String(concurrency), '--lock-ms', String(lockMs), ...more];
    const p = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    this.all.push(p);
    await readyOn(p, /serving cluster/, 'the worker');
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
