/**
 * The worker-thread entry of `map(fn, { placement: 'worker' })`, run by piscina. It imports the
 * user's module once per thread (require first, so TypeScript modules load under
 * `node --import tsx`, whose hooks workers inherit; import() for ES modules), calls the named
 * export on each element of a task, and returns the results with this thread's CPU seconds.
 * Typed arrays in results are transferred back, not copied.
 */
import { pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import { cpuClockKind, threadCpuSeconds } from './internal/cpuclock';
import { elementRng, type Rng } from './internal/rng';
import { findUncloneable, type Uncloneable } from './errors';

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
}

/** What a task returns. Exactly one of `out`, `failed`, `loadError`, `uncloneable` is set. */
export interface WorkerResult {
  out?: unknown[];
  /** Offset (in items) of the element whose call threw, and the error. */
  failed?: { offset: number; name: string; message: string; stack?: string };
  loadError?: string;
  /** Offset (in items) of the first result that cannot travel back to the main thread, and what in it. */
  uncloneable?: Uncloneable & { offset: number };
  cpuSeconds: number;
  /**
   * Wall seconds of the task inside the worker. Sizes the next tasks: the schedstat clock advances
   * at scheduler ticks (~4 ms), too coarse for one short task, though its sums are sound.
   */
  wallSeconds: number;
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

/** Buffers that can move to the main thread: whole, unshared ArrayBuffers, each once. */
function collect(x: unknown, into: Set<ArrayBuffer>, depth: number): void {
  if (x === null || typeof x !== 'object') return;
  if (ArrayBuffer.isView(x)) {
    const b = x.buffer;
    if (b instanceof ArrayBuffer && x.byteOffset === 0 && x.byteLength === b.byteLength) into.add(b);
    return;
  }
  if (x instanceof ArrayBuffer) {
    into.add(x);
    return;
  }
  if (depth >= 3) return;
  if (Array.isArray(x)) for (const v of x) collect(v, into, depth + 1);
  else if (Object.getPrototypeOf(x) === Object.prototype) for (const k in x) collect((x as Record<string, unknown>)[k], into, depth + 1);
  else {
    const data = (x as { data?: unknown }).data;
    if (data !== undefined) collect(data, into, depth + 1);
  }
}

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
  const now = threadCpuSeconds();
  const t0 = perThreadClock && lastEnd >= 0 ? lastEnd : now;
  const w0 = performance.now();
  const wall = (): number => (performance.now() - w0) / 1000;
  let mod: Record<string, unknown>;
  try {
    mod = await load(task.module);
  } catch (e) {
    return { loadError: e instanceof Error ? e.message : String(e), cpuSeconds: cpuSince(t0), wallSeconds: wall(), random: false } satisfies WorkerResult;
  }
  const fn = mod[task.exportName] ?? (mod.default as Record<string, unknown> | undefined)?.[task.exportName];
  if (typeof fn !== 'function') {
    const names = Object.keys(mod).filter((k) => typeof mod[k] === 'function');
    return {
      loadError: `it has no exported function named '${task.exportName}' (exported functions: ${names.join(', ') || 'none'})`,
      cpuSeconds: cpuSince(t0),
      wallSeconds: wall(),
      random: false,
    } satisfies WorkerResult;
  }
  // The worker's own fn decides: the main thread may hold a different (wrapper) function.
  const useCtx = (fn as Function).length !== 1;
  let random = false;
  const out = new Array<unknown>(task.items.length);
  for (let i = 0; i < task.items.length; i++) {
    const index = task.base + i;
    try {
      let r: unknown;
      if (useCtx) {
        const ctx = {
          index,
          get rng(): Rng {
            random = true;
            return elementRng(task.seed, task.epoch, index);
          },
          signal: undefined,
        };
        r = fn(task.items[i], ctx);
      } else r = fn(task.items[i]);
      if (r !== null && typeof r === 'object' && typeof (r as PromiseLike<unknown>).then === 'function') r = await r;
      out[i] = task.mode === 'filter' ? Boolean(r) : task.mode === 'flatMap' && !Array.isArray(r) ? Array.from(r as Iterable<unknown>) : r;
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e));
      return { failed: { offset: i, name: err.name, message: err.message, stack: err.stack }, cpuSeconds: cpuSince(t0), wallSeconds: wall(), random } satisfies WorkerResult;
    }
  }
  // A result that cannot be cloned would make piscina's postMessage throw after this function has
  // returned, killing the thread with an anonymous error: find it here, while its element is known.
  // Results are walked, not copied; typed arrays and numbers cost a type check each.
  if (task.mode !== 'filter') {
    for (let i = 0; i < out.length; i++) {
      const u = findUncloneable(out[i]);
      if (u !== null) return { uncloneable: { ...u, offset: i }, cpuSeconds: cpuSince(t0), wallSeconds: wall(), random } satisfies WorkerResult;
    }
  }
  const result: WorkerResult = { out, cpuSeconds: 0, wallSeconds: 0, random };
  const buffers = new Set<ArrayBuffer>();
  if (task.mode !== 'filter') collect(out, buffers, 0);
  result.cpuSeconds = cpuSince(t0);
  result.wallSeconds = wall();
  if (buffers.size === 0) return result;
  // piscina's movable protocol: the value travels with its buffers in the transfer list.
  return Piscina.move({ [TRANSFERABLE]: [...buffers], [VALUE]: result } as never);
}
