/**
 * What the profile says about the machine, and the clocks the runner reads CPU time with.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import type { Machine } from '../shared/profile';

type CpuClock = Machine['cpuClock'];

/** The machine as seen from this process, without the disk probe. */
export function describeMachine(cpuClock: CpuClock): Machine {
  const cpus = os.cpus();
  const uv = Number(process.env.UV_THREADPOOL_SIZE);
  return {
    cores: typeof os.availableParallelism === 'function' ? os.availableParallelism() : cpus.length,
    memoryTotalBytes: os.totalmem(),
    memoryFreeBytes: os.freemem(),
    nodeVersion: process.version,
    platform: process.platform,
    arch: process.arch,
    cpuModel: cpus[0]?.model?.trim() ?? 'unknown',
    libuvThreads: Number.isInteger(uv) && uv > 0 ? Math.min(uv, 1024) : 4,
    cpuClock,
    heapLimitBytes: v8.getHeapStatistics().heap_size_limit,
    ...groupScheduling(),
  };
}

/**
 * Whether the kernel schedules this process's threads as one group against other programs (see
 * `Machine.groupScheduled`): autogroup is on and this process leads its session, so it has an
 * autogroup of its own. Nothing off Linux.
 */
export function groupScheduling(): { groupScheduled?: boolean } {
  try {
    const enabled = fs.readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'latin1').trim() === '1';
    // /proc/self/stat: "pid (comm) state ppid pgrp session …"; comm may hold spaces and parentheses.
    const stat = fs.readFileSync('/proc/self/stat', 'latin1');
    const session = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]);
    return { groupScheduled: enabled && session === process.pid };
  } catch {
    return {};
  }
}

/**
 * A clock of the calling thread's CPU time, in seconds. Node ≥ 22 has `process.threadCpuUsage`;
 * on Linux `/proc/thread-self/schedstat` gives the thread's run time; otherwise wall time is the
 * only honest fallback (and `cpuClock: 'wall'` says so).
 */
export function threadCpuClock(): { kind: CpuClock; read(): number } {
  const p = process as unknown as { threadCpuUsage?: () => { user: number; system: number } };
  if (typeof p.threadCpuUsage === 'function') {
    const fn = p.threadCpuUsage.bind(process);
    return {
      kind: 'threadCpuUsage',
      read: () => {
        const u = fn();
        return (u.user + u.system) / 1e6;
      },
    };
  }
  try {
    const fd = fs.openSync('/proc/thread-self/schedstat', 'r');
    const buf = Buffer.alloc(128);
    const read = (): number => {
      const n = fs.readSync(fd, buf, 0, buf.length, 0);
      return Number(buf.toString('latin1', 0, n).split(' ')[0]) / 1e9;
    };
    if (Number.isFinite(read())) return { kind: 'schedstat', read };
    fs.closeSync(fd);
  } catch {
    // Not Linux, or /proc is not mounted: fall through to wall time.
  }
  return { kind: 'wall', read: () => performance.now() / 1000 };
}

/** Process CPU seconds (all threads). */
export function processCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Peak resident set size of this process so far, bytes. */
export function peakRssBytes(): number {
  return process.resourceUsage().maxRSS * 1024;
}

const PROBE_BYTES = 16 * 1024 * 1024;
const PROBE_CHUNK = 1024 * 1024;

/** Up to `limit` regular files under `dir` (breadth first, a bounded walk), largest first. */
function candidateFiles(dir: string, limit: number): string[] {
  const found: { file: string; size: number }[] = [];
  const queue = [dir];
  let visited = 0;
  while (queue.length > 0 && visited < 400) {
    const d = queue.shift()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (++visited > 400) break;
      if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
      const full = path.join(d, e.name);
      if (e.isDirectory()) queue.push(full);
      else if (e.isFile()) {
        try {
          found.push({ file: full, size: fs.statSync(full).size });
        } catch {
          // Vanished or unreadable: not a candidate.
        }
      }
    }
  }
  return found
    .sort((a, b) => b.size - a.size)
    .slice(0, limit)
    .map((f) => f.file);
}

/**
 * Sequential read bandwidth of the filesystem holding `dir`, bytes per second, from a probe of at
 * most `budgetSeconds`: it reads the largest files near the pipeline (its likely inputs), or a
 * temporary file when there is too little to read. Page-cache hits count as they would for the
 * pipeline itself. Undefined when nothing could be read.
 */
export function probeReadBandwidth(dir: string, budgetSeconds = 0.5): number | undefined {
  const start = performance.now();
  const deadline = start + budgetSeconds * 1000;
  const buf = Buffer.allocUnsafe(PROBE_CHUNK);
  let bytes = 0;
  let seconds = 0;
  const readFile = (file: string): void => {
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch {
      return;
    }
    try {
      const t0 = performance.now();
      let pos = 0;
      while (bytes < PROBE_BYTES && performance.now() < deadline) {
        const n = fs.readSync(fd, buf, 0, buf.length, pos);
        if (n <= 0) break;
        pos += n;
        bytes += n;
      }
      seconds += (performance.now() - t0) / 1000;
    } finally {
      fs.closeSync(fd);
    }
  };
  for (const f of candidateFiles(dir, 32)) {
    if (bytes >= PROBE_BYTES || performance.now() >= deadline) break;
    readFile(f);
  }
  if (bytes < PROBE_CHUNK && performance.now() < deadline) {
    const tmp = path.join(os.tmpdir(), `plumber-probe-${process.pid}.bin`);
    try {
      fs.writeFileSync(tmp, Buffer.alloc(4 * PROBE_CHUNK, 7));
      readFile(tmp);
    } catch {
      // A read-only temp dir: report what the pipeline's files gave, if anything.
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }
  return bytes > 0 && seconds > 0 ? Math.round(bytes / seconds) : undefined;
}

/**
 * CommonJS source that defines `cpu()`, the calling thread's CPU seconds (NaN when no per-thread
 * clock exists), for code evaluated in worker threads, which cannot import this module.
 */
export const THREAD_CPU_SOURCE = `
const cpu = (() => {
  if (typeof process.threadCpuUsage === 'function') return () => { const u = process.threadCpuUsage(); return (u.user + u.system) / 1e6; };
  try {
    const fs = require('node:fs');
    const fd = fs.openSync('/proc/thread-self/schedstat', 'r');
    const b = Buffer.alloc(128);
    return () => Number(b.toString('latin1', 0, fs.readSync(fd, b, 0, 128, 0)).split(' ')[0]) / 1e9;
  } catch {
    return () => NaN;
  }
})();
`;

/** The probe's worker: spins for `workerData` ms of wall time and reports the CPU it was given. */
const CPU_PROBE_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
${THREAD_CPU_SOURCE}
const c0 = cpu();
const t0 = performance.now();
let h = 1;
while (performance.now() - t0 < workerData) for (let i = 0; i < 10000; i++) h = Math.imul(h ^ i, 0x01000193) | 0;
parentPort.postMessage({ cpu: cpu() - c0, wall: (performance.now() - t0) / 1000, h });
`;

/**
 * Cores this process can get right now: one spinning worker thread per core for `seconds`, and
 * the CPU time they were given divided by the wall time. On a shared machine this is what a
 * worker pool can really use; undefined when no per-thread clock exists (then nobody can tell).
 */
export async function probeAvailableCores(cores: number, seconds = 0.2): Promise<number | undefined> {
  const { Worker } = await import('node:worker_threads');
  const one = (): Promise<{ cpu: number; wall: number }> =>
    new Promise((resolve, reject) => {
      const w = new Worker(CPU_PROBE_WORKER, { eval: true, workerData: seconds * 1000, execArgv: [] });
      w.once('message', (m: { cpu: number; wall: number }) => {
        resolve(m);
        void w.terminate();
      });
      w.once('error', reject);
    });
  try {
    const results = await Promise.all(Array.from({ length: cores }, one));
    const cpu = results.reduce((sum, r) => sum + r.cpu, 0);
    const wall = Math.max(...results.map((r) => r.wall));
    if (!Number.isFinite(cpu) || wall <= 0) return undefined;
    return Math.min(cores, Math.max(0.05, Number((cpu / wall).toFixed(2))));
  } catch {
    return undefined;
  }
}

/**
 * Idle CPU seconds of the whole machine so far (idle + iowait over every CPU, from the aggregate
 * line of /proc/stat, in USER_HZ ticks of 1/100 s). Undefined off Linux. Only differences mean
 * anything: read it at the start and the end of an interval.
 */
export function machineIdleSeconds(): number | undefined {
  try {
    const line = fs.readFileSync('/proc/stat', 'latin1').split('\n', 1)[0];
    const fields = line.trim().split(/\s+/);
    if (fields[0] !== 'cpu') return undefined;
    const idle = Number(fields[4]);
    const iowait = Number(fields[5] ?? 0);
    // USER_HZ is 100 on every Linux ABI Node runs on (sysconf(_SC_CLK_TCK) is fixed by the ABI).
    return Number.isFinite(idle) && Number.isFinite(iowait) ? (idle + iowait) / 100 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Cores this process could have used over an interval: what it used itself plus what the
 * machine left idle, per second of wall time, clamped to (0, cores]. Other work's CPU is what is
 * missing. Undefined when the idle time could not be read.
 */
export function coresAvailableDuring(ownCpuSeconds: number, idleSeconds: number | undefined, wallSeconds: number, cores: number): number | undefined {
  if (idleSeconds === undefined || !(wallSeconds > 0)) return undefined;
  const x = (Math.max(0, ownCpuSeconds) + Math.max(0, idleSeconds)) / wallSeconds;
  return Math.min(cores, Math.max(0.01, Number(x.toFixed(2))));
}

/**
 * The calling thread's run time and run-queue wait so far, seconds, from
 * /proc/thread-self/schedstat (Linux); undefined elsewhere. Their ratio over a window is the share
 * of a core the thread got while it was runnable: 1 on a free machine, 1/3 when it shares one
 * core with two other busy threads.
 */
export function threadRunAndWait(): { run: number; wait: number } | undefined {
  try {
    const [run, wait] = fs.readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ').map(Number);
    return Number.isFinite(run) && Number.isFinite(wait) ? { run: run! / 1e9, wait: wait! / 1e9 } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The share of a core the main thread got while runnable over a window (0 < x ≤ 1), from two
 * `threadRunAndWait` readings; undefined when the thread was runnable for less than a tenth of the
 * window (mostly waiting for I/O or workers: too little to tell).
 */
export function runnableShare(start: { run: number; wait: number } | undefined, end: { run: number; wait: number } | undefined, wallSeconds: number): number | undefined {
  if (!start || !end || wallSeconds <= 0) return undefined;
  const run = end.run - start.run;
  const wait = end.wait - start.wait;
  if (run <= 0 || run + wait < 0.1 * wallSeconds) return undefined;
  return Number(Math.min(1, run / (run + wait)).toFixed(3));
}
