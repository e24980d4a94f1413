/**
 * Which processes belong to a run, and how a run's end ends them. A run is the runner child —
 * leader of a session and a process group of its own, whose ids are its pid — and everything it
 * started. A process is the run's only when the machine says so: it started no earlier than the
 * runner, and it is the runner, or in the runner's session (its group, on platforms that do not
 * show sessions), or carries the run's mark in its environment, or is a process the runner
 * recorded in the run's pid file with the same start time, or descends from one of these. Any
 * other pid — reused, planted, another account's — is never signalled.
 *
 * The session id is the runner's pid, which the kernel does not hand out again while a process of
 * the session lives; a start time tells a reused pid from the process that had it.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The variable whose value marks every process of a run: the pipeline's processes inherit it. */
export const RUN_MARK_ENV = 'PLUMBER_RUN_MARK';

/** A process as the machine lists it. `start` orders processes by when they started (clock ticks since boot on Linux, else seconds). */
export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** The session id; undefined where the platform does not show it. */
  sid?: number;
  start: number;
  command: string;
}

/** A process that left the run's process group and that the run's end killed. */
export interface Escaped {
  pid: number;
  command: string;
}

const LINUX = process.platform === 'linux';
/** The longest command a warning quotes. */
const COMMAND_CHARS = 80;

function shortCommand(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > COMMAND_CHARS ? `${one.slice(0, COMMAND_CHARS - 1)}…` : one;
}

/** /proc/<pid>/stat: the command name is in parentheses and may hold spaces; starttime is the 22nd field. */
function linuxProc(pid: number): ProcInfo | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const close = stat.lastIndexOf(')');
  const f = stat.slice(close + 2).split(' ');
  // A zombie has ended: nothing to signal, and its children already have another parent.
  if (f[0] === 'Z') return undefined;
  let command = stat.slice(stat.indexOf('(') + 1, close);
  try {
    const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    if (args.trim()) command = args;
  } catch {
    // Gone meanwhile: the name from stat will do.
  }
  return { pid, ppid: Number(f[1]), pgid: Number(f[2]), sid: Number(f[3]), start: Number(f[19]), command: shortCommand(command) };
}

/** `ps -o pid=,ppid=,pgid=,lstart=,command=` lines: lstart is five words ("Sat Dec  5 09:50:12 2026"). */
function psProcs(args: string[]): ProcInfo[] {
  let out: string;
  try {
    out = execFileSync('ps', [...args, '-o', 'pid=,ppid=,pgid=,lstart=,command='], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return [];
  }
  const procs: ProcInfo[] = [];
  for (const line of out.split('\n')) {
    const w = line.trim().split(/\s+/);
    if (w.length < 9) continue;
    const start = Date.parse(w.slice(3, 8).join(' ')) / 1000;
    if (Number.isFinite(start)) procs.push({ pid: Number(w[0]), ppid: Number(w[1]), pgid: Number(w[2]), start, command: shortCommand(w.slice(8).join(' ')) });
  }
  return procs;
}

/** One process, or undefined when it does not exist. */
export function procInfo(pid: number): ProcInfo | undefined {
  return LINUX ? linuxProc(pid) : psProcs(['-p', String(pid)])[0];
}

function allProcs(): ProcInfo[] {
  if (!LINUX) return psProcs(['-A']);
  let names: string[] = [];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  return names.filter((n) => /^\d+$/.test(n)).flatMap((n) => linuxProc(Number(n)) ?? []);
}

function hasMark(pid: number, mark: string): boolean {
  if (!LINUX || !mark) return false;
  try {
    return `\0${fs.readFileSync(`/proc/${pid}/environ`, 'latin1')}`.includes(`\0${RUN_MARK_ENV}=${mark}\0`);
  } catch {
    return false;
  }
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // ESRCH: it ended meanwhile.
  }
}

/** A fresh mark for a run: unguessable, so no other process carries it. */
export function newRunMark(): string {
  return randomBytes(16).toString('hex');
}

/**
 * The run's pid file, in a directory of its own that only this account can enter (`mkdtemp`
 * makes it with mode 0700), created empty and exclusively: no other account can plant, replace
 * or link it. Remove it with `removePidFile`.
 */
export function makePidFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plumber-run-'));
  const file = path.join(dir, 'children.pids');
  fs.writeFileSync(file, '', { flag: 'wx', mode: 0o600 });
  return file;
}

export function removePidFile(file: string): void {
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
}

/**
 * Records a process the runner started in a group of its own, with its start time, by appending
 * to the pid file the parent made: never creating it, never through a symbolic link.
 */
export function recordChild(file: string, pid: number): void {
  const p = procInfo(pid);
  if (!p) return;
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_NOFOLLOW);
  try {
    fs.writeSync(fd, `${pid} ${p.start}\n`);
  } finally {
    fs.closeSync(fd);
  }
}

/** The pid file's entries, pid → start time; empty when it is missing, a link, or not this account's regular file. */
function readPidFile(file: string | undefined): Map<number, number> {
  const entries = new Map<number, number>();
  if (!file) return entries;
  let text = '';
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile() || (process.getuid && st.uid !== process.getuid())) return entries;
      text = fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return entries;
  }
  for (const line of text.split('\n')) {
    const [pid, start] = line.split(' ').map(Number);
    if (Number.isInteger(pid) && pid > 1 && Number.isFinite(start)) entries.set(pid, start);
  }
  return entries;
}

/** What identifies a run's processes: the runner's pid and start time, the run's mark and pid file. */
export interface RunIdentity {
  runnerPid: number;
  runnerStart: number;
  mark: string;
  pidFile?: string;
}

/** The run's processes among `procs`, by the rules at the top of this file. */
function runProcesses(run: RunIdentity, procs: ProcInfo[]): ProcInfo[] {
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const recorded = readPidFile(run.pidFile);
  const verdict = new Map<number, boolean>();
  const ours = (p: ProcInfo, depth: number): boolean => {
    const known = verdict.get(p.pid);
    if (known !== undefined) return known;
    let yes = false;
    const caller = p.pid === process.pid && p.pid !== run.runnerPid;
    if (p.pid > 1 && !caller && p.start >= run.runnerStart) {
      if (p.pid === run.runnerPid) yes = p.start === run.runnerStart;
      else if (p.sid !== undefined ? p.sid === run.runnerPid : p.pgid === run.runnerPid) yes = true;
      else if (recorded.get(p.pid) === p.start || hasMark(p.pid, run.mark)) yes = true;
      else {
        const parent = byPid.get(p.ppid);
        yes = parent !== undefined && depth < 64 && ours(parent, depth + 1);
      }
    }
    verdict.set(p.pid, yes);
    return yes;
  };
  return procs.filter((p) => ours(p, 0));
}

/**
 * Kills every process of the run, and says which of them had left the runner's process group
 * (a `detached` child, a grandchild started through `setsid`). Synchronous: safe in an exit or
 * signal handler. Called from the runner itself (its watchdog), it leaves the runner's own group,
 * and so the caller, to the caller.
 */
export function endRun(run: RunIdentity): Escaped[] {
  const escaped: Escaped[] = [];
  const self = process.pid === run.runnerPid;
  // A second look catches what a process of the run started while the first was being killed.
  for (let round = 0; round < 3; round++) {
    const mine = runProcesses(run, allProcs());
    const inGroup = mine.some((p) => p.pgid === run.runnerPid);
    if (inGroup && !self) signal(-run.runnerPid);
    const out = mine.filter((p) => p.pgid !== run.runnerPid);
    for (const p of out) {
      if (p.pgid === p.pid) signal(-p.pid);
      signal(p.pid);
      if (!escaped.some((e) => e.pid === p.pid)) escaped.push({ pid: p.pid, command: p.command });
    }
    if (out.length === 0) break;
  }
  return escaped;
}

/** The sentence a run's result carries for a process that escaped it. */
export function escapedWarning(e: Escaped): string {
  return `pid ${e.pid} (${e.command}) left the run's process group; Plumber ended it.`;
}
