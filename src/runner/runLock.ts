/**
 * One measuring run at a time per machine. Two profiles that run at once share the cores, so both
 * measure a machine that is not the one they describe. Every Plumber process (each language
 * server, each CLI) takes an advisory lock file in the temp directory before it starts a runner,
 * and waits while another live process holds it. The file holds the holder's pid: a lock whose
 * holder died without releasing it (kill -9) is stale and taken over.
 *
 * Waiting is first come, first served: each waiter leaves a ticket (a file named by the time it
 * started waiting) in a queue folder beside the lock, and only the oldest live ticket may take
 * the lock. Without the queue a process that runs many profiles in a row (a benchmark, a plan's
 * verification) took the lock back the instant it let it go, and a waiter polling every 200 ms
 * could wait for all of them.
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
/** Queue tickets this process holds while it waits, removed on exit likewise. */
const tickets = new Set<string>();
let exitHook = false;

function hookExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const [t, f] of held) releaseIfOurs(f, t);
    for (const t of tickets) fs.rmSync(t, { force: true });
  });
}

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

/** Tickets of waiting processes: `<µs since epoch, 17 digits>-<pid>-<uuid>`, oldest first by name. */
function queueDir(file: string): string {
  return `${file}.queue`;
}

let lastTicketTime = 0;

/**
 * Microseconds since the epoch, strictly increasing within this process: two tickets one process
 * takes in the same millisecond (a run let go and asked for again at once) must still sort in the
 * order they were taken, or the later one could jump the queue.
 */
function ticketTime(): number {
  lastTicketTime = Math.max(Math.floor((performance.timeOrigin + performance.now()) * 1000), lastTicketTime + 1);
  return lastTicketTime;
}

function ticketPid(name: string): number | undefined {
  const pid = Number(name.split('-')[1]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** Whether `ticket` is the oldest live ticket in the queue; tickets of dead processes are removed on the way. */
function firstInQueue(dir: string, ticket: string): boolean {
  let names: string[];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    return true;
  }
  for (const name of names) {
    if (name === ticket) return true;
    const pid = ticketPid(name);
    if (pid !== undefined && alive(pid)) return false;
    // A waiter that died (kill -9) left its ticket behind: it must not block the queue.
    fs.rmSync(path.join(dir, name), { force: true });
  }
  // Our own ticket is gone (someone cleaned the temp folder): nobody is known to be ahead of us.
  return true;
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
  const dir = queueDir(file);
  const ticket = `${String(ticketTime()).padStart(17, '0')}-${process.pid}-${randomUUID()}`;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, ticket), '');
  tickets.add(path.join(dir, ticket));
  const leaveQueue = (): void => {
    tickets.delete(path.join(dir, ticket));
    fs.rmSync(path.join(dir, ticket), { force: true });
  };
  hookExit();
  let lastHolder: number | undefined;
  try {
    for (;;) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('aborted');
      // A waiter behind an older ticket waits for its turn without touching the lock.
      const holder = firstInQueue(dir, ticket) ? tryTake(file, token) : (holderOf(file) ?? -1);
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
  } finally {
    leaveQueue();
  }
  held.set(token, file);
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
