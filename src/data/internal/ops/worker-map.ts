/**
 * map/filter/flatMap with `placement: 'worker'`: the fn runs in a piscina pool of `threads` worker
 * threads, started when the consumer's iterator is created (or when a pass opens, for toArray()
 * and forEach()), before the first element exists, and ended with the consumer's iteration — at
 * once when a pass is stopped mid-task.
 *
 * Small elements travel several to a task. A task has a fixed cost (posting, waking the thread,
 * replying, settling a promise: tens to hundreds of µs, more on a busy machine) on top of the
 * fn's work; the sizer (ChunkSizer) measures both as the map runs and picks the chunk that keeps
 * the fixed cost a small share of a task, bounded in time, bytes and by what is left to do. Each
 * thread holds a second task while it runs one, so it never waits for the main thread to post the
 * next. `workerTasks` counts the tasks posted.
 *
 * Buffers move rather than copy where that is safe (see InputOwner): results (the worker's own
 * objects, see worker.ts) always; inputs only when this library made them for this map (the
 * stacked buffers of a batch(), the bytes of files()) and no user fn saw them on the way.
 */
import { existsSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { Piscina } from 'piscina';
import { addLatency, type OpCounters, WORKER_CHUNKING } from '../../tracing';
import { atPath, describeThrown, findUncloneable, PipelineError, type OpRef } from '../../errors';
import type { WorkerResult, WorkerStage, WorkerTask } from '../../worker';
import { estimateBytes } from '../bytes';
import { type Chunks, now, type OpNode, type Session } from '../core';
import type { FnEnv } from '../context';
import { Batch } from '../batch-class';
import { encodeAll, failingElement, restoreAll, type Encoded } from '../crossing';
import { disposeAdopted, tensorMakerFor } from '../tensors';
import { Engine, type Launcher } from './engine';

export interface WorkerMapConfig {
  mode: 'map' | 'filter' | 'flatMap';
  /** Absolute path or file URL of the module exporting the fn. */
  module: string;
  exportName: string;
  threads: number;
  deterministic: boolean;
  seed: number;
  epoch: number;
  env: FnEnv;
  /** Fused maps (`fuse: true`) that run, in order, before this fn in the same task; see worker.ts `WorkerTask.stages`. */
  stages?: FusedStageRun[];
}

/** A fused map as one pass runs it: what its worker needs, and whom its work and errors belong to. */
export interface FusedStageRun {
  module: string;
  exportName: string;
  seed: number;
  epoch: number;
  env: FnEnv;
  counters: OpCounters | null;
  op: OpRef;
}

// The chunking contract (tracing.ts, WORKER_CHUNKING): a task's fixed cost at most OVERHEAD_SHARE of
// it, its work at most MAX_TASK_SECONDS, its elements (in and out) at most MAX_TASK_BYTES — the
// memory a map holds is the tasks held (running or waiting for the consumer, see Engine) × this —
// and at most MAX_GROUP of them.
const { overheadShare: OVERHEAD_SHARE, maxTaskSeconds: MAX_TASK_SECONDS, maxTaskBytes: MAX_TASK_BYTES, maxGroup: MAX_GROUP } = WORKER_CHUNKING;
/** Tasks whose cost per element the sizer keeps (the latest). */
const WINDOW = 32;
/** One task in this many carries a single element: a probe of the fixed cost of a task as it is now. */
const PROBE_EVERY = 32;
/** Probes whose messaging the sizer keeps (the latest). */
const PROBES = 8;

/** One task's timings, as the sizer needs them. */
interface TaskTiming {
  /** Elements in the task. */
  elements: number;
  /** Seconds of the round trip that were not the fn's work nor waiting behind another task: messaging. */
  messagingSeconds: number;
  /** Seconds the fn ran. */
  fnSeconds: number;
  /** Estimated bytes per element, input plus result. */
  bytesPerElement: number;
}

/** `into` plus `add`, entry by entry (made on first use). */
function mergeHistogram(into: number[] | undefined, add: readonly number[]): number[] {
  const h = into ?? new Array<number>(add.length).fill(0);
  for (let i = 0; i < add.length; i++) h[i] = (h[i] ?? 0) + add[i];
  return h;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Chooses elements per task from the tasks measured so far.
 *
 * The fixed cost of a task is the messaging of a one-element task (its round trip less the fn's
 * work and any wait behind the thread's previous task): the first tasks carry one element each,
 * and one task in PROBE_EVERY does again, so the figure follows the machine. It is the least of
 * the recent probes: other load only ever adds delay (a thread descheduled, a busy main thread),
 * so the least is the cost itself. The cost per element is the fn's median wall time per element
 * over recent tasks. The chunk is what makes the fixed cost OVERHEAD_SHARE of a task, bounded in
 * time, bytes, and by what is left so every thread gets a share. Exported for tests.
 */
export class ChunkSizer {
  private readonly timings: TaskTiming[] = [];
  private readonly probes: number[] = [];
  private target = 1;
  private calls = 0;

  constructor(private readonly threads: number) {}

  /** The fixed cost of a task, in seconds, as last measured (0 before any). */
  get fixedSeconds(): number {
    return this.probes.length === 0 ? 0 : Math.min(...this.probes);
  }

  /** Records a finished task and re-sizes. */
  record(t: TaskTiming): void {
    if (t.elements === 1) {
      this.probes.push(t.messagingSeconds);
      if (this.probes.length > PROBES) this.probes.shift();
    }
    this.timings.push(t);
    if (this.timings.length > WINDOW) this.timings.shift();
    const perElement = median(this.timings.map((x) => x.fnSeconds / x.elements));
    const bytes = Math.max(...this.timings.map((x) => x.bytesPerElement));
    // A fn too fast for the clock gets the cap.
    // (Less a rounding error's worth, so an exact quotient is not rounded up past itself.)
    const want = perElement > 0 ? Math.ceil(this.fixedSeconds / (OVERHEAD_SHARE * perElement) - 1e-9) : MAX_GROUP;
    const byTime = perElement > 0 ? Math.floor(MAX_TASK_SECONDS / perElement) : MAX_GROUP;
    const byBytes = bytes > 0 ? Math.floor(MAX_TASK_BYTES / bytes) : MAX_GROUP;
    this.target = Math.max(1, Math.min(want, byTime, byBytes, MAX_GROUP));
  }

  /**
   * Elements for the next tasks, given how many the input still holds (undefined: unknown): the
   * target, a probe of one now and then, and no more than a thread's share of what is left.
   */
  next(remaining: number | undefined): number {
    let k = this.target;
    if (k > 1 && ++this.calls % PROBE_EVERY === 0) k = 1;
    if (remaining !== undefined && remaining > 0) k = Math.min(k, Math.ceil(remaining / this.threads));
    return Math.max(1, k);
  }
}

/** The compiled worker entry next to the bundle; from sources (under tsx), worker.ts itself. */
function workerFile(): string {
  let root = __dirname;
  for (const leaf of ['ops', 'internal', 'dist']) if (root.endsWith(sep + leaf)) root = dirname(root);
  const candidates = [join(__dirname, 'worker.js'), join(root, 'dist', 'worker.js'), join(root, 'worker.ts')];
  for (const c of candidates) if (existsSync(c)) return c;
  return candidates[0];
}

/** A whole, unshared buffer under `v` (a view covering all of it), or null: only those can move. */
function wholeBuffer(v: unknown): ArrayBuffer | null {
  if (!ArrayBuffer.isView(v)) return null;
  const buf = v.buffer;
  return buf instanceof ArrayBuffer && v.byteOffset === 0 && v.byteLength === buf.byteLength ? buf : null;
}

/**
 * Which inputs this library made for the worker map alone, so their buffers may move to the
 * worker instead of being copied: the stacked buffers of batch() (a Batch, or an object of them),
 * and the bytes files() read. Anything else — above all a typed array the caller passed in, or an
 * element a user fn has seen (a main-thread map or filter in between) — is copied, since moving
 * would detach it under whoever still holds it.
 */
type InputOwner = 'batch' | 'files' | null;

/** The buffers of `items` that may move, by who made them (see InputOwner). */
function ownBuffers(items: unknown[], owner: InputOwner): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  const add = (b: ArrayBuffer | null): void => {
    if (b !== null) out.add(b);
  };
  for (const x of items) {
    if (owner === 'batch') {
      if (x instanceof Batch) add(wholeBuffer(x.data));
      else if (x !== null && typeof x === 'object' && Object.getPrototypeOf(x) === Object.prototype)
        for (const k in x) {
          const v = (x as Record<string, unknown>)[k];
          if (v instanceof Batch) add(wholeBuffer(v.data));
        }
    } else if (owner === 'files' && x !== null && typeof x === 'object') add(wholeBuffer((x as { bytes?: unknown }).bytes));
  }
  return [...out];
}

/** A pool kept in the consumer's session, so the passes of a `repeat()` reuse warm threads. */
class PoolEntry {
  /** Set by the pool's 'error' event: a worker died outside a task. */
  error: unknown = null;
  /** Passes using the pool now (a zip of a dataset with itself opens two). */
  users = 0;
  readonly pool: Piscina;
  constructor(threads: number, modules: readonly string[]) {
    this.pool = new Piscina({
      filename: workerFile(),
      minThreads: threads,
      maxThreads: threads,
      // A second task waits in each thread while it runs one: the thread takes it up without a
      // round trip through the main thread, which on a busy machine may not be scheduled at once.
      concurrentTasksPerWorker: 2,
      idleTimeout: 60_000,
      // The threads load the user's module as they start (see worker.ts), not on their first task.
      workerData: { modules },
    });
    // Without a listener, a worker that dies outside a task would crash the process.
    this.pool.on('error', (e: unknown) => {
      this.error = e;
    });
  }
  async dispose(): Promise<void> {
    await this.pool.destroy();
    // destroy() resolves when the threads have exited; the ports piscina closes with them are
    // released a few turns of the event loop later (one turn was not always enough in 300 runs;
    // three were). Waiting for them means that when an iteration ends, nothing of its pool is
    // left, not even a closing port.
    for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** The pool each worker-placed operator needs, recorded when it is built (see declareWorkerPool). */
const poolSpecs = new WeakMap<OpNode, { threads: number; modules: readonly string[] }>();

/** Records, at build time, that `node` runs its fn in a pool of `threads` threads loading `modules` (a fused chain's, in order). */
export function declareWorkerPool(node: OpNode, threads: number, modules: readonly string[]): void {
  poolSpecs.set(node, { threads, modules });
}

/** A map fused into the one after it runs in that one's pool: its own pool is not started ahead. */
export function undeclareWorkerPool(node: OpNode): void {
  poolSpecs.delete(node);
}

/**
 * Starts the pools of the worker maps in `node`'s pipeline in the consumer's session, so their
 * threads start (and load the user's module) when the iterator is created, not when the first
 * element is pulled. The pools end with the session, like pools started by a pass.
 */
export function prestartWorkerPools(node: OpNode, session: Session): void {
  const seen = new Set<OpNode>();
  const walk = (n: OpNode): void => {
    if (seen.has(n)) return;
    seen.add(n);
    const spec = poolSpecs.get(n);
    if (spec !== undefined) session.get(n, () => new PoolEntry(spec.threads, spec.modules));
    for (const i of n.inputs) walk(i);
  };
  walk(node);
}

class WorkerMap implements Chunks<unknown> {
  private readonly entry: PoolEntry;
  private released = false;
  private readonly engine: Engine<unknown, unknown>;
  private readonly sizer: ChunkSizer;
  /** Input elements posted in this pass. */
  private launched = 0;
  /** Per thread: when its latest task ended (epoch ms), so a task queued behind it is not billed the wait. */
  private readonly threadFree = new Map<number, number>();
  private closing: Promise<void> | null = null;

  constructor(
    up: Chunks<unknown>,
    upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private readonly cfg: WorkerMapConfig,
    private readonly op: OpRef,
    private readonly inputOwner: InputOwner,
    private readonly session: Session,
    private readonly node: OpNode,
    /** Elements the input holds in one pass, when known. */
    private readonly inputCardinality: number | undefined,
    /** Dispose the pipeline's own input tensors once their task is back (see `openWorkerMap`). */
    private readonly consumesTensors: boolean,
  ) {
    this.sizer = new ChunkSizer(cfg.threads);
    const launcher: Launcher<unknown, unknown> = {
      groupSize: () => this.sizer.next(this.inputCardinality === undefined ? undefined : this.inputCardinality - this.launched),
      fail: (e, base) => (e instanceof PipelineError ? e : this.describe(e, base)),
      launch: (items, base) => this.launch(items, base),
    };
    // Three tasks per thread posted: two in the thread (see PoolEntry) and one in the pool's queue,
    // taken up the moment a thread has room. Finished tasks waiting for an earlier one (order) do
    // not count against them (see Engine).
    this.engine = new Engine(up, upC, c, launcher, cfg.threads * 3, cfg.deterministic, 'dispatchSeconds');
    // Start the threads now: they start and load the module while the input makes its first elements.
    this.entry = session.get(node, () => new PoolEntry(cfg.threads, [...(cfg.stages ?? []).map((st) => st.module), cfg.module]));
    this.entry.users++;
  }

  async next(hint: number): Promise<unknown[] | null> {
    let out: unknown[] | null;
    try {
      out = await this.engine.next(hint);
    } catch (e) {
      await this.return();
      throw e;
    }
    if (out === null) await this.return();
    return out;
  }

  return(): Promise<void> {
    if (this.closing === null) this.closing = this.stop();
    return this.closing;
  }

  /**
   * Ends the pass. The pool stays in the session for the next pass (a repeat) when it is idle and
   * healthy; a pass stopped with tasks still running, or a failed pool, ends it now, so no stale
   * task delays the next pass and nothing keeps running after a break.
   */
  private async stop(): Promise<void> {
    this.cfg.env.abort();
    for (const st of this.cfg.stages ?? []) st.env.abort();
    const busy = this.engine.inFlight > 0;
    await this.engine.close();
    if (this.released) return;
    this.released = true;
    const entry = this.entry;
    entry.users--;
    if ((busy || entry.error !== null) && entry.users === 0) await this.session.drop(this.node);
  }

  private launch(items: unknown[], base: number): Promise<unknown[]> {
    if (this.closing !== null) return Promise.resolve([]);
    const entry = this.entry;
    if (entry.error !== null) throw entry.error;
    const c = this.c;
    const postedAt = performance.timeOrigin + performance.now();
    // Tensors and arrays of doubles go as typed arrays made here (crossing.ts), in copies of
    // the elements: `items` stay as they were, for a filter to hand on.
    let sent: Encoded;
    try {
      sent = encodeAll(items);
    } catch (e) {
      // A tensor that cannot be read (disposed): name its element.
      const i = failingElement(items);
      throw new PipelineError(this.op, base + i, e, `${this.opName} cannot send element ${base + i} to a worker thread: ${describeThrown(e)}`);
    }
    const task: WorkerTask = {
      module: this.cfg.module,
      exportName: this.cfg.exportName,
      mode: this.cfg.mode,
      items: sent.items,
      base,
      seed: this.cfg.seed,
      epoch: this.cfg.epoch,
    };
    if (sent.marks !== undefined) task.marks = sent.marks;
    if (sent.numbers !== undefined) task.numbers = sent.numbers;
    if (c !== null) task.timeCalls = true;
    if (this.cfg.stages !== undefined) task.stages = this.cfg.stages.map((st): WorkerStage => ({ module: st.module, exportName: st.exportName, seed: st.seed, epoch: st.epoch }));
    // Inputs move only when the library made them for this map (see InputOwner); a filter hands
    // its inputs on, so they must stay here. What the encoding made is this map's own.
    // A fused filter's inputs are its first stage's, a map's.
    const transferList = this.inputOwner !== null && (this.cfg.mode !== 'filter' || this.cfg.stages !== undefined) ? ownBuffers(items, this.inputOwner) : [];
    for (const b of sent.transfer) transferList.push(b);
    let p: Promise<WorkerResult>;
    try {
      p = entry.pool.run(task, transferList.length > 0 ? { transferList } : undefined) as Promise<WorkerResult>;
    } catch (e) {
      throw this.sendFailure(e, items, base);
    }
    this.launched += items.length;
    const tc = this.taskCounters;
    if (tc !== null) {
      tc.workerTasks++;
      tc.dispatchSeconds += (performance.timeOrigin + performance.now() - postedAt) / 1000;
    }
    return p.then(
      (r) => {
        const out = this.receive(r, items, base, postedAt);
        // The fn ran on copies, and the results are new tensors: the originals are done with.
        if (this.consumesTensors && sent.tensors.length > 0) disposeAdopted(sent.tensors);
        return out;
      },
      (e: unknown) => {
        throw this.sendFailure(e, items, base);
      },
    );
  }

  /**
   * Whose tasks these are: this map's, or with fused maps the first one's (the later maps run in
   * its tasks), which is billed their posting and receiving (`workerTasks`, `dispatchSeconds`).
   */
  private get taskCounters(): OpCounters | null {
    return this.cfg.stages !== undefined && this.cfg.stages.length > 0 ? this.cfg.stages[0].counters : this.c;
  }

  /** `map(decode)`: the operator as the user wrote it, with the worker fn's name. */
  private get opName(): string {
    return `${this.cfg.mode}(${this.cfg.exportName})`;
  }

  /**
   * A task that failed outside the user's fn: its elements could not be posted to a worker, or
   * the thread died (a result it could not post kills it, with an anonymous error). Names the
   * element and the value that cannot be cloned when they can be found.
   */
  private sendFailure(e: unknown, items: unknown[], base: number): unknown {
    if (e instanceof PipelineError) return e;
    for (let i = 0; i < items.length; i++) {
      const u = findUncloneable(items[i]);
      if (u !== null) {
        return new PipelineError(
          this.op,
          base + i,
          e,
          `${this.opName} cannot send element ${base + i} to a worker thread: it holds ${u.what}${atPath(u)}. Elements of a worker map must be structured-cloneable (numbers, strings, plain objects, arrays, typed arrays, Maps, Sets, Dates); class instances arrive as plain objects.`,
        );
      }
    }
    const n = items.length;
    const which = n === 1 ? `element ${base}` : `elements ${base}–${base + n - 1}`;
    const cloning = e !== null && typeof e === 'object' && (e as { name?: unknown }).name === 'DataCloneError';
    const hint = cloning
      ? 'Elements and results of a worker map must be structured-cloneable (plain data, typed arrays, Maps, Sets, Dates).'
      : 'A thread also ends like this when a result cannot be posted back to the main thread: results must be structured-cloneable, so return plain data rather than handles or native objects.';
    return new PipelineError(this.op, undefined, e, `${this.opName}: a worker thread failed on ${which}: ${describeThrown(e)}. ${hint}`);
  }

  private receive(r: WorkerResult, items: unknown[], base: number, postedAt: number): unknown[] {
    const c = this.c;
    const t0 = now();
    const stages = this.cfg.stages;
    const own = stages === undefined ? r.cpuSeconds : this.billStages(r, stages, items.length);
    if (c !== null) c.workerCpuSeconds += own;
    if (r.random) this.cfg.env.markRandom();
    if (r.loadError !== undefined) {
      const st = r.loadStage === undefined || stages === undefined ? this.cfg : stages[r.loadStage];
      throw new PipelineError(
        r.loadStage === undefined || stages === undefined ? this.op : stages[r.loadStage].op,
        undefined,
        new Error(r.loadError),
        `the worker module ${st.module} could not provide '${st.exportName}': ${r.loadError}. Check that the file exists, loads without errors, and exports the function by that name.`,
      );
    }
    if (r.uncloneable !== undefined) {
      const u = r.uncloneable;
      if (c !== null) c.calls += u.offset + 1;
      throw new PipelineError(
        this.op,
        base + u.offset,
        new TypeError(`${u.what}${atPath(u)} could not be cloned`),
        `${this.opName} in a worker thread returned ${u.what}${atPath(u)} at element ${base + u.offset}: results must be structured-cloneable (numbers, strings, plain objects, arrays, typed arrays, Maps, Sets, Dates), since they are copied to the main thread.`,
      );
    }
    if (r.failed !== undefined) {
      const cause = new Error(r.failed.message);
      cause.name = r.failed.name;
      if (r.failed.stack !== undefined) cause.stack = r.failed.stack;
      // A fused stage's fn threw: the error is its op's, at the same element index (stages are maps).
      const stage = r.failed.stage === undefined || stages === undefined ? undefined : stages[r.failed.stage];
      const counters = stage === undefined ? c : stage.counters;
      if (counters !== null) counters.calls += r.failed.offset + 1;
      throw new PipelineError(stage === undefined ? this.op : stage.op, base + r.failed.offset, cause);
    }
    const out = r.out as unknown[];
    // Tensors in results are rebuilt with the tfjs the fn's module resolves (the process shares one tfjs engine).
    restoreAll(out, r.marks, undefined, { tensor: tensorMakerFor(this.cfg.module), numbers: r.numbers });
    let result: unknown[];
    // A fused filter returns its survivors themselves (the inputs here are the first stage's).
    if (this.cfg.mode === 'filter') result = stages === undefined ? items.filter((_, i) => out[i]) : out;
    else if (this.cfg.mode === 'flatMap') result = out.flat(1);
    else result = out;
    this.measure(r, items, postedAt);
    const tc = this.taskCounters;
    if (tc !== null) {
      tc.dispatchSeconds += (now() - t0) / 1000;
      tc.taskHistogram = addLatency(tc.taskHistogram, r.fnSeconds);
    }
    if (c !== null) {
      c.calls += items.length;
      if (r.callHistogram !== undefined) c.latencyHistogram = mergeHistogram(c.latencyHistogram, r.callHistogram);
    }
    return result;
  }

  /**
   * Bills each fused stage's op its share of a task's worker CPU, by the wall time each stage's
   * calls took in the task (the thread's CPU clock is too coarse to read per call), and counts
   * what each stage did: every stage is a map, so each took and made the task's elements. Returns
   * the CPU of the task's own fn.
   */
  private billStages(r: WorkerResult, stages: FusedStageRun[], n: number): number {
    const secs = r.stageSeconds ?? [];
    const total = secs.reduce((a, b) => a + b, 0);
    const share = (i: number): number => (total > 0 ? (secs[i] ?? 0) / total : 1 / (stages.length + 1));
    const ok = r.failed === undefined && r.loadError === undefined;
    for (let i = 0; i < stages.length; i++) {
      const st = stages[i];
      if (r.stageRandom?.[i]) st.env.markRandom();
      const sc = st.counters;
      if (sc === null) continue;
      sc.workerCpuSeconds += r.cpuSeconds * share(i);
      if (!ok) continue;
      sc.pulled += n;
      sc.calls += n;
      sc.produced += n;
      sc.bytesProduced += (r.stageBytes?.[i] ?? 0) * n;
    }
    return r.cpuSeconds * share(stages.length);
  }

  /**
   * Feeds the sizer one task's round trip: from posting to receiving, less the fn's work and any
   * wait behind the thread's previous task, is what messaging cost (clocks of both threads count
   * ms since the epoch). Elements are sized from the first of each task, which costs two small walks.
   */
  private measure(r: WorkerResult, items: unknown[], postedAt: number): void {
    const receivedAt = performance.timeOrigin + performance.now();
    const free = this.threadFree.get(r.thread) ?? postedAt;
    this.threadFree.set(r.thread, r.endedAt);
    const wait = Math.max(0, free - postedAt);
    const messaging = Math.max(0, receivedAt - postedAt - wait - r.fnSeconds * 1000) / 1000;
    const first = r.out !== undefined && r.out.length > 0 ? r.out[0] : undefined;
    this.sizer.record({
      elements: items.length,
      messagingSeconds: messaging,
      fnSeconds: r.fnSeconds,
      bytesPerElement: estimateBytes(items[0]) + (first === undefined ? 0 : estimateBytes(first)),
    });
  }

  private describe(e: unknown, base: number): PipelineError {
    return new PipelineError(this.op, base, e, `a worker thread failed: ${describeThrown(e)}`);
  }
}

/** `from`: the operator the map reads from, when it is not its written input (a fused chain reads the first stage's input). */
export function openWorkerMap(node: OpNode, session: Session, cfg: WorkerMapConfig, from: OpNode = node.inputs[0]): Chunks<unknown> {
  const input = from;
  // Walk through operators that hand elements on unseen by user code, to the one that made them.
  // A filter is not one of them: its fn saw (and may have kept) each element.
  let maker: OpNode = input;
  while (['take', 'skip', 'prefetch', 'shuffle'].includes(maker.kind) && maker.inputs.length === 1) maker = maker.inputs[0];
  const owner: InputOwner = maker.kind === 'batch' ? 'batch' : maker.kind === 'files' ? 'files' : null;
  // A map or flatMap consumes its input elements (a filter hands them on): the tensors a tfjs
  // dataset made for them are disposed once the worker is done, unless an in-memory cache
  // upstream keeps the elements for the next pass.
  const consumesTensors = cfg.mode !== 'filter' && !upstream(input, (n) => n.kind === 'cache');
  return new WorkerMap(input.open(session), input.counters, node.counters, cfg, { kind: node.kind, key: node.key, site: node.site }, owner, session, node, input.cardinality, consumesTensors);
}

/** Whether `node` or an operator it reads from passes `test`. */
function upstream(node: OpNode, test: (n: OpNode) => boolean): boolean {
  const seen = new Set<OpNode>();
  const stack = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    if (test(n)) return true;
    stack.push(...n.inputs);
  }
  return false;
}
