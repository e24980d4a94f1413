/**
 * The runner child's own process: its IPC channel to the parent, its exit, and the processes that
 * would outlive it. The profile goes over IPC, never stdout/stderr (the user's code owns them), and
 * no process or thread of a run outlives it.
 */
import { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { RunnerMessage } from '../shared/profile';
import { EXIT_MARKER } from './request';
import { timerMs } from './timers';

/** Sends a message to the parent; resolves once it is handed over (at once with no parent). */
export function send(message: RunnerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send || !process.connected) return resolve();
    process.send(message, undefined, {}, () => resolve());
  });
}

/** The most the runner waits for its stdout/stderr to drain before it exits anyway. */
const DRAIN_SECONDS = 10;

/**
 * Resolves once everything written to `stream` so far has been handed to the OS. Writes to a
 * pipe are asynchronous, and process.exit drops what is still queued: a pipeline that printed
 * 20,000 lines would lose most of them.
 */
function drained(stream: NodeJS.WritableStream & { writableLength?: number; destroyed?: boolean }): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || stream.writableLength === 0) return resolve();
    const timer = setTimeout(resolve, timerMs(DRAIN_SECONDS));
    // Writes complete in order: the callback of an empty write runs after every earlier one.
    stream.write('', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Sends the final message, then ends the process even if the user's code left handles open. */
export async function finish(message: RunnerMessage): Promise<void> {
  await send(message);
  await Promise.all([drained(process.stdout), drained(process.stderr)]);
  process.exitCode = 0;
  // Calls the real exit: the pipeline's process.exit is wrapped below.
  realExit(0);
}

export const realExit = process.exit.bind(process) as (code?: number) => never;

/** Reports the stack of a pipeline's process.exit call, then exits as asked. */
export function trapExit(): void {
  process.exit = ((code?: number | string | null) => {
    const where =
      (new Error().stack ?? '')
        .split('\n')
        .slice(2)
        .map((l) => l.trim())
        .find((l) => !l.includes('(<anonymous>)') && !l.includes('node:')) ?? '';
    try {
      fs.writeSync(2, `${EXIT_MARKER}${JSON.stringify({ code: code ?? 0, where })}\n`);
    } catch {
      // stderr closed: the parent still sees the exit code.
    }
    return realExit(typeof code === 'number' ? code : Number(code ?? 0) || 0);
  }) as typeof process.exit;
}

/**
 * Watches the parent from a thread of its own. The runner's 'disconnect' handler cannot run while
 * the pipeline blocks the main thread, so a parent that dies (kill -9, a crash) would leave the
 * runner spinning forever, re-parented to init. This thread notices the parent is gone (the
 * runner's parent pid changes, or the parent no longer exists) and kills the runner's process
 * group and what the pipeline started in groups of its own.
 */
const WATCHDOG = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { ppid, pidFile, pollMs } = workerData;
const kill = (pid) => { try { process.kill(pid, 'SIGKILL'); } catch {} };
setInterval(() => {
  let gone = process.ppid !== ppid;
  if (!gone) {
    try { process.kill(ppid, 0); } catch (e) { gone = e.code === 'ESRCH'; }
  }
  if (!gone) return;
  if (pidFile) {
    let text = '';
    try { text = fs.readFileSync(pidFile, 'utf8'); } catch {}
    for (const n of text.split('\\n').map(Number)) if (Number.isInteger(n) && n > 1) { kill(-n); kill(n); }
  }
  kill(-process.pid);
  kill(process.pid);
}, pollMs);
`;

/** How often the watchdog looks at the parent: a dead parent's runner ends within about this. */
const WATCHDOG_POLL_MS = 250;

export function startWatchdog(childPidFile: string | undefined): void {
  if (!process.send) return;
  try {
    // No loader hooks in the watchdog: it is plain CommonJS, and starting tsx there costs time.
    const worker = new Worker(WATCHDOG, { eval: true, execArgv: [], workerData: { ppid: process.ppid, pidFile: childPidFile, pollMs: WATCHDOG_POLL_MS }, resourceLimits: { maxOldGenerationSizeMb: 16 } });
    worker.unref();
    worker.on('error', () => undefined);
  } catch {
    // Without the watchdog the 'disconnect' handler still covers a parent that dies while idle.
  }
}

/**
 * Records the processes the pipeline starts in a group of their own (`detached: true`), which a
 * kill of the runner's group does not reach: the parent and the watchdog end them from the file.
 * Every asynchronous way to start a process (spawn, fork, exec, execFile) goes through
 * ChildProcess.prototype.spawn, so one wrapper sees them all.
 */
export function trackDetachedChildren(childPidFile: string | undefined): void {
  if (!childPidFile) return;
  const proto = ChildProcess.prototype as unknown as { spawn(this: ChildProcess, options: { detached?: boolean }): unknown };
  const original = proto.spawn;
  proto.spawn = function (this: ChildProcess, options: { detached?: boolean }) {
    const result = original.call(this, options);
    if (options?.detached && this.pid !== undefined) {
      try {
        fs.appendFileSync(childPidFile, `${this.pid}\n`);
      } catch {
        // The temp directory is not writable: the process may outlive the run.
      }
    }
    return result;
  };
}
