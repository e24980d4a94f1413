/**
 * Profiling a training script as written: the module iterates a plumber-data dataset itself (a
 * `for await` loop, or `iterator().next()` calls) instead of exporting one for the runner to pull.
 *
 * How a module is recognised as a training script: the runner watches every dataset iterator
 * (`Tracer.consumer`) from before the module loads. If the module asks a dataset for an element
 * while it loads, or in the moment after its import settles, it trains; so does a module that
 * exports no pipeline and starts iterating within the start budget (a loop behind an await of its
 * own: loading data, `tf.ready()`). `--train` forces it. A module that exports a pipeline and
 * iterates nothing is profiled as a pipeline, as before.
 *
 * The first dataset the loop asks for is the trainer's input. Each step is the time from an
 * element being handed to the loop to its next `next()` call; each wait, from that call to the
 * element. After a warm-up (a model's first steps compile and allocate) the window runs for the
 * budget; then the loop's next pull is held (the library awaits the tracer's promise) while the
 * runner reports, and the runner exits, ending the script with it. No line of the script changes.
 */
import * as os from 'node:os';
import type { ConsumerEvent, Tracer } from '../data/tracing';
import { DATASET_KEY } from '../data/tracing';
import type { Profile, ProfileError, RunnerMessage, TrainerInfo, WindowSlice } from '../shared/profile';
import { calibrateWorkerTasks } from './calibrate';
import { exportedFunctions, loadedEsModules, type ModuleNamespace } from './discover';
import { stageOf } from './dialects/stage';
import { loadError, pipelineError } from './errors';
import { coresAvailableDuring, describeMachine, machineIdleSeconds, peakRssBytes, probeAvailableCores, processCpuSeconds, runnableShare, threadRunAndWait } from './machine';
import type { RunRequest } from './request';
import type { RunnerTracer } from './tracer';
import { opIdOfSite } from '../shared/opId';
import { slices, type WindowPoint } from './slices';
import { timerMs } from './timers';

/** Least time between two recorded points of the window: a fast loop's steps are counted into the last one. */
const POINT_SECONDS = 1e-3;
/** Fewest steps of warm-up, whatever its time: a model's first steps compile and allocate. */
export const MIN_WARMUP_STEPS = 3;
/** Seconds the loop may stay away after a pass ended before the run counts its data as used up. */
const END_GRACE_SECONDS = 1;
/** Seconds between progress messages about the loop. */
const PROGRESS_SECONDS = 0.2;

const now = (): number => performance.now() / 1000;

/** What the watch saw over the window, and why it ended. */
interface WatchOutcome {
  reason: 'budget' | 'exhausted' | 'error' | 'timeout';
  error?: unknown;
  message?: string;
}

/**
 * Watches the consumer of the first dataset the module iterates: splits its time into waits and
 * steps, with the main thread's CPU in each, over a warm-up and then a window of `req.seconds`
 * (or `req.maxElements` steps).
 */
export class TrainWatch {
  /** The key of the dataset the loop iterates (the first one asked for an element). */
  key: string | undefined;
  /** Resolves at the loop's first `next()`. */
  readonly started: Promise<void>;
  /** Resolves when the window is over (or the loop failed, stalled or never started). */
  readonly done: Promise<WatchOutcome>;
  phase: 'idle' | 'warmup' | 'measuring' | 'over' = 'idle';
  readonly info: TrainerInfo = { steps: 0, seconds: 0, waitSeconds: 0, stepSeconds: 0, waitMainCpuSeconds: 0, stepMainCpuSeconds: 0, maxWaitSeconds: 0, pipelineStepSeconds: 0, warmupSteps: 0, endReason: 'budget' };
  /** Elements the loop took before the window, for error messages. */
  taken = 0;
  private resolveStarted!: () => void;
  private resolveDone!: (o: WatchOutcome) => void;
  /** Clocks when the loop last asked (a wait started) or was last answered (a step started). */
  private waitFrom: { t: number; cpu: number } | undefined;
  private stepFrom: { t: number; cpu: number; claimed: number } | undefined;
  private firstElementAt = 0;
  private windowFrom = 0;
  /** Steps taken by each moment of the window (a step's element arrived), a millisecond apart at least: its slices. */
  private readonly points: WindowPoint[] = [];
  private windowEnd = 0;
  private endTimer: NodeJS.Timeout | undefined;
  private stallTimer: NodeJS.Timeout | undefined;
  /** Never settles: the loop's pull after the budget waits on it until the runner exits. */
  private readonly hold = new Promise<void>(() => undefined);

  constructor(
    private readonly req: Pick<RunRequest, 'seconds' | 'maxElements' | 'warmupSeconds' | 'startSeconds'>,
    private readonly cpu: () => number,
    private readonly hooks: {
      onWindowStart(): void;
      onWindowEnd(): void;
      /** Main-thread seconds the pipeline's operators have timed so far (any origin: only differences count). */
      claimed(): number;
      progress?(m: Extract<RunnerMessage, { type: 'progress' }>): void;
    },
  ) {
    this.started = new Promise((r) => (this.resolveStarted = r));
    this.done = new Promise((r) => (this.resolveDone = r));
  }

  /** Installs the watch on the runner's tracer, so every dataset iterator built from now on reports to it. */
  attach(tracer: Tracer): void {
    tracer.consumer = this.consumer;
  }

  /** Removes the watch: iterators built afterwards (the runner's own pull of an exported pipeline) pay nothing. */
  static detach(tracer: Tracer): void {
    delete tracer.consumer;
  }

  /** Whether the loop starts within `seconds` (a script that awaits something of its own before it iterates). */
  async startsWithin(seconds: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), timerMs(seconds))));
    const started = await Promise.race([this.started.then(() => true as const), late]);
    clearTimeout(timer);
    return started;
  }

  /** Starts the clock on the loop: if it never asks for an element within `startSeconds`, the run ends with a timeout. */
  armStart(): void {
    // A loop already under way is watched by the timer its first pull armed.
    if (this.key !== undefined) return;
    this.arm(this.req.startSeconds, 'The training script did not ask a plumber-data dataset for an element');
  }

  /** Ends the watch with a failure of the script itself (an uncaught error). */
  failed(error: unknown): void {
    this.end({ reason: 'error', error });
  }

  readonly consumer = (e: ConsumerEvent): void | PromiseLike<unknown> => {
    if (this.phase === 'over') return e.type === 'next' && e.key === this.key ? this.hold : undefined;
    if (this.key === undefined) {
      if (e.type !== 'next') return undefined;
      this.key = e.key;
      this.phase = 'warmup';
      this.resolveStarted();
      this.arm(Math.max(this.req.startSeconds, this.req.warmupSeconds + this.req.seconds), 'The training loop took no element');
    }
    if (e.key !== this.key) return undefined;
    const t = now();
    const cpu = this.cpu();
    if (e.type === 'next') {
      if (this.endTimer) clearTimeout(this.endTimer);
      this.endTimer = undefined;
      if (this.stepFrom && this.phase === 'measuring') {
        this.info.stepSeconds += t - this.stepFrom.t;
        this.info.stepMainCpuSeconds += cpu - this.stepFrom.cpu;
        this.info.pipelineStepSeconds += this.hooks.claimed() - this.stepFrom.claimed;
      }
      this.stepFrom = undefined;
      if (this.phase === 'warmup' && this.taken >= MIN_WARMUP_STEPS && t - this.firstElementAt >= this.req.warmupSeconds) {
        this.phase = 'measuring';
        this.windowFrom = t;
        this.points.push({ t, elements: 0, fine: 0 });
        this.info.warmupSteps = this.taken;
        this.hooks.onWindowStart();
        this.arm(this.req.seconds + Math.max(this.req.startSeconds, this.req.seconds), 'The training loop stalled');
      } else if (this.phase === 'measuring' && (t - this.windowFrom >= this.req.seconds || this.info.steps >= this.req.maxElements)) {
        this.end({ reason: 'budget' });
        return this.hold;
      }
      this.waitFrom = { t, cpu };
      return undefined;
    }
    // An element, or the end of a pass: the loop's wait is over and its own work begins.
    if (this.waitFrom && this.phase === 'measuring') {
      const w = t - this.waitFrom.t;
      this.info.waitSeconds += w;
      this.info.waitMainCpuSeconds += cpu - this.waitFrom.cpu;
      if (e.type === 'element') this.info.maxWaitSeconds = Math.max(this.info.maxWaitSeconds, w);
    }
    this.waitFrom = undefined;
    this.stepFrom = { t, cpu, claimed: this.phase === 'measuring' ? this.hooks.claimed() : 0 };
    if (e.type === 'element') {
      if (this.taken === 0) this.firstElementAt = t;
      this.taken++;
      if (this.phase === 'measuring') {
        this.info.steps++;
        const last = this.points.at(-1);
        if (last !== undefined && t - last.t >= POINT_SECONDS) this.points.push({ t, elements: this.info.steps, fine: this.info.steps });
        else if (last !== undefined && last.elements > 0) last.elements = last.fine = this.info.steps;
      }
      if (t >= this.nextProgress) this.progress(t);
    } else {
      // The pass is over: a loop that comes back for another epoch asks again soon; one that
      // is done with its data does not.
      this.endTimer = setTimeout(() => this.end({ reason: 'exhausted' }), timerMs(END_GRACE_SECONDS));
    }
    return undefined;
  };

  private nextProgress = 0;
  private progress(t: number): void {
    this.nextProgress = t + PROGRESS_SECONDS;
    const measuring = this.phase === 'measuring';
    this.hooks.progress?.({ type: 'progress', phase: measuring ? 'measuring' : 'warmup', elements: measuring ? this.info.steps : this.taken, seconds: measuring ? t - this.windowFrom : t - this.firstElementAt });
  }

  private arm(seconds: number, what: string): void {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = setTimeout(() => {
      if (this.phase === 'measuring' && this.info.steps > 0) return this.end({ reason: 'budget' });
      this.end({ reason: 'timeout', message: `${what} in ${seconds.toFixed(1)} s: it may be waiting on something that never happens, or its steps take longer than the budget (raise --seconds or --timeout).` });
    }, timerMs(seconds));
  }

  private end(o: WatchOutcome): void {
    if (this.phase === 'over') return;
    const measured = this.phase === 'measuring';
    this.phase = 'over';
    if (this.stallTimer) clearTimeout(this.stallTimer);
    if (this.endTimer) clearTimeout(this.endTimer);
    if (measured) {
      // A step under way when the window closes counts up to now: the loop is in it.
      const t = now();
      const cpu = this.cpu();
      if (this.stepFrom && o.reason !== 'exhausted') {
        this.info.stepSeconds += t - this.stepFrom.t;
        this.info.stepMainCpuSeconds += cpu - this.stepFrom.cpu;
        this.info.pipelineStepSeconds += this.hooks.claimed() - this.stepFrom.claimed;
      }
      this.info.seconds = this.info.waitSeconds + this.info.stepSeconds;
      this.info.endReason = o.reason === 'exhausted' ? 'exhausted' : 'budget';
      // The window's own time (its waits and steps), as `run.seconds`: an exhausted loop's grace is not in it.
      this.windowEnd = this.windowFrom + this.info.seconds;
      this.hooks.onWindowEnd();
    }
    this.resolveDone(o);
  }

  /** True when the window measured at least one step. */
  get measured(): boolean {
    return this.info.steps > 0;
  }

  /**
   * Consecutive slices of the window in steps and seconds, as a pipeline run's (measure.ts): the
   * spread verification judges a plan against. Without them each run was one slice, and two runs
   * pooled gave an interval of ± half the rate: a 1.2× gain could never clear it.
   */
  windowSlices(): WindowSlice[] | undefined {
    if (!this.measured || this.points.length === 0) return undefined;
    const end = { t: this.windowEnd, elements: this.info.steps, fine: this.info.steps };
    return slices(this.points, end);
  }
}

/**
 * The watch the runner installs before the module loads: its window starts and ends the tracer's
 * window and the run's clocks, and its progress goes to the parent.
 */
export function watchTraining(req: RunRequest, tracer: RunnerTracer, run: Profile['run'], cpu: () => number, send: (m: Extract<RunnerMessage, { type: 'progress' }>) => void): TrainWatch {
  const clocks = windowClocks(run, cpu, () => os.availableParallelism());
  const watch = new TrainWatch(req, cpu, {
    onWindowStart() {
      tracer.snapshot();
      clocks.start();
    },
    onWindowEnd() {
      clocks.end();
      tracer.endSampling();
    },
    claimed: () => tracer.total('selfSeconds') + tracer.total('dispatchSeconds'),
    progress: send,
  });
  watch.attach(tracer);
  return watch;
}

/**
 * Whether the module being imported is a training script: it asked a dataset for an element while
 * it loaded or in the moment after (see the module comment). `--train` answers yes up front.
 */
export async function startsTraining(importing: Promise<unknown>, watch: TrainWatch, forced: boolean | undefined): Promise<boolean> {
  if (forced) return true;
  const settled = importing.then(
    () => 'loaded' as const,
    () => 'loaded' as const,
  );
  const first = await Promise.race([settled, watch.started.then(() => 'started' as const)]);
  if (first === 'started') return true;
  // A loop started from the module's last line (`main()`, `void train()`) asks on a later turn.
  await new Promise((r) => setImmediate(r));
  return watch.key !== undefined;
}

/** What the runner's main module lends the training run. */
export interface TrainRun {
  file: string;
  req: RunRequest;
  tracer: RunnerTracer;
  clock: { kind: Profile['machine']['cpuClock']; read(): number };
  profile: Profile;
  /** Ends the runner with this error (sends the failed profile). */
  fail(error: ProfileError): Promise<void>;
  /** Ends the runner with the profile. */
  finish(profile: Profile): Promise<void>;
  send(m: Extract<RunnerMessage, { type: 'progress' }>): void;
  /** Prices worker moves of the sampled main-thread fns on the profile's ops (main.ts). */
  priceMoves(tracer: RunnerTracer, profile: Profile, file: string): Promise<void>;
  /** The first uncaught error of the script so far, if any. */
  stray(): unknown;
}

/**
 * Watches the training loop for the budget, then reports. `importing` is the module's import,
 * which may still be running (an ES module whose top-level await is the loop).
 */
export async function runTraining(r: TrainRun, watch: TrainWatch, importing: Promise<ModuleNamespace>): Promise<void> {
  const { file, req, tracer, profile } = r;
  const run = profile.run;
  let ns: ModuleNamespace = {};
  importing.then(
    (m) => {
      ns = m;
    },
    (e: unknown) => watch.failed(new ImportFailure(e)),
  );
  const onError = (e: unknown): void => watch.failed(e);
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  if (r.stray() !== undefined) watch.failed(r.stray());
  watch.armStart();
  const outcome = await watch.done;

  const idOfSite = (site: { file: string; line: number; column: number }): string => opIdOfSite(site, file);
  if (outcome.reason === 'error') {
    if (outcome.error instanceof ImportFailure) return r.fail(loadError(outcome.error.cause, file));
    const e = pipelineError(outcome.error, watch.taken, idOfSite);
    const where = `The training script threw after taking ${watch.taken} element${watch.taken === 1 ? '' : 's'} from its dataset: `;
    return r.fail({ ...e, message: e.message.startsWith('The training') ? e.message : `${where}${e.message}` });
  }
  if (outcome.reason === 'timeout') return r.fail({ kind: 'timeout', message: outcome.message ?? 'The training loop stalled.' });
  if (!watch.measured) {
    return r.fail({
      kind: 'empty',
      message: `The training loop took ${watch.taken} element${watch.taken === 1 ? '' : 's'} and stopped before a step could be measured (at least ${MIN_WARMUP_STEPS + 1} are needed, the first ${MIN_WARMUP_STEPS} warm up). Give it more data or epochs, or lower --warmup.`,
    });
  }

  // The loop is held: the main thread is free for the machine's probes, which would have
  // disturbed the window had they run before it (the script started the loop as it loaded).
  const key = watch.key as string;
  const machine = describeMachine(r.clock.kind);
  const available = await probeAvailableCores(machine.cores);
  if (available !== undefined) machine.availableCores = available;
  if (req.probes !== false) {
    const calibration = await calibrateWorkerTasks(file, r.clock.read);
    if (calibration !== undefined) {
      machine.workerDispatchSeconds = calibration.dispatchSeconds;
      machine.workerTaskOverheadSeconds = calibration.taskOverheadSeconds;
    }
  }
  profile.machine = machine;
  profile.trainer = { ...watch.info };
  run.elements = watch.info.steps;
  run.seconds = Math.max(watch.info.seconds, 1e-9);
  run.warmupElements = watch.info.warmupSteps;
  run.converged = false;
  run.endReason = watch.info.endReason;
  run.rateEstimates = [];
  const windowSlices = watch.windowSlices();
  if (windowSlices) run.windowSlices = windowSlices;
  run.peakRssBytes = peakRssBytes();
  profile.ops = tracer.ops(file, exportedFunctions(ns, file, await loadedEsModules(file)), key);
  profile.pipeline.rootId = tracer.idOf(key, file);
  pipelineShare(profile);
  const exported = Object.entries(ns).find(([, v]) => typeof v === 'object' && v !== null && ((v as Record<symbol, unknown>)[DATASET_KEY] === key || stageOf(v)?.key === key));
  profile.pipeline.exportName = exported?.[0] ?? '';
  if (req.probes !== false) await r.priceMoves(tracer, profile, file);
  process.removeListener('uncaughtException', onError);
  process.removeListener('unhandledRejection', onError);
  await r.finish(profile);
}

/**
 * Leaves the pipeline's share of the window's CPU in `run`, as a pipeline profile has it, so the
 * pipeline model reads its own demands: the main thread's CPU in the window less the trainer's.
 * While the loop waits only the pipeline runs on the main thread, so all of that CPU is its; during
 * the steps, its operators timed `pipelineStepSeconds` of work (in the trainer's awaits), which
 * counts at the CPU share the main thread had in the steps. The rest is the trainer's.
 */
export function pipelineShare(profile: Profile): void {
  const t = profile.trainer;
  if (!t) return;
  const stepCpuShare = t.stepSeconds > 0 ? Math.min(1, t.stepMainCpuSeconds / t.stepSeconds) : 0;
  const inSteps = Math.min(t.stepMainCpuSeconds, Math.max(0, t.pipelineStepSeconds) * stepCpuShare);
  const pipelineMain = t.waitMainCpuSeconds + inSteps;
  const trainerMain = t.stepMainCpuSeconds - inSteps;
  profile.run.mainThreadCpuSeconds = pipelineMain;
  profile.run.processCpuSeconds = Math.max(pipelineMain, profile.run.processCpuSeconds - trainerMain);
}

/** The module's import failed while its loop ran (an ES module's top-level code threw). */
class ImportFailure {
  constructor(readonly cause: unknown) {}
}

/**
 * The window's clocks, read at its two ends: what `run` reports besides the steps (main-thread and
 * process CPU, the cores free, the main thread's runnable share, the load average).
 */
export function windowClocks(run: Profile['run'], cpu: () => number, cores: () => number): { start(): void; end(): void } {
  let cpu0 = 0;
  let proc0 = 0;
  let idle0: number | undefined;
  let wall0 = 0;
  let sched0 = threadRunAndWait();
  return {
    start() {
      cpu0 = cpu();
      proc0 = processCpuSeconds();
      idle0 = machineIdleSeconds();
      wall0 = now();
      sched0 = threadRunAndWait();
    },
    end() {
      run.mainThreadCpuSeconds = Math.max(0, cpu() - cpu0);
      run.processCpuSeconds = Math.max(0, processCpuSeconds() - proc0);
      const idle1 = machineIdleSeconds();
      const c = coresAvailableDuring(run.processCpuSeconds, idle0 === undefined || idle1 === undefined ? undefined : idle1 - idle0, now() - wall0, cores());
      if (c !== undefined) run.availableCores = c;
      const share = runnableShare(sched0, threadRunAndWait(), now() - wall0);
      if (share !== undefined) run.mainThreadShare = share;
      run.loadAverage = Number(os.loadavg()[0].toFixed(2));
    },
  };
}
