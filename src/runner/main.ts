/**
 * The runner: a child process that loads one pipeline module, runs the pipeline on a sample with
 * tracing on, and sends back a `Profile` on its IPC channel (never on stdout/stderr, which belong
 * to the user's code). Started by `spawn.ts` with tsx's loader in `--import`, in its own process
 * group, so the parent can kill everything it starts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { OVERRIDES_KEY, TRACER_KEY, DATASET_KEY, siteKey } from '../data/tracing';
import type { KnobOverride } from '../data/tracing';
import { PROFILE_VERSION } from '../shared/profile';
import type { Machine, Profile, ProfileError, RunInfo } from '../shared/profile';
import { finish, realExit, send, startWatchdog, trackDetachedChildren, trapExit } from './child';
import { exportedFunctions, findPipelines, importModule, loadedEsModules, logLoadedModules } from './discover';
import type { DatasetLike, ModuleNamespace } from './discover';
import { RunnerFailure, loadError, pipelineError } from './errors';
import { coresAvailableDuring, describeMachine, machineIdleSeconds, runnableShare, threadRunAndWait, peakRssBytes, probeAvailableCores, probeReadBandwidth, processCpuSeconds, threadCpuClock } from './machine';
import { calibrateWorkerTasks } from './calibrate';
import { libraryCpuClock, libraryWorkerChunking, seedLibrary } from './library';
import { sampleDigests } from './sample';
import { measureInputsHeld, probesLeftBytes, settledMemory, watchRss } from './memory';
import { emptyRun, failedProfile } from './emptyProfile';
import { measure, type MeasureResult } from './measure';
import { opIdOfSite } from '../shared/opId';
import { checkOverrides, siteKeyOfOpId, toSiteMap } from './overrides';
import { checkOverrideTargets, workerModuleProblem } from './overrideTargets';
import { priceMoves } from './priceMoves';
import { RunnerTracer } from './tracer';
import { installDialects } from './dialects';
import type { RunRequest } from './request';
import { noElementMessage } from './stall';
import { TrainWatch, runTraining, startsTraining, watchTraining } from './train';
import type { TrainRun } from './train';

/** Seconds a module that exports no pipeline has to start a training loop of its own (`--train` waits the start budget). */
const LATE_LOOP_SECONDS = 2;

/** What every step of a run shares: the request, the profile it fills, and how it ends. */
interface Run {
  req: RunRequest;
  /** The pipeline module, absolute. */
  file: string;
  clock: ReturnType<typeof threadCpuClock>;
  profile: Profile;
  run: RunInfo;
  tracer: RunnerTracer;
  /** Ends the runner with this error (sends the failed profile). */
  fail(error: ProfileError): Promise<void>;
  /** The first error thrown outside the consumer's await (a stray timer or promise in the user's code). */
  stray(): unknown;
}

/** The pipeline a run measures, once its module is loaded and its overrides checked. */
interface Loaded {
  name: string;
  ds: DatasetLike;
  fnModules: ReturnType<typeof exportedFunctions>;
}

async function main(): Promise<void> {
  const req = JSON.parse(process.argv[2] ?? '{}') as RunRequest;
  const file = path.resolve(req.file);
  const clock = threadCpuClock();
  const run = emptyRun(req.overrides);
  const profile: Profile = { version: PROFILE_VERSION, pipeline: { file, exportName: req.exportName ?? '', rootId: '' }, machine: describeMachine(clock.kind), run, ops: [] };
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

  const problem = requestProblem(req, file);
  if (problem) return void (await fail(problem));
  const r: Run = { req, file, clock, profile, run, fail, ...installTracer(req, file) };
  if (req.seed !== undefined) seedLibrary(file, req.seed);
  const loaded = await loadPipeline(r);
  if (loaded === undefined) return;
  if (req.mode === 'sample') {
    r.tracer.endSampling();
    return void (await finish(await sampleDigests(loaded.ds, req.maxElements, req.seconds, req.sampleRows === true)));
  }

  // The runner pulls the pipeline itself: its own iterator needs no watching.
  TrainWatch.detach(r.tracer);
  const probes = req.probes !== false;
  const beforeProbes = probes ? await settledMemory() : undefined;
  const machine = await describeRunMachine(r, probes);
  // The process before the pipeline holds any element, and its largest resident set while it runs (src/runner/memory.ts).
  const base = await settledMemory();
  run.baseRssBytes = base.rss;
  if (beforeProbes !== undefined) run.probesRssBytes = probesLeftBytes(beforeProbes, base);
  const rss = watchRss();
  const { result, unmatched } = await measureWindow(r, loaded, machine);
  run.windowPeakRssBytes = rss.stop();
  recordWindow(r, result, loaded.ds);
  const outcome = outcomeProblem(r, result, unmatched, loaded.name);
  if (outcome) return void (await fail(outcome));
  if (probes) measureInputsHeld(r.tracer, profile, file);
  if (probes) await priceMoves(r.tracer, profile, file);
  await finish({ type: 'profile', profile });
}

/** What is wrong with the request before anything loads: its overrides, its file. */
function requestProblem(req: RunRequest, file: string): ProfileError | undefined {
  const overrideProblem = checkOverrides(req.overrides);
  if (overrideProblem) return { kind: 'override', message: overrideProblem };
  if (!fs.existsSync(file)) return { kind: 'not-found', message: `${file} does not exist. Check the path (relative paths are resolved from ${process.cwd()}).` };
  if (fs.statSync(file).isDirectory()) return { kind: 'not-found', message: `${file} is a directory; give the pipeline's .ts/.js file.` };
  return undefined;
}

/** Installs the tracer and the overrides, before the pipeline module builds its datasets, and catches stray errors. */
function installTracer(req: RunRequest, file: string): { tracer: RunnerTracer; stray(): unknown } {
  const tracer = new RunnerTracer();
  const overrides: Map<string, KnobOverride> = toSiteMap(req.overrides, file);
  const g = globalThis as Record<symbol, unknown>;
  g[TRACER_KEY] = tracer;
  g[OVERRIDES_KEY] = overrides;
  // tfjs-data, Node streams and async generators report their stages to the same tracer.
  installDialects(tracer, overrides, req.argSites, file);
  // An error thrown outside the consumer's await (a stray timer or promise in the user's code).
  let stray: unknown;
  const onStray = (e: unknown): void => {
    stray ??= e;
  };
  process.on('uncaughtException', onStray);
  process.on('unhandledRejection', onStray);
  return { tracer, stray: () => stray };
}

/**
 * Loads the module and finds the pipeline to measure, or ends the run: with the list of
 * pipelines (`mode: 'list'`), with a training script's profile, or with the error that stops it.
 * Undefined when the run has ended.
 */
async function loadPipeline(r: Run): Promise<Loaded | undefined> {
  const { req, file, tracer, fail } = r;
  // A module that iterates a dataset itself is a training script: its loop is watched (train.ts).
  const watch = watchTraining(req, tracer, r.run, r.clock.read, (m) => void send(m));
  const training = (): TrainRun => ({ file, req, tracer, clock: r.clock, profile: r.profile, fail, finish: (p) => finish({ type: 'profile', profile: p }), send: (m) => void send(m), priceMoves, stray: r.stray });
  await send({ type: 'progress', phase: 'loading', elements: 0, seconds: 0 });
  let ns: ModuleNamespace;
  // ES modules are listed nowhere once loaded: log them from here on (discover.ts).
  logLoadedModules();
  const importing = importModule(file);
  if (req.mode === 'profile' && (await startsTraining(importing, watch, req.train))) return void (await runTraining(training(), watch, importing));
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
  r.profile.pipeline.exportName = chosen.name;
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
  return { name: chosen.name, ds, fnModules };
}

/**
 * The machine as the run finds it just before its window, recorded on the profile: the library's
 * CPU clock and worker chunking, the disk, the cores free and (with probes) what a worker task
 * costs here.
 */
async function describeRunMachine(r: Run, probes: boolean): Promise<Machine> {
  const { file, tracer } = r;
  const bandwidth = probeReadBandwidth(path.dirname(file));
  const chunking = libraryWorkerChunking(file);
  const machine: Machine = { ...describeMachine(libraryCpuClock(file) ?? r.clock.kind), ...(bandwidth ? { diskReadBytesPerSec: bandwidth } : {}), ...(chunking ? { workerChunking: chunking } : {}) };
  // The window measures the cores it found free (onWindowEnd): the 0.2 s probe before it is the
  // fallback where the machine's idle time cannot be read, and the first profile's figure.
  const available = probes || machineIdleSeconds() === undefined ? await probeAvailableCores(machine.cores) : undefined;
  if (available !== undefined) machine.availableCores = available;
  // Without probes nothing is sampled: the library stops offering elements at its first offer.
  if (!probes) tracer.endSampling();
  const calibration = probes ? await calibrateWorkerTasks(file, r.clock.read) : undefined;
  if (calibration !== undefined) {
    machine.workerDispatchSeconds = calibration.dispatchSeconds;
    machine.workerTaskOverheadSeconds = calibration.taskOverheadSeconds;
    if (calibration.threadRssBytes !== undefined) machine.workerThreadRssBytes = calibration.threadRssBytes;
  }
  r.profile.machine = machine;
  return machine;
}

/** The clocks a window is measured by. */
interface Clocks {
  cpu: number;
  proc: number;
  idle: number | undefined;
  wall: number;
  sched: ReturnType<typeof threadRunAndWait>;
}

/**
 * Measures the window (measure.ts), reading the clocks and counters at its ends, and the
 * operators' profiles at its end. `unmatched`: override ids no operator built had.
 */
async function measureWindow(r: Run, loaded: Loaded, machine: Machine): Promise<{ result: MeasureResult; unmatched?: string }> {
  const { req, file, tracer, clock, run, profile } = r;
  const { ds, fnModules } = loaded;
  let unmatched: string | undefined;
  const readClocks = (): Clocks => ({ cpu: clock.read(), proc: processCpuSeconds(), idle: machineIdleSeconds(), wall: performance.now() / 1000, sched: threadRunAndWait() });
  // The clocks at the start of the run and at its first element, for a run measured from there
  // (see onWindowWidened), and at the window's start.
  const startClocks = readClocks();
  let firstClocks = startClocks;
  let at: Clocks = startClocks;
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
      at = { cpu: clock.read(), proc: processCpuSeconds(), idle: machineIdleSeconds(), wall: performance.now() / 1000, sched: threadRunAndWait() };
    },
    onWindowWidened(fromFirst) {
      tracer.rebase(fromFirst ? firstCounters : undefined);
      at = fromFirst ? firstClocks : startClocks;
    },
    onWindowEnd() {
      run.mainThreadCpuSeconds = Math.max(0, clock.read() - at.cpu);
      run.processCpuSeconds = Math.max(0, processCpuSeconds() - at.proc);
      // Cores free during the window: read at its two ends only, so it costs nothing per element.
      const idle1 = machineIdleSeconds();
      const cores = coresAvailableDuring(run.processCpuSeconds, at.idle === undefined || idle1 === undefined ? undefined : idle1 - at.idle, performance.now() / 1000 - at.wall, machine.cores);
      if (cores !== undefined) run.availableCores = cores;
      const share = runnableShare(at.sched, threadRunAndWait(), performance.now() / 1000 - at.wall);
      if (share !== undefined) run.mainThreadShare = share;
      run.loadAverage = Number(os.loadavg()[0].toFixed(2));
      profile.ops = tracer.ops(file, fnModules, ds[DATASET_KEY]);
      tracer.endSampling();
    },
    progress: (m) => void send(m),
    // A few of the root's elements, for what they hold on the heap (memory.ts).
    ...(req.probes !== false && typeof ds[DATASET_KEY] === 'string' ? { onElement: (x: unknown) => tracer.sampleOutput(ds[DATASET_KEY] as string, x) } : {}),
  });
  return { result, ...(unmatched !== undefined ? { unmatched } : {}) };
}

/** What the window measured, on the profile's run. */
function recordWindow(r: Run, result: MeasureResult, ds: DatasetLike): void {
  Object.assign(r.run, {
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
  r.profile.pipeline.rootId = r.tracer.idOf(ds[DATASET_KEY], r.file);
}

/** Why the window's profile cannot stand: an override that matched no operator, an error, no element. */
function outcomeProblem(r: Run, result: MeasureResult, unmatched: string | undefined, name: string): ProfileError | undefined {
  const { req, file, profile } = r;
  if (unmatched) {
    const ids = profile.ops.map((o) => o.id).join(', ');
    return { kind: 'override', message: `No operator has the id ${unmatched}, so the override cannot apply. This pipeline's operators: ${ids}.` };
  }
  const idOfSite = (site: { file: string; line: number; column: number }): string => opIdOfSite(site, file);
  const thrown = result.thrown?.error ?? r.stray();
  if (thrown !== undefined) return pipelineError(thrown, result.thrown?.consumed ?? result.warmupElements + result.elements, idOfSite);
  const consumed = result.warmupElements + result.elements;
  if (consumed === 0 && result.endReason === 'exhausted') {
    return { kind: 'empty', message: `The pipeline "${name}" produced no elements: its source is empty or a filter drops everything.` };
  }
  if (consumed === 0) {
    const waited = Math.max(req.startSeconds, req.warmupSeconds + req.seconds);
    return { kind: 'timeout', message: noElementMessage(name, profile.ops, waited) };
  }
  return undefined;
}

main().catch((e: unknown) => {
  const error: ProfileError = e instanceof RunnerFailure ? e.error : { kind: 'internal', message: `The runner failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}` };
  void send({ type: 'profile', profile: failedProfile('', undefined, {}, error) }).then(() => realExit(0));
});
