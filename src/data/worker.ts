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
}

/** What a task returns. Exactly one of `out`, `failed`, `loadError`, `uncloneable` is set. */
export interface WorkerResult {
  out?: unknown[];
  /** Offset (in items) of the element whose call threw, and the error. */
  failed?: { offset: number; name: string; message: string; stack?: string };
  loadError?: string;
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
const preload = (workerData as { module?: unknown } | null)?.module;
if (typeof preload === 'string') load(preload).catch(() => undefined);

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

export default async function run(task: WorkerTask): Promise<unknown> {
  const cpuAtEntry = threadCpuSeconds();
  let mod: Record<string, unknown> | undefined;
  let loadError: string | undefined;
  try {
    mod = await load(task.module);
  } catch (e) {
    loadError = e instanceof Error ? e.message : String(e);
  }
  // Read after the await: with two tasks queued on this thread, the second resumes only when the
  // first (a sync fn) has ended, so its clocks start where the first's stopped. The first task of
  // a thread also counts the module's loading.
  const t0 = perThreadClock && lastEnd >= 0 ? lastEnd : cpuAtEntry;
  const startedAt = epochMs();
  let fnMs = 0;
  const finish = (r: Omit<WorkerResult, 'cpuSeconds' | 'fnSeconds' | 'startedAt' | 'endedAt' | 'thread'>): WorkerResult => ({
    ...r,
    cpuSeconds: cpuSince(t0),
    fnSeconds: fnMs / 1000,
    startedAt,
    endedAt: epochMs(),
    thread: threadId,
  });
  if (mod === undefined) return finish({ loadError, random: false });
  const fn = exportedMember(mod, task.exportName);
  if (typeof fn !== 'function') {
    const m = mod;
    const names = Object.keys(m).filter((k) => typeof m[k] === 'function');
    return finish({ loadError: `it has no exported function named '${task.exportName}' (exported functions: ${names.join(', ') || 'none'})`, random: false });
  }
  // The worker's own fn decides: the main thread may hold a different (wrapper) function.
  const useCtx = (fn as Function).length !== 1;
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
  const out = new Array<unknown>(items.length);
  const f0 = performance.now();
  for (let i = 0; i < items.length; i++) {
    const index = task.base + i;
    try {
      let r: unknown;
      if (useCtx) {
        // One generator per call, made on first use, as on the main thread (context.ts).
        let rng: Rng | null = null;
        const ctx = {
          index,
          get rng(): Rng {
            random = true;
            return (rng ??= elementRng(task.seed, task.epoch, index));
          },
          signal: undefined,
        };
        r = fn(items[i], ctx);
      } else r = fn(items[i]);
      if (r !== null && typeof r === 'object' && typeof (r as PromiseLike<unknown>).then === 'function') r = await r;
      out[i] = task.mode === 'filter' ? Boolean(r) : task.mode === 'flatMap' && !Array.isArray(r) ? Array.from(r as Iterable<unknown>) : r;
    } catch (e) {
      fnMs = performance.now() - f0;
      disposeAll(made);
      const err = e instanceof Error ? e : new Error(String(e));
      return finish({ failed: { offset: i, name: err.name, message: err.message, stack: err.stack }, random });
    }
  }
  fnMs = performance.now() - f0;
  if (task.mode === 'filter') {
    disposeAll(made);
    return finish({ out, random });
  }
  // Results as they cross (crossing.ts); the tensors among them go as their values, and are disposed here.
  let sent: Encoded;
  try {
    sent = encodeAll(out);
  } catch (e) {
    // A tensor that cannot be read (disposed by the fn): name the element it came from.
    const offset = failingElement(out);
    const err = e instanceof Error ? e : new Error(String(e));
    return finish({ failed: { offset, name: err.name, message: `its result could not be read for the main thread: ${err.message}`, stack: err.stack }, random });
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
    if (u !== null) return finish({ uncloneable: { ...u, offset: i }, random });
  }
  const buffers = new Set<ArrayBuffer>(sent.transfer);
  movableBuffers(sending, buffers);
  const result = finish(sent.marks === undefined ? { out: sending, random } : { out: sending, marks: sent.marks, numbers: sent.numbers, random });
  if (buffers.size === 0) return result;
  // piscina's movable protocol: the value travels with its buffers in the transfer list.
  return Piscina.move({ [TRANSFERABLE]: [...buffers], [VALUE]: result } as never);
}
