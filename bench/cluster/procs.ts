/**
 * The processes of the cluster benchmarks: redis-server on a free loopback port and
 * `plumber-data worker` processes through the real bin, each tracked so that none outlives the
 * benchmark (they are SIGKILLed when it exits, however it exits).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { freePort, readyOn } from '../../test/helpers/processes';

const ROOT = path.resolve(__dirname, '../..');
const BIN = path.join(ROOT, 'src/data/cluster/bin.js');

const children = new Set<ChildProcess>();
export function endAll(): void {
  for (const c of children) c.kill('SIGKILL');
}
process.on('exit', endAll);
process.on('SIGINT', () => process.exit(130));

export { freePort };

/** Tracks a process so that it is killed when the benchmark exits. */
export function track(p: ChildProcess): ChildProcess {
  children.add(p);
  p.once('exit', () => children.delete(p));
  return p;
}

/** Sends `signal` and waits until the process has exited. */
export async function stop(p: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const done = new Promise((r) => p.once('exit', r));
  p.kill(signal);
  await done;
}

/** redis-server without persistence, or with an append-only file in `aofDir` (fsync on every write). */
export async function startRedis(port: number, aofDir?: string): Promise<ChildProcess> {
  const persistence = aofDir === undefined ? ['--save', '', '--appendonly', 'no'] : ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', aofDir];
  const p = track(spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', ...persistence], { stdio: ['ignore', 'pipe', 'pipe'] }));
  await readyOn(p, /Ready to accept connections/, 'redis-server');
  p.stdout?.resume();
  return p;
}

export interface WorkerOptions {
  module: string;
  concurrency: number;
  lockMs: number;
  /** Flags for node itself, such as a small heap. */
  nodeArgs?: string[];
}

export async function startWorker(url: string, name: string, o: WorkerOptions): Promise<ChildProcess> {
  const args = [...(o.nodeArgs ?? []), BIN, 'worker', '--redis', url, '--name', name, '--module', o.module, '--concurrency', String(o.concurrency), '--lock-ms', String(o.lockMs)];
  const p = track(spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] }));
  await readyOn(p, /serving cluster/, 'plumber-data worker');
  p.stdout?.resume();
  return p;
}
