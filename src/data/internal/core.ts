/**
 * The executor's core: chunked pull iterators.
 *
 * Every operator, once opened, is a `Chunks<T>`: `next(hint)` resolves to a non-empty array of at
 * most `hint` elements, or `null` at the end. Demand flows upstream (a batch(32) asks for what it
 * still lacks, a take asks for what remains), so a promise is paid per chunk rather than per
 * element, and no operator computes elements nobody asked for.
 *
 * Chunks are owned by the receiver: an operator never hands out an array it keeps or reuses, so
 * downstream may mutate or keep it without copying.
 *
 * Invariant: an iterator never has two `next()` calls outstanding at once; operators that pull in
 * the background (prefetch, parallel map) serialise their own upstream pulls.
 */
import type { CallSite, OpCounters, OpInfo, OpKind } from '../tracing';
import { estimateBytes } from './bytes';

export interface Chunks<T> {
  /** A non-empty chunk of at most `hint` (>= 1) elements, or null when the input is exhausted. */
  next(hint: number): Promise<T[] | null>;
  /** Stop: cancel in-flight work, release workers and files, and stop the inputs. Idempotent. */
  return(): Promise<void>;
}

/**
 * Offers an operator's input elements to the tracer (see `Tracer.sample`), which answers each
 * offer with the elements to pass over before the next. One cursor serves every pass of the
 * operator and every instance built at its call site (an interleave's inner datasets): a pass that
 * ends owes the rest of the skip to the next one. Counted per pass instead, a repeat of a short
 * dataset, or an interleave of many small ones, would offer each pass's first element again and
 * fill the tracer's sample with copies of it.
 */
export class ElementSampler {
  /** Elements to pass over before the next offer. */
  private until = 0;
  private active = true;
  constructor(private readonly ask: (element: unknown, index: number) => number) {}

  /** False once the tracer wants no more elements: the operator can stop offering. */
  get wanted(): boolean {
    return this.active;
  }

  /** Offers the elements of a chunk (input indices `base`…) the tracer asks for, before the fn sees them. */
  chunk(xs: readonly unknown[], base: number): void {
    let i = this.until;
    while (this.active && i < xs.length) i += this.offer(xs[i], base + i);
    this.until = i - xs.length;
  }

  /** One element (an async fn's call). */
  one(x: unknown, index: number): void {
    if (!this.active) return;
    if (this.until > 0) this.until--;
    else this.until = this.offer(x, index) - 1;
  }

  /** Offers one element; the distance to the next offer (at least 1). */
  private offer(x: unknown, index: number): number {
    const skip = this.ask(x, index);
    if (skip > 0) return Math.ceil(skip);
    this.active = false;
    return 1;
  }
}

/** An operator as built: an immutable description that can be opened any number of times. */
export interface OpNode<T = unknown> {
  readonly kind: OpKind;
  readonly key: string;
  readonly site: CallSite | undefined;
  /** Set when a tracer was installed at build time. */
  readonly info: OpInfo | null;
  readonly counters: OpCounters | null;
  /** The tracer's `sample` for this operator (see `Tracer.sample`), when it has one. */
  readonly sample: ElementSampler | null;
  readonly inputs: readonly OpNode[];
  /** Elements one pass produces, when known. */
  readonly cardinality: number | undefined;
  /** Open one pass (an epoch) over the operator, within the consumer's session. */
  open(session: Session): Chunks<T>;
}

/**
 * What one consumer's iteration shares across the passes it opens (a `repeat()` reopens its input
 * each pass): worker pools, kept warm from one pass to the next and ended with the iteration.
 */
export class Session {
  private readonly resources: Map<unknown, { dispose(): Promise<void> }>;
  /**
   * Set inside an `ignoreErrors()`: operators that fail on one element (a map's fn, a scan's fn)
   * hand the error here and drop the element instead of failing the pass. Null elsewhere.
   */
  readonly skip: ErrorSink | null;
  constructor(parent?: Session, skip?: ErrorSink) {
    this.resources = parent?.resources ?? new Map();
    this.skip = skip ?? null;
  }
  /** A view of this session (same resources) whose operators skip failing elements into `sink`. */
  skipping(sink: ErrorSink): Session {
    return new Session(this, sink);
  }
  /** The resource kept under `key`, created on first use. */
  get<R extends { dispose(): Promise<void> }>(key: unknown, create: () => R): R {
    let r = this.resources.get(key);
    if (r === undefined) {
      r = create();
      this.resources.set(key, r);
    }
    return r as R;
  }
  /** Forgets (and disposes) the resource under `key`, e.g. a pool whose pass was cancelled mid-task. */
  async drop(key: unknown): Promise<void> {
    const r = this.resources.get(key);
    this.resources.delete(key);
    await r?.dispose();
  }
  /** Ends every resource: called when the consumer's iteration ends or is returned. */
  async dispose(): Promise<void> {
    const all = [...this.resources.values()];
    this.resources.clear();
    await Promise.all(all.map((r) => r.dispose()));
  }
}

/** Receives the error of an element an operator dropped inside an `ignoreErrors()`. */
export type ErrorSink = (e: unknown) => void;

/** Wall clock in milliseconds; only called when a tracer is attached. */
export const now: () => number = () => performance.now();

/**
 * Most elements a source hands on per pull. Ops ask for what they need at once (a shuffle its
 * whole buffer), and a sync fn runs a chunk in one go: a 50,000-element buffer behind a 0.8 ms map
 * was 40 s of one call with nothing else running. Bounded, a chunk is a short stretch of work.
 */
export const SOURCE_CHUNK_MAX = 256;

/** Longest stretch, ms, a pipeline runs on microtasks alone before a source lets the event loop turn. */
const TURN_AFTER_MS = 20;
let lastTurn = 0;
/**
 * The clock costs 50 ns a read, a sixth of a trivial element pulled one at a time: it is read
 * every `every`-th pull, doubling while the pulls between two reads took under 0.25 ms, up to 32,
 * and back to every pull as soon as they took over 2 ms.
 */
let every = 1;
let countdown = 1;
let lastCheck = 0;

/**
 * A turn of the event loop, when TURN_AFTER_MS passed since the last one; undefined otherwise (no
 * promise, nothing to await). A pipeline whose work all resolves at once (in-memory sources, sync
 * fns on the main thread, a cache replaying) otherwise runs on microtasks alone: timers and I/O
 * wait until it stops — the consumer's own, and a profiler's window timers. Sources and caches
 * take the turn before a pull, so every stretch of work passes one; a turn costs microseconds.
 */
export function turnIfDue(): Promise<void> | undefined {
  if (--countdown > 0) return undefined;
  const t = performance.now();
  const gap = t - lastCheck;
  lastCheck = t;
  every = gap > 2 ? 1 : gap < 0.25 ? Math.min(32, every * 2) : every;
  countdown = every;
  if (t - lastTurn < TURN_AFTER_MS) return undefined;
  lastTurn = t;
  return (pending ??= new Promise((resolve) => {
    setImmediate(() => {
      pending = null;
      resolve();
    });
  }));
}

/** The turn pulls wait for (`turnIfDue`), until the check phase. */
let pending: Promise<void> | null = null;

/**
 * The turn of the event loop a pull waits for, or null. A consumer handed an element waits for it
 * too (./iterator.ts): a consumer that goes on working on microtasks alone — a training loop
 * served from a pool's finished results, or from a prefetch buffer filled ahead — is what keeps
 * the loop from turning. Waiting, it lets timers and I/O run and the pulls behind the turn go on
 * (a worker pool's refill); going on without it, it would hold them until it stops.
 */
export function turnPending(): Promise<void> | null {
  return pending;
}

/** True for anything with a callable `then`: promises from async fns, and sync fns that return one. */
export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof (v as { then?: unknown }).then === 'function';
}

/** A one-shot wake-up: `wait()` resolves at the next `notify()`. Cheaper than an event emitter. */
export class Wakeup {
  private resolve: (() => void) | null = null;
  private promise: Promise<void> | null = null;
  wait(): Promise<void> {
    if (this.promise === null) this.promise = new Promise<void>((r) => (this.resolve = r));
    return this.promise;
  }
  notify(): void {
    const r = this.resolve;
    if (r !== null) {
      this.resolve = null;
      this.promise = null;
      r();
    }
  }
}

/**
 * Pulls from an async source that took long (at least SLOW_PULL_MS): a source's elements then take
 * very different times (most ready at once, some awaiting I/O or timers), and sampling their pulls
 * would extrapolate whichever few it caught. Every Sampler sees the count change and times every
 * chunk for a while (see Sampler).
 */
let slowPulls = 0;
/** A pull from a source at least this long (milliseconds) counts as slow. */
export const SLOW_PULL_MS = 0.05;
/** Chunks a Sampler times one by one after a slow pull or an expensive chunk. */
const HOLD_CHUNKS = 1024;

/** Tells every Sampler that a source's pull took long (see `slowPulls`). */
export function noteSlowPull(): void {
  slowPulls++;
}

/**
 * Decides which chunks an operator times. Timing costs three clock reads per chunk; on a pipeline
 * whose chunks take a microsecond that would double its cost. So once sampled chunks prove cheap
 * (under 50 µs), only about one in `stride` (4 to 64, the cheaper the rarer) is timed, at
 * random gaps so a periodic pattern cannot bias it, and each sample counts `stride` times: the
 * totals stay unbiased. Expensive chunks are always timed, where the clock's cost is negligible.
 *
 * Durations that vary by orders of magnitude (an async source that mostly has an element ready and
 * sometimes awaits I/O) defeat sampling: a sample that catches a slow chunk, counted `stride`
 * times, can claim more time than the run lasted, and one that misses them all claims none. So
 * after an expensive chunk, or a slow pull anywhere (`noteSlowPull`), every chunk is timed for the
 * next HOLD_CHUNKS, and a sample never counts for more than the wall time since the previous timed
 * chunk ended (`credit`).
 */
export class Sampler {
  private skip = 0;
  private stride = 1;
  private hold = 0;
  private slowSeen = slowPulls;
  private lastEnd = -1;
  /** 0: do not time this chunk; otherwise the number of chunks its timing stands for. */
  tick(): number {
    if (this.slowSeen !== slowPulls) {
      this.slowSeen = slowPulls;
      this.hold = HOLD_CHUNKS;
      this.stride = 1;
      this.skip = 0;
    }
    if (this.skip > 0) {
      this.skip--;
      return 0;
    }
    const w = this.stride;
    if (w > 1) this.skip = (Math.random() * (2 * w - 1)) | 0;
    return w;
  }
  /** Adapts the stride to a sampled chunk's duration in milliseconds. */
  adapt(ms: number): void {
    if (ms >= 0.05) this.hold = HOLD_CHUNKS;
    if (this.hold > 0) {
      this.hold--;
      this.stride = 1;
      return;
    }
    this.stride = ms >= 0.01 ? 4 : ms >= 0.002 ? 16 : 64;
  }
  /**
   * The milliseconds to count for a timed chunk that took `ms`, ended `end` and stands for `w`
   * chunks: `ms × w`, but no more than the wall time since the previous timed chunk ended (the
   * chunks it stands for all ran since then), and never less than its own `ms`. Adapts the stride.
   */
  credit(ms: number, w: number, end: number): number {
    let c = ms * w;
    if (w > 1 && this.lastEnd >= 0) c = Math.max(ms, Math.min(c, end - this.lastEnd));
    this.lastEnd = end;
    this.adapt(ms);
    return c;
  }
}

/**
 * `up.next(hint)`, adding the time the caller waited to the input's `waitSeconds` (sampled: see
 * Sampler). Untraced, or on an unsampled chunk, this adds no promise of its own.
 */
export function pull<T>(up: Chunks<T>, hint: number, upC: OpCounters | null, s: Sampler): Promise<T[] | null> {
  if (upC === null) return up.next(hint);
  const w = s.tick();
  if (w === 0) return up.next(hint);
  const t0 = now();
  const done = (): void => {
    const t1 = now();
    upC.waitSeconds += s.credit(t1 - t0, w, t1) / 1000;
  };
  return up.next(hint).then(
    (r) => {
      done();
      return r;
    },
    (e: unknown) => {
      done();
      throw e;
    },
  );
}

/** Records a produced chunk on an operator's counters. */
export function countProduced(c: OpCounters, out: readonly unknown[]): void {
  c.produced += out.length;
  if (out.length > 0) c.bytesProduced += out.length * estimateBytes(out[0]);
}

/** The resolved number of elements an iterator should ask for when its consumer gives no hint. */
export const BULK = 1024;

/**
 * Times an operator's own work (`selfSeconds`) on a Sampler's schedule: `start()` before the work,
 * `stop()` after. Untraced (no counters) both do nothing.
 */
export class SelfClock {
  private readonly s = new Sampler();
  private w = 0;
  private t0 = 0;
  constructor(private readonly c: OpCounters | null) {}
  start(): void {
    if (this.c === null) return;
    this.w = this.s.tick();
    if (this.w !== 0) this.t0 = now();
  }
  stop(): void {
    if (this.c === null || this.w === 0) return;
    const d = now() - this.t0;
    this.c.selfSeconds += (d * this.w) / 1000;
    this.s.adapt(d);
    this.w = 0;
  }
}
