/**
 * One measuring run at a time per machine. Two profiles that run at once share the cores, so both
 * measure a machine that is not the one they describe. Every Plumber process (each language
 * server, each CLI) takes an advisory lock file in the temp directory before it starts a runner,
 * and waits while another live process holds it. The file holds the holder's pid: a lock whose
 * holder died without releasing it (kill -9) is stale and taken over.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Where the lock lives: `PLUMBER_RUN_LOCK` names another file, or `off` turns the lock off. */
export function runLockPath(): string | undefined {
  const env = process.env.PLUMBER_RUN_LOCK;
  if (env === 'off') return undefined;
  return env && env !== '' ? env : path.join(os.tmpdir(), 'plumber-run.lock');
}

/** How often a waiting run looks at the lock again. */
const POLL_MS = 200;

/** The pid written in a lock file, or undefined when the file is unreadable or malformed. */
function holderOf(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').split(' ')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Locks this process holds, released on exit whatever the way out (process.exit, a signal the CLI turns into an exit). */
const held = new Map<string, string>();
let exitHook = false;

function releaseIfOurs(file: string, token: string): void {
  try {
    if (fs.readFileSync(file, 'utf8') === token) fs.unlinkSync(file);
  } catch {
    // Already gone.
  }
}

/**
 * Tries once to take the lock. Returns the holder's pid when a live process holds it, or
 * undefined when the lock is now ours.
 */
function tryTake(file: string, token: string): number | undefined {
  for (;;) {
    try {
      fs.writeFileSync(file, token, { flag: 'wx' });
      return undefined;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const holder = holderOf(file);
    if (holder !== undefined && alive(holder)) return holder;
    if (holder === undefined) {
      // A holder writes its pid in the same call that creates the file, so an empty file is one
      // being written this instant or one left by a crash mid-write: look again after a pause.
      try {
        if (Date.now() - fs.statSync(file).mtimeMs < 2000) return -1;
      } catch {
        continue;
      }
    }
    // Stale: move it aside under a name of our own, so two processes taking over at once cannot
    // both remove it, and check it is still the stale one before deleting it.
    const aside = `${file}.${process.pid}.${randomUUID()}`;
    try {
      fs.renameSync(file, aside);
    } catch {
      continue;
    }
    if (holderOf(aside) === holder) fs.rmSync(aside, { force: true });
    else {
      // Another process took the lock over between our read and our rename: put its file back.
      try {
        fs.linkSync(aside, file);
      } catch {
        // A third process holds it now; the moved file's owner will find its lock gone and its
        // run already started, which is the same as any stale lock.
      }
      fs.rmSync(aside, { force: true });
    }
  }
}

/** A held lock: call `release` once the run ends (calling it twice is fine). */
export interface RunLock {
  release(): void;
}

/**
 * Waits until this process holds the machine's run lock. `onWait` is called with the holder's pid
 * whenever the holder changes (a pid of -1 means a lock being written). Resolves undefined,
 * without waiting, when the lock is off; rejects with the signal's reason when aborted.
 */
export async function acquireRunLock(opts: { signal?: AbortSignal; onWait?(pid: number): void; file?: string } = {}): Promise<RunLock | undefined> {
  const file = opts.file ?? runLockPath();
  if (file === undefined) return undefined;
  const token = `${process.pid} ${randomUUID()}`;
  let lastHolder: number | undefined;
  for (;;) {
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('aborted');
    const holder = tryTake(file, token);
    if (holder === undefined) break;
    if (holder !== lastHolder) opts.onWait?.(holder);
    lastHolder = holder;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, POLL_MS);
      function done(): void {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', done);
        resolve();
      }
      opts.signal?.addEventListener('abort', done, { once: true });
    });
  }
  held.set(token, file);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const [t, f] of held) releaseIfOurs(f, t);
    });
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      held.delete(token);
      releaseIfOurs(file, token);
    },
  };
}
