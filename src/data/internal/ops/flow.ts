/** Operators that route elements without transforming them: take, skip, repeat, concatenate, zip, prefetch. */
import type { OpCounters } from '../../tracing';
import { type Chunks, countProduced, type OpNode, pull, Sampler, type Session, Wakeup } from '../core';

/** Shared bookkeeping: idempotent close that also stops the input. */
export abstract class Op<T> implements Chunks<T> {
  protected closing: Promise<void> | null = null;
  abstract next(hint: number): Promise<T[] | null>;
  protected abstract stop(): Promise<void>;
  return(): Promise<void> {
    if (this.closing === null) this.closing = this.stop();
    return this.closing;
  }
}

class Take<T> extends Op<T> {
  private readonly s = new Sampler();
  constructor(
    private readonly up: Chunks<T>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private remaining: number,
  ) {
    super();
  }
  async next(hint: number): Promise<T[] | null> {
    if (this.remaining <= 0 || this.closing !== null) {
      await this.return();
      return null;
    }
    const chunk = await pull(this.up, Math.min(hint, this.remaining), this.upC, this.s);
    if (chunk === null) return null;
    this.remaining -= chunk.length;
    if (this.c !== null) {
      this.c.pulled += chunk.length;
      countProduced(this.c, chunk);
    }
    // The last element is out: stop upstream work (workers, reads) now, not when the consumer returns.
    if (this.remaining <= 0) void this.return();
    return chunk;
  }
  protected stop(): Promise<void> {
    return this.up.return();
  }
}

class Skip<T> extends Op<T> {
  private readonly s = new Sampler();
  constructor(
    private readonly up: Chunks<T>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private toSkip: number,
  ) {
    super();
  }
  async next(hint: number): Promise<T[] | null> {
    while (this.toSkip > 0) {
      const dropped = await pull(this.up, Math.min(this.toSkip, 1024), this.upC, this.s);
      if (dropped === null) return null;
      this.toSkip -= dropped.length;
      if (this.c !== null) this.c.pulled += dropped.length;
    }
    const chunk = await pull(this.up, hint, this.upC, this.s);
    if (chunk !== null && this.c !== null) {
      this.c.pulled += chunk.length;
      countProduced(this.c, chunk);
    }
    return chunk;
  }
  protected stop(): Promise<void> {
    return this.up.return();
  }
}

/** Opens `inputs` one after another (concatenate), or one input `times` times (repeat). */
class Sequence<T> extends Op<T> {
  private readonly s = new Sampler();
  private cur: Chunks<T> | null = null;
  private curC: OpCounters | null = null;
  private pass = 0;
  private gotThisPass = 0;
  constructor(
    private readonly nodes: readonly OpNode<T>[],
    private readonly c: OpCounters | null,
    private readonly times: number,
    private readonly session: Session,
  ) {
    super();
  }
  async next(hint: number): Promise<T[] | null> {
    for (;;) {
      if (this.closing !== null) return null;
      if (this.cur === null) {
        const repeat = this.nodes.length === 1;
        if (repeat ? this.pass >= this.times : this.pass >= this.nodes.length) return null;
        const node = repeat ? this.nodes[0] : this.nodes[this.pass];
        this.cur = node.open(this.session);
        this.curC = node.counters;
        this.gotThisPass = 0;
      }
      const chunk = await pull(this.cur, hint, this.curC, this.s);
      if (chunk !== null) {
        this.gotThisPass += chunk.length;
        if (this.c !== null) {
          this.c.pulled += chunk.length;
          countProduced(this.c, chunk);
        }
        return chunk;
      }
      // An empty pass of a repeat would spin forever: stop instead.
      if (this.nodes.length === 1 && this.gotThisPass === 0) return null;
      // A repeat tells how many elements a pass of its input held, counted here from the pass's
      // start: tools learn the size of a dataset no operator could count in advance (lines).
      if (this.nodes.length === 1 && this.c !== null) this.c.passElements = this.gotThisPass;
      this.cur = null;
      this.pass++;
    }
  }
  protected async stop(): Promise<void> {
    const cur = this.cur;
    this.cur = null;
    if (cur !== null) await cur.return();
  }
}

class Zip extends Op<unknown[]> {
  private its: Chunks<unknown>[] | null = null;
  private readonly bufs: unknown[][];
  private readonly samplers: Sampler[];
  private ended = false;
  constructor(
    private readonly nodes: readonly OpNode[],
    private readonly c: OpCounters | null,
    private readonly session: Session,
  ) {
    super();
    this.bufs = nodes.map(() => []);
    this.samplers = nodes.map(() => new Sampler());
  }
  async next(hint: number): Promise<unknown[][] | null> {
    if (this.ended || this.closing !== null) return null;
    const its = (this.its ??= this.nodes.map((n) => n.open(this.session)));
    const chunks = await Promise.all(its.map((it, i) => (this.bufs[i].length >= hint ? null : pull(it, hint - this.bufs[i].length, this.nodes[i].counters, this.samplers[i]))));
    let n = hint;
    for (let i = 0; i < its.length; i++) {
      const ch = chunks[i];
      if (ch !== null) for (const x of ch) this.bufs[i].push(x);
      if (ch === null && this.bufs[i].length < hint) n = Math.min(n, this.bufs[i].length);
      if (this.c !== null && ch !== null) this.c.pulled += ch.length;
    }
    for (const b of this.bufs) n = Math.min(n, b.length);
    if (n === 0) {
      this.ended = true;
      await this.return();
      return null;
    }
    const out: unknown[][] = new Array(n);
    for (let k = 0; k < n; k++) out[k] = new Array(its.length);
    for (let i = 0; i < its.length; i++) {
      const b = this.bufs[i];
      for (let k = 0; k < n; k++) out[k][i] = b[k];
      this.bufs[i] = b.slice(n);
    }
    if (this.c !== null) countProduced(this.c, out);
    return out;
  }
  protected async stop(): Promise<void> {
    if (this.its !== null) await Promise.all(this.its.map((it) => it.return()));
  }
}

/**
 * Keeps up to `size` elements ready: a background loop pulls from the input while the consumer
 * works, one upstream `next()` at a time. Errors are delivered after the elements before them.
 */
class Prefetch<T> extends Op<T> {
  private readonly s = new Sampler();
  private readonly queue: T[][] = [];
  private offset = 0;
  private buffered = 0;
  private upDone = false;
  private upError: { e: unknown } | null = null;
  private pumping = false;
  private readonly wake = new Wakeup();
  constructor(
    private readonly up: Chunks<T>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private readonly size: number,
  ) {
    super();
  }
  async next(hint: number): Promise<T[] | null> {
    if (this.size <= 0) return pull(this.up, hint, this.upC, this.s);
    for (;;) {
      if (this.closing !== null) return null;
      if (this.buffered > 0) break;
      if (this.upError !== null) throw this.upError.e;
      if (this.upDone) return null;
      this.kick();
      await this.wake.wait();
    }
    const out = this.take(hint);
    this.kick();
    if (this.c !== null) countProduced(this.c, out);
    return out;
  }
  private take(hint: number): T[] {
    const first = this.queue[0];
    if (this.offset === 0 && first.length <= hint) {
      this.queue.shift();
      this.buffered -= first.length;
      return first;
    }
    const out: T[] = [];
    while (out.length < hint && this.queue.length > 0) {
      const q = this.queue[0];
      const n = Math.min(hint - out.length, q.length - this.offset);
      for (let i = 0; i < n; i++) out.push(q[this.offset + i]);
      this.offset += n;
      if (this.offset === q.length) {
        this.queue.shift();
        this.offset = 0;
      }
    }
    this.buffered -= out.length;
    return out;
  }
  private kick(): void {
    if (!this.pumping && !this.upDone && this.closing === null && this.buffered < this.size) void this.pump();
  }
  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.closing === null && !this.upDone && this.buffered < this.size) {
        const chunk = await pull(this.up, this.size - this.buffered, this.upC, this.s);
        if (this.closing !== null) break;
        if (chunk === null) this.upDone = true;
        else {
          this.queue.push(chunk);
          this.buffered += chunk.length;
          if (this.c !== null) {
            this.c.pulled += chunk.length;
            if (this.buffered > this.c.bufferHighWater) this.c.bufferHighWater = this.buffered;
          }
        }
        this.wake.notify();
      }
    } catch (e) {
      this.upDone = true;
      this.upError = { e };
      this.wake.notify();
    } finally {
      this.pumping = false;
    }
  }
  protected async stop(): Promise<void> {
    this.queue.length = 0;
    this.buffered = 0;
    this.wake.notify();
    await this.up.return();
  }
}

export function openTake<T>(node: OpNode<T>, session: Session, n: number): Chunks<T> {
  const input = node.inputs[0] as OpNode<T>;
  return new Take(input.open(session), input.counters, node.counters, n);
}
export function openSkip<T>(node: OpNode<T>, session: Session, n: number): Chunks<T> {
  const input = node.inputs[0] as OpNode<T>;
  return new Skip(input.open(session), input.counters, node.counters, n);
}
export function openRepeat<T>(node: OpNode<T>, session: Session, times: number): Chunks<T> {
  return new Sequence(node.inputs as OpNode<T>[], node.counters, times, session);
}
export function openConcatenate<T>(node: OpNode<T>, session: Session): Chunks<T> {
  return new Sequence(node.inputs as OpNode<T>[], node.counters, 1, session);
}
export function openZip(node: OpNode<unknown[]>, session: Session): Chunks<unknown[]> {
  return new Zip(node.inputs, node.counters, session);
}
export function openPrefetch<T>(node: OpNode<T>, session: Session, size: number): Chunks<T> {
  const input = node.inputs[0] as OpNode<T>;
  return new Prefetch(input.open(session), input.counters, node.counters, size);
}
