/**
 * Worker processes standing in for hosts: a redis-server on a free loopback port and `workers`
 * `plumber-data worker` processes serving `name` with `module`, all on this machine. They are
 * children of this process (in its process group, which the Plumber runner ends with the run), and
 * are killed when it exits.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as path from 'node:path';

export interface LocalCluster {
  /** The Redis URL to `connect()` to: known at once, so the pipeline can be built synchronously. */
  url: string;
  /** Resolves once Redis and every worker are ready. */
  ready: Promise<void>;
}

const ROOT = path.resolve(__dirname, '../..');

/** A loopback port nothing listens on now, found synchronously (a module's top level cannot await). */
function freePortSync(): number {
  const script = "const s=require('node:net').createServer().listen(0,'127.0.0.1',()=>{process.stdout.write(String(s.address().port));s.close()})";
  return Number(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
}

function whenReady(p: ChildProcess, ready: RegExp, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const on = (b: Buffer): void => {
      out += b.toString();
      if (ready.test(out)) {
        p.stdout?.off('data', on);
        p.stdout?.resume();
        resolve();
      }
    };
    p.stdout?.on('data', on);
    p.stderr?.on('data', (b: Buffer) => (out += b.toString()));
    p.once('exit', (code) => reject(new Error(`${what} exited (${code}) before it was ready:\n${out}`)));
    // A program that is not installed never starts, so it never exits either: say so.
    p.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        new Error(
          e.code === 'ENOENT' && what === 'redis-server'
            ? 'redis-server is not installed: install Redis (Debian: apt-get install redis-server), or set PLUMBER_REDIS to a Redis URL your workers use'
            : `${what} could not start: ${e.message}`,
        ),
      ),
    );
  });
}

export function startLocalCluster(o: { workers: number; name: string; module: string; concurrency?: number }): LocalCluster {
  const port = freePortSync();
  const url = `redis://127.0.0.1:${port}`;
  const children: ChildProcess[] = [];
  process.once('exit', () => {
    for (const c of children) c.kill('SIGKILL');
  });
  const start = (cmd: string, args: string[]): ChildProcess => {
    const p = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(p);
    return p;
  };
  const ready = (async () => {
    await whenReady(start('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']), /Ready to accept connections/, 'redis-server');
    const bin = path.join(ROOT, 'src/data/cluster/bin.js');
    const args = ['worker', '--redis', url, '--name', o.name, '--module', o.module, '--concurrency', String(o.concurrency ?? 4)];
    await Promise.all(Array.from({ length: o.workers }, () => whenReady(start(process.execPath, [bin, ...args]), /serving cluster/, 'plumber-data worker')));
  })();
  // A failure is reported where the pipeline awaits `ready`; never as an unhandled rejection.
  ready.catch(() => undefined);
  return { url, ready };
}
