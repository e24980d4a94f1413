/**
 * window and the grouping operators (groupByWindow; bucketBySequenceLength reuses its grouping).
 * A window or group is materialised: it holds at most `size` (or `windowSize`) elements.
 */
import type { OpCounters } from '../../tracing';
import { PipelineError, type OpRef } from '../../errors';
import { type Chunks, countProduced, type ErrorSink, type OpNode, pull, Sampler, SelfClock, type Session } from '../core';
import { withParent } from '../build';
import { Op } from './flow';
import { chunksOf } from './sources';
import { refOf } from './select';

export interface WindowSpec {
  size: number;
  shift: number;
  stride: number;
  dropRemainder: boolean;
}

/** Windows k = 0, 1, …: input elements k·shift + j·stride for j < size, each handed out through `wrap`. */
class Window<T> extends Op<unknown> {
  private readonly s = new Sampler();
  /** Input elements [pulled - buf.length, pulled) that a later window may still need. */
  private buf: T[] = [];
  private pulled = 0;
  /** Input position of the next window's first element. */
  private start = 0;
  private upDone = false;
  /** Input positions one window spans. */
  private readonly span: number;
  constructor(
    private readonly up: Chunks<T>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private readonly w: WindowSpec,
    private readonly wrap: (xs: T[]) => unknown,
  ) {
    super();
    this.span = (w.size - 1) * w.stride + 1;
  }
  async next(hint: number): Promise<unknown[] | null> {
    const out: unknown[] = [];
    while (out.length < hint && this.closing === null) {
      const end = this.start + this.span;
      if (!this.upDone && this.pulled < end) {
        // Return the windows that are ready rather than wait for the next one's inputs.
        if (out.length > 0) break;
        const chunk = await pull(this.up, Math.min(end - this.pulled, 4096), this.upC, this.s);
        if (chunk === null) this.upDone = true;
        else this.append(chunk);
        continue;
      }
      const first = this.pulled - this.buf.length;
      if (this.start >= this.pulled) break; // the input ended before this window's first element
      const xs: T[] = [];
      for (let p = this.start; p < end && p < this.pulled; p += this.w.stride) xs.push(this.buf[p - first]);
      // Later windows start later and cannot be longer: a short one ends the pass.
      if (xs.length < this.w.size && this.w.dropRemainder) break;
      out.push(this.wrap(xs));
      this.start += this.w.shift;
      const drop = Math.min(this.buf.length, this.start - first);
      if (drop > 0) this.buf.splice(0, drop);
    }
    if (out.length === 0) return null;
    if (this.c !== null) {
      this.c.produced += out.length;
      this.c.bytesProduced += out.length * 8 * this.w.size;
    }
    return out;
  }
  /** Keeps the chunk's elements a window may still need (a shift beyond the span skips some). */
  private append(chunk: T[]): void {
    if (this.c !== null) this.c.pulled += chunk.length;
    const base = this.pulled;
    this.pulled += chunk.length;
    const from = Math.max(0, this.start - base);
    if (this.buf.length === 0 && from === 0) this.buf = chunk;
    else for (let i = from; i < chunk.length; i++) this.buf.push(chunk[i]);
  }
  protected stop(): Promise<void> {
    this.buf = [];
    return this.up.return();
  }
}

/** How a grouping operator keys, sizes and reduces its groups. */
export interface GroupRule<T, K, U> {
  /** The group of an element; may throw (the element then fails, or is skipped inside ignoreErrors). */
  key(x: T): K;
  /** The elements a group holds before it is reduced. */
  size(key: K): number;
  /** The outputs of a full group, or of a partial one at the end of the input (`full` false). */
  reduce(key: K, xs: T[], full: boolean): readonly U[] | Chunks<U>;
}

/**
 * Groups elements by key; a group that reaches its size is reduced at once and its outputs handed
 * out before more input is read. At the end the partial groups are reduced in ascending key order
 * (numbers; other keys in the order first seen), as tf.data flushes its groups.
 */
class Grouping<T, K, U> extends Op<U> {
  private readonly s = new Sampler();
  private readonly groups = new Map<K, T[]>();
  /** The group the previous element went to (undefined once it was reduced). */
  private lastKey: K | undefined = undefined;
  private lastGroup: T[] | undefined = undefined;
  /** The key fn's and the reduction's time: the operator's own work. */
  private readonly clock: SelfClock;
  private inBuf: T[] = [];
  private inPos = 0;
  private index = 0;
  private upDone = false;
  private flush: K[] | null = null;
  private sub: Chunks<U> | null = null;
  private ready: U[] = [];
  /** An error met while outputs made before it were still in `ready`: thrown once they are out. */
  private failed: PipelineError | null = null;
  private rpos = 0;
  constructor(
    private readonly up: Chunks<T>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private readonly rule: GroupRule<T, K, U>,
    private readonly op: OpRef,
    private readonly skip: ErrorSink | null,
  ) {
    super();
    this.clock = new SelfClock(c);
  }
  async next(hint: number): Promise<U[] | null> {
    const out = await this.step(hint);
    if (out !== null && this.c !== null) countProduced(this.c, out);
    return out;
  }
  private async step(hint: number): Promise<U[] | null> {
    for (;;) {
      if (this.closing !== null) return null;
      if (this.rpos < this.ready.length) {
        // `ready` is this operator's own array: handed out whole when it fits, else in slices.
        const whole = this.rpos === 0 && this.ready.length <= hint;
        const out = whole ? this.ready : this.ready.slice(this.rpos, this.rpos + hint);
        this.rpos += out.length;
        if (whole) {
          this.ready = [];
          this.rpos = 0;
        }
        return out;
      }
      if (this.failed !== null) {
        const err = this.failed;
        this.failed = null;
        void this.return();
        throw err;
      }
      if (this.sub !== null) {
        const r = await this.sub.next(hint);
        if (r !== null) return r;
        this.sub = null;
        continue;
      }
      if (this.inPos < this.inBuf.length) {
        this.clock.start();
        try {
          this.group();
        } finally {
          this.clock.stop();
        }
        continue;
      }
      if (!this.upDone) {
        const chunk = await pull(this.up, hint, this.upC, this.s);
        if (chunk === null) this.upDone = true;
        else {
          if (this.c !== null) this.c.pulled += chunk.length;
          this.inBuf = chunk;
          this.inPos = 0;
        }
        continue;
      }
      if (this.flush === null) {
        const keys = [...this.groups.keys()];
        if (keys.every((k) => typeof k === 'number')) (keys as number[]).sort((a, b) => a - b);
        this.flush = keys;
      }
      const key = this.flush.shift();
      if (key === undefined) return null;
      const xs = this.groups.get(key) as T[];
      this.groups.delete(key);
      try {
        this.emit(key, xs, false);
      } catch (e) {
        this.fail(e as PipelineError);
      }
    }
  }
  /** Files buffered inputs into their groups until one fills (and is reduced) or the buffer is empty. */
  private group(): void {
    while (this.inPos < this.inBuf.length) {
      const x = this.inBuf[this.inPos++];
      const index = this.index++;
      let key: K;
      let size: number;
      try {
        key = this.rule.key(x);
        size = this.rule.size(key);
      } catch (e) {
        const err = e instanceof PipelineError ? e : new PipelineError(this.op, index, e);
        if (this.skip !== null) {
          this.skip(err);
          continue;
        }
        return this.fail(err);
      }
      // Neighbours often share a group (a run of similar lengths): the last group is at hand.
      let g = key === this.lastKey ? this.lastGroup : this.groups.get(key);
      if (g === undefined) {
        g = [];
        this.groups.set(key, g);
      }
      this.lastKey = key;
      this.lastGroup = g;
      g.push(x);
      if (g.length >= size) {
        this.groups.delete(key);
        this.lastGroup = undefined;
        try {
          this.emit(key, g, true);
        } catch (e) {
          return this.fail(e as PipelineError);
        }
        // Outputs given as arrays gather in `ready` while the buffered input lasts (one step hands
        // out several batches); a reduction that gives a dataset is drained before more input.
        if (this.sub !== null) return;
      }
    }
    this.inBuf = [];
    this.inPos = 0;
  }
  /**
   * Ends the operator with `err` — after the outputs already reduced are handed out, as they would
   * have been had each been handed out as soon as it was made.
   */
  private fail(err: PipelineError): void {
    this.inBuf = [];
    this.inPos = 0;
    if (this.rpos < this.ready.length) {
      this.failed = err;
      return;
    }
    void this.return();
    throw err;
  }
  /** Reduces a group into `ready` or `sub`; throws a PipelineError when the reduction fails. */
  private emit(key: K, xs: T[], full: boolean): void {
    let r: readonly U[] | Chunks<U>;
    try {
      if (this.c !== null) this.c.calls++;
      r = this.rule.reduce(key, xs, full);
    } catch (e) {
      throw e instanceof PipelineError ? e : new PipelineError(this.op, undefined, e);
    }
    if (Array.isArray(r)) {
      if (this.rpos >= this.ready.length) {
        this.ready = [];
        this.rpos = 0;
      }
      for (let i = 0; i < r.length; i++) this.ready.push((r as readonly U[])[i]);
    } else this.sub = r as Chunks<U>;
  }
  protected async stop(): Promise<void> {
    const sub = this.sub;
    this.sub = null;
    this.groups.clear();
    this.inBuf = [];
    await Promise.all([sub?.return(), this.up.return()]);
  }
}

export function openWindow<T>(node: OpNode, session: Session, w: WindowSpec, wrap: (xs: T[]) => unknown): Chunks<unknown> {
  const input = node.inputs[0] as OpNode<T>;
  return new Window(input.open(session), input.counters, node.counters, w, wrap);
}

export function openGrouping<T, K, U>(node: OpNode<U>, session: Session, rule: GroupRule<T, K, U>): Chunks<U> {
  const input = node.inputs[0] as OpNode<T>;
  return new Grouping(input.open(session), input.counters, node.counters, rule, refOf(node), session.skip);
}

/** groupByWindow's rule: reduceFn(key, window) is a dataset (or array, iterable) whose elements are the outputs. */
export function windowRule<T, K, U>(node: OpNode<U>, session: Session, keyFn: (x: T) => K, reduceFn: (key: K, ds: unknown) => unknown, windowSize: number, wrap: (xs: T[]) => unknown): GroupRule<T, K, U> {
  const op = refOf(node);
  return {
    key: (x) => {
      const k = keyFn(x);
      if (typeof k !== 'number' && typeof k !== 'string') throw new TypeError(`groupByWindow's keyFn must return a number or a string, not ${k === null ? 'null' : typeof k}.`);
      return k;
    },
    size: () => windowSize,
    reduce: (key, xs) => {
      // Traced: operators the reduceFn builds are recorded as nested in this one.
      const r = node.info !== null ? withParent(node.key, () => reduceFn(key, wrap(xs))) : reduceFn(key, wrap(xs));
      return chunksOf<U>(r, null, op, session);
    },
  };
}
