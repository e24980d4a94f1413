/**
 * map and filter on the main thread. A sync fn runs a whole chunk in one tight loop; the first
 * time the fn returns a thenable (an `async` fn, or a sync fn that returns a promise), the operator
 * switches to the parallel engine, with up to `parallelism` calls in flight.
 */
import { addLatency, type OpCounters } from '../../tracing';
import { asPipelineError, PipelineError, type OpRef } from '../../errors';
import { type Chunks, countProduced, type ElementSampler, type ErrorSink, isThenable, now, Sampler } from '../core';
import { withParent } from '../build';
import type { FnEnv } from '../context';
import { Engine, type Launcher } from './engine';

/** A user function as the library calls it: `fn(x)` or `fn(x, ctx)`. */
export type UserFn = (x: unknown, ctx?: unknown) => unknown;

export interface MainMapOptions {
  filter: boolean;
  /** Calls in flight once the fn proves async. */
  parallelism: number;
  deterministic: boolean;
  /** Traced flatMap: its key, so datasets its fn builds are recorded as nested in it. */
  parent?: string;
  /** The tracer's element sampler for this operator (see `Tracer.sample`). */
  sample?: ElementSampler | null;
  /** Inside ignoreErrors: where a failing element's error goes (the element is dropped). */
  skip?: ErrorSink | null;
}

export class MainMap implements Chunks<unknown> {
  private index = 0;
  private engine: Engine<unknown, unknown> | null = null;
  private closing: Promise<void> | null = null;
  private readonly useCtx: boolean;
  /** filter: survivors beyond the last request, and the selectivity seen so far. */
  private spare: unknown[] | null = null;
  private spos = 0;
  private seenIn = 0;
  private seenOut = 0;
  private readonly s = new Sampler();
  /** Offers input elements to the tracer while it wants them: null when untraced or done. */
  private sample: ElementSampler | null;

  constructor(
    private readonly up: Chunks<unknown>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private readonly fn: UserFn,
    private readonly env: FnEnv,
    private readonly op: OpRef,
    private readonly o: MainMapOptions,
    startAsync: boolean,
  ) {
    // Building a context object per element costs; only do it for fns that declare a second parameter.
    this.useCtx = fn.length !== 1;
    this.sample = o.sample ?? null;
    if (startAsync) this.engine = this.newEngine(0);
  }

  async next(hint: number): Promise<unknown[] | null> {
    if (this.engine !== null) return this.engine.next(hint);
    if (this.o.filter && this.spare !== null) return this.takeSpare(hint);
    const c = this.c;
    const upC = this.upC;
    for (;;) {
      // A filter asks for enough inputs to fill the request at the selectivity seen so far, so a
      // consumer wanting n elements is not answered in ever smaller rounds; survivors beyond the
      // request wait in `spare` for the next call.
      const ask = this.o.filter ? Math.min(4 * hint, Math.ceil(hint / this.selectivity())) : hint;
      const w = c === null ? 0 : this.s.tick();
      const t0 = w === 0 ? 0 : now();
      const chunk = await this.up.next(ask);
      if (chunk === null || this.closing !== null) return null;
      const n = chunk.length;
      const t1 = w === 0 ? 0 : now();
      // Offered before the fn runs: a map fills its chunk in place with results.
      if (this.sample !== null) this.offer(chunk);
      const out = this.o.filter ? this.filterChunk(chunk) : this.o.parent !== undefined ? withParent(this.o.parent, () => this.mapChunk(chunk)) : this.mapChunk(chunk);
      if (c !== null) {
        c.pulled += n;
        if (w !== 0) {
          const t2 = now();
          c.selfSeconds += ((t2 - t1) * w) / 1000;
          // The wait is bounded by the wall time its chunks span (see Sampler.credit), which adapts the stride to the wait and the work.
          const waited = this.s.credit(t1 - t0, w, t1);
          if (upC !== null) upC.waitSeconds += waited / 1000;
          this.s.adapt(t2 - t0);
        }
      }
      if (out === null) return (this.engine as unknown as Engine<unknown, unknown>).next(hint);
      if (this.o.filter) {
        this.seenIn += n;
        this.seenOut += out.length;
        if (out.length > hint) {
          this.spare = out;
          return this.takeSpare(hint);
        }
      }
      if (out.length > 0) {
        if (c !== null) countProduced(c, out);
        return out;
      }
    }
  }

  /** Offers the chunk's elements the tracer asks for, before the fn sees them. */
  private offer(chunk: unknown[]): void {
    const s = this.sample as ElementSampler;
    s.chunk(chunk, this.index);
    if (!s.wanted) this.sample = null;
  }

  private selectivity(): number {
    // Optimistic until measured; never assume fewer than 1 in 4 survive, which bounds the read-ahead.
    return this.seenIn < 16 ? 1 : Math.max(0.25, this.seenOut / this.seenIn);
  }

  private takeSpare(hint: number): unknown[] {
    const spare = this.spare as unknown[];
    const out = spare.slice(this.spos, this.spos + hint);
    this.spos += out.length;
    if (this.spos >= spare.length) {
      this.spare = null;
      this.spos = 0;
    }
    if (this.c !== null) countProduced(this.c, out);
    return out;
  }

  return(): Promise<void> {
    if (this.closing === null) {
      this.spare = null;
      this.env.abort();
      this.closing = this.engine !== null ? this.engine.close() : this.up.return();
    }
    return this.closing;
  }

  /** Maps in place (the chunk is ours). Returns null after switching to the engine. */
  private mapChunk(chunk: unknown[]): unknown[] | null {
    const fn = this.fn;
    const base = this.index;
    const n = chunk.length;
    this.index = base + n;
    if (this.c !== null) this.c.calls += n;
    let w = 0;
    for (let i = 0; i < n; i++) {
      let r: unknown;
      try {
        r = this.useCtx ? fn(chunk[i], this.env.ctx(base + i)) : fn(chunk[i]);
      } catch (e) {
        this.failed(e, base + i);
        continue;
      }
      if (r !== null && (typeof r === 'object' || typeof r === 'function') && typeof (r as PromiseLike<unknown>).then === 'function') {
        this.switchToEngine(chunk.slice(0, w), r as PromiseLike<unknown>, chunk[i], base + i, chunk.slice(i + 1));
        return null;
      }
      chunk[w++] = r;
    }
    chunk.length = w;
    return chunk;
  }

  /** Keeps survivors in place. Returns null after switching to the engine. */
  private filterChunk(chunk: unknown[]): unknown[] | null {
    const fn = this.fn;
    const base = this.index;
    const n = chunk.length;
    this.index = base + n;
    if (this.c !== null) this.c.calls += n;
    let w = 0;
    for (let i = 0; i < n; i++) {
      const x = chunk[i];
      let r: unknown;
      try {
        r = this.useCtx ? fn(x, this.env.ctx(base + i)) : fn(x);
      } catch (e) {
        this.failed(e, base + i);
        continue;
      }
      if (r !== null && (typeof r === 'object' || typeof r === 'function') && typeof (r as PromiseLike<unknown>).then === 'function') {
        this.switchToEngine(chunk.slice(0, w), r as PromiseLike<unknown>, x, base + i, chunk.slice(i + 1));
        return null;
      }
      if (r) chunk[w++] = x;
    }
    chunk.length = w;
    return chunk;
  }

  /** A sync call threw: inside ignoreErrors the element is dropped, else the pass fails. */
  private failed(e: unknown, index: number): void {
    const err = new PipelineError(this.op, index, e);
    if (this.o.skip) {
      this.o.skip(err);
      return;
    }
    void this.return();
    throw err;
  }

  private switchToEngine(done: unknown[], pending: PromiseLike<unknown>, x: unknown, index: number, rest: unknown[]): void {
    const e = this.newEngine(index + 1 + rest.length);
    if (done.length > 0) e.pushDone(done);
    e.pushRunning(this.settle(pending, x, index));
    e.pushBacklog(rest, index + 1);
    this.engine = e;
  }

  private newEngine(firstIndex: number): Engine<unknown, unknown> {
    const launcher: Launcher<unknown, unknown> = {
      groupSize: () => 1,
      fail: (e, base) => asPipelineError(this.op, base, e),
      launch: (items, base) => {
        const x = items[0];
        if (this.c !== null) this.c.calls++;
        // An async fn's elements are offered here, one per call, as a sync fn's are per chunk.
        if (this.sample !== null) {
          this.sample.one(x, base);
          if (!this.sample.wanted) this.sample = null;
        }
        const parent = this.o.parent;
        let r: unknown;
        try {
          // Untraced (no parent to record), no closure is made per call.
          r = parent !== undefined ? withParent(parent, () => (this.useCtx ? this.fn(x, this.env.ctx(base)) : this.fn(x))) : this.useCtx ? this.fn(x, this.env.ctx(base)) : this.fn(x);
        } catch (e) {
          if (!this.o.skip) throw e;
          this.o.skip(new PipelineError(this.op, base, e));
          return [];
        }
        if (isThenable(r)) return this.settle(r, x, base);
        return this.o.filter ? (r ? [x] : []) : [r];
      },
    };
    const e = new Engine<unknown, unknown>(this.up, this.upC, this.c, launcher, this.o.parallelism, this.o.deterministic, 'selfSeconds', firstIndex);
    return e;
  }

  /** Turns one call's promise into the group's output, counting its latency. */
  private settle(p: PromiseLike<unknown>, x: unknown, index: number): Promise<unknown[]> {
    const c = this.c;
    const t0 = c === null ? 0 : now();
    if (c !== null) c.asyncCalls++;
    const filter = this.o.filter;
    return Promise.resolve(p).then(
      (v) => {
        if (c !== null) {
          const took = (now() - t0) / 1000;
          c.asyncLatencySeconds += took;
          c.latencyHistogram = addLatency(c.latencyHistogram, took);
        }
        return filter ? (v ? [x] : []) : [v];
      },
      (e: unknown) => {
        const err = new PipelineError(this.op, index, e);
        if (!this.o.skip) throw err;
        this.o.skip(err);
        return [];
      },
    );
  }
}
