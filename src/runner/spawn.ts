/**
 * Starting the runner: what the language server and the CLI call. The runner runs in a child
 * process of its own process group, so a time limit, a cancellation or the end of the run can
 * kill everything the pipeline started, and the user's stdout/stderr never mix with the profile
 * (which travels on the IPC channel).
 */
import { fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ArgSites } from '../shared/opId';
import type { Overrides, Profile, ProfileError, RunnerMessage } from '../shared/profile';
import { failedProfile } from './emptyProfile';
import { checkOverrides } from './overrides';
import { DEFAULTS, EXIT_MARKER } from './request';
import type { RunRequest } from './request';
import { findRunnerBundle } from './bundles';
import { acquireRunLock } from './runLock';
import { RUN_MARK_ENV, endRun, escapedWarning, makePidFile, newRunMark, procInfo, removePidFile } from './procs';
import type { Escaped, RunIdentity } from './procs';
import { timerMs } from './timers';

/** Options of `runProfile`. Budgets apply after warm-up; all times are seconds. */
export interface RunProfileOptions {
  /** The pipeline module (.ts, .mts, .cts, .js, .mjs, .cjs). Relative paths resolve from `cwd`. */
  file: string;
  /** The pipeline's export name; optional when the module exports exactly one pipeline. */
  exportName?: string;
  /** Measurement budget (default 3 s). */
  seconds?: number;
  /** Measurement budget in root elements. */
  maxElements?: number;
  /** Warm-up before counters are reset (default 0.5 s). */
  warmupSeconds?: number;
  /**
   * Root elements the warm-up lasts at least, for at most one `seconds` beyond `warmupSeconds`
   * (default none): a configuration that spreads a fn over several worker threads warms each one
   * on a share of the elements, so its run warms up on as many more.
   */
  warmupMinElements?: number;
  /** Time allowed before the first element before the pipeline counts as stuck (default 10 s). */
  startSeconds?: number;
  /** Knob overrides by operator id. */
  overrides?: Overrides;
  /**
   * Measure what pricing worker moves needs (default true): calibrate a worker task before the
   * run, and after the window call each sampled sync main-thread fn a few more times to measure
   * its clone cost, its CPU on the main thread and in a worker thread, and whether it is
   * deterministic. Adds about a second; runs that only compare rates (verification) can skip it.
   */
  probes?: boolean;
  /**
   * Profile the module as a training script whatever it exports: watch the loop it runs over a
   * dataset (see src/runner/train.ts for how a script is otherwise recognised).
   */
  train?: boolean;
  /**
   * Node streams: the op ids of the arguments of each `pipeline(…)`/`compose(…)` call, which no
   * stack shows (the engine reads them from the source: `PipelineGraph.argSites`). Without them
   * those arguments run untimed.
   */
  argSites?: ArgSites[];
  /** Hard limit on the whole child, loading included (default: warm-up + budget + 30 s). */
  timeoutSeconds?: number;
  /** Heap limit of the child (`--max-old-space-size`, default: half the machine's memory, at most 4096). */
  memoryMB?: number;
  /** The node binary to run (default: this process's). */
  nodePath?: string;
  /** Extra node flags for the child. */
  nodeArgs?: string[];
  /** Working directory of the child (default: the pipeline file's directory). */
  cwd?: string;
  signal?: AbortSignal;
  onProgress?(m: Extract<RunnerMessage, { type: 'progress' }>): void;
  /** Called with the child's pid once it started (its process group has the same id). */
  onStart?(pid: number): void;
  /**
   * Called at the run's end with each sentence its profile's `run.warnings` gains there: a process
   * the pipeline started that left the run's process group, which Plumber ended.
   */
  onWarning?(text: string): void;
  /** The pipeline's own stdout/stderr output (default: dropped). */
  onOutput?(stream: 'stdout' | 'stderr', text: string): void;
  /**
   * Called when another Plumber run on this machine is measuring, with its process id (-1 when
   * it is just starting): this run waits for it, so that two profiles never share the cores.
   * Called again if the holder changes. The wait does not count towards `timeoutSeconds`.
   */
  onWaiting?(holderPid: number): void;
}

/** How much of the child's stderr is kept to explain a crash. */
const STDERR_TAIL = 16 * 1024;

/** The runner's entry, `dist/runner/start.js` of the package root, which loads `main.js` beside it (start.ts says why). */
export function findRunnerEntry(): string | undefined {
  return findRunnerBundle('main.js') && findRunnerBundle('start.js');
}

function tsxLoaderUrl(runnerEntry: string): string {
  const root = path.resolve(path.dirname(runnerEntry), '..', '..');
  return pathToFileURL(createRequire(path.join(root, 'package.json')).resolve('tsx')).href;
}

/**
 * A runner child from its start until its pid file is removed: what identifies its processes
 * (procs.ts), and those that left its process group and were ended.
 */
class RunnerProcesses {
  readonly escaped: Escaped[] = [];
  constructor(readonly id: RunIdentity) {}

  /** Kills what is left of the run: the runner's process group and whatever of the run left it. */
  end(): void {
    for (const e of endRun(this.id)) if (!this.escaped.some((x) => x.pid === e.pid)) this.escaped.push(e);
  }
}

/**
 * Runners alive in this process. Whatever way this process ends (a signal the CLI turns into an
 * exit, process.exit in the server), their processes end with it.
 */
const live = new Set<RunnerProcesses>();
let exitHook = false;
function track(run: RunnerProcesses): void {
  live.add(run);
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const r of live) {
      r.end();
      if (r.id.pidFile) removePidFile(r.id.pidFile);
    }
  });
}

/** Ends every runner this process started, and what they started. Synchronous: safe in a signal handler. */
export function killAllRuns(): void {
  for (const r of live) r.end();
}

/** The profile with the run's warnings added to its own. */
function withWarnings(profile: Profile, warnings: string[]): Profile {
  if (warnings.length === 0) return profile;
  return { ...profile, run: { ...profile.run, warnings: [...(profile.run.warnings ?? []), ...warnings] } };
}

export interface ChildOutcome {
  message?: RunnerMessage;
  error?: ProfileError;
  /** What the run's end had to say about it: a process that escaped its process group. */
  warnings?: string[];
}

/** Runs the runner child to completion and says what it sent or how it died. Never rejects. */
export function runChild(request: RunRequest, o: RunProfileOptions, timeoutSeconds: number): Promise<ChildOutcome> {
  const entry = findRunnerEntry();
  if (!entry) {
    return Promise.resolve({ error: { kind: 'internal', message: `Plumber's runner is not built (dist/runner/main.js is missing near ${__dirname}). Run \`npm run build\` in the Plumber package first.` } });
  }
  if (o.signal?.aborted) return Promise.resolve({ error: { kind: 'cancelled', message: 'The run was cancelled before it started.' } });
  const memoryMB = o.memoryMB ?? Math.min(4096, Math.floor(os.totalmem() / 2 / 2 ** 20));
  let pidFile: string;
  try {
    pidFile = makePidFile();
  } catch (e) {
    return Promise.resolve({
      error: { kind: 'internal', message: `Plumber could not make the run's private directory in ${os.tmpdir()}: ${(e as Error).message}. Free space there, or point TMPDIR at a writable directory.` },
    });
  }
  const mark = newRunMark();
  const child = fork(entry, [JSON.stringify({ ...request, childPidFile: pidFile })], {
    execPath: o.nodePath ?? process.execPath,
    execArgv: ['--import', tsxLoaderUrl(entry), '--enable-source-maps', `--max-old-space-size=${memoryMB}`, ...(o.nodeArgs ?? [])],
    cwd: o.cwd ?? path.dirname(request.file),
    env: { ...process.env, [RUN_MARK_ENV]: mark },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    serialization: 'json',
  });

  const procs = new RunnerProcesses({ runnerPid: child.pid ?? -1, runnerStart: (child.pid && procInfo(child.pid)?.start) ?? Number.POSITIVE_INFINITY, mark, pidFile });
  if (child.pid !== undefined) {
    track(procs);
    o.onStart?.(child.pid);
  } else removePidFile(pidFile);
  return new Promise<ChildOutcome>((resolve) => {
    let final: RunnerMessage | undefined;
    let forced: ProfileError | undefined;
    let stderrTail = '';
    let settled = false;

    const forward = (stream: 'stdout' | 'stderr', chunk: Buffer): void => {
      let text = chunk.toString('utf8');
      if (stream === 'stderr') {
        stderrTail = (stderrTail + text).slice(-STDERR_TAIL);
        if (text.includes(EXIT_MARKER))
          text = text
            .split('\n')
            .filter((l) => !l.startsWith(EXIT_MARKER))
            .join('\n');
      }
      if (text && o.onOutput) o.onOutput(stream, text);
    };
    child.stdout?.on('data', (c: Buffer) => forward('stdout', c));
    child.stderr?.on('data', (c: Buffer) => forward('stderr', c));
    child.on('message', (m: RunnerMessage) => {
      if (m.type === 'progress') o.onProgress?.(m);
      else final = m;
    });

    const stopWith = (error: ProfileError): void => {
      forced ??= error;
      procs.end();
    };
    const timer = setTimeout(
      () =>
        stopWith({
          kind: 'timeout',
          message: `The pipeline did not finish within the ${timeoutSeconds} s time limit, so Plumber stopped it. It may be stuck in a loop or waiting forever; raise the limit if it is just slow to start.`,
        }),
      timerMs(timeoutSeconds),
    );
    const onAbort = (): void => stopWith({ kind: 'cancelled', message: 'The run was cancelled.' });
    o.signal?.addEventListener('abort', onAbort, { once: true });

    const done = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      // Whatever the pipeline started goes with the runner.
      procs.end();
      live.delete(procs);
      removePidFile(pidFile);
      const warnings = procs.escaped.map(escapedWarning);
      for (const w of warnings) o.onWarning?.(w);
      if (forced) return resolve({ error: forced, warnings });
      if (final) return resolve({ message: final, warnings });
      resolve({ error: deathError(code, signal, stderrTail, memoryMB), warnings });
    };
    // 'exit' can come before the last IPC message is read; 'close' waits for the channel and the
    // pipes. Anything of the pipeline's that holds the pipes open is killed with the group on
    // 'exit', and a backstop resolves even if a pipe stays open.
    let exitInfo: [number | null, NodeJS.Signals | null] = [null, null];
    child.on('exit', (code, signal) => {
      exitInfo = [code, signal];
      procs.end();
      setTimeout(() => done(code, signal), 2000).unref();
    });
    child.on('close', (code, signal) => done(code ?? exitInfo[0], signal ?? exitInfo[1]));
    child.on('error', (e) => {
      if (child.pid === undefined) {
        settled = true;
        clearTimeout(timer);
        live.delete(procs);
        resolve({ error: { kind: 'internal', message: `Could not start the runner with ${o.nodePath ?? process.execPath}: ${e.message}` } });
      }
    });
  });
}

/** Why the runner died without sending its result, from its exit and the end of its stderr. */
function deathError(code: number | null, signal: NodeJS.Signals | null, stderr: string, memoryMB: number): ProfileError {
  if (/heap out of memory|Allocation failed|ERR_WORKER_OUT_OF_MEMORY|Reached heap limit/i.test(stderr)) {
    return { kind: 'oom', message: `The pipeline ran out of memory (heap limit ${memoryMB} MB) and the process died. Hold fewer elements (smaller prefetch, shuffle buffer or cache) or raise the memory limit.` };
  }
  const exitAt = stderr.lastIndexOf(EXIT_MARKER);
  if (exitAt >= 0) {
    const line = stderr.slice(exitAt + EXIT_MARKER.length).split('\n')[0];
    let detail = '';
    try {
      const { code: c, where } = JSON.parse(line) as { code: number; where: string };
      detail = `process.exit(${c})${where ? ` ${where}` : ''}`;
    } catch {
      detail = 'process.exit()';
    }
    return { kind: 'exit', message: `The pipeline called ${detail} before the run finished, which ends the process. Remove the call from the pipeline module (or guard it with \`require.main === module\`).` };
  }
  const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
  const tail = stderr.trim().split('\n').slice(-5).join('\n');
  return { kind: 'exit', message: `The pipeline's process ${how} before the run finished.${tail ? `\nLast output:\n${tail}` : ''}` };
}

/** Why `file` cannot be a pipeline module before anything starts: it is missing or a directory. */
export function fileProblem(file: string, cwd: string | undefined): ProfileError | undefined {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    return { kind: 'not-found', message: `${file} does not exist. Check the path (relative paths are resolved from ${cwd ?? process.cwd()}).` };
  }
  if (stat.isDirectory()) return { kind: 'not-found', message: `${file} is a directory; give the pipeline's .ts/.js file.` };
  return undefined;
}

/**
 * Profiles one pipeline in a child process. Resolves with a Profile for every outcome; a failed
 * run's Profile carries `error` (the file is missing, does not compile, exports no pipeline,
 * throws, hangs, exits, runs out of memory, yields nothing, or an override is wrong). Rejects only
 * when called with invalid options.
 */
export async function runProfile(opts: RunProfileOptions): Promise<Profile> {
  if (typeof opts.file !== 'string' || opts.file === '') throw new TypeError('runProfile: `file` must be a path.');
  const file = path.resolve(opts.cwd ?? process.cwd(), opts.file);
  const overrides = opts.overrides ?? {};
  const request: RunRequest = {
    mode: 'profile',
    file,
    exportName: opts.exportName,
    seconds: opts.seconds ?? DEFAULTS.seconds,
    maxElements: opts.maxElements ?? DEFAULTS.maxElements,
    warmupSeconds: opts.warmupSeconds ?? DEFAULTS.warmupSeconds,
    warmupMaxElements: DEFAULTS.warmupMaxElements,
    ...(opts.warmupMinElements ? { warmupMinElements: Math.ceil(opts.warmupMinElements) } : {}),
    startSeconds: opts.startSeconds ?? DEFAULTS.startSeconds,
    overrides,
    progressInterval: DEFAULTS.progressInterval,
    probes: opts.probes ?? true,
    ...(opts.train ? { train: true } : {}),
    ...(opts.argSites && opts.argSites.length > 0 ? { argSites: opts.argSites } : {}),
  };
  for (const k of ['seconds', 'maxElements', 'warmupSeconds', 'startSeconds', 'warmupMinElements'] as const) {
    if (!((request[k] ?? 0) >= 0)) throw new TypeError(`runProfile: \`${k}\` must be a non-negative number.`);
  }
  const problem = checkOverrides(overrides);
  if (problem) return failedProfile(file, opts.exportName, overrides, { kind: 'override', message: problem });
  const missing = fileProblem(file, opts.cwd);
  if (missing) return failedProfile(file, opts.exportName, overrides, missing);
  // A minimum of warm-up elements may hold the warm-up one measuring budget longer.
  const extension = request.warmupMinElements ? request.seconds : 0;
  const timeout = opts.timeoutSeconds ?? request.startSeconds + request.warmupSeconds + extension + request.seconds + 30;
  let lock: Awaited<ReturnType<typeof acquireRunLock>>;
  try {
    lock = await acquireRunLock({ signal: opts.signal, onWait: opts.onWaiting });
  } catch {
    return failedProfile(file, opts.exportName, overrides, { kind: 'cancelled', message: 'The run was cancelled while it waited for another Plumber run to finish.' });
  }
  let outcome: ChildOutcome;
  try {
    outcome = await runChild(request, opts, timeout);
  } finally {
    lock?.release();
  }
  if (outcome.message?.type === 'profile') return withWarnings(outcome.message.profile, outcome.warnings ?? []);
  return withWarnings(failedProfile(file, opts.exportName, overrides, outcome.error ?? { kind: 'internal', message: 'The runner ended without sending a profile.' }), outcome.warnings ?? []);
}

/** Thrown by `listPipelines` when the module cannot be loaded; `error` says why. */
export class PipelineListError extends Error {
  constructor(readonly error: ProfileError) {
    super(error.message);
  }
}

/** The names of the pipelines a module exports (loading it in a runner child). */
export async function listPipelines(file: string, opts: Pick<RunProfileOptions, 'timeoutSeconds' | 'nodePath' | 'nodeArgs' | 'cwd' | 'signal' | 'memoryMB'> = {}): Promise<string[]> {
  const abs = path.resolve(opts.cwd ?? process.cwd(), file);
  const missing = fileProblem(abs, opts.cwd);
  if (missing) throw new PipelineListError(missing);
  const request: RunRequest = { mode: 'list', file: abs, seconds: 0, maxElements: 0, warmupSeconds: 0, warmupMaxElements: 0, startSeconds: 0, overrides: {}, progressInterval: 1 };
  const outcome = await runChild(request, { file: abs, ...opts }, opts.timeoutSeconds ?? 30);
  if (outcome.message?.type === 'pipelines') return outcome.message.pipelines;
  const error = outcome.message?.type === 'profile' ? outcome.message.profile.error : outcome.error;
  throw new PipelineListError(error ?? { kind: 'internal', message: 'The runner ended without listing pipelines.' });
}
