/**
 * The runner: a child process that loads one pipeline module, runs the pipeline on a sample with
 * tracing on, and sends back a `Profile` on its IPC channel (never on stdout/stderr, which belong
 * to the user's code). Started by `spawn.ts` with tsx's loader in `--import`, in its own process
 * group, so the parent can kill everything it starts.
 */
import { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { OVERRIDES_KEY, TRACER_KEY, DATASET_KEY, siteKey } from '../data/tracing';
import type { KnobOverride } from '../data/tracing';
import { PROFILE_VERSION } from '../shared/profile';
import type { OpProfile, Profile, ProfileError, RunnerMessage } from '../shared/profile';
import { exportedFunction, exportedFunctions, findPipelines, importModule, loadedEsModules, logLoadedModules } from './discover';
import type { DatasetLike, ModuleNamespace } from './discover';
import { RunnerFailure, loadError, pipelineError } from './errors';
import { coresAvailableDuring, describeMachine, machineIdleSeconds, runnableShare, threadRunAndWait, peakRssBytes, probeAvailableCores, probeReadBandwidth, processCpuSeconds, threadCpuClock } from './machine';
import { calibrateWorkerTasks } from './calibrate';
import { libraryCpuClock, libraryWorkerChunking } from './library';
import { emptyRun, failedProfile } from './emptyProfile';
import { measure } from './measure';
import { measureMoves } from './moves';
import type { MoveTarget } from './moves';
import { opIdOfSite } from '../shared/opId';
import { checkOverrides, siteKeyOfOpId, toSiteMap } from './overrides';
import { RunnerTracer } from './tracer';
import type { RunRequest } from './request';
import { timerMs } from './timers';
import { noElementMessage } from './stall';
import { TrainWatch, runTraining, startsTraining, watchTraining } from './train';
import type { TrainRun } from './train';

/** Written to stderr (synchronously) when the pipeline calls process.exit, so the parent can say where. */
export const EXIT_MARKER = '\u0000plumber-runner:exit:';

function send(message: RunnerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send || !process.connected) return resolve();
    process.send(message, undefined, {}, () => resolve());
  });
}

/** Seconds a module that exports no pipeline has to start a training loop of its own (`--train` waits the start budget). */
const LATE_LOOP_SECONDS = 2;

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
async function finish(message: RunnerMessage): Promise<void> {
  await send(message);
  await Promise.all([drained(process.stdout), drained(process.stderr)]);
  process.exitCode = 0;
  // Calls the real exit: the pipeline's process.exit is wrapped below.
  realExit(0);
}

const realExit = process.exit.bind(process) as (code?: number) => never;

/** Reports the stack of a pipeline's process.exit call, then exits as asked. */
function trapExit(): void {
  process.exit = ((code?: number | string | null) => {
    const where = (new Error().stack ?? '').split('\n').slice(2).map((l) => l.trim()).find((l) => !l.includes('(<anonymous>)') && !l.includes('node:')) ?? '';
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

function startWatchdog(childPidFile: string | undefined): void {
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
function trackDetachedChildren(childPidFile: string | undefined): void {
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

/**
 * Checks that the modules and export names of the overrides exist before anything runs: a worker
 * that looked up `constructor` would run `Object` on every element and say nothing. Returns a
 * sentence describing the first problem.
 */
async function checkOverrideTargets(req: RunRequest, file: string, ns: ModuleNamespace): Promise<string | undefined> {
  for (const [id, o] of Object.entries(req.overrides)) {
    if (o.module === undefined && o.exportName === undefined) continue;
    const moduleFile = o.module === undefined ? file : o.module.startsWith('file:') ? fileURLToPath(o.module) : path.resolve(o.module);
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(moduleFile);
    } catch {
      return `Override for ${id}: the module ${moduleFile} does not exist.`;
    }
    if (!stat.isFile()) return `Override for ${id}: the module ${moduleFile} is not a file.`;
    if (o.exportName === undefined) continue;
    let mod: ModuleNamespace;
    try {
      mod = moduleFile === file ? ns : await importModule(moduleFile);
    } catch (e) {
      return `Override for ${id}: the module ${moduleFile} cannot be loaded: ${e instanceof Error ? e.message : String(e)}`;
    }
    if (!exportedFunction(mod, o.exportName)) {
      const fns = [...exportedFunctions(mod, moduleFile).values()].filter((f) => f.file === moduleFile).map((f) => f.exportName);
      return `Override for ${id}: ${moduleFile} exports no function named "${o.exportName}".${fns.length > 0 ? ` Its exported functions: ${fns.join(', ')}.` : ' It exports no function.'}`;
    }
  }
  return undefined;
}

/**
 * An override that moves a fn to worker threads without naming its module runs the fn from the
 * pipeline's own file (./overrides.ts `toSiteMap`). When the fn is exported from another file (a
 * transforms module the pipeline imports), every worker would fail on its first task with "no
 * exported function": say which module does export it, and how to name it, before running.
 */
function workerModuleProblem(req: RunRequest, file: string, tracer: RunnerTracer, ns: ModuleNamespace, fnModules: ReturnType<typeof exportedFunctions>): string | undefined {
  const wanted = Object.entries(req.overrides).filter(([, o]) => o.placement === 'worker' && o.module === undefined);
  for (const [id, o] of wanted) {
    const key = siteKeyOfOpId(id, file);
    const info = tracer.infos().find((i) => i.site !== undefined && siteKey(i.site) === key);
    if (!info?.fn) continue;
    const exportName = o.exportName ?? info.fnName ?? info.fn.name;
    if (exportName && exportedFunction(ns, exportName) === info.fn) continue;
    const home = fnModules.get(info.fn);
    const name = info.fnName || info.fn.name || 'its fn';
    if (home) {
      // Absolute: the runner's working directory is the pipeline's, not the user's.
      const flags = [...(home.file !== file ? [`--override ${id}=module:${home.file}`] : []), ...(home.exportName !== exportName ? [`--override ${id}=exportName:${home.exportName}`] : [])];
      const where = home.file !== file ? `${path.basename(file)} does not: ${home.file} does` : `${path.basename(file)} exports it as ${home.exportName}`;
      return `Override for ${id}: placement:worker runs ${name} from the module that exports it, and ${where}. Add ${flags.join(' ')}.`;
    }
    return `Override for ${id}: placement:worker runs ${name} from the module that exports it, and no module the pipeline loaded exports it. Export ${name} (an exported function worker threads can import), or name its module with --override ${id}=module:FILE.`;
  }
  return undefined;
}

async function main(): Promise<void> {
  const req = JSON.parse(process.argv[2] ?? '{}') as RunRequest;
  const file = path.resolve(req.file);
  const clock = threadCpuClock();
  let machine = describeMachine(clock.kind);
  const run = emptyRun(req.overrides);
  const profile: Profile = { version: PROFILE_VERSION, pipeline: { file, exportName: req.exportName ?? '', rootId: '' }, machine, run, ops: [] };
  const fail = (error: ProfileError): Promise<void> => {
    run.endReason = error.kind === 'cancelled' ? 'cancelled' : 'error';
    run.peakRssBytes = peakRssBytes();
    return finish({ type: 'profile', profile: { ...profile, error } });
  };

  // Parent gone (crashed or killed without killing us): nobody will read the profile.
  process.on('disconnect', () => realExit(1));
  startWatchdog(req.childPidFile);
  trackDetachedChildren(req.childPidFile);
  trapExit();

  const overrideProblem = checkOverrides(req.overrides);
  if (overrideProblem) return void (await fail({ kind: 'override', message: overrideProblem }));
  if (!fs.existsSync(file)) return void (await fail({ kind: 'not-found', message: `${file} does not exist. Check the path (relative paths are resolved from ${process.cwd()}).` }));
  if (fs.statSync(file).isDirectory()) return void (await fail({ kind: 'not-found', message: `${file} is a directory; give the pipeline's .ts/.js file.` }));

  // Install the tracer and the overrides before the pipeline module builds its datasets.
  const tracer = new RunnerTracer();
  const overrides: Map<string, KnobOverride> = toSiteMap(req.overrides, file);
  const g = globalThis as Record<symbol, unknown>;
  g[TRACER_KEY] = tracer;
  g[OVERRIDES_KEY] = overrides;

  // An error thrown outside the consumer's await (a stray timer or promise in the user's code).
  let stray: unknown;
  const onStray = (e: unknown): void => {
    stray ??= e;
  };
  process.on('uncaughtException', onStray);
  process.on('unhandledRejection', onStray);

  // A module that iterates a dataset itself is a training script: its loop is watched (train.ts).
  const watch = watchTraining(req, tracer, run, clock.read, (m) => void send(m));
  const training = (): TrainRun => ({ file, req, tracer, clock, profile, fail, finish: (p) => finish({ type: 'profile', profile: p }), send: (m) => void send(m), priceMoves, stray: () => stray });
  await send({ type: 'progress', phase: 'loading', elements: 0, seconds: 0 });
  let ns: ModuleNamespace;
  // ES modules are listed nowhere once loaded: log them from here on (discover.ts).
  logLoadedModules();
  const importing = importModule(file);
  if (req.mode !== 'list' && (await startsTraining(importing, watch, req.train))) return void (await runTraining(training(), watch, importing));
  try {
    ns = await importing;
  } catch (e) {
    return void (await fail(loadError(e, file)));
  }
  let found: Awaited<ReturnType<typeof findPipelines>>;
  try {
    found = await findPipelines(ns);
  } catch (e) {
    return void (await fail(loadError(e, file)));
  }
  const names = found.pipelines.map((p) => p.name);
  const targetProblem = await checkOverrideTargets(req, file, ns);
  if (targetProblem) return void (await fail({ kind: 'override', message: targetProblem }));
  if (req.mode === 'list') return void (await finish({ type: 'pipelines', file, pipelines: names }));

  const others = found.others.length > 0 ? ` It exports: ${found.others.join(', ')}.` : ' It exports nothing.';
  if (names.length === 0) {
    if (await watch.startsWithin(req.train ? req.startSeconds : Math.min(req.startSeconds, LATE_LOOP_SECONDS))) return void (await runTraining(training(), watch, importing));
    return void (await fail({
      kind: 'no-pipeline',
      message: `${file} exports no pipeline and iterates none.${others} Export a dataset (\`export const train = from(…).map(…)\`) or a function with no parameters that returns one, or iterate a dataset in a training loop (\`for await (const batch of ds)\`).`,
      available: [],
    }));
  }
  const chosen = req.exportName ? found.pipelines.find((p) => p.name === req.exportName) : found.pipelines.length === 1 ? found.pipelines[0] : undefined;
  if (!chosen) {
    const message = req.exportName
      ? `${file} has no pipeline named "${req.exportName}". Pipelines found: ${names.join(', ')}.`
      : `${file} exports ${names.length} pipelines (${names.join(', ')}): choose one with --export NAME.`;
    return void (await fail({ kind: 'no-pipeline', message, available: names }));
  }
  profile.pipeline.exportName = chosen.name;
  let ds: DatasetLike;
  try {
    ds = await chosen.get();
  } catch (e) {
    return void (await fail(loadError(e, file)));
  }
  // Where each user fn is exported, once every module the pipeline loads is loaded.
  const fnModules = exportedFunctions(ns, file, await loadedEsModules(file));
  const misplaced = workerModuleProblem(req, file, tracer, ns, fnModules);
  if (misplaced) return void (await fail({ kind: 'override', message: misplaced }));

  // The runner pulls the pipeline itself: its own iterator needs no watching.
  TrainWatch.detach(tracer);
  const bandwidth = probeReadBandwidth(path.dirname(file));
  const chunking = libraryWorkerChunking(file);
  machine = { ...describeMachine(libraryCpuClock(file) ?? clock.kind), ...(bandwidth ? { diskReadBytesPerSec: bandwidth } : {}), ...(chunking ? { workerChunking: chunking } : {}) };
  const probes = req.probes !== false;
  // The window measures the cores it found free (onWindowEnd): the 0.2 s probe before it is the
  // fallback where the machine's idle time cannot be read, and the first profile's figure.
  const available = probes || machineIdleSeconds() === undefined ? await probeAvailableCores(machine.cores) : undefined;
  if (available !== undefined) machine.availableCores = available;
  // Without probes nothing is sampled: the library stops offering elements at its first offer.
  if (!probes) tracer.endSampling();
  const calibration = probes ? await calibrateWorkerTasks(file, clock.read) : undefined;
  if (calibration !== undefined) {
    machine.workerDispatchSeconds = calibration.dispatchSeconds;
    machine.workerTaskOverheadSeconds = calibration.taskOverheadSeconds;
  }
  profile.machine = machine;

  const idOfSite = (site: { file: string; line: number; column: number }): string => opIdOfSite(site, file);
  let unmatched: string | undefined;
  let cpu0 = 0;
  let proc0 = 0;
  let idle0: number | undefined;
  let wall0 = 0;
  // The clocks at the start of the run and at its first element, for a run measured from there
  // (see onWindowWidened).
  let sched0 = threadRunAndWait();
  const readClocks = (): { cpu: number; proc: number; idle: number | undefined; wall: number; sched: typeof sched0 } => ({ cpu: clock.read(), proc: processCpuSeconds(), idle: machineIdleSeconds(), wall: performance.now() / 1000, sched: threadRunAndWait() });
  const startClocks = readClocks();
  let firstClocks = startClocks;
  let firstCounters: ReturnType<RunnerTracer['countersNow']> | undefined;
  let fineCount: (() => number) | undefined;
  const result = await measure(ds, req, {
    steady: () => tracer.cachesFilled(),
    // Looked up once the window starts (every operator is built by then), then read on a timer.
    fineCount: () => (fineCount ??= tracer.fineCounter(ds[DATASET_KEY]) ?? (() => 0))(),
    onFirstElement() {
      firstClocks = readClocks();
      firstCounters = tracer.countersNow();
      const built = new Set(tracer.infos().flatMap((i) => (i.site ? [siteKey(i.site)] : [])));
      const missing = Object.keys(req.overrides).filter((id) => !built.has(siteKeyOfOpId(id, file) ?? ''));
      if (missing.length > 0) unmatched = missing.join(', ');
    },
    onWindowStart() {
      tracer.snapshot();
      cpu0 = clock.read();
      proc0 = processCpuSeconds();
      idle0 = machineIdleSeconds();
      wall0 = performance.now() / 1000;
      sched0 = threadRunAndWait();
    },
    onWindowWidened(fromFirst) {
      tracer.rebase(fromFirst ? firstCounters : undefined);
      ({ cpu: cpu0, proc: proc0, idle: idle0, wall: wall0, sched: sched0 } = fromFirst ? firstClocks : startClocks);
    },
    onWindowEnd() {
      run.mainThreadCpuSeconds = Math.max(0, clock.read() - cpu0);
      run.processCpuSeconds = Math.max(0, processCpuSeconds() - proc0);
      // Cores free during the window: read at its two ends only, so it costs nothing per element.
      const idle1 = machineIdleSeconds();
      const cores = coresAvailableDuring(run.processCpuSeconds, idle0 === undefined || idle1 === undefined ? undefined : idle1 - idle0, performance.now() / 1000 - wall0, machine.cores);
      if (cores !== undefined) run.availableCores = cores;
      const share = runnableShare(sched0, threadRunAndWait(), performance.now() / 1000 - wall0);
      if (share !== undefined) run.mainThreadShare = share;
      run.loadAverage = Number(os.loadavg()[0].toFixed(2));
      profile.ops = tracer.ops(file, fnModules, ds[DATASET_KEY]);
      tracer.endSampling();
    },
    progress: (m) => void send(m),
  });
  Object.assign(run, {
    elements: result.elements,
    seconds: result.seconds,
    warmupElements: result.warmupElements,
    warmupSeconds: result.warmupSeconds,
    ...(result.firstElementSeconds !== undefined ? { firstElementSeconds: result.firstElementSeconds } : {}),
    converged: result.converged,
    endReason: result.endReason,
    rateEstimates: result.rateEstimates,
    ...(result.windowSlices ? { windowSlices: result.windowSlices } : {}),
    ...(result.windowCurve ? { windowCurve: result.windowCurve } : {}),
    ...(result.partialElement !== undefined ? { partialElement: result.partialElement } : {}),
    peakRssBytes: peakRssBytes(),
  });
  profile.pipeline.rootId = tracer.idOf(ds[DATASET_KEY], file);

  if (unmatched) {
    const ids = profile.ops.map((o) => o.id).join(', ');
    return void (await fail({ kind: 'override', message: `No operator has the id ${unmatched}, so the override cannot apply. This pipeline's operators: ${ids}.` }));
  }
  const thrown = result.thrown?.error ?? stray;
  if (thrown !== undefined) return void (await fail(pipelineError(thrown, result.thrown?.consumed ?? result.warmupElements + result.elements, idOfSite)));
  const consumed = result.warmupElements + result.elements;
  if (consumed === 0 && result.endReason === 'exhausted') {
    return void (await fail({ kind: 'empty', message: `The pipeline "${chosen.name}" produced no elements: its source is empty or a filter drops everything.` }));
  }
  if (consumed === 0) {
    const waited = Math.max(req.startSeconds, req.warmupSeconds + req.seconds);
    return void (await fail({ kind: 'timeout', message: noElementMessage(chosen.name, profile.ops, waited) }));
  }
  if (probes) await priceMoves(tracer, profile, file);
  await finish({ type: 'profile', profile });
}

/**
 * After the window: measures, on the elements the tracer kept, what moving each main-thread
 * map/filter/flatMap to worker threads would cost, and whether its fn is
 * deterministic (see moves.ts), and records both on its operator.
 */
async function priceMoves(tracer: RunnerTracer, profile: Profile, file: string): Promise<void> {
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const reread = rereadByRepeat(profile.ops);
  const targets: MoveTarget[] = [];
  for (const [key, samples] of tracer.samples()) {
    const info = tracer.info(key);
    const op = byId.get(tracer.idOf(key, file));
    if (!info?.fn || !op || info.placement !== 'main') continue;
    if (op.kind !== 'map' && op.kind !== 'filter' && op.kind !== 'flatMap') continue;
    const async = info.fnAsync === true || op.counters.asyncCalls > 0;
    const heap = reread.has(op.id);
    targets.push({ id: op.id, kind: op.kind, fn: info.fn, samples, ...(op.fnModule ? { fnModule: op.fnModule } : {}), ...(async ? { async } : {}), ...(heap ? { heap } : {}) });
  }
  let findings: Awaited<ReturnType<typeof measureMoves>>;
  try {
    findings = await measureMoves(targets);
  } catch {
    // Pricing moves is extra: a failure here must not cost the user the profile itself.
    return;
  }
  for (const [id, f] of findings) {
    const op = byId.get(id);
    if (op === undefined) continue;
    if (f.randomObserved !== undefined) op.randomObserved = f.randomObserved;
    if (f.moveCost !== undefined) op.moveCost = f.moveCost;
    if (f.held !== undefined) op.held = f.held;
    if (f.moveBlocked !== undefined) op.moveBlocked = f.moveBlocked;
  }
}

main().catch((e: unknown) => {
  const error: ProfileError = e instanceof RunnerFailure ? e.error : { kind: 'internal', message: `The runner failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}` };
  void send({ type: 'profile', profile: failedProfile('', undefined, {}, error) }).then(() => realExit(0));
});

/**
 * The operators whose output a repeat (more than one pass) reads again: where a cache could pay,
 * so what their elements hold in memory is worth measuring.
 */
function rereadByRepeat(ops: readonly OpProfile[]): Set<string> {
  const byId = new Map(ops.map((o) => [o.id, o]));
  const out = new Set<string>();
  const visit = (id: string): void => {
    const op = byId.get(id);
    if (!op || out.has(id)) return;
    out.add(id);
    for (const i of op.inputs) visit(i);
    // The datasets an interleave's or flatMap's fn builds feed it too.
    for (const inner of ops) if (inner.parentId === id) visit(inner.id);
  };
  for (const op of ops) {
    const count = op.knobs.count;
    if (op.kind === 'repeat' && (count === undefined || count < 0 || count > 1)) for (const i of op.inputs) visit(i);
  }
  return out;
}
