/**
 * The runner child's own process: its IPC channel to the parent, its exit, and the processes that
 * would outlive it. The profile goes over IPC, never stdout/stderr (the user's code owns them), and
 * no process or thread of a run outlives it.
 */
import { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { RunnerMessage } from '../shared/profile';
import { findRunnerBundle } from './bundles';
import { recordChild } from './procs';
import { EXIT_MARKER } from './request';
import type { WatchdogData } from './watchdog';
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

/** How often the watchdog looks at the parent: a dead parent's runner ends within about this. */
const WATCHDOG_POLL_MS = 250;

/** Starts the watchdog thread (watchdog.ts), which ends the run when the parent dies. */
export function startWatchdog(childPidFile: string | undefined): void {
  const file = findRunnerBundle('watchdog.js');
  if (!process.send || !file) return;
  try {
    const data: WatchdogData = { ppid: process.ppid, pidFile: childPidFile, pollMs: WATCHDOG_POLL_MS };
    // No loader hooks in the watchdog: it is a plain CommonJS bundle, and starting tsx there costs time.
    const worker = new Worker(file, { execArgv: [], workerData: data, resourceLimits: { maxOldGenerationSizeMb: 16 } });
    worker.unref();
    worker.on('error', () => undefined);
  } catch {
    // Without the watchdog the 'disconnect' handler still covers a parent that dies while idle.
  }
}

/**
 * Records the processes the pipeline starts in a group of their own (`detached: true`), which a
 * kill of the runner's group does not reach, with their start times: the parent and the watchdog
 * end them from the file even when the pipeline gave them an environment without the run's mark.
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
        recordChild(childPidFile, this.pid);
      } catch {
        // The pid file is gone: the run is ending, and its end looks for the run's processes anyway.
      }
    }
    return result;
  };
}
