/**
 * map/filter/flatMap with `placement: 'worker'`: the fn runs in a piscina pool of `threads` worker
 * threads, created when a pass starts and destroyed when it ends or is stopped. Small elements
 * travel several to a task (a task costs ~50–190 µs of messaging here), sized from the time the
 * workers report per element; large results come back transferred rather than copied.
 */
import { existsSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { Piscina } from 'piscina';
import type { OpCounters } from '../../tracing';
import { atPath, describeThrown, findUncloneable, PipelineError, type OpRef } from '../../errors';
import type { WorkerResult, WorkerTask } from '../../worker';
import { type Chunks, now, type OpNode, type Session } from '../core';
import type { FnEnv } from '../context';
import { Batch } from './batch';
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
}

/** Worker CPU time a task should carry, so messaging stays a small share of it. */
const TARGET_TASK_SECONDS = 0.002;
const MAX_GROUP = 256;

/** The compiled worker entry next to the bundle; from sources (under tsx), worker.ts itself. */
function workerFile(): string {
  let root = __dirname;
  for (const leaf of ['ops', 'internal', 'dist']) if (root.endsWith(sep + leaf)) root = dirname(root);
  const candidates = [join(__dirname, 'worker.js'), join(root, 'dist', 'worker.js'), join(root, 'worker.ts')];
  for (const c of candidates) if (existsSync(c)) return c;
  return candidates[0];
}

/** Inputs that may be moved rather than copied: buffers of Batches this library stacked. */
function batchBuffers(items: unknown[]): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  const add = (b: unknown): void => {
    if (b instanceof Batch) {
      const buf = b.data.buffer;
      if (buf instanceof ArrayBuffer && b.data.byteOffset === 0 && b.data.byteLength === buf.byteLength) out.add(buf);
    }
  };
  for (const x of items) {
    add(x);
    if (x !== null && typeof x === 'object' && Object.getPrototypeOf(x) === Object.prototype) for (const k in x) add((x as Record<string, unknown>)[k]);
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
  constructor(threads: number) {
    this.pool = new Piscina({
      filename: workerFile(),
      minThreads: threads,
      maxThreads: threads,
      concurrentTasksPerWorker: 1,
      idleTimeout: 60_000,
    });
    // Without a listener, a worker that dies outside a task would crash the process.
    this.pool.on('error', (e: unknown) => {
      this.error = e;
    });
  }
  dispose(): Promise<void> {
    return this.pool.destroy();
  }
}

class WorkerMap implements Chunks<unknown> {
  private entry: PoolEntry | null = null;
  private readonly engine: Engine<unknown, unknown>;
  private group = 1;
  private closing: Promise<void> | null = null;

  constructor(
    up: Chunks<unknown>,
    upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private readonly cfg: WorkerMapConfig,
    private readonly op: OpRef,
    private readonly transferInputs: boolean,
    private readonly session: Session,
    private readonly node: OpNode,
  ) {
    const launcher: Launcher<unknown, unknown> = {
      groupSize: () => this.group,
      fail: (e, base) => (e instanceof PipelineError ? e : this.describe(e, base)),
      launch: (items, base) => this.launch(items, base),
    };
    // Two tasks per thread in flight: a thread never idles while the main thread posts its next task.
    this.engine = new Engine(up, upC, c, launcher, cfg.threads * 2, cfg.deterministic, 'dispatchSeconds');
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
    const busy = this.engine.inFlight > 0;
    await this.engine.close();
    const entry = this.entry;
    this.entry = null;
    if (entry === null) return;
    entry.users--;
    if ((busy || entry.error !== null) && entry.users === 0) await this.session.drop(this.node);
  }

  private getPool(): PoolEntry {
    if (this.entry === null) {
      this.entry = this.session.get(this.node, () => new PoolEntry(this.cfg.threads));
      this.entry.users++;
    }
    return this.entry;
  }

  private launch(items: unknown[], base: number): Promise<unknown[]> {
    if (this.closing !== null) return Promise.resolve([]);
    const entry = this.getPool();
    if (entry.error !== null) throw entry.error;
    const task: WorkerTask = {
      module: this.cfg.module,
      exportName: this.cfg.exportName,
      mode: this.cfg.mode,
      items,
      base,
      seed: this.cfg.seed,
      epoch: this.cfg.epoch,
    };
    const c = this.c;
    const t0 = c === null ? 0 : now();
    const transferList = this.transferInputs && this.cfg.mode !== 'filter' ? batchBuffers(items) : [];
    let p: Promise<WorkerResult>;
    try {
      p = entry.pool.run(task, transferList.length > 0 ? { transferList } : undefined) as Promise<WorkerResult>;
    } catch (e) {
      throw this.sendFailure(e, items, base);
    }
    if (c !== null) c.dispatchSeconds += (now() - t0) / 1000;
    return p.then(
      (r) => this.receive(r, items, base),
      (e: unknown) => {
        throw this.sendFailure(e, items, base);
      },
    );
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

  private receive(r: WorkerResult, items: unknown[], base: number): unknown[] {
    const c = this.c;
    const t0 = c === null ? 0 : now();
    if (c !== null) c.workerCpuSeconds += r.cpuSeconds;
    if (r.random) this.cfg.env.markRandom();
    if (r.loadError !== undefined) {
      throw new PipelineError(
        this.op,
        undefined,
        new Error(r.loadError),
        `the worker module ${this.cfg.module} could not provide '${this.cfg.exportName}': ${r.loadError}. Check that the file exists, loads without errors, and exports the function by that name.`,
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
      if (c !== null) c.calls += r.failed.offset + 1;
      throw new PipelineError(this.op, base + r.failed.offset, cause);
    }
    const out = r.out as unknown[];
    // Size the next tasks from this one's measured cost per element.
    const perElement = r.wallSeconds / Math.max(1, items.length);
    this.group = perElement <= 0 ? Math.min(MAX_GROUP, this.group * 2) : Math.max(1, Math.min(MAX_GROUP, Math.round(TARGET_TASK_SECONDS / perElement)));
    let result: unknown[];
    if (this.cfg.mode === 'filter') result = items.filter((_, i) => out[i]);
    else if (this.cfg.mode === 'flatMap') result = out.flat(1);
    else result = out;
    if (c !== null) {
      c.calls += items.length;
      c.dispatchSeconds += (now() - t0) / 1000;
    }
    return result;
  }

  private describe(e: unknown, base: number): PipelineError {
    return new PipelineError(this.op, base, e, `a worker thread failed: ${describeThrown(e)}`);
  }
}

export function openWorkerMap(node: OpNode, session: Session, cfg: WorkerMapConfig): Chunks<unknown> {
  const input = node.inputs[0];
  // Walk through operators that pass elements along unchanged, to the one that made them.
  let maker: OpNode = input;
  while (['filter', 'take', 'skip', 'prefetch', 'shuffle'].includes(maker.kind) && maker.inputs.length === 1 && !(maker.kind === 'filter' && maker.info?.placement === 'worker')) maker = maker.inputs[0];
  const transferInputs = maker.kind === 'batch';
  return new WorkerMap(input.open(session), input.counters, node.counters, cfg, { kind: node.kind, key: node.key, site: node.site }, transferInputs, session, node);
}
