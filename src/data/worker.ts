/**
 * The worker-thread entry of `map(fn, { placement: 'worker' })`, run by piscina. It imports the
 * user's module once per thread (require first, so TypeScript modules load under
 * `node --import tsx`, whose hooks workers inherit; import() for ES modules) — as the thread starts,
 * when the pool names the module in its workerData, so the first task does not wait for it — calls
 * the named export on each element of a task, and returns the results with this thread's CPU
 * seconds and the timings the main thread sizes its tasks from.
 *
 * Node Buffers and Batches cross as themselves both ways: a clone makes plain values of them, and
 * crossing.ts records where they were so the other side rebuilds them. TensorFlow.js tensors cross
 * as their dtype, shape and values and arrays of doubles as Float64Arrays, rebuilt on arrival
 * (here with the tfjs the fn's module resolves). Tensors this thread made for the fn's inputs, and
 * the tensors of its results once sent, are disposed: a worker fn must return tensors it no longer
 * uses, as it must buffers.
 *
 * Typed arrays and ArrayBuffers in results are transferred (moved) back, not copied: whole,
 * unshared buffers only. A worker fn must therefore return buffers it no longer uses — fresh
 * ones, or the input's own (the input is the worker's copy) — never a buffer it keeps and reuses
 * across calls (a module-level scratch array), which the move would detach in the worker.
 */
import { pathToFileURL } from 'node:url';
import { threadId, workerData } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { cpuClockKind, threadCpuSeconds } from './internal/cpuclock';
import { elementRng, type Rng } from './internal/rng';
import { findUncloneable, type Uncloneable } from './errors';
import { encodeAll, failingElement, type Encoded, type Marks, movableBuffers, restoreAll } from './internal/crossing';
import { disposeAll, tensorMakerFor, type TensorMaker } from './internal/tensors';
import { exportedMember } from './internal/exports';
import { estimateBytes } from './internal/bytes';
import { addLatency } from './tracing';

/** One task: a group of consecutive elements of the map's input. */
export interface WorkerTask {
  module: string;
  exportName: string;
  mode: 'map' | 'filter' | 'flatMap';
  items: unknown[];
  /** Input index of items[0]. */
  base: number;
  seed: number;
  epoch: number;
  /** Buffers, Batches, tensors and number arrays in the items, rebuilt here before the fn sees them (see crossing.ts). */
  marks?: (Marks | null)[];
  /** The values of the number arrays in the items (see crossing.ts `Encoded`). */
  numbers?: Float64Array;
  /**
   * Fused maps (`fuse: true`): the maps that run before this task's own fn, in order, each on the
   * previous one's result. They are maps (one result per element), so an element's index is the
   * same at every stage. With stages, a filter task returns the surviving values, not verdicts.
   */
  stages?: WorkerStage[];
  /** Time each call of the task's own fn (a tracer watches): the result carries `callHistogram`. */
  timeCalls?: boolean;
}

/** One fused map ahead of a task's own fn (see `WorkerTask.stages`). */
export interface WorkerStage {
  module: string;
  exportName: string;
  seed: number;
  epoch: number;
}

/** What a task returns. Exactly one of `out`, `failed`, `loadError`, `uncloneable` is set. */
export interface WorkerResult {
  out?: unknown[];
  /** Offset (in items) of the element whose call threw, and the error; `stage` is the fused stage whose fn threw (absent: the task's own fn). */
  failed?: { offset: number; name: string; message: string; stack?: string; stage?: number };
  loadError?: string;
  /** With fused stages: the stage whose module or export failed to load (absent: the task's own). */
  loadStage?: number;
  /** Buffers, Batches, tensors and number arrays in `out`, for the main thread to rebuild (see crossing.ts). */
  marks?: (Marks | null)[];
  /** The values of the number arrays in `out`. */
  numbers?: Float64Array;
  /** Offset (in items) of the first result that cannot travel back to the main thread, and what in it. */
  uncloneable?: Uncloneable & { offset: number };
  cpuSeconds: number;
  /**
   * Wall seconds inside the fn's calls (the per-element work). The schedstat clock advances at
   * scheduler ticks (~4 ms), too coarse for one short task, so tasks are sized by wall time.
   */
  fnSeconds: number;
  /**
   * When the task's own work began and ended, in ms since the epoch (`performance.timeOrigin +
   * performance.now()`, comparable across threads): with the main thread's post and receive times
   * they split a task's round trip into messaging and work.
   */
  startedAt: number;
  endedAt: number;
  /** The worker thread that ran the task (tasks queued on one thread wait for each other). */
  thread: number;
  /** The fn used ctx.rng. */
  random: boolean;
  /** With fused stages: wall seconds inside each stage's calls, then the task's own fn's; and the bytes of each stage's first result (an estimate, see bytes.ts). */
  stageSeconds?: number[];
  stageBytes?: number[];
  /** With `timeCalls`: the task's own fn's calls by wall time (tracing.ts `addLatency`). */
  callHistogram?: number[];
  /** With fused stages: which of them used ctx.rng. */
  stageRandom?: boolean[];
}

const TRANSFERABLE = Symbol.for('Piscina.transferable');
const VALUE = Symbol.for('Piscina.valueOf');

const modules = new Map<string, Promise<Record<string, unknown>>>();

// A dynamic import that esbuild's CJS output leaves alone.
const importModule = new Function('u', 'return import(u)') as (u: string) => Promise<Record<string, unknown>>;

function load(module: string): Promise<Record<string, unknown>> {
  let m = modules.get(module);
  if (m === undefined) {
    m = (async () => {
      const path = module.startsWith('file:') ? new URL(module).pathname : module;
      try {
        return require(path) as Record<string, unknown>;
      } catch (e) {
        const code = (e as { code?: string }).code;
        // ES modules (top-level await, .mjs) cannot be required on Node 20: import them instead.
        if (code !== 'ERR_REQUIRE_ESM' && code !== 'ERR_REQUIRE_ASYNC_MODULE' && code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw e;
        return importModule(module.startsWith('file:') ? module : pathToFileURL(module).href);
      }
    })();
    modules.set(module, m);
  }
  return m;
}

/** Milliseconds since the epoch, comparable with the main thread's reading. */
const epochMs = (): number => performance.timeOrigin + performance.now();

// A pool serves one module: load it while the thread starts (piscina imports this file before the
// thread reports ready). A failure is reported by the first task, which awaits the same promise.
const preload = (workerData as { module?: unknown; modules?: unknown } | null) ?? {};
for (const m of [preload.module, ...(Array.isArray(preload.modules) ? preload.modules : [])]) if (typeof m === 'string') load(m).catch(() => undefined);

/**
 * The thread's CPU clock when its previous task ended. schedstat (and threadCpuUsage) are updated
 * at scheduler events, so a task's tail is usually booked when the thread goes to sleep after it,
 * outside the task's own readings: per-task deltas read ~3× low for 2 ms tasks. Measuring each task
 * from the end of the previous one credits that late booking to the next task instead, so the sum
 * over tasks is the thread's real CPU (idle time between tasks costs no CPU, so adds nothing).
 */
let lastEnd = -1;
const perThreadClock = cpuClockKind() !== 'wall';

/** CPU seconds since t0, recording this moment as the end of the task. */
function cpuSince(t0: number): number {
  lastEnd = threadCpuSeconds();
  return lastEnd - t0;
}

/** A stage's fn as this thread found it, or why it could not. */
type Found = { fn: Function; useCtx: boolean } | { error: string };

async function findFn(module: string, exportName: string): Promise<Found> {
  let mod: Record<string, unknown>;
  try {
    mod = await load(module);
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
  const fn = exportedMember(mod, exportName);
  if (typeof fn !== 'function') {
    const names = Object.keys(mod).filter((k) => typeof mod[k] === 'function');
    return { error: `it has no exported function named '${exportName}' (exported functions: ${names.join(', ') || 'none'})` };
  }
  // The worker's own fn decides: the main thread may hold a different (wrapper) function.
  return { fn, useCtx: (fn as Function).length !== 1 };
}

export default async function run(task: WorkerTask): Promise<unknown> {
  const cpuAtEntry = threadCpuSeconds();
  const stages = task.stages ?? [];
  const specs = [...stages, { module: task.module, exportName: task.exportName, seed: task.seed, epoch: task.epoch }];
  const found = await Promise.all(specs.map((st) => findFn(st.module, st.exportName)));
  // Read after the await: with two tasks queued on this thread, the second resumes only when the
  // first (a sync fn) has ended, so its clocks start where the first's stopped. The first task of
  // a thread also counts the module's loading.
  const t0 = perThreadClock && lastEnd >= 0 ? lastEnd : cpuAtEntry;
  const startedAt = epochMs();
  let fnMs = 0;
  const fused = stages.length > 0;
  const stageMs = fused ? new Array<number>(specs.length).fill(0) : undefined;
  const stageBytes = fused ? new Array<number>(specs.length).fill(0) : undefined;
  const stageRandom = fused ? new Array<boolean>(specs.length).fill(false) : undefined;
  const timing = task.timeCalls === true;
  let callHistogram: number[] | undefined;
  const finish = (r: Omit<WorkerResult, 'cpuSeconds' | 'fnSeconds' | 'startedAt' | 'endedAt' | 'thread'>): WorkerResult => {
    const done: WorkerResult = { ...r, cpuSeconds: cpuSince(t0), fnSeconds: fnMs / 1000, startedAt, endedAt: epochMs(), thread: threadId };
    if (callHistogram !== undefined) done.callHistogram = callHistogram;
    if (stageMs !== undefined) {
      done.stageSeconds = stageMs.map((ms) => ms / 1000);
      done.stageBytes = stageBytes;
      done.stageRandom = stageRandom;
    }
    return done;
  };
  for (let i = 0; i < found.length; i++) {
    const f = found[i];
    if ('error' in f) return finish(fused && i < found.length - 1 ? { loadError: f.error, loadStage: i, random: false } : { loadError: f.error, random: false });
  }
  const fns = found as { fn: Function; useCtx: boolean }[];
  let random = false;
  const items = task.items;
  // The items are this thread's copies: Buffers and Batches become themselves again in place,
  // tensors and number arrays are rebuilt. The tensors made here are this thread's to dispose.
  const made: unknown[] = [];
  const makeTensor: TensorMaker = (data, shape, dtype) => {
    const t = tensorMakerFor(task.module)(data, shape, dtype);
    made.push(t);
    return t;
  };
  try {
    restoreAll(items, task.marks, undefined, { tensor: makeTensor, numbers: task.numbers });
  } catch (e) {
    disposeAll(made);
    return finish({ loadError: e instanceof Error ? e.message : String(e), random: false });
  }
  const last = specs.length - 1;
  /** One call of stage s's fn on element `index` (a promise when the fn returns one: the caller awaits it, so a sync fn costs no microtask). */
  const call = (s: number, x: unknown, index: number): unknown => {
    const { fn, useCtx } = fns[s];
    let r: unknown;
    if (useCtx) {
      const st = specs[s];
      // One generator per call, made on first use, as on the main thread (context.ts).
      let rng: Rng | null = null;
      const ctx = {
        index,
        get rng(): Rng {
          if (s === last) random = true;
          else (stageRandom as boolean[])[s] = true;
          return (rng ??= elementRng(st.seed, st.epoch, index));
        },
        signal: undefined,
      };
      r = fn(x, ctx);
    } else r = fn(x);
    return r;
  };
  const settled = (r: unknown): boolean => !(r !== null && typeof r === 'object' && typeof (r as PromiseLike<unknown>).then === 'function');
  const out = new Array<unknown>(items.length);
  let kept = 0;
  /** A fused filter's survivors: the task offset of each, so a result that cannot travel names its element. */
  const keptAt: number[] = [];
  const f0 = performance.now();
  for (let i = 0; i < items.length; i++) {
    const index = task.base + i;
    let s = 0;
    try {
      let x = items[i];
      if (stageMs !== undefined) {
        // Each fused stage timed on its own, so its op is billed its own share of the task.
        for (; s < last; s++) {
          const a = performance.now();
          x = call(s, x, index);
          if (!settled(x)) x = await x;
          stageMs[s] += performance.now() - a;
          if (i === 0) (stageBytes as number[])[s] = estimateBytes(x);
        }
        const a = performance.now();
        let r = call(s, x, index);
        if (!settled(r)) r = await r;
        const took = performance.now() - a;
        stageMs[s] += took;
        if (timing) callHistogram = addLatency(callHistogram, took / 1000);
        // A fused filter keeps the values its stages made, not the task's inputs.
        if (task.mode === 'filter') {
          if (r) {
            keptAt.push(i);
            out[kept++] = x;
          }
        } else out[i] = task.mode === 'flatMap' && !Array.isArray(r) ? Array.from(r as Iterable<unknown>) : r;
        continue;
      }
      const a = timing ? performance.now() : 0;
      let r = call(s, x, index);
      if (!settled(r)) r = await r;
      if (timing) callHistogram = addLatency(callHistogram, (performance.now() - a) / 1000);
      out[i] = task.mode === 'filter' ? Boolean(r) : task.mode === 'flatMap' && !Array.isArray(r) ? Array.from(r as Iterable<unknown>) : r;
    } catch (e) {
      fnMs = performance.now() - f0;
      disposeAll(made);
      const err = e instanceof Error ? e : new Error(String(e));
      const failed: NonNullable<WorkerResult['failed']> = { offset: i, name: err.name, message: err.message, stack: err.stack };
      if (fused && s < last) failed.stage = s;
      return finish({ failed, random });
    }
  }
  if (fused && task.mode === 'filter') out.length = kept;
  fnMs = performance.now() - f0;
  if (task.mode === 'filter' && !fused) {
    disposeAll(made);
    return finish({ out, random });
  }
  return sendResults(
    out,
    made,
    (i) => (fused && task.mode === 'filter' ? keptAt[i] : i),
    (r) => finish({ ...r, random }),
  );
}

/**
 * A task's results as they cross back (crossing.ts): the tensors among them go as their values and
 * are disposed here, with `made` (the tensors made for the inputs); buffers move. `offsetOf` maps a
 * result's position to its element's offset in the task (a fused filter returns its survivors).
 */
function sendResults(
  out: unknown[],
  made: unknown[],
  offsetOf: (i: number) => number,
  finish: (r: Omit<WorkerResult, 'cpuSeconds' | 'fnSeconds' | 'startedAt' | 'endedAt' | 'thread' | 'random'>) => WorkerResult,
): unknown {
  let sent: Encoded;
  try {
    sent = encodeAll(out);
  } catch (e) {
    // A tensor that cannot be read (disposed by the fn): name the element it came from.
    const offset = offsetOf(failingElement(out));
    const err = e instanceof Error ? e : new Error(String(e));
    return finish({ failed: { offset, name: err.name, message: `its result could not be read for the main thread: ${err.message}`, stack: err.stack } });
  } finally {
    disposeAll(made);
  }
  disposeAll(sent.tensors);
  const sending = sent.items;
  // A result that cannot be cloned would make piscina's postMessage throw after this function has
  // returned, killing the thread with an anonymous error: find it here, while its element is known.
  // Results are walked, not copied; typed arrays and numbers cost a type check each.
  for (let i = 0; i < sending.length; i++) {
    const u = findUncloneable(sending[i]);
    if (u !== null) return finish({ uncloneable: { ...u, offset: offsetOf(i) } });
  }
  const buffers = new Set<ArrayBuffer>(sent.transfer);
  movableBuffers(sending, buffers);
  const result = finish(sent.marks === undefined ? { out: sending } : { out: sending, marks: sent.marks, numbers: sent.numbers });
  if (buffers.size === 0) return result;
  // piscina's movable protocol: the value travels with its buffers in the transfer list.
  return Piscina.move({ [TRANSFERABLE]: [...buffers], [VALUE]: result } as never);
}
