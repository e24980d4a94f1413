/**
 * After the measured window: what moving each sampled main-thread map/filter/flatMap to worker
 * threads would cost, and whether its fn is deterministic, measured on the real input elements
 * the tracer kept. Async fns are awaited one call at a time, which also measures the CPU they
 * spend after their first await (see `measureAwaited`). The fn is called a few extra times here
 * (twice per sampled element for the determinism check, then repeatedly for its CPU time), so
 * side effects in a fn happen again. Where a repeat reads an op's output again, what its results
 * hold on the heap is measured too (heap.ts), for the size of a cache after it.
 *
 * CPU is read with `process.cpuUsage()` (precise, where the per-thread schedstat clock advances
 * only at scheduler ticks), while no other thread of ours works: the pipeline is closed, and the
 * main thread waits while the worker thread measures.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import { isDeepStrictEqual } from 'node:util';
import { Worker } from 'node:worker_threads';
import { DATASET_KEY, Rng, elementSeed as libraryElementSeed, estimateBytes } from '../data/tracing';
import type { HeldBytes, MoveBlocked, MoveCost } from '../shared/profile';
import { copyChange, crossCopy, rebuiltPaths } from './fidelity';
import { processCpuSeconds } from './machine';
import { heapBytesPerElement } from './heap';
import type { SampledElement } from './tracer';

/** An operator whose fn can be measured. */
export interface MoveTarget {
  id: string;
  kind: 'map' | 'filter' | 'flatMap';
  fn: Function;
  samples: SampledElement[];
  /** Where the fn is exported from: only then can a worker thread load it. */
  fnModule?: { file: string; exportName: string };
  /** The fn returns promises: its calls are awaited one at a time (see `measureAwaited`). */
  async?: boolean;
  /** A cache after the op could pay (a repeat reads its output again): measure what its elements hold in memory. */
  heap?: boolean;
}

export interface MoveFindings {
  moveCost?: MoveCost;
  randomObserved?: boolean;
  /** Memory one element the op hands on keeps alive (see heap.ts), when asked for. */
  held?: HeldBytes;
  /** What a copy between threads changed in the sampled elements (see fidelity.ts): no move is priced then. */
  moveBlocked?: MoveBlocked;
}

/** Sampled elements (and results) checked for what a copy between threads changes: it is a property of their type, not of each value. */
const FIDELITY_SAMPLES = 4;

/**
 * What a copy between threads would change on either side of a sync fn for one sampled element:
 * its input, else (map, flatMap: a filter hands on its input) its result. An input a copy changes
 * (a class instance, a library Batch arriving as a plain object) matters only if the fn computes
 * something else from the copy: when it ran on a copy (`onCopy`, its normalised result), it is
 * called once more on the element itself and the two results compared. When it threw on copies,
 * whatever the copy changed is named.
 */
function crossingChange(t: MoveTarget, s: SampledElement, onCopy: { value: unknown } | undefined, result: { value: unknown }): MoveBlocked | undefined {
  let inputChange = copyChange(s.element, 'input');
  if (inputChange !== undefined && onCopy !== undefined) {
    let own: { value: unknown } | undefined;
    try {
      own = normalise(t.kind, t.fn(s.element, freshContext(s.index)));
    } catch {
      own = undefined;
    }
    if (own !== undefined && isDeepStrictEqual(own.value, onCopy.value)) inputChange = undefined;
  } else if (inputChange === undefined && onCopy === undefined) {
    inputChange = { side: 'input', change: 'altered', what: 'properties a copy does not keep (non-enumerable ones, getters)' };
  }
  return inputChange ?? (t.kind === 'filter' ? undefined : copyChange(result.value, 'result'));
}

/** The most elements of one flatMap call's result kept for the heap probe (spread through it). */
const HANDED_PER_CALL = 8;

/**
 * Adds to `handed` what an op hands downstream for one call's result: a filter its input when
 * kept, a map its result, a flatMap up to HANDED_PER_CALL of its elements (one call may yield
 * hundreds of thousands, which neither a spread nor the heap probe's copies should take whole).
 */
function handOn(handed: unknown[], kind: MoveTarget['kind'], input: unknown, result: { value: unknown }): void {
  if (kind === 'filter') {
    if (result.value === true) handed.push(input);
  } else if (kind === 'flatMap') {
    const xs = result.value as unknown[];
    const step = Math.max(1, xs.length / HANDED_PER_CALL);
    for (let i = 0; i < xs.length; i += step) handed.push(xs[Math.floor(i)]);
  } else handed.push(result.value);
}

/** CPU seconds a timing loop aims for, so a clock step of a few µs stays a small error. */
const TARGET_CPU_SECONDS = 0.01;
/** Seed of the contexts handed to fns here: any fixed value, since both calls of a pair share it. */
const SEED = 0x5eed;

/** What a fn receives as its second argument, equivalent to the library's (index, rng, signal). */
interface FreshContext {
  readonly index: number;
  readonly rng: Rng;
  readonly signal: AbortSignal;
}

/** The seed of the library's per-element generator for (SEED, epoch 0, index). */
function elementSeed(index: number): number {
  return libraryElementSeed(SEED, 0, index);
}

function freshContext(index: number): FreshContext {
  const signal = new AbortController().signal;
  const seed = elementSeed(index);
  let rng: Rng | undefined;
  return {
    index,
    // One generator per context, made on first use, as the library's context is: two calls, each
    // with its own context, see the same draws, and two draws in one call differ.
    get rng() {
      return (rng ??= new Rng(seed));
    },
    signal,
  };
}

function isThenable(v: unknown): boolean {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof (v as { then?: unknown }).then === 'function';
}

/** A copy of `x` as a worker thread would get it (see fidelity.ts). */
function tryClone(x: unknown): { ok: true; value: unknown } | { ok: false } {
  return crossCopy(x);
}

/**
 * A fn result as it would travel back from a worker: filter results as booleans, flatMap results
 * as arrays. Undefined when the result cannot be compared or moved (a promise, a Dataset, an
 * async iterable).
 */
function normalise(kind: MoveTarget['kind'], r: unknown): { value: unknown } | undefined {
  if (isThenable(r)) return undefined;
  if (kind === 'filter') return { value: Boolean(r) };
  if (kind !== 'flatMap' || Array.isArray(r)) return { value: r };
  if (r !== null && typeof r === 'object') {
    if (DATASET_KEY in r) return undefined;
    if (typeof (r as Iterable<unknown>)[Symbol.iterator] === 'function') return { value: Array.from(r as Iterable<unknown>) };
  }
  return undefined;
}

/** Timing windows per measurement: their median ignores a window that a GC pause or a preemption's cache misses hit. */
const WINDOWS = 5;
/** Milliseconds of calls in each warm-up round of the worker that times a fn (TIMER_WORKER): a fifteenth of its time, within these. */
const WARM_ROUND_MIN_MS = 2;
const WARM_ROUND_MAX_MS = 10;
/**
 * The least CPU time the worker that times fns gets for one fn: under other work on the cores, 40
 * ms left the warm-up too few rounds to see a fn settle, and it went unpriced (twice in four full
 * test runs).
 */
const MIN_WORKER_SECONDS = 0.1;
/** In the worker that times a fn, wall time counts as a WALL_PER_CPU-th as much CPU (see TIMER_WORKER). */
const WALL_PER_CPU = 3;

/**
 * CPU seconds per element of `round()` (which handles `n` elements): the median over WINDOWS
 * windows of at least TARGET_CPU_SECONDS ÷ WINDOWS each, fewer when `deadline` passes (at least one).
 */
function cpuPerElement(n: number, round: () => void, deadline: number): number {
  const perElement: number[] = [];
  do {
    let rounds = 0;
    const c0 = processCpuSeconds();
    let c = c0;
    do {
      round();
      rounds++;
      c = processCpuSeconds();
    } while (c - c0 < TARGET_CPU_SECONDS / WINDOWS && performance.now() < deadline);
    perElement.push(Math.max(0, c - c0) / (rounds * n));
  } while (perElement.length < WINDOWS && performance.now() < deadline);
  return median(perElement);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

interface MainSide {
  findings: MoveFindings;
  /** Cloned inputs the fn ran on, with their indices: what a worker gets. */
  inputs: SampledElement[];
  /** What the op handed on for the sample (see `handOn`). */
  handed?: unknown[];
}

/** A move's clones, both ways, and the sizes they copy, per element of the sample; undefined when a value cannot be cloned. */
function priceClones(originals: unknown[], outputs: unknown[], deadline: number): Omit<MoveCost, 'samples' | 'mainCpuSeconds' | 'workerCpuSeconds' | 'awaitedSeconds'> | undefined {
  const n = originals.length;
  let inBytes = 0;
  let outBytes = 0;
  let inSize = 0;
  let outSize = 0;
  try {
    for (const x of originals) inBytes += v8.serialize(x).length;
    for (const y of outputs) outBytes += v8.serialize(y).length;
  } catch {
    return undefined;
  }
  for (const x of originals) inSize += estimateBytes(x);
  for (const y of outputs) outSize += estimateBytes(y);
  const cloneIn = cpuPerElement(n, () => {
    for (const x of originals) structuredClone(x);
  }, deadline);
  let cloneOut = 0;
  try {
    cloneOut = cpuPerElement(n, () => {
      for (const y of outputs) structuredClone(y);
    }, deadline);
  } catch {
    // A result that cannot be cloned cannot come back from a worker: no move to price.
    return undefined;
  }
  return {
    cloneInSeconds: cloneIn,
    cloneOutSeconds: cloneOut,
    inBytes: Math.round(inBytes / n),
    outBytes: Math.round(outBytes / n),
    inSizeBytes: Math.round(inSize / n),
    outSizeBytes: Math.round(outSize / n),
  };
}

/** Everything measured on the main thread for one operator, within `deadline` (performance.now() ms). */
function measureMain(t: MoveTarget, deadline: number): MainSide | undefined {
  const inputs: SampledElement[] = [];
  /** The sampled elements behind `inputs`, as the pipeline made them (the fn ran on copies). */
  const originals: unknown[] = [];
  const outputs: unknown[] = [];
  /** What the op handed on for the sample (see `handOn`). */
  const handed: unknown[] = [];
  let compared = 0;
  let differs = false;
  let cloneable = true;
  let blocked: MoveBlocked | undefined;
  for (const s of t.samples) {
    if (compared > 0 && performance.now() >= deadline) break;
    // Each call gets its own copy: a fn that changes its input in place would otherwise see a
    // different element the second time and look random.
    const a = tryClone(s.element);
    const b = tryClone(s.element);
    const pair = (x: unknown, y: unknown): [unknown, unknown] | undefined => {
      try {
        return [t.fn(x, freshContext(s.index)), t.fn(y, freshContext(s.index))];
      } catch {
        return undefined;
      }
    };
    // A copy loses a class's prototype: when the fn throws on copies, call it on the element
    // itself (a worker would get the copy, so such an fn cannot move: no move cost then).
    let results = a.ok && b.ok ? pair(a.value, b.value) : undefined;
    const copies = results !== undefined;
    results ??= pair(s.element, s.element);
    // The fn throws on this element: nothing to learn from it.
    if (results === undefined) continue;
    const [ra, rb] = results;
    const na = normalise(t.kind, ra);
    const nb = normalise(t.kind, rb);
    if (na === undefined || nb === undefined) return undefined;
    compared++;
    handOn(handed, t.kind, s.element, na);
    if (!isDeepStrictEqual(na.value, nb.value)) differs = true;
    if (compared <= FIDELITY_SAMPLES || !copies) blocked ??= crossingChange(t, s, copies ? na : undefined, na);
    if (copies && a.ok) {
      inputs.push({ element: a.value, index: s.index });
      originals.push(s.element);
      outputs.push(na.value);
    } else cloneable = false;
  }
  if (compared === 0) return undefined;
  const findings: MoveFindings = { randomObserved: differs, ...(blocked ? { moveBlocked: blocked } : {}) };
  if (blocked !== undefined || !cloneable || inputs.length === 0) return { findings, inputs: [], handed };

  const priced = priceClones(originals, outputs, deadline);
  if (priced === undefined) return { findings, inputs: [], handed };
  const n = inputs.length;
  const ctxs = inputs.map((s) => freshContext(s.index));
  const fn = t.fn;
  let mainCpu = 0;
  try {
    mainCpu = cpuPerElement(n, () => {
      for (let i = 0; i < n; i++) fn(inputs[i].element, ctxs[i]);
    }, deadline);
  } catch {
    return { findings, inputs: [], handed };
  }
  findings.moveCost = { samples: n, ...priced, mainCpuSeconds: mainCpu };
  return { findings, inputs, handed };
}

/** The least an awaited call may take before the probe gives up on its op (a request to a service that is gone). */
const AWAIT_MIN_MS = 500;
/**
 * Share of an awaited call's wall time the main thread must be busy for an async fn to be taken
 * to work rather than wait (a request, a read): below it its calls are not repeated to time them,
 * since each repeats whatever it waits on, and the figures of the determinism pairs stand. (The
 * model moves only such fns, by the same share: `awaitedWorkShare`.)
 */
const AWAITED_WORK_SHARE = 0.5;
/** What a call's timer resolves to when the call has not settled in time. */
const LATE = Symbol('late');
/** A call that did not settle in time: the op's probe ends. */
class LateCall extends Error {}

/**
 * `measureMain` for a fn that returns promises: each call awaited alone, one at a time, so its work
 * and its wall time are its own. The work an async fn does after its first await (a decode after
 * a file read) runs in the library's promise callbacks, where the window's counters cannot see it:
 * this is where it is measured, as the time the main thread's event loop was active during the
 * call (`performance.eventLoopUtilization`), the same wall-clock kind of time the window's
 * `selfSeconds` are. Process CPU would add the libuv thread that read the file and V8's GC helper
 * threads; the thread's schedstat clock advances only at scheduler ticks and context switches, and
 * read 0 for most 1 ms calls that never slept. A call that has not settled within the time left
 * (at least AWAIT_MIN_MS) ends the op's probe.
 */
async function measureAwaited(t: MoveTarget, deadline: number): Promise<MainSide | undefined> {
  // Per call, the main thread's busy time and the call's wall time; their medians are the figures:
  // the first calls of a fn that the window ran on its engine can still compile, and while a call
  // waits V8 runs its idle-time tasks (a GC step) on the thread, and the call is charged with them.
  const busy: number[] = [];
  const walls: number[] = [];
  const call = async (x: unknown, index: number): Promise<{ value: unknown } | undefined> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<typeof LATE>((resolve) => {
      timer = setTimeout(() => resolve(LATE), Math.max(AWAIT_MIN_MS, deadline - performance.now()));
    });
    const e0 = performance.eventLoopUtilization();
    const t0 = performance.now();
    try {
      const r = await Promise.race([Promise.resolve().then(() => t.fn(x, freshContext(index)) as unknown), late]);
      if (r === LATE) throw new LateCall();
      busy.push(performance.eventLoopUtilization(e0).active / 1000);
      walls.push((performance.now() - t0) / 1000);
      return normalise(t.kind, r);
    } finally {
      clearTimeout(timer);
    }
  };
  const inputs: SampledElement[] = [];
  const originals: unknown[] = [];
  const outputs: unknown[] = [];
  const handed: unknown[] = [];
  let compared = 0;
  let differs = false;
  let blocked: MoveBlocked | undefined;
  try {
    for (const s of t.samples) {
      if (compared > 0 && performance.now() >= deadline) break;
      const a = tryClone(s.element);
      const b = tryClone(s.element);
      // An element that cannot be copied cannot reach a worker: no move to price, and nothing
      // checked on the element itself (it would run its side effects again).
      if (!a.ok || !b.ok) return { findings: { moveBlocked: copyChange(s.element, 'input') ?? { side: 'input', change: 'uncloneable', what: 'values' } }, inputs: [] };
      // The input is checked before the calls: a fn that needs its element's class throws on the copies.
      // An async fn is not called again on the element itself (it would repeat its request).
      if (compared < FIDELITY_SAMPLES) blocked ??= copyChange(s.element, 'input');
      let ra: { value: unknown } | undefined;
      let rb: { value: unknown } | undefined;
      try {
        ra = await call(a.value, s.index);
        rb = await call(b.value, s.index);
      } catch (e) {
        if (e instanceof LateCall) throw e;
        // The fn throws or rejects on this element: nothing to learn from it.
        continue;
      }
      if (ra === undefined || rb === undefined) return undefined;
      compared++;
      if (!isDeepStrictEqual(ra.value, rb.value)) differs = true;
      if (compared <= FIDELITY_SAMPLES && t.kind !== 'filter') blocked ??= copyChange(ra.value, 'result');
      handOn(handed, t.kind, s.element, ra);
      inputs.push({ element: a.value, index: s.index });
      originals.push(s.element);
      outputs.push(ra.value);
    }
    if (compared === 0) return blocked ? { findings: { moveBlocked: blocked }, inputs: [] } : undefined;
    // A fn that works more than it waits is timed over more calls, as a sync fn is.
    const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
    while (sum(busy) >= AWAITED_WORK_SHARE * sum(walls) && sum(busy) < TARGET_CPU_SECONDS && performance.now() < deadline) {
      for (let i = 0; i < inputs.length && performance.now() < deadline; i++) await call(inputs[i]!.element, inputs[i]!.index);
    }
  } catch {
    // A call that did not settle in time, or one that failed on repeat: the pairs that completed
    // speak for determinism, and nothing is priced.
    return compared > 0 ? { findings: { randomObserved: differs, ...(blocked ? { moveBlocked: blocked } : {}) }, inputs: [] } : undefined;
  }
  const findings: MoveFindings = { randomObserved: differs };
  if (blocked !== undefined) return { findings: { ...findings, moveBlocked: blocked }, inputs: [], handed };
  const priced = priceClones(originals, outputs, deadline);
  if (priced === undefined || busy.length === 0) return { findings, inputs: [], handed };
  findings.moveCost = { samples: inputs.length, ...priced, mainCpuSeconds: median(busy), awaitedSeconds: median(walls) };
  return { findings, inputs, handed };
}

/**
 * The worker thread that times fns loaded from their modules. It inherits the runner's flags,
 * tsx's loader among them, so it loads TypeScript as plumber-data's own workers do. Messages:
 * `{ file, exportName, inputs, marks, seeds, seconds }` → `{ cpuPerCall }` or `{ error }`.
 */
const TIMER_WORKER = `
const { parentPort } = require('node:worker_threads');
const { pathToFileURL } = require('node:url');
const { createRequire } = require('node:module');
// The library's generator, from the copy of plumber-data the fn's module would load.
function rngClass(file) {
  try {
    return createRequire(file)('plumber-data').Rng;
  } catch {
    return class { constructor() { throw new Error('plumber-data is not installed next to ' + file); } };
  }
}
// The inputs as a worker of the library gets them: the Buffers and Batches a message made plain,
// rebuilt (with the Batch class of the copy of plumber-data the fn's module loads).
function rebuild(file, inputs, marks) {
  if (!marks) return;
  let Batch;
  const again = (v, kind) => {
    if (kind === 0) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    Batch ??= createRequire(file)('plumber-data').Batch;
    return new Batch(v.data, v.shape);
  };
  marks.forEach((m, i) => {
    if (!m) return;
    for (const [path, kind] of m) {
      if (path.length === 0) { inputs[i] = again(inputs[i], kind); continue; }
      let parent = inputs[i];
      for (let k = 0; k < path.length - 1; k++) parent = parent[path[k]];
      parent[path[path.length - 1]] = again(parent[path[path.length - 1]], kind);
    }
  });
}
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
async function load(file) {
  try {
    return require(file);
  } catch (e) {
    if (e && (e.code === 'ERR_REQUIRE_ESM' || e.code === 'ERR_REQUIRE_ASYNC_MODULE' || e.code === 'ERR_UNKNOWN_FILE_EXTENSION')) return import(pathToFileURL(file).href);
    throw e;
  }
}
parentPort.on('message', async (m) => {
  try {
    const mod = await load(m.file);
    const fn = mod[m.exportName] ?? (mod.default && mod.default[m.exportName]);
    if (typeof fn !== 'function') throw new Error('no exported function ' + m.exportName);
    const Rng = rngClass(m.file);
    rebuild(m.file, m.inputs, m.marks);
    const ctxs = m.inputs.map((_, i) => { let r; return { index: m.indices[i], get rng() { return (r ??= new Rng(m.seeds[i])); }, signal: new AbortController().signal }; });
    const n = m.inputs.length;
    // The time given is CPU the thread gets, not wall time: beside other work on the cores a
    // thread gets a share of one, and a wall-clock limit gave a fn the less CPU to settle in the
    // busier the machine. A call that waits (a sync read of a slow disk) burns no CPU: wall time
    // counts too, at a ${WALL_PER_CPU}th of its length.
    const c00 = cpu();
    const w00 = performance.now();
    const used = () => Math.max(cpu() - c00, (performance.now() - w00) / 1000 / ${WALL_PER_CPU});
    // Warm-up: the main thread's fn ran all window long, hot; a fresh copy here is slower until V8
    // optimises it (and the module's caches fill). Steady state is what a worker pool runs at, so
    // warm up until rounds of calls stop getting cheaper (3 rounds without a 3% gain), or until
    // most of the time is gone. Rounds of a fifteenth of the time given, ${WARM_ROUND_MIN_MS} to
    // ${WARM_ROUND_MAX_MS} ms: a fresh tokenizer fell from 0.5 to 0.05 ms a call over its first 60 ms, and
    // in rounds of 2 ms the noise of that fall gave three rounds without a gain at 0.2 ms, so the
    // pool was priced at 3-4x the main thread's CPU where its steady state costs the same. A fn
    // sent again (it had not settled) goes on from where its last warm-up stopped: this thread
    // keeps what V8 compiled and what the module cached.
    const warmFor = m.seconds * 0.7;
    const roundMs = Math.min(${WARM_ROUND_MAX_MS}, Math.max(${WARM_ROUND_MIN_MS}, (m.seconds * 1000) / 15));
    let best = Infinity;
    let stale = 0;
    while (stale < 3 && used() < warmFor) {
      const c0 = cpu();
      const t0 = performance.now();
      let calls = 0;
      do { for (let i = 0; i < n; i++) fn(m.inputs[i], ctxs[i]); calls += n; } while (performance.now() - t0 < roundMs);
      const per = (cpu() - c0) / calls;
      if (per < best * 0.97) { best = per; stale = 0; } else stale++;
    }
    // A warm-up that ran out of time before the calls stopped getting cheaper measured a cold fn
    // (and the compiler threads optimising it): no figure is better than a biased one.
    if (stale < 3) {
      parentPort.postMessage({ unsettled: true, seconds: used() });
      return;
    }
    // Timed as on the main thread (cpuPerElement): the median of ${WINDOWS} windows.
    const per = [];
    do {
      let rounds = 0;
      const c0 = cpu();
      let c = c0;
      do {
        for (let i = 0; i < n; i++) fn(m.inputs[i], ctxs[i]);
        rounds++;
        c = cpu();
      } while (c - c0 < ${TARGET_CPU_SECONDS / WINDOWS} && used() < m.seconds);
      per.push((c - c0) / (rounds * n));
    } while (per.length < ${WINDOWS} && used() < m.seconds);
    per.sort((a, b) => a - b);
    const mid = per.length >> 1;
    parentPort.postMessage({ cpuPerCall: per.length % 2 === 1 ? per[mid] : (per[mid - 1] + per[mid]) / 2, seconds: used() });
  } catch (e) {
    parentPort.postMessage({ error: String(e && e.message || e) });
  }
});
`;

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

/**
 * Measures every target within about `budgetSeconds` of fn time (main thread, then worker; a
 * worker's start and module load get `loadSeconds` more). Returns findings by operator id; an
 * operator whose fn could not be measured is left out. The worker thread is ended before this
 * returns.
 */
export async function measureMoves(targets: MoveTarget[], budgetSeconds = 0.6, loadSeconds = 6): Promise<Map<string, MoveFindings>> {
  const out = new Map<string, MoveFindings>();
  const live = targets.filter((t) => t.samples.length > 0);
  if (live.length === 0) return out;
  // Less for the main thread, whose fn is already hot, than for the worker, which must warm up.
  const share = (budgetSeconds * 1000) * 0.4;
  const workerShare = (budgetSeconds * 1000) * 0.6;
  const forWorker: { t: MoveTarget; inputs: SampledElement[]; findings: MoveFindings }[] = [];
  const forHeap: { handed: unknown[]; findings: MoveFindings }[] = [];
  const start = performance.now();
  for (let i = 0; i < live.length; i++) {
    const t = live[i];
    const left = share - (performance.now() - start);
    const deadline = performance.now() + Math.max(1, left / (live.length - i));
    const main = t.async ? await measureAwaited(t, deadline) : measureMain(t, deadline);
    if (main === undefined) continue;
    out.set(t.id, main.findings);
    if (t.heap && main.handed !== undefined) forHeap.push({ handed: main.handed, findings: main.findings });
    // The timing worker calls fns synchronously: an async fn's worker CPU is left unmeasured (the
    // model then takes its main-thread figure). Nor is a fn timed there that costs the main thread
    // no more than cloning its element in and its result out: moved, it would leave the main thread
    // more work than it takes off, whatever it costs in a worker. Such fns (a field or two set, a
    // microsecond a call) rarely settle in a worker's rounds, and took the time a heavy fn after
    // them needed: one last in its pipeline went unpriced in full test runs.
    const cost = main.findings.moveCost;
    const couldPay = cost !== undefined && cost.mainCpuSeconds > cost.cloneInSeconds + cost.cloneOutSeconds;
    if (!t.async && t.fnModule !== undefined && couldPay && main.inputs.length > 0) forWorker.push({ t, inputs: main.inputs, findings: main.findings });
  }
  // In one series of readings (each a pair of full collections): outside the CPU timings, whose
  // windows a collection would distort.
  heapBytesPerElement(forHeap.map((h) => h.handed)).forEach((heapBytes, i) => {
    const { handed, findings } = forHeap[i]!;
    if (heapBytes === undefined) return;
    let size = 0;
    for (const x of handed) size += estimateBytes(x);
    findings.held = { heapBytes, sizeBytes: Math.round(size / handed.length) };
  });
  if (forWorker.length === 0) return out;

  // A worker from a file, not `eval`: only then does tsx's require hook (inherited through the
  // runner's --import flag) load TypeScript modules in it, as in plumber-data's own pool.
  // Named with our pid, so whoever finds one can tell which process left it.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `plumber-moves-${process.pid}-`));
  let w: Worker | undefined;
  try {
    const file = path.join(dir, 'timer.cjs');
    fs.writeFileSync(file, TIMER_WORKER);
    w = new Worker(file);
    // An exception in the worker must not reach the runner's uncaught-error handlers.
    w.on('error', () => undefined);
    // The thread has read its file once it answers: then the file goes (see below), so even a
    // runner killed mid-measurement leaves nothing behind for long.
    const worker = w;
    // The worker's time is one pool (CPU seconds, see TIMER_WORKER), spent in pipeline order: each
    // fn gets an equal share of what is left, at least MIN_WORKER_SECONDS, and what a fn that
    // settles early leaves goes to the next. A fn that had not settled in its share is sent again
    // with what is left at the end, and goes on warming from where it stopped. The text example's
    // tokenizer needs about 0.2 s of CPU in a fresh thread (its module's caches fill, V8 compiles
    // a large encoder): on a third of 0.24 s it went unpriced on every run, idle or busy.
    let left = workerShare / 1000;
    const unsettled: typeof forWorker = [];
    const send = async (job: (typeof forWorker)[number], seconds: number, first: boolean): Promise<'done' | 'unsettled' | 'gone'> => {
      const { t, inputs, findings } = job;
      worker.postMessage({
        file: t.fnModule!.file,
        exportName: t.fnModule!.exportName,
        inputs: inputs.map((s) => s.element),
        marks: inputs.map((s) => rebuiltPaths(s.element)),
        indices: inputs.map((s) => s.index),
        seeds: inputs.map((s) => elementSeed(s.index)),
        seconds,
      });
      // The first message also waits for the thread to start and load the module. The limits are
      // for a thread that never answers: a busy machine (other work on the cores, the pipeline's
      // own threads finishing) can take several times the CPU seconds in wall time (at most
      // WALL_PER_CPU times, then the worker stops), and a reply that comes late costs only its wait.
      const reply = await nextMessage(worker, (first ? loadSeconds : 0) * 1000 + seconds * (WALL_PER_CPU + 1) * 1000 + 1000);
      if (first) fs.rmSync(dir, { recursive: true, force: true });
      if (reply === undefined) return 'gone';
      const spent = reply.seconds;
      left -= typeof spent === 'number' && Number.isFinite(spent) ? Math.max(0, spent) : seconds;
      const cpu = reply.cpuPerCall;
      if (typeof cpu === 'number' && Number.isFinite(cpu) && findings.moveCost) findings.moveCost.workerCpuSeconds = Math.max(0, cpu);
      return reply.unsettled === true ? 'unsettled' : 'done';
    };
    for (let i = 0; i < forWorker.length; i++) {
      const status = await send(forWorker[i]!, Math.max(MIN_WORKER_SECONDS, left / (forWorker.length - i)), i === 0);
      if (status === 'gone') return out;
      if (status === 'unsettled') unsettled.push(forWorker[i]!);
    }
    // Sent again, the dearest on the main thread first, with all that is left (what it does not use
    // goes to the next): the dearer a fn, the more a move of it can gain.
    unsettled.sort((a, b) => (b.findings.moveCost?.mainCpuSeconds ?? 0) - (a.findings.moveCost?.mainCpuSeconds ?? 0));
    for (let i = 0; i < unsettled.length && left >= MIN_WORKER_SECONDS / 2; i++) {
      if ((await send(unsettled[i]!, left, false)) === 'gone') break;
    }
  } finally {
    await w?.terminate();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
