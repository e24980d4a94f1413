/**
 * The calling thread's own CPU time. `process.cpuUsage()` covers every thread of the process, so an
 * operator waiting on workers would be charged their CPU; this clock sees one thread only.
 *
 * - Node >= 22.19 / 23.9: `process.threadCpuUsage()` (~0.5 µs; advances in scheduler ticks).
 * - Linux otherwise: the first field of `/proc/thread-self/schedstat` (ns on CPU), read through a
 *   file descriptor opened once per thread (~2 µs).
 * - Elsewhere: wall time (`performance.now()`), which over-counts when threads compete for cores.
 */
import { closeSync, openSync, readSync } from 'node:fs';

export type CpuClockKind = 'threadCpuUsage' | 'schedstat' | 'wall';

type ThreadCpuUsage = () => { user: number; system: number };

let kind: CpuClockKind | undefined;
let fd = -1;
const buf = Buffer.alloc(96);
let threadUsage: ThreadCpuUsage | undefined;

function detect(): CpuClockKind {
  const p = process as unknown as { threadCpuUsage?: ThreadCpuUsage };
  if (typeof p.threadCpuUsage === 'function') {
    threadUsage = p.threadCpuUsage.bind(process);
    return 'threadCpuUsage';
  }
  if (process.platform === 'linux') {
    try {
      fd = openSync('/proc/thread-self/schedstat', 'r');
      if (readSchedstat() >= 0) return 'schedstat';
      closeSync(fd);
      fd = -1;
    } catch {
      fd = -1;
    }
  }
  return 'wall';
}

/** Nanoseconds on CPU from schedstat's first field; -1 when unreadable. */
function readSchedstat(): number {
  const n = readSync(fd, buf, 0, buf.length, 0);
  let v = 0;
  let i = 0;
  for (; i < n; i++) {
    const d = buf[i] - 48;
    if (d < 0 || d > 9) break;
    v = v * 10 + d;
  }
  return i === 0 ? -1 : v;
}

/** Which clock `threadCpuSeconds()` uses on this Node and platform. */
export function cpuClockKind(): CpuClockKind {
  return (kind ??= detect());
}

/** CPU seconds the calling thread has run (see `cpuClockKind()`); only differences are meaningful. */
export function threadCpuSeconds(): number {
  const k = (kind ??= detect());
  if (k === 'threadCpuUsage') {
    const u = (threadUsage as ThreadCpuUsage)();
    return (u.user + u.system) / 1e6;
  }
  if (k === 'schedstat') return readSchedstat() / 1e9;
  return performance.now() / 1000;
}
