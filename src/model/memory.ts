/**
 * Peak memory of a configuration, projected: the process as the run measured it before the
 * pipeline held any element (`RunInfo.baseRssBytes`, less what the runner's own probes left in it,
 * `probesRssBytes`, which a run without them does not hold), plus the working memory the run measured
 * beyond that and beyond its buffers (garbage between collections, elements passing through),
 * plus what each operator's buffers hold at once at the configuration's peak:
 *
 * - a shuffle buffer: its size × one element of its input;
 * - a prefetch buffer: its size × one element of what it buffers;
 * - calls in flight of a parallel map: calls × (one input + one output element); in worker
 *   threads, each thread's task of `taskGroup` elements;
 * - worker threads: threads × what one thread costs in resident bytes, measured running the op's
 *   fn where the runner did (its module and garbage included), else an idle thread's;
 * - a batch being built: its size × one input element;
 * - a cache at its full size: its elements × one element;
 * - a reader's reads in flight: reads × one element it hands on.
 *
 * An element's bytes are what the runner measured it holding on the heap (copies of sampled
 * elements, between full collections: src/runner/heap.ts), carried to the window's elements by
 * the ratio of heap to the byte counters' estimate on the same sample; where nothing around an
 * operator was measured, the estimate alone. Assumptions: every buffer is full at once (the peak
 * a steady pipeline reaches) except a prefetch buffer below the bottleneck, which its consumer
 * drains faster than its producer fills it: it holds one burst of its producer (its calls in
 * flight landing together); and the working memory the run measured stays what it was, less the
 * garbage of elements a new cache in memory keeps alive instead (`retainedShare`). The memory
 * budget is checked against the upper bound, every buffer full.
 */
import type { MemoryPart, MemoryProjection } from '../shared/analysis';
import type { HeldBytes } from '../shared/profile';
import { formatBytes } from '../shared/words';
import { outerOf, type Config } from './config';
import { coreBudget, coresFor } from './cores';
import { perPass } from './epochs';
import { evaluate } from './evaluate';
import type { Evaluation } from './evaluation';
import { downstream, upstreamClosure } from './graph';
import { passSize } from './passSize';
import type { Measured, OpMeasure } from './measured';
import { taskGroup } from './tasks';

/**
 * Operators that hand on their input's elements (or groups of them) as they are: the heap an
 * element holds per estimated byte, measured on one side of them, carries to the other.
 */
const KEEPS_ELEMENTS = new Set(['filter', 'shuffle', 'prefetch', 'take', 'skip', 'shard', 'ignoreErrors', 'batch', 'unbatch', 'rebatch', 'paddedBatch', 'enumerate', 'cache', 'repeat']);

/** What one measured sample says: heap bytes per element, and per estimated byte. */
function fromHeld(held: HeldBytes, estimate: number): number {
  if (held.sizeBytes > 0 && estimate > 0) return (estimate * held.heapBytes) / held.sizeBytes;
  return held.heapBytes;
}

/**
 * A heap measurement of the elements `om` hands on: its own results, or one taken below it on the
 * same elements, through ops that keep them (a reader's rows, sampled where the map after its
 * repeat takes them in, or measured in the batches of them the root hands on): an op's sampled
 * inputs, or the results of an op that keeps its input's elements. Past an op that groups them (a
 * batch), only a measurement with its estimate (its heap per estimated byte carries).
 */
function heldAtOutput(m: Measured, om: OpMeasure): HeldBytes | undefined {
  if (om.op.held !== undefined) return om.op.held;
  let at: { id: string; grouped: boolean }[] = [{ id: om.op.id, grouped: false }];
  for (let hops = 0; at.length > 0 && hops < 8; hops++) {
    const next: { id: string; grouped: boolean }[] = [];
    for (const from of at) {
      for (const id of m.consumers.get(from.id) ?? []) {
        const c = m.ops.get(id);
        if (c === undefined || c.op.inputs.length !== 1) continue;
        const usable = (h: HeldBytes | undefined): h is HeldBytes => h !== undefined && (!from.grouped || h.sizeBytes > 0);
        if (usable(c.op.inputHeld)) return c.op.inputHeld;
        if (!KEEPS_ELEMENTS.has(c.op.kind)) continue;
        const grouped = from.grouped || !SAME_OBJECTS.has(c.op.kind);
        if (c.op.held !== undefined && c.op.held.sizeBytes > 0) return c.op.held;
        next.push({ id, grouped });
      }
    }
    at = next;
  }
  return undefined;
}

/**
 * Bytes one element `om` hands on holds in memory: measured at its output, else at the nearest op
 * above it through operators that keep elements (a measured ratio of heap to estimate carried to
 * this op's estimate), else the byte counters' estimate.
 */
export function elementBytes(m: Measured, om: OpMeasure): number {
  const estimate = om.bytesPerElement;
  let at: OpMeasure | undefined = om;
  for (let hops = 0; at && hops < 32; hops++) {
    const held = heldAtOutput(m, at);
    if (held !== undefined) return fromHeld(held, estimate);
    if (!KEEPS_ELEMENTS.has(at.op.kind) || at.op.inputs.length !== 1) break;
    at = m.ops.get(at.op.inputs[0]!);
  }
  return estimate;
}

/** The input operator of `om` (its first), measured. */
function inputOf(m: Measured, om: OpMeasure): OpMeasure | undefined {
  const id = om.op.inputs[0];
  return id === undefined ? undefined : m.ops.get(id);
}

/** Bytes one input element of `om` holds: its own sampled inputs measured, else its input's output. */
function inputBytes(m: Measured, om: OpMeasure): number {
  const input = inputOf(m, om);
  if (input !== undefined) return elementBytes(m, input);
  return om.op.inputHeld !== undefined ? fromHeld(om.op.inputHeld, om.inputBytesPerElement) : om.inputBytesPerElement;
}

/** Elements in one pass of `om`'s output, when finite and known. */
function passElements(om: OpMeasure): number | undefined {
  const n = om.op.cardinality;
  return n !== undefined && Number.isFinite(n) && n >= 0 ? n : undefined;
}

/**
 * Elements a cache after `om` holds: one pass of its output, as the library counted it, else as
 * the cache planner estimates it (passSize.ts: a repeat's pass the run saw end, a source's count
 * and the visit ratio): a reader's rows have no count before they are read.
 */
function cachedElements(m: Measured, om: OpMeasure): number | undefined {
  const n = passElements(om);
  if (n !== undefined) return n;
  const closure = [...upstreamClosure(m, om.op.id)].map((u) => m.ops.get(u)).filter((u) => u !== undefined);
  const repeat = downstream(m, om.op.id)
    .map((d) => m.ops.get(d)?.op)
    .find((d) => d?.kind === 'repeat' && (d.knobs.count === undefined || d.knobs.count < 0 || d.knobs.count > 1));
  return passSize(om, closure, repeat)?.cardinality;
}

const FN_KINDS = new Set(['map', 'filter', 'flatMap']);
/** Operators that hand on the very objects they take in (a cache above them still holds what they hold). */
const SAME_OBJECTS = new Set(['filter', 'shuffle', 'prefetch', 'take', 'skip', 'shard', 'ignoreErrors', 'repeat']);
/** Operators whose elements are their input's, one for one or fewer: buffers above them hold the same pass. */
const SAME_ELEMENTS = new Set(['filter', 'shuffle', 'prefetch', 'take', 'skip', 'shard', 'ignoreErrors', 'enumerate', 'map']);
const BATCH_KINDS = new Set(['batch', 'paddedBatch', 'rebatch']);

/**
 * The test "does a buffer right below this producer stay near empty under `cfg`?", by the binding
 * bound of the model's evaluation on the cores the run had. Below the bottleneck its consumer
 * drains it faster than it fills: an op's own bound (one op's calls, its parallelism, its waits)
 * at or above the producer. Under a bound the producer shares with the consumer (the main thread,
 * all cores), a producer that delivers by events (worker threads' messages, awaited calls, a
 * reader's reads) refills the buffer only when the consumer, busy on the main thread, awaits an
 * empty one: it holds what arrived meanwhile. Anything else counts as filling (the safe side).
 */
function drainedBelow(m: Measured, cfg: Config): (producer: OpMeasure) => boolean {
  let ev: Evaluation;
  try {
    ev = evaluate(m, cfg, coreBudget(coresFor(m.profile)));
  } catch {
    return () => false;
  }
  const b = ev.binding;
  if (!Number.isFinite(b.rate)) return () => false;
  if (b.resource === 'main-thread' || b.resource === 'cpu') return (producer) => byEvents(cfg, producer);
  const at = b.opId;
  if (at === undefined) return () => false;
  return (producer) => upstreamClosure(m, producer.op.id).has(at);
}

/** Its elements arrive as events on the main thread: a worker-placed fn's, an awaiting fn's, a reader's. */
function byEvents(cfg: Config, om: OpMeasure): boolean {
  const c = cfg[om.op.id];
  if (!c) return false;
  if (FN_KINDS.has(om.op.kind)) return c.placement === 'worker' || (om.asyncPerRoot > 0 && c.concurrency > 0);
  return om.reader !== undefined || om.op.placement === 'libuv';
}

/**
 * What one burst of `om`'s output puts in a buffer below it: the calls it has in flight, which
 * land together (a worker-placed fn's tasks of `taskGroup` elements on every thread; an awaiting
 * fn's or a reader's calls), else one element.
 */
function burst(m: Measured, cfg: Config, om: OpMeasure): number {
  const c = cfg[om.op.id];
  if (!c) return 1;
  if (FN_KINDS.has(om.op.kind) && c.placement === 'worker') return Math.max(1, c.concurrency) * taskGroup(om, m.profile.machine);
  if ((FN_KINDS.has(om.op.kind) || om.reader !== undefined) && c.concurrency > 1) return c.concurrency;
  return 1;
}

/**
 * What the operators' buffers hold at once under `cfg`. `fill` counts buffers as the run found
 * them (each op's measured high-water mark, a cache as far as it filled) instead of full: what
 * the measured peak included, to tell the working memory from it.
 */
export function memoryParts(m: Measured, cfg: Config, fill?: 'measured' | 'full'): MemoryPart[] {
  const parts: MemoryPart[] = [];
  // Expected (no `fill`): a prefetch buffer its consumer drains holds one burst of its producer.
  const drained = fill === undefined ? drainedBelow(m, cfg) : () => false;
  const expected = (producer: OpMeasure | undefined, n: number): number => (producer !== undefined && drained(producer) ? Math.min(n, burst(m, cfg, producer)) : n);
  const threadBytes = m.profile.machine.workerThreadRssBytes ?? 0;
  const add = (opId: string, what: MemoryPart['what'], elements: number, each: number): void => {
    const n = Math.max(0, elements);
    if (n > 0 && each > 0) parts.push({ opId, what, bytes: n * each, elements: n });
  };
  // Elements a shuffle or prefetch buffer holds, by op: one pass of a finite dataset can fill the
  // buffers of one chain only so far (a prefetch of 4,000 after a shuffle of 3,000 over 6,000
  // elements holds at most 3,000).
  const buffered = new Map<string, number>();
  const room = (at: OpMeasure | undefined, size: number): number => {
    const pass = at ? passElements(at) : undefined;
    if (pass === undefined) return size;
    let held = 0;
    for (let u: OpMeasure | undefined = at, hops = 0; u && hops < 32; hops++) {
      held += buffered.get(u.op.id) ?? 0;
      if (!SAME_ELEMENTS.has(u.op.kind) || u.op.inputs.length !== 1) break;
      u = m.ops.get(u.op.inputs[0]!);
    }
    return Math.max(0, Math.min(size, pass - held));
  };
  // A cache keeps every element it passed on alive: a buffer below it, through operators that hand
  // on the same objects, holds elements the cache holds already, and adds nothing to the peak.
  const cachedAbove = (at: OpMeasure | undefined): boolean => {
    for (let u: OpMeasure | undefined = at, hops = 0; u && hops < 32; hops++) {
      // A cache on disk hands on fresh copies read back from its file: buffers below it hold their own.
      if ((u.op.kind === 'cache' && u.op.knobs.cachePath === undefined) || (cfg[u.op.id]?.cacheAfter && !cfg[u.op.id]?.cacheDisk)) return true;
      if (!SAME_OBJECTS.has(u.op.kind) || u.op.inputs.length !== 1) return false;
      u = m.ops.get(u.op.inputs[0]!);
    }
    return false;
  };
  for (const id of m.order) {
    const om = m.ops.get(id);
    const c = cfg[id];
    if (!om || !c) continue;
    const k = om.op.kind;
    const counters = om.op.counters;
    const high = (full: number) => (fill === 'measured' ? Math.min(full, counters.bufferHighWater) : full);
    if (k === 'shuffle') {
      const n = high(room(inputOf(m, om), om.op.knobs.bufferSize ?? 0));
      buffered.set(id, n);
      add(id, 'shuffle buffer', n, cachedAbove(inputOf(m, om)) ? 0 : inputBytes(m, om));
    } else if (k === 'prefetch') {
      const n = expected(inputOf(m, om), high(room(inputOf(m, om), c.bufferSize ?? 0)));
      buffered.set(id, n);
      add(id, 'prefetch buffer', n, cachedAbove(inputOf(m, om)) ? 0 : inputBytes(m, om));
    } else if (BATCH_KINDS.has(k)) {
      // The batch being built: its elements, each still held by the batch until it is handed on.
      add(id, 'batch', om.op.knobs.batchSize ?? 0, inputBytes(m, om));
    } else if (FN_KINDS.has(k) && c.placement === 'worker') {
      const threads = Math.max(1, c.concurrency);
      const each = threadBytesOf(om) ?? threadBytes;
      if (each > 0) parts.push({ opId: id, what: 'worker threads', bytes: threads * each });
      const out = k === 'filter' ? 0 : elementBytes(m, om);
      const inFlight = fill === 'measured' ? Math.min(threads * taskGroup(om, m.profile.machine), counters.inFlightHighWater || threads) : threads * taskGroup(om, m.profile.machine);
      add(id, 'calls in flight', inFlight, inputBytes(m, om) + out);
    } else if (FN_KINDS.has(k) && c.concurrency > 1) {
      const out = k === 'filter' ? 0 : elementBytes(m, om);
      add(id, 'calls in flight', fill === 'measured' ? Math.min(c.concurrency, counters.inFlightHighWater || c.concurrency) : c.concurrency, inputBytes(m, om) + out);
    } else if (om.reader !== undefined && c.concurrency > 1) {
      add(id, 'reader', c.concurrency, elementBytes(m, om));
    } else if (k === 'interleave') {
      // Its open inner datasets each hold an element ready.
      add(id, 'reader', outerOf(cfg, id).cycle, elementBytes(m, om));
    }
    if (c.prefetchAfter !== undefined && c.prefetchAfter > 0) {
      const n = expected(om, high(room(om, c.prefetchAfter)));
      buffered.set(id, (buffered.get(id) ?? 0) + n);
      add(id, 'prefetch buffer', n, cachedAbove(om) ? 0 : elementBytes(m, om));
    }
    // A cache on disk (`cache(path)`) holds nothing in memory.
    const cached = k === 'cache' && om.op.knobs.cachePath === undefined ? inputOf(m, om) : c.cacheAfter && !c.cacheDisk ? om : undefined;
    if (cached !== undefined) {
      const pass = cachedElements(m, cached);
      // As it ran: as far as it filled (its hits say it filled).
      const filled = k === 'cache' && counters.cacheHits === 0 ? counters.produced : pass;
      const elements = fill === 'measured' && k === 'cache' ? filled : fill === 'measured' ? 0 : pass;
      if (elements !== undefined) add(id, 'cache', elements, elementBytes(m, cached));
    }
  }
  return parts.sort((a, b) => b.bytes - a.bytes);
}

/**
 * The working memory the run measured: its largest resident set while the pipeline ran, less the
 * process before it and what its buffers held as they filled. Zero when not measured.
 */
export function workingBytes(m: Measured, ran: Config): number {
  const run = m.profile.run;
  if (run.baseRssBytes === undefined || run.windowPeakRssBytes === undefined) return 0;
  const held = memoryParts(m, ran, 'measured').reduce((s, p) => s + p.bytes, 0);
  return Math.max(0, run.windowPeakRssBytes - run.baseRssBytes - held);
}

/** "shuffle buffer 320 MB, prefetch buffer 12 MB": the largest parts, at most `n`. */
export function partsWords(parts: readonly MemoryPart[], n = 3): string {
  return parts
    .slice(0, n)
    .map((p) => `${p.what} ${formatBytes(p.bytes)}`)
    .join(', ');
}

/**
 * What one worker thread running `om`'s fn holds, as the runner measured it running the fn in a
 * thread of its own (`moveCost.workerRssBytes`: the thread, the fn's module, its garbage between
 * collections); undefined where it was not measured.
 */
export function threadBytesOf(om: OpMeasure): number | undefined {
  const b = om.op.moveCost?.workerRssBytes;
  return b !== undefined && Number.isFinite(b) && b > 0 ? b : undefined;
}

/**
 * V8 isolates running the pipeline's work under `cfg` whose working memory is not measured: the
 * main thread and every worker thread of its worker-placed fns whose thread the runner did not
 * measure (`threadBytesOf`; a measured thread's parts count its own).
 */
export function isolates(m: Measured, cfg: Config): number {
  let n = 1;
  for (const id of m.order) {
    const om = m.ops.get(id);
    const c = cfg[id];
    if (om && c && c.placement === 'worker' && FN_KINDS.has(om.op.kind) && threadBytesOf(om) === undefined) n += Math.max(1, c.concurrency);
  }
  return n;
}

/**
 * The working memory of `cfg`: what the run measured (`workingBytes`) per isolate it ran, times
 * the isolates `cfg` runs, counting only isolates whose working memory was not measured (a worker
 * thread the runner measured running its fn is counted whole in its 'worker threads' part). Each
 * isolate holds its own garbage between collections and its own loaded modules; carried from the
 * main thread's, a worker's is assumed alike, which it is not when the fn's results are large
 * buffers the worker hands on (their garbage stays the main thread's).
 */
export function workingBytesFor(m: Measured, cfg: Config, ran: Config): number {
  const perIsolate = workingBytes(m, ran) / isolates(m, ran);
  return Math.max(0, perIsolate * isolates(m, cfg) - perIsolate * retainedShare(m, cfg, ran));
}

/**
 * Heap bytes an operator's results allocate per root element: its elements, where they are new
 * objects (what the run's garbage is made of); none for an operator that hands on its input's.
 */
function freshPerRoot(m: Measured, om: OpMeasure): number {
  if (SAME_OBJECTS.has(om.op.kind) || om.op.kind === 'cache') return 0;
  const b = om.visitRatio * elementBytes(m, om);
  return Number.isFinite(b) && b > 0 ? b : 0;
}

/** A shuffle or prefetch buffer below `om`, through operators that hand on its very objects, that held elements in the run. */
function bufferedBelow(m: Measured, om: OpMeasure): boolean {
  let at = [om.op.id];
  for (let hops = 0; at.length > 0 && hops < 32; hops++) {
    const next: string[] = [];
    for (const id of at) {
      for (const c of m.consumers.get(id) ?? []) {
        const u = m.ops.get(c);
        if (!u || u.op.inputs.length !== 1) continue;
        if ((u.op.kind === 'shuffle' || u.op.kind === 'prefetch') && u.op.counters.bufferHighWater > 0) return true;
        if (SAME_OBJECTS.has(u.op.kind)) next.push(c);
      }
    }
    at = next;
  }
  return false;
}

/**
 * The share of the main thread's measured working memory that caches in memory `cfg` adds (the
 * run had none there) take away: the garbage of the elements they now keep. An element a buffer
 * held (a shuffle's, a prefetch's) outlives the young generation and dies in the old one, where
 * garbage stays until a full collection: part of the working memory the run measured was these
 * elements, dead and not yet collected, which a cache keeps alive instead, counted in its own
 * part. Their share is the cached op's share of the bytes the pipeline's operators allocate per
 * root element (measured heap sizes times visits, in a whole pass). An element no buffer held dies young and is
 * collected at once: a cache above it leaves the working memory as it was.
 */
export function retainedShare(measured: Measured, cfg: Config, ran: Config): number {
  // Per root element of a whole pass: a window of a finite run can end in a buffer draining.
  const m = perPass(measured);
  let total = 0;
  for (const id of m.order) {
    const om = m.ops.get(id);
    if (om) total += freshPerRoot(m, om);
  }
  if (!(total > 0)) return 0;
  let kept = 0;
  for (const [id, c] of Object.entries(cfg)) {
    const om = m.ops.get(id);
    if (!om || !c.cacheAfter || c.cacheDisk || ran[id]?.cacheAfter) continue;
    if (bufferedBelow(m, om)) kept += freshPerRoot(m, om);
  }
  return Math.min(1, kept / total);
}

/**
 * The projected peak for `cfg`, or undefined for a profile that did not measure the process's
 * base (older runners, a run without probes). `ran` is the configuration the profile ran with:
 * its measured working memory is carried to `cfg`. The expected peak by default (a prefetch below
 * the bottleneck holds one burst); `fill: 'full'` counts every buffer full, the upper bound the
 * memory budget is checked against (budget.ts).
 */
export function projectMemory(m: Measured, cfg: Config, ran: Config, budgetBytes: number, fill?: 'full'): MemoryProjection | undefined {
  const measuredBase = m.profile.run.baseRssBytes;
  if (measuredBase === undefined) return undefined;
  // Without the runner's probes before the window (a person's run), the process starts lower.
  const base = Math.max(0, measuredBase - (m.profile.run.probesRssBytes ?? 0));
  const parts = memoryParts(m, cfg, fill);
  const working = workingBytesFor(m, cfg, ran);
  const peakBytes = base + working + parts.reduce((s, p) => s + p.bytes, 0);
  const heapLimitBytes = m.profile.machine.heapLimitBytes;
  const words = partsWords(parts);
  return {
    peakBytes,
    baseBytes: base,
    workingBytes: working,
    parts,
    budgetBytes,
    ...(heapLimitBytes !== undefined ? { heapLimitBytes } : {}),
    summary: `≈ ${formatBytes(peakBytes)} at peak${words ? `: ${words}` : ''}`,
  };
}

/** The default memory budget: `fraction` of the smaller of V8's heap limit and the free memory the run found. */
export function defaultMemoryBudget(m: Pick<Measured, 'profile'>, fraction: number): number {
  const { memoryFreeBytes, heapLimitBytes } = m.profile.machine;
  return fraction * Math.min(memoryFreeBytes, heapLimitBytes ?? Infinity);
}

/** `{ memory }` for the configuration as it ran, where the profile measured what it needs; else nothing. */
export function memoryAsRan(m: Measured, ran: Config, budgetBytes: number): { memory?: MemoryProjection } {
  const memory = projectMemory(m, ran, ran, budgetBytes);
  return memory ? { memory } : {};
}
