/**
 * What every dialect adapter shares: finding the user's call site of a stage, registering the
 * stage with the runner's tracer, and counting and timing it without changing what it yields.
 *
 * Rules the adapters keep:
 * - A stage is registered only when the user's own code builds it. A call that comes from a library
 *   (Node's internals, a package under node_modules, tfjs calling its own methods) passes through
 *   untraced, so a library's inner use of an operator never shows as a stage of the user's.
 * - Wrappers hand back what the wrapped call returned (the same promise, the same element), and
 *   rethrow what it threw.
 * - A stage's self time is its own synchronous work: a user fn's call, or, for a stage pulled one
 *   element at a time (an iterator's `next()`), the time its `next()` took minus the time its inputs'
 *   `next()` took meanwhile (a pull chain runs one stage at a time).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CallSite, Dialect, KnobOverride, Lever, OpCounters, OpInfo, OpKind, OpKnobs, Placement, Tracer } from '../../data/tracing';
import { estimateBytes, siteKey, siteOfName } from '../../data/tracing';

/** What an adapter needs of the runner: the tracer stages register with, and the overrides by site key. */
export interface DialectHost {
  tracer: Tracer;
  overrides: ReadonlyMap<string, KnobOverride>;
}

/**
 * The runner's own directories (the bundle, and its sources when stack traces are source-mapped):
 * frames there are the adapters' wrappers, not the user's code.
 */
const OWN_DIRS = ((): string[] => {
  const here = __dirname;
  const root = here.endsWith(`${path.sep}dialects`) ? path.resolve(here, '../../..') : path.resolve(here, '../..');
  return [path.join(root, 'dist', 'runner') + path.sep, path.join(root, 'src', 'runner') + path.sep];
})();

const LOCATION = /^(.+):(\d+):(\d+)$/;

/** `at fn (file:line:col)` or `at file:line:col` → its location; null for native frames. */
function frameLocation(line: string): { file: string; line: number; column: number } | null {
  const text = line.trim();
  if (!text.startsWith('at ')) return null;
  let loc = text.slice(3);
  if (loc.endsWith(')')) {
    const open = loc.indexOf(' (');
    if (open >= 0) loc = loc.slice(open + 2, -1);
  }
  const m = LOCATION.exec(loc);
  if (m === null) return null;
  const file = m[1]!.startsWith('file://') ? fileURLToPath(m[1]!) : m[1]!;
  return { file, line: Number(m[2]), column: Number(m[3]) };
}

/** True for a frame of a library rather than the user's code: Node's internals, a package, or plumber-data wherever it lives. */
function isLibraryFile(file: string): boolean {
  return file.startsWith('node:') || file.startsWith('internal/') || !file.includes(path.sep) || /[\\/]node_modules[\\/]/.test(file) || packageOf(path.dirname(file)) === 'plumber-data';
}

/** The name of the package a directory belongs to (its nearest package.json's), by directory. */
const packages = new Map<string, string | undefined>();

function packageOf(dir: string): string | undefined {
  if (packages.has(dir)) return packages.get(dir);
  let name: string | undefined;
  try {
    name = (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string }).name ?? '';
  } catch {
    const up = path.dirname(dir);
    name = up === dir ? undefined : packageOf(up);
  }
  packages.set(dir, name);
  return name;
}

/**
 * Where the user's code called the stage named `name` (the method or callee name), from the stack:
 * the first frame outside the runner, refined to the name's position on its line. `null` when that
 * frame is a library's (the call is the library's own business); undefined when there is none.
 */
export function callerSite(name: string): CallSite | null | undefined {
  const saved = Error.stackTraceLimit;
  Error.stackTraceLimit = 30;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = saved;
  for (const line of stack.split('\n').slice(1)) {
    const loc = frameLocation(line);
    if (loc === null || OWN_DIRS.some((d) => loc.file.startsWith(d))) continue;
    if (isLibraryFile(loc.file)) return null;
    return siteOfName(loc, name);
  }
  return undefined;
}

/** What an adapter says about a stage; the rest of `OpInfo` is filled in here. */
export interface StageSpec {
  kind: OpKind;
  dialect: Dialect;
  levers: Lever[];
  site: CallSite | undefined;
  inputs: Array<Stage | undefined>;
  /** Keys of inputs that are not stages of a dialect (a plumber-data dataset a tfjs Dataset was made from). */
  inputKeys?: string[];
  placement?: Placement;
  knobs?: OpKnobs;
  fn?: Function;
  cardinality?: number;
  overridden?: boolean;
  /** Forced key (a stage an override inserts after another one). */
  key?: string;
  /**
   * Time the stage's steps (`timeWork`) by the main thread's active time rather than the wall: for
   * a stage whose steps await things other than its input (I/O, timers, another thread), so the
   * awaits count as latency, not as its own work.
   */
  activeClock?: boolean;
}

/** Milliseconds of wall time. */
const WALL = (): number => performance.now();
/**
 * Milliseconds the event loop was active (running JavaScript and callbacks), not idle waiting for
 * I/O or timers: what a step that awaits costs the main thread. About 0.4 µs a read.
 */
const ACTIVE = (): number => performance.eventLoopUtilization().active;

let anonymous = 0;

/** Elements between two size estimates of a stage's output (an estimate walks the element). */
const BYTES_EVERY = 64;

/** A registered stage: its counters and the running state its wrappers share. */
export class Stage {
  readonly key: string;
  readonly c: OpCounters;
  /** What the tracer was told: the tracer reads `inputs` when it writes the profile, so an input found later can still be added. */
  readonly info: OpInfo;
  /** Calls of the user fn in flight now. */
  private inFlight = 0;
  /** Seconds its inputs' `next()` took, summed: a pull's self time is its own elapsed time minus this. */
  inputSeconds = 0;
  /** The same by the wall clock, whatever the stage's own clock: a step's latency is its wall time minus this. */
  inputWallSeconds = 0;
  /** The stage that pulls from this one, when one does (its `pulled` and `inputSeconds` grow as this one hands elements on). */
  consumer: Stage | undefined;
  private bytesEach = 0;
  private readonly tracer: Tracer;
  /** The clock its own steps and its inputs' pulls are timed by (milliseconds). */
  readonly clock: () => number;

  constructor(host: DialectHost, spec: StageSpec) {
    this.tracer = host.tracer;
    this.clock = spec.activeClock ? ACTIVE : WALL;
    this.key = spec.key ?? (spec.site !== undefined ? `${spec.kind}@${siteKey(spec.site)}` : `${spec.kind}#dialect${++anonymous}`);
    const info: OpInfo = {
      key: this.key,
      kind: spec.kind,
      inputs: [...spec.inputs.flatMap((s) => (s === undefined ? [] : [s.key])), ...(spec.inputKeys ?? [])],
      placement: spec.placement ?? 'main',
      knobs: spec.knobs ?? {},
      random: spec.kind === 'shuffle',
      dialect: spec.dialect,
      levers: spec.levers,
    };
    if (spec.site !== undefined) info.site = spec.site;
    if (spec.fn !== undefined) {
      info.fn = spec.fn;
      if (spec.fn.name) info.fnName = spec.fn.name;
      info.fnAsync = isAsyncFn(spec.fn);
    }
    if (spec.cardinality !== undefined) info.cardinality = spec.cardinality;
    if (spec.overridden) info.overridden = true;
    this.info = info;
    this.c = host.tracer.register(info);
    for (const input of spec.inputs) if (input !== undefined) input.consumer = this;
  }

  /** Counts one element handed downstream. */
  produced(element: unknown): void {
    const c = this.c;
    if (c.produced % BYTES_EVERY === 0) this.bytesEach = estimateBytes(element);
    c.produced++;
    c.bytesProduced += this.bytesEach;
  }

  /**
   * `fn`, counted and timed: calls, the synchronous part of each call as self time, and for a call
   * that returns a promise its latency and the calls in flight. The wrapper returns what `fn`
   * returned (the very promise) and keeps its `name` and `length`. Without `self`, the stage's self
   * time is taken elsewhere (`timeWork`).
   */
  wrapFn<F extends Function>(fn: F, self = true): F {
    const c = this.c;
    const wrapped = function (this: unknown, ...args: unknown[]): unknown {
      c.calls++;
      const t0 = performance.now();
      let r: unknown;
      try {
        r = Reflect.apply(fn, this, args);
      } finally {
        if (self) c.selfSeconds += (performance.now() - t0) / 1000;
      }
      if (isThenable(r)) stage.track(r, t0);
      return r;
    };
    const stage = this;
    Object.defineProperty(wrapped, 'name', { value: fn.name });
    Object.defineProperty(wrapped, 'length', { value: fn.length });
    return wrapped as unknown as F;
  }

  private track(r: PromiseLike<unknown>, t0: number): void {
    const c = this.c;
    c.asyncCalls++;
    this.inFlight++;
    if (this.inFlight > c.inFlightHighWater) c.inFlightHighWater = this.inFlight;
    const settle = (): void => {
      this.inFlight--;
      c.asyncLatencySeconds += (performance.now() - t0) / 1000;
    };
    // A side branch: the caller still receives (and handles) `r` itself.
    r.then(settle, settle);
  }

  /**
   * An iterator's `next`, counted for the stage that produces its elements: the time someone waited
   * on it is this stage's `waitSeconds` and its consumer's input time (the consumer's `pulled` grows
   * by each element); with `count`, each element is counted as produced. Pulls that overlap (a
   * prefetch asking ahead) count their union, so a wait never exceeds the time it spans.
   */
  timePull<T>(next: () => Promise<IteratorResult<T>>, count: boolean): () => Promise<IteratorResult<T>> {
    const waiting = new Busy(WALL);
    // The consumer's input time, by the consumer's clock.
    let feeding: Busy | undefined;
    const waited = (dt: number, entering: boolean): void => {
      this.c.waitSeconds += dt;
      const consumer = this.consumer;
      if (consumer === undefined) return;
      consumer.inputWallSeconds += dt;
      if (consumer.clock === WALL) consumer.inputSeconds += dt;
      else {
        feeding ??= new Busy(consumer.clock);
        consumer.inputSeconds += entering ? feeding.enter() : feeding.leave();
      }
    };
    return () => {
      waited(waiting.enter(), true);
      const done = (r: IteratorResult<T> | undefined): void => {
        waited(waiting.leave(), false);
        if (this.consumer !== undefined && r !== undefined && !r.done) this.consumer.c.pulled++;
        if (count && r !== undefined && !r.done) this.produced(r.value);
      };
      return next().then(
        (r) => {
          done(r);
          return r;
        },
        (e: unknown) => {
          done(undefined);
          throw e;
        },
      );
    };
  }

  /**
   * `next` as the pipeline's own consumer (a training loop, `model.fitDataset`) calls it: each
   * pull tells the tracer's `consumer` (see `Tracer.consumer`) and waits for the promise it
   * returns, so the runner can watch a training script as written. A pull from another stage
   * (`consumer` set) tells nothing.
   */
  watchConsumer<T>(next: () => Promise<IteratorResult<T>>): () => Promise<IteratorResult<T>> {
    const tracer = this.tracer;
    const key = this.key;
    const watched = async (): Promise<IteratorResult<T>> => {
      const hold = tracer.consumer?.({ key, type: 'next' });
      if (hold !== undefined) await hold;
      let r: IteratorResult<T>;
      try {
        r = await next();
      } catch (e) {
        tracer.consumer?.({ key, type: 'end' });
        throw e;
      }
      tracer.consumer?.({ key, type: r.done ? 'end' : 'element' });
      return r;
    };
    return () => (this.consumer === undefined && tracer.consumer !== undefined ? watched() : next());
  }

  /**
   * Starts timing one step of a stage on the active clock; the function it returns ends it and
   * counts the step as an awaited call when it was idle besides its inputs' pulls: its wall time
   * less its inputs' wall time less its own active time (the loop's active time less its inputs').
   */
  private idleMeter(): () => () => void {
    const c = this.c;
    return () => {
      const w0 = WALL();
      const a0 = ACTIVE();
      const iw0 = this.inputWallSeconds;
      const ia0 = this.inputSeconds;
      c.calls++;
      return () => {
        const own = (ACTIVE() - a0) / 1000 - (this.inputSeconds - ia0);
        const idle = (WALL() - w0) / 1000 - (this.inputWallSeconds - iw0) - own;
        if (idle <= 0) return;
        c.asyncCalls++;
        c.asyncLatencySeconds += idle;
        if (c.inFlightHighWater < 1) c.inFlightHighWater = 1;
      };
    };
  }

  /**
   * The stage's own steps (one element's work each), timed as self time: the time some step was
   * running, minus the time its inputs' pulls took meanwhile. A stage on the active clock (its
   * steps await other things than its input) runs one step at a time; a step that spent time idle
   * besides its inputs' pulls (a timer, I/O it awaited) is one awaited call, and that idle time its
   * latency — what it waits on beyond its own work, as a plumber-data source that awaits is read.
   */
  timeWork<T>(step: () => Promise<T>): () => Promise<T> {
    const c = this.c;
    const working = new Busy(this.clock);
    let input0 = this.inputSeconds;
    // Busy time and input time are credited at different events: their difference is kept signed
    // and the counter follows its running maximum (counters only grow).
    let net = c.selfSeconds;
    const worked = (dt: number): void => {
      net += dt - (this.inputSeconds - input0);
      input0 = this.inputSeconds;
      if (net > c.selfSeconds) c.selfSeconds = net;
    };
    const idleOf = this.clock === WALL ? undefined : this.idleMeter();
    return () => {
      worked(working.enter());
      const idle = idleOf?.();
      const done = (): void => {
        worked(working.leave());
        idle?.();
      };
      return step().then(
        (r) => {
          done();
          return r;
        },
        (e: unknown) => {
          done();
          throw e;
        },
      );
    };
  }
}

/**
 * Union of overlapping intervals, credited as it grows: each `enter` and `leave` returns the
 * seconds some interval was open since the previous one, so a stage that is never idle (a
 * prefetch keeping pulls in flight) is credited as it goes, not at an end that never comes.
 */
class Busy {
  private open = 0;
  private last = 0;
  constructor(private readonly now: () => number) {}
  enter(): number {
    return this.step(1);
  }
  leave(): number {
    return this.step(-1);
  }
  private step(change: number): number {
    const t = this.now();
    const d = this.open > 0 ? (t - this.last) / 1000 : 0;
    this.open += change;
    this.last = t;
    return d;
  }
}

/** True for anything with a callable `then`. */
export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof (v as { then?: unknown }).then === 'function';
}

/** True for an `async function` or `async function*`. */
export function isAsyncFn(fn: Function): boolean {
  const name = fn.constructor?.name;
  return name === 'AsyncFunction' || name === 'AsyncGeneratorFunction';
}

/** The override written for a site, if any. */
export function overrideAt(host: DialectHost, site: CallSite | undefined): KnobOverride | undefined {
  return site === undefined ? undefined : host.overrides.get(siteKey(site));
}

/**
 * Streams whose stage counts what they push but does not time the pulls from them: a root that is
 * one of these times its consumer's waits itself (see `dialectRoot`).
 */
export const PULLS_UNTIMED = new WeakSet<object>();

/** A property holding the stage a dialect object (a Readable, a tfjs Dataset, a generator) came from. */
export const STAGE = Symbol('plumber-runner.stage');

/** The stage an object was tagged with, if any. */
export function stageOf(v: unknown): Stage | undefined {
  return (typeof v === 'object' || typeof v === 'function') && v !== null ? ((v as Record<symbol, unknown>)[STAGE] as Stage | undefined) : undefined;
}

/** Tags an object with its stage (a non-enumerable property: the user's code never sees it in keys or JSON). */
export function tag<T extends object>(v: T, stage: Stage): T {
  try {
    Object.defineProperty(v, STAGE, { value: stage, configurable: true, enumerable: false, writable: true });
  } catch {
    // A frozen object: it stays untagged, and its consumers see no input for it.
  }
  return v;
}

/** While a foreign iterable's first pull runs: the operators registered meanwhile, in the order they were built. */
let recording: OpInfo[] | undefined;

/** Tells a first pull being recorded (see `inputsFromFirstPull`) of an operator registered now. */
export function noteRegistered(info: OpInfo): void {
  recording?.push(info);
}

/** The roots of `built`: those no other of them pulls from (what a pipeline built at once ends in). */
function rootsOf(built: readonly OpInfo[]): string[] {
  const pulled = new Set(built.flatMap((i) => i.inputs));
  return built.filter((i) => !pulled.has(i.key) && i.parent === undefined).map((i) => i.key);
}

/**
 * A foreign iterable (one no stage made) may build its pipeline as it starts, synchronously in its
 * first pull (a plumber-data dataset inside an async generator): what it built then is `stage`'s
 * input, the first root built. Roots built after it are built by that pipeline's own first pull
 * (its source starting a Node stream it reads): they feed it, not `stage`.
 */
export function inputsFromFirstPull(it: AsyncIterator<unknown>, stage: Stage): void {
  const next = it.next.bind(it) as () => Promise<IteratorResult<unknown>>;
  let first = true;
  it.next = (): Promise<IteratorResult<unknown>> => {
    if (!first) return next();
    first = false;
    const outer = recording;
    const built: OpInfo[] = (recording = []);
    try {
      return next();
    } finally {
      recording = outer;
      outer?.push(...built);
      const key = rootsOf(built).find((k) => k !== stage.key);
      if (key !== undefined && !stage.info.inputs.includes(key)) stage.info.inputs.push(key);
    }
  };
}
