/**
 * The runner's tracer: installed at `globalThis[TRACER_KEY]` before the pipeline module loads, it
 * hands each operator a counters object, remembers what it was told, and turns both into the
 * profile's `ops` (with the warm-up subtracted).
 */
import type { OpCounters, OpInfo, OpKind, Tracer } from '../data/tracing';
import { estimateBytes, newCounters } from '../data/tracing';
import type { OpProfile } from '../shared/profile';
import { opIdOfSite } from '../shared/opId';

/** Operators that hand their input's elements on one for one. */
const PASS_THROUGH = new Set<OpKind>(['prefetch', 'take', 'skip', 'repeat', 'shuffle', 'cache']);

/** The optional counters of cluster ops (see OpCounters). */
const REMOTE_COUNTERS = [
  'remoteWorkers',
  'remoteConcurrency',
  'remoteCores',
  'remoteServiceSeconds',
  'remoteQueueWaitSeconds',
  'remoteRoundTripSeconds',
  'remoteSlotJobs',
  'remoteSlotSeconds',
  'bytesShipped',
  'remoteHosts',
  'remoteWorkersOnConsumerHost',
  'remoteConsumerCpuSeconds',
  'remoteRedisCpuSeconds',
  'remoteHostWallSeconds',
  'remoteHostIdleSeconds',
] as const;
/** The optional counters of readers (see OpCounters): sums over the window like the rest. */
const READER_COUNTERS = ['netBytesRead', 'bytesDecompressed', 'ioWaitSeconds', 'decompressSeconds', 'parseSeconds', 'shardsOpened'] as const;
/** Counters that are high-water marks rather than sums: the window keeps the run's maximum. */
const MAX_COUNTERS = new Set<keyof OpCounters>(['bufferHighWater', 'inFlightHighWater', 'remoteWorkers', 'remoteConcurrency', 'remoteCores', 'remoteHosts', 'remoteWorkersOnConsumerHost']);

/** The counters that are numbers (the histograms are arrays, subtracted entry by entry: see `windowHistogram`). */
type NumberCounter = { [K in keyof OpCounters]-?: OpCounters[K] extends number | undefined ? K : never }[keyof OpCounters];
/** The histograms among the counters (see OpCounters.latencyHistogram). */
const HISTOGRAMS = ['latencyHistogram', 'taskHistogram'] as const;

/** A histogram over the window: now less the baseline, entry by entry; undefined when nothing was counted in it. */
function windowHistogram(now: readonly number[] | undefined, base: readonly number[] | undefined): number[] | undefined {
  if (now === undefined) return undefined;
  const out = now.map((v, i) => v - (base?.[i] ?? 0));
  return out.some((v) => v > 0) ? out : undefined;
}

interface Entry {
  info: OpInfo;
  counters: OpCounters;
}

/** Most elements kept per operator for measuring its fn after the window. */
export const SAMPLES_PER_OP = 8;
/** Bytes of elements one operator may keep alive: large elements (image batches) are kept fewer. */
const SAMPLE_BYTES_PER_OP = 32 * 1024 * 1024;
/** Elements passed over between offers during warm-up, when nothing is kept. */
const WARMUP_SKIP = 16;
/** The longest skip asked of the library (a skip only needs to outlast the window). */
const MAX_SKIP = 2 ** 30;

/** One input element of an operator, as offered during the window. */
export interface SampledElement {
  element: unknown;
  /** Its index in the operator's input (per pass). */
  index: number;
}

/**
 * A uniform sample of at most `k` elements of a stream of unknown length, with Li's
 * "Algorithm L": after the reservoir fills, each kept element says how many to skip before the
 * next, so the library offers O(k log(n/k)) elements rather than all n.
 */
class Reservoir {
  readonly kept: SampledElement[] = [];
  private w: number;

  constructor(private readonly k: number) {
    this.w = Math.exp(Math.log(Math.random()) / k);
  }

  /** Keeps (or not) the offered element; returns the skip to the next offer. */
  offer(element: unknown, index: number): number {
    if (this.kept.length < this.k) this.kept.push({ element, index });
    else {
      this.kept[Math.floor(Math.random() * this.k)] = { element, index };
      this.w *= Math.exp(Math.log(Math.random()) / this.k);
    }
    if (this.kept.length < this.k) return 1;
    const skip = Math.floor(Math.log(Math.random()) / Math.log(1 - this.w)) + 1;
    return Number.isFinite(skip) && skip >= 1 ? Math.min(skip, MAX_SKIP) : MAX_SKIP;
  }
}

/** The prefix of the keys under which the root's own elements are kept (`sampleOutput`). */
const OUTPUT = 'output:';

/**
 * The most bytes of the root's elements kept (`sampleOutput`): they are alive while the window's
 * resident set is read, so they count in the working memory the run measures. Batches are large.
 */
const OUTPUT_SAMPLE_BYTES = 4 * 1024 * 1024;

/** A reservoir sized from an operator's first element: the elements of one operator are alike in practice. */
function reservoirFor(key: string, element: unknown): Reservoir {
  const bytes = key.startsWith(OUTPUT) ? OUTPUT_SAMPLE_BYTES : SAMPLE_BYTES_PER_OP;
  return new Reservoir(Math.max(1, Math.min(SAMPLES_PER_OP, Math.floor(bytes / Math.max(1, estimateBytes(element))))));
}

export class RunnerTracer implements Tracer {
  private readonly entries = new Map<string, Entry>();
  private baseline = new Map<string, OpCounters>();
  /** Elements are kept from the measured window: warm-up elements may be unrepresentative (first files, cold caches), and serve only where the window offers none (`warm`). */
  private sampling: 'warmup' | 'window' | 'done' = 'warmup';
  private readonly reservoirs = new Map<string, Reservoir>();
  /**
   * Elements offered during warm-up, by key: the sample of an operator the window offers nothing
   * of (a finite dataset's fast map that passed all its elements while a shuffle buffer filled
   * behind it), else none is kept at all and nothing about its elements is measured. Dropped for a
   * key at the window's first offer, so only such operators keep them alive through the window.
   */
  private readonly warm = new Map<string, Reservoir>();
  /** `sampleOutput`'s elements to pass over before its next offer, and its index, by root key. */
  private readonly outputSkip = new Map<string, number>();
  private readonly outputIndex = new Map<string, number>();

  sample(key: string, element: unknown, index: number): number {
    if (this.sampling === 'window') {
      this.warm.delete(key);
      let r = this.reservoirs.get(key);
      if (r === undefined) this.reservoirs.set(key, (r = reservoirFor(key, element)));
      return r.offer(element, index);
    }
    if (this.sampling === 'warmup') {
      let r = this.warm.get(key);
      if (r === undefined) this.warm.set(key, (r = reservoirFor(key, element)));
      r.offer(element, index);
      return WARMUP_SKIP;
    }
    return 0;
  }

  /** Stops keeping elements: nothing after the window is sampled. */
  endSampling(): void {
    this.sampling = 'done';
  }

  /** The elements kept for each operator key: the window's, else (none offered in the window) warm-up's. */
  samples(): Map<string, SampledElement[]> {
    return new Map([...this.warm, ...this.reservoirs].filter(([k]) => !k.startsWith(OUTPUT)).map(([k, r]) => [k, r.kept]));
  }

  /**
   * Offers an element the pipeline's root handed on (the runner's own pull), kept as `sample` keeps
   * an operator's inputs, with the same skips: what the root's elements hold is measured too, and a
   * reader's rows batched right below it are sized by it (no fn below them offers them).
   */
  sampleOutput(key: string, element: unknown): void {
    const skip = this.outputSkip.get(key) ?? 0;
    if (skip > 1) return void this.outputSkip.set(key, skip - 1);
    const index = (this.outputIndex.get(key) ?? 0) + Math.max(1, skip);
    this.outputIndex.set(key, index);
    this.outputSkip.set(key, this.sample(OUTPUT + key, element, index));
  }

  /** The root's elements kept by `sampleOutput`, by the root's key. */
  outputSamples(): Map<string, SampledElement[]> {
    return new Map([...this.warm, ...this.reservoirs].filter(([k]) => k.startsWith(OUTPUT)).map(([k, r]) => [k.slice(OUTPUT.length), r.kept]));
  }

  /** What the library told about the operator with this key. */
  info(key: string): OpInfo | undefined {
    return this.entries.get(key)?.info;
  }

  register(info: OpInfo): OpCounters {
    const known = this.entries.get(info.key);
    if (known) return known.counters;
    const entry: Entry = { info, counters: newCounters() };
    this.entries.set(info.key, entry);
    return entry.counters;
  }

  /**
   * True when every cache operator has finished its first pass: it served an element from the
   * cache, or produced as many elements as one pass holds. A cache whose pass length is unknown
   * counts once it serves a hit.
   */
  cachesFilled(): boolean {
    for (const { info, counters } of this.entries.values()) {
      if (info.kind !== 'cache') continue;
      const pass = info.cardinality;
      const filled = counters.cacheHits > 0 || (pass !== undefined && Number.isFinite(pass) && counters.produced >= pass);
      if (!filled) return false;
    }
    return true;
  }

  /**
   * A live count finer than the root's elements, for slicing the measured window (see
   * `MeasureHooks.fineCount`): the elements taken by the first operator below the root that is not
   * a pass-through (prefetch, take, skip, repeat, shuffle, cache hand elements on one for one) —
   * a batch's input images, say. Whether it is really finer is measured, not assumed: the window
   * compares its growth with the root's.
   */
  fineCounter(rootKey: string | undefined): (() => number) | undefined {
    let entry = rootKey === undefined ? undefined : this.entries.get(rootKey);
    for (let hops = 0; entry && PASS_THROUGH.has(entry.info.kind) && entry.info.inputs.length === 1 && hops < 16; hops++) {
      entry = this.entries.get(entry.info.inputs[0]!);
    }
    if (!entry) return undefined;
    const counters = entry.counters;
    return () => counters.pulled;
  }

  /** The operators registered so far. */
  infos(): OpInfo[] {
    return [...this.entries.values()].map((e) => e.info);
  }

  /** Starts the measured window: later `ops()` report counters minus their values now. */
  snapshot(): void {
    if (this.sampling === 'warmup') this.sampling = 'window';
    this.baseline = this.countersNow();
  }

  /** Every operator's counters now: a baseline a window may later be measured from (see `rebase`). */
  countersNow(): Map<string, OpCounters> {
    // The histograms are copied: the library adds to the arrays it holds.
    return new Map([...this.entries].map(([k, e]) => [k, { ...e.counters, ...Object.fromEntries(HISTOGRAMS.filter((h) => e.counters[h] !== undefined).map((h) => [h, [...(e.counters[h] as number[])]])) }]));
  }

  /**
   * Moves the window's start: later `ops()` report counters minus `baseline` (from `countersNow()`),
   * or from the start of the run when it is omitted.
   */
  rebase(baseline: Map<string, OpCounters> = new Map()): void {
    this.baseline = baseline;
  }

  /** Sum of a counter over every operator, in the measured window. */
  total(name: NumberCounter): number {
    let sum = 0;
    for (const [key, e] of this.entries) sum += (e.counters[name] ?? 0) - (this.baseline.get(key)?.[name] ?? 0);
    return sum;
  }

  /**
   * The operators as the profile records them. `fnModules` maps user functions to where the
   * pipeline module exports them, so a main-thread map can be proposed for worker threads.
   */
  ops(pipelineFile: string, fnModules: Map<Function, { file: string; exportName: string }>, rootKey?: string): OpProfile[] {
    const ids = this.assignIds(pipelineFile);
    // A root the tracer never saw (a dataset from another copy of the library) filters nothing.
    const keep = rootKey === undefined || !this.entries.has(rootKey) ? undefined : this.reachable(rootKey);
    const out: OpProfile[] = [];
    for (const [key, { info, counters }] of this.entries) {
      if (keep && !keep.has(key)) continue;
      const base = this.baseline.get(key);
      const window = newCounters();
      for (const name of Object.keys(window) as NumberCounter[]) {
        window[name] = MAX_COUNTERS.has(name) || !base ? (counters[name] ?? 0) : (counters[name] ?? 0) - (base[name] ?? 0);
      }
      // Optional counters (a cluster op's, a reader's) are reported only by the operators that keep them.
      for (const name of [...REMOTE_COUNTERS, ...READER_COUNTERS]) {
        const v = counters[name];
        if (v !== undefined) window[name] = MAX_COUNTERS.has(name) || !base ? v : v - (base[name] ?? 0);
      }
      // A repeat's last pass, counted from its start, and what a lines source matched: the run's figures, warm-up included.
      if (counters.passElements !== undefined) window.passElements = counters.passElements;
      if (counters.sourceBytes !== undefined) window.sourceBytes = counters.sourceBytes;
      for (const h of HISTOGRAMS) {
        const w = windowHistogram(counters[h], base?.[h]);
        if (w !== undefined) window[h] = w;
      }
      const fnModule = info.fnModule ?? (info.fn ? fnModules.get(info.fn) : undefined);
      const op: OpProfile = {
        id: ids.get(key) ?? key,
        kind: info.kind,
        inputs: info.inputs.map((k) => ids.get(k) ?? k),
        placement: info.placement,
        knobs: { ...info.knobs },
        random: info.random,
        counters: window,
      };
      if (info.site) op.site = { ...info.site };
      if (info.fnName !== undefined) op.fnName = info.fnName;
      if (info.fnAsync !== undefined) op.fnAsync = info.fnAsync;
      if (fnModule) op.fnModule = { ...fnModule };
      // JSON has no Infinity: an endless operator's cardinality is left out (its knobs say `count: -1`).
      if (info.cardinality !== undefined && Number.isFinite(info.cardinality)) op.cardinality = info.cardinality;
      if (info.overridden) op.overridden = true;
      if (info.dialect !== undefined && info.dialect !== 'plumber-data') op.dialect = info.dialect;
      if (info.levers !== undefined) op.levers = [...info.levers];
      if (info.parent !== undefined) op.parentId = ids.get(info.parent) ?? info.parent;
      out.push(op);
    }
    return out;
  }

  /**
   * The operators of the pipeline whose root is `rootKey`: its inputs, transitively (side inputs
   * included), and the operators built inside any of them while it ran (`parent`). A module that
   * exports several pipelines builds all of them when it loads, and only the one that ran
   * belongs in its profile.
   */
  private reachable(rootKey: string): Set<string> {
    const keep = new Set<string>();
    const visit = (key: string): void => {
      if (keep.has(key) || !this.entries.has(key)) return;
      keep.add(key);
      for (const input of this.entries.get(key)!.info.inputs) visit(input);
    };
    visit(rootKey);
    for (let grew = true; grew;) {
      grew = false;
      for (const [key, { info }] of this.entries) {
        if (!keep.has(key) && info.parent !== undefined && keep.has(info.parent)) {
          visit(key);
          grew = true;
        }
      }
    }
    return keep;
  }

  /** Op id of a library key (see `OpProfile.id`). */
  idOf(key: string, pipelineFile: string): string {
    return this.assignIds(pipelineFile).get(key) ?? key;
  }

  private assignIds(pipelineFile: string): Map<string, string> {
    const ids = new Map<string, string>();
    const perKind = new Map<string, number>();
    for (const [key, { info }] of this.entries) {
      if (info.site) {
        ids.set(key, opIdOfSite(info.site, pipelineFile));
      } else {
        const n = perKind.get(info.kind) ?? 0;
        perKind.set(info.kind, n + 1);
        ids.set(key, `${info.kind}#${n}`);
      }
    }
    return ids;
  }
}
