/** Helpers for tests (and benchmarks) that start real processes and check that none outlives its run. */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** True while a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until the process is gone, giving up after a bound far above what it should take. */
export async function gone(pid: number, boundMs = 5000): Promise<boolean> {
  const deadline = Date.now() + boundMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
}

/** A loopback port nothing listens on now. */
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

/**
 * Resolves with the match when `p` prints something matching `re` on stdout; rejects, with what it
 * printed, if it exits first. The caller drains stdout afterwards if the process keeps talking.
 */
export function readyOn(p: ChildProcess, re: RegExp, what: string): Promise<string> {
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
