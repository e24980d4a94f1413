/**
 * Consumption through `for await` and `Dataset.iterator()`: asks the last operator for one element
 * at a time. Calls made before the previous one settled (a trainer fetching ahead) are queued, so
 * the operators never see two pulls at once.
 */
import { type Chunks, type OpNode, pull, Sampler, Session, turnPending } from './core';
import { TRACER_KEY, type Tracer } from '../tracing';
import { prestartWorkerPools } from './ops/worker-map';

export class DatasetIterator<T> implements AsyncIterableIterator<T> {
  private it: Chunks<T> | null = null;
  private buf: T[] = [];
  private pos = 0;
  private done = false;
  private readonly s = new Sampler();
  private readonly session: Session;
  /** The session is this pass's alone, ended with it; a shared one (`toTfDataset`'s) outlives it. */
  private readonly ownSession: boolean;
  /** Calls running or queued; the last of them, to queue behind. */
  private busy = 0;
  private last: Promise<unknown> = Promise.resolve();

  /** The tracer watching the consumer (`Tracer.consumer`), looked up once per iterator. */
  private readonly watcher: Tracer | undefined;

  constructor(
    private readonly node: OpNode<T>,
    session?: Session,
  ) {
    this.session = session ?? new Session();
    this.ownSession = session === undefined;
    const t = (globalThis as { [TRACER_KEY]?: Tracer })[TRACER_KEY];
    this.watcher = typeof t?.consumer === 'function' ? t : undefined;
    // Worker threads start now, while the consumer is still getting ready, not at the first pull.
    prestartWorkerPools(node, this.session);
  }

  next(): Promise<IteratorResult<T>> {
    const w = this.watcher;
    const held = w?.consumer?.({ key: this.node.key, type: 'next' });
    this.busy++;
    let p = this.busy === 1 && !held ? this.step() : (held ? Promise.all([this.last, held]) : this.last).then(this.stepFn, this.stepFn);
    if (w !== undefined) p = this.told(w, p);
    this.last = p;
    return p;
  }

  /** Tells the watcher when the pull hands the consumer an element or ends. */
  private told(w: Tracer, p: Promise<IteratorResult<T>>): Promise<IteratorResult<T>> {
    const key = this.node.key;
    return p.then(
      (r) => {
        w.consumer?.({ key, type: r.done ? 'end' : 'element' });
        return r;
      },
      (e: unknown) => {
        w.consumer?.({ key, type: 'end' });
        throw e;
      },
    );
  }

  return(): Promise<IteratorResult<T>> {
    // Stopping does not wait for queued pulls: it cancels them.
    this.done = true;
    this.buf = [];
    const it = this.it;
    return (it === null ? Promise.resolve() : it.return()).then(() => this.endSession()).then(() => ({ value: undefined, done: true }));
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  private endSession(): Promise<void> {
    return this.ownSession ? this.session.dispose() : Promise.resolve();
  }

  private readonly stepFn = (): Promise<IteratorResult<T>> => this.step();

  private async step(): Promise<IteratorResult<T>> {
    try {
      if (this.pos < this.buf.length) {
        const value = this.buf[this.pos++] as T;
        const turn = turnPending();
        if (turn !== null) await turn;
        return { value, done: false };
      }
      if (this.done) return { value: undefined, done: true };
      const it = (this.it ??= this.node.open(this.session));
      let chunk: T[] | null;
      try {
        // The consumer's wait on the last operator counts as that operator's waitSeconds.
        chunk = await pull(it, 1, this.node.counters, this.s);
      } catch (e) {
        this.done = true;
        await it.return();
        await this.endSession();
        throw e;
      }
      if (chunk === null || this.done) {
        this.done = true;
        await it.return();
        await this.endSession();
        return { value: undefined, done: true };
      }
      if (chunk.length > 1) {
        this.buf = chunk;
        this.pos = 1;
      }
      // An element is handed once the turn of the event loop its pipeline's pulls wait for, if any,
      // has come (see turnPending): before the consumer's own work, which may hold the thread.
      const turn = turnPending();
      if (turn !== null) await turn;
      return { value: chunk[0] as T, done: false };
    } finally {
      this.busy--;
    }
  }
}
