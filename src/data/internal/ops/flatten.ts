/** The second half of flatMap: expands each fn result (array, iterable, async iterable, Dataset) in order. */
import type { OpCounters } from '../../tracing';
import { PipelineError, type OpRef } from '../../errors';
import { type Chunks, type OpNode, pull, Sampler, type Session } from '../core';

class AsyncIteratorChunks implements Chunks<unknown> {
  constructor(private readonly it: AsyncIterator<unknown>) {}
  async next(): Promise<unknown[] | null> {
    const r = await this.it.next();
    return r.done ? null : [r.value];
  }
  async return(): Promise<void> {
    await this.it.return?.();
  }
}

export class Flatten implements Chunks<unknown> {
  private results: unknown[] = [];
  private rpos = 0;
  private pending: unknown[] = [];
  private pos = 0;
  private sub: Chunks<unknown> | null = null;
  /**
   * The counters of the last operator of the Dataset `sub` expands (traced), which get the time
   * spent waiting on it, as a consumer's wait on its input counts: a source read record by record
   * inside the fn's datasets shows its latency there.
   */
  private subC: OpCounters | null = null;
  private readonly s = new Sampler();
  private closed = false;
  constructor(
    private readonly inner: Chunks<unknown>,
    private readonly c: OpCounters | null,
    private readonly op: OpRef,
    private readonly session: Session,
  ) {}

  async next(hint: number): Promise<unknown[] | null> {
    const out = await this.step(hint);
    // The map stage counted fn results (and their bytes, which are these elements' bytes); count elements instead.
    if (out !== null && this.c !== null) this.c.produced += out.length;
    return out;
  }

  private async step(hint: number): Promise<unknown[] | null> {
    for (;;) {
      if (this.closed) return null;
      if (this.pos < this.pending.length) {
        const out = this.pos === 0 && this.pending.length <= hint ? this.pending : this.pending.slice(this.pos, this.pos + hint);
        this.pos += out.length;
        if (this.pos >= this.pending.length) {
          this.pending = [];
          this.pos = 0;
        }
        return out;
      }
      if (this.sub !== null) {
        const r = await pull(this.sub, hint, this.subC, this.s);
        if (r !== null) return r;
        this.sub = null;
        this.subC = null;
        continue;
      }
      if (this.rpos >= this.results.length) {
        const chunk = await this.inner.next(hint);
        if (chunk === null) return null;
        if (this.c !== null) this.c.produced -= chunk.length;
        this.results = chunk;
        this.rpos = 0;
      }
      this.expand(this.results[this.rpos++]);
    }
  }

  private expand(r: unknown): void {
    if (Array.isArray(r)) {
      this.pending = r;
      this.pos = 0;
      return;
    }
    if (r !== null && typeof r === 'object') {
      const node = (r as { node?: OpNode }).node;
      if (node !== undefined && typeof node.open === 'function') {
        this.sub = node.open(this.session);
        this.subC = node.counters;
        return;
      }
      const o = r as Partial<Iterable<unknown> & AsyncIterable<unknown>>;
      if (typeof o[Symbol.iterator] === 'function') {
        this.pending = Array.from(o as Iterable<unknown>);
        this.pos = 0;
        return;
      }
      if (typeof o[Symbol.asyncIterator] === 'function') {
        this.sub = new AsyncIteratorChunks((o as AsyncIterable<unknown>)[Symbol.asyncIterator]());
        return;
      }
    }
    const err = new PipelineError(this.op, undefined, new TypeError(`flatMap's fn must return an array, an iterable, an async iterable or a Dataset, not ${r === null ? 'null' : typeof r}.`));
    // Inside ignoreErrors the result is dropped like an element whose fn threw.
    if (this.session.skip !== null) {
      this.session.skip(err);
      return;
    }
    void this.return();
    throw err;
  }

  async return(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const sub = this.sub;
    this.sub = null;
    await Promise.all([sub?.return(), this.inner.return()]);
  }
}
