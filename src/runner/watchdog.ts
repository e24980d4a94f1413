/**
 * The runner's watchdog, a thread of its own (a bundle of its own, dist/runner/watchdog.js, started
 * by child.ts). The runner's 'disconnect' handler cannot run while the pipeline blocks the main
 * thread, so a parent that dies (kill -9, a crash) would leave the runner spinning forever,
 * re-parented to init. This thread notices the parent is gone (the runner's parent pid changes, or
 * the parent no longer exists) and ends the run: what of it left the runner's process group,
 * the run's private directory, then the group, the runner with it.
 */
import { workerData } from 'node:worker_threads';
import { RUN_MARK_ENV, endRun, procInfo, removePidFile } from './procs';

/** What child.ts hands the watchdog. */
export interface WatchdogData {
  ppid: number;
  pidFile?: string;
  pollMs: number;
}

const { ppid, pidFile, pollMs } = workerData as WatchdogData;
const run = { runnerPid: process.pid, runnerStart: procInfo(process.pid)?.start ?? 0, mark: process.env[RUN_MARK_ENV] ?? '', pidFile };

setInterval(() => {
  let gone = process.ppid !== ppid;
  if (!gone) {
    try {
      process.kill(ppid, 0);
    } catch (e) {
      gone = (e as NodeJS.ErrnoException).code === 'ESRCH';
    }
  }
  if (!gone) return;
  try {
    endRun(run);
    // Nobody else is left to remove the run's private directory.
    if (pidFile) removePidFile(pidFile);
  } finally {
    process.kill(-process.pid, 'SIGKILL');
  }
}, pollMs);
