/**
 * A fn's CPU per call in a worker thread, as a worker pool would run it: the timer worker
 * (timerWorker.ts, its own bundle) loads the fn from its module and times it, warm, on the copies
 * of the inputs the main thread measured it on.
 */
import { Worker } from 'node:worker_threads';
import { encodeAll, type Marks } from '../../data/tracing';
import { findRunnerBundle } from '../bundles';
import { gc } from '../heap';
import { settledRss } from '../memory';
import { threadBytes, type ThreadMemory } from '../workerRss';
import { rebuiltPaths } from '../fidelity';
import type { SampledElement } from '../tracer';
import { elementSeed } from './calls';
import { MAX_WALL_PER_CPU, type TimerRequest } from './timing';
import type { MoveFindings, MoveTarget } from './types';

/**
 * The least CPU time the timer worker gets for one fn: under other work on the cores, a shorter
 * time leaves its warm-up too few rounds to see a fn settle, and the fn goes unpriced.
 */
const MIN_WORKER_SECONDS = 0.1;

/**
 * The inputs as the library sends them to a worker (its crossing.ts: tensors and arrays of
 * doubles as typed arrays, rebuilt on arrival, so the fn is timed on the representation a worker
 * of the library hands it), with the marks of the pipeline's Batches, which the library finds by
 * its own class (fidelity.ts finds them by shape: the runner's copy of the class is not the pipeline's).
 */
export function sentToWorker(elements: unknown[]): Pick<TimerRequest, 'inputs' | 'marks' | 'numbers'> {
  const sent = encodeAll(elements);
  const marks = elements.map((x, i): Marks | null => {
    const own = sent.marks?.[i] ?? null;
    const marked = new Set((own ?? []).map(([path]) => JSON.stringify(path)));
    const batches = (rebuiltPaths(x) ?? []).filter(([path, kind]) => kind === 1 && !marked.has(JSON.stringify(path))) as Marks;
    return own === null && batches.length === 0 ? null : [...(own ?? []), ...batches];
  });
  return sent.numbers === undefined ? { inputs: sent.items, marks } : { inputs: sent.items, marks, numbers: sent.numbers };
}

/** A fn to time in the worker, the inputs it ran on here, and the findings its figure goes into. */
export interface WorkerJob {
  t: MoveTarget;
  inputs: SampledElement[];
  findings: MoveFindings;
}

/** Waits for the worker's next message, or undefined at `ms` or when it fails. */
function nextMessage(w: Worker, ms: number): Promise<Record<string, unknown> | undefined> {
  return new Promise((resolve) => {
    const done = (v: Record<string, unknown> | undefined): void => {
      clearTimeout(timer);
      w.off('message', onMessage);
      w.off('error', onError);
      resolve(v);
    };
    const onMessage = (m: Record<string, unknown>): void => done(m);
    const onError = (): void => done(undefined);
    const timer = setTimeout(() => done(undefined), ms);
    w.on('message', onMessage);
    w.on('error', onError);
  });
}

/** The timer worker and the CPU seconds left to it: one pool, spent fn by fn. */
class TimerWorker {
  private first = true;
  constructor(
    private readonly worker: Worker,
    public left: number,
    private readonly loadSeconds: number,
    /** The process's resident set, garbage collected, before the thread started. */
    private readonly rssBefore?: number,
  ) {}

  /** Times one fn for about `seconds` of CPU, and records its figure: 'gone' when the worker stopped answering. */
  async send(job: WorkerJob, seconds: number): Promise<'done' | 'unsettled' | 'gone'> {
    const { t, inputs, findings } = job;
    const request: TimerRequest = {
      file: t.fnModule!.file,
      exportName: t.fnModule!.exportName,
      ...sentToWorker(inputs.map((s) => s.element)),
      indices: inputs.map((s) => s.index),
      seeds: inputs.map((s) => elementSeed(s.index)),
      seconds,
    };
    this.worker.postMessage(request);
    // The first message also waits for the thread to start and load the module. The limits are
    // for a thread that never answers: a busy machine (other work on the cores, the pipeline's
    // own threads finishing) can take several times the CPU seconds in wall time (at most
    // MAX_WALL_PER_CPU times, then the worker stops), and a reply that comes late costs only its wait.
    const reply = await nextMessage(this.worker, (this.first ? this.loadSeconds : 0) * 1000 + seconds * (MAX_WALL_PER_CPU + 1) * 1000 + 1000);
    this.first = false;
    if (reply === undefined) return 'gone';
    const spent = reply.seconds;
    this.left -= typeof spent === 'number' && Number.isFinite(spent) ? Math.max(0, spent) : seconds;
    const cpu = reply.cpuPerCall;
    if (typeof cpu === 'number' && Number.isFinite(cpu) && findings.moveCost) findings.moveCost.workerCpuSeconds = Math.max(0, cpu);
    const grown = threadBytes(this.rssBefore, reply.memory as Partial<ThreadMemory> | undefined);
    if (grown !== undefined && findings.moveCost) findings.moveCost.workerRssBytes = Math.min(grown, findings.moveCost.workerRssBytes ?? Infinity);
    return reply.unsettled === true ? 'unsettled' : 'done';
  }
}

/**
 * Times each job's fn in one worker thread, within about `seconds` of its CPU (a start and module
 * load get `loadSeconds` more), and sets `workerCpuSeconds` on the moves it priced. The time is
 * spent in pipeline order: each fn gets an equal share of what is left, at least
 * MIN_WORKER_SECONDS, and what a fn that settles early leaves goes to the next. A fn that had not
 * settled in its share is sent again with what is left at the end, and goes on warming from where
 * it stopped: a fn whose module fills caches or whose code V8 compiles at length needs more than
 * an equal share. The worker is ended before this returns.
 */
export async function timeInWorker(jobs: WorkerJob[], seconds: number, loadSeconds: number): Promise<void> {
  // A worker from a file, not `eval`: only then does tsx's require hook (inherited through the
  // runner's --import flag) load TypeScript modules in it, as in plumber-data's own pool.
  const file = findRunnerBundle('timer.js');
  if (file === undefined) return;
  let w: Worker | undefined;
  try {
    // What the process holds before the thread, for what the thread and each fn in it add (workerRss.ts).
    const rssBefore = gc() ? await settledRss() : undefined;
    w = new Worker(file);
    // An exception in the worker must not reach the runner's uncaught-error handlers.
    w.on('error', () => undefined);
    const timer = new TimerWorker(w, seconds, loadSeconds, rssBefore);
    const unsettled: WorkerJob[] = [];
    for (let i = 0; i < jobs.length; i++) {
      const status = await timer.send(jobs[i]!, Math.max(MIN_WORKER_SECONDS, timer.left / (jobs.length - i)));
      if (status === 'gone') return;
      if (status === 'unsettled') unsettled.push(jobs[i]!);
    }
    // Sent again, the dearest on the main thread first, with all that is left (what it does not use
    // goes to the next): the dearer a fn, the more a move of it can gain.
    unsettled.sort((a, b) => (b.findings.moveCost?.mainCpuSeconds ?? 0) - (a.findings.moveCost?.mainCpuSeconds ?? 0));
    for (let i = 0; i < unsettled.length && timer.left >= MIN_WORKER_SECONDS / 2; i++) {
      if ((await timer.send(unsettled[i]!, timer.left)) === 'gone') break;
    }
  } finally {
    await w?.terminate();
  }
}
