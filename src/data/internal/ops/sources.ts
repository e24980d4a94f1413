/** Sources that need no I/O: arrays, iterables, async iterables, generator functions, ranges. */
import type { OpCounters } from '../../tracing';
import { PipelineError, type OpRef } from '../../errors';
import { type Chunks, countProduced, noteSlowPull, now, type OpNode, type Session, SLOW_PULL_MS, SOURCE_CHUNK_MAX, turnIfDue } from '../core';

/** What `from()` accepts. */
export type Source<T> = readonly T[] | Iterable<T> | AsyncIterable<T> | (() => readonly T[] | Iterable<T> | AsyncIterable<T>);

class ArrayChunks<T> implements Chunks<T> {
  private pos = 0;
  constructor(
    private readonly a: readonly T[],
    private readonly c: OpCounters | null,
  ) {}
  async next(hint: number): Promise<T[] | null> {
    const turn = turnIfDue();
    if (turn) await turn;
    const start = this.pos;
    if (start >= this.a.length) return null;
    const end = Math.min(this.a.length, start + Math.min(hint, SOURCE_CHUNK_MAX));
    this.pos = end;
    // A slice: chunks belong to the receiver, and the user's array must not be mutated.
    const out = this.a.slice(start, end);
    if (this.c !== null) countProduced(this.c, out);
    return out;
  }
  async return(): Promise<void> {
    this.pos = this.a.length;
  }
}

class IterableChunks<T> implements Chunks<T> {
  private done = false;
  /** An error the iterator threw after elements of the same chunk: delivered on the next call. */
  private failed: PipelineError | null = null;
  constructor(
    private readonly it: Iterator<T>,
    private readonly c: OpCounters | null,
    private readonly op: OpRef,
  ) {}
  async next(hint: number): Promise<T[] | null> {
    if (this.failed !== null) {
      const e = this.failed;
      this.failed = null;
      throw e;
    }
    if (this.done) return null;
    const turn = turnIfDue();
    if (turn) await turn;
    const c = this.c;
    const t0 = c === null ? 0 : now();
    const out: T[] = [];
    const n = Math.min(hint, SOURCE_CHUNK_MAX);
    try {
      while (out.length < n) {
        const r = this.it.next();
        if (r.done) {
          this.done = true;
          break;
        }
        out.push(r.value);
      }
    } catch (e) {
      this.done = true;
      // The elements before the failure are delivered first, as a source yielding one at a time would.
      if (out.length === 0) throw new PipelineError(this.op, undefined, e);
      this.failed = new PipelineError(this.op, undefined, e);
    }
    if (c !== null) {
      c.selfSeconds += (now() - t0) / 1000;
      countProduced(c, out);
    }
    return out.length > 0 ? out : null;
  }
  async return(): Promise<void> {
    this.failed = null;
    if (this.done) return;
    this.done = true;
    this.it.return?.();
  }
}

/**
 * Async iterables yield one element per call: each element already costs a promise, and asking an
 * async source for a whole chunk would hold back elements that are ready.
 */
class AsyncIterableChunks<T> implements Chunks<T> {
  private done = false;
  constructor(
    private readonly it: AsyncIterator<T>,
    private readonly c: OpCounters | null,
    private readonly op: OpRef,
  ) {}
  async next(): Promise<T[] | null> {
    if (this.done) return null;
    const turn = turnIfDue();
    if (turn) await turn;
    let r: IteratorResult<T>;
    // Traced, every pull is timed (an element already costs an await): a slow one tells the
    // consumers' samplers to time every chunk (see Sampler).
    const t0 = this.c === null ? 0 : now();
    try {
      r = await this.it.next();
    } catch (e) {
      this.done = true;
      throw new PipelineError(this.op, undefined, e);
    }
    if (this.c !== null && now() - t0 >= SLOW_PULL_MS) noteSlowPull();
    if (r.done) {
      this.done = true;
      return null;
    }
    if (this.c !== null) countProduced(this.c, [r.value]);
    return [r.value];
  }
  async return(): Promise<void> {
    if (this.done) return;
    this.done = true;
    await this.it.return?.();
  }
}

/** Opens one pass over a `from()` source. */
export function openSource<T>(src: Source<T>, node: OpNode<T>, session: Session): Chunks<T> {
  return chunksOf(src, node.counters, { kind: node.kind, key: node.key, site: node.site }, session);
}

/** Chunks over an array, iterable, async iterable, Dataset, or a function returning one. */
export function chunksOf<T>(src: unknown, c: OpCounters | null, op: OpRef, session: Session): Chunks<T> {
  let s: unknown = src;
  if (typeof s === 'function') {
    try {
      s = (s as () => unknown)();
    } catch (e) {
      throw new PipelineError(op, undefined, e);
    }
  }
  if (Array.isArray(s)) return new ArrayChunks(s as T[], c);
  if (s !== null && typeof s === 'object') {
    const node = (s as { node?: OpNode<T> }).node;
    if (node !== undefined && typeof node.open === 'function') return node.open(session);
    const o = s as Partial<Iterable<T> & AsyncIterable<T>>;
    if (typeof o[Symbol.iterator] === 'function') return new IterableChunks((o as Iterable<T>)[Symbol.iterator](), c, op);
    if (typeof o[Symbol.asyncIterator] === 'function') return new AsyncIterableChunks((o as AsyncIterable<T>)[Symbol.asyncIterator](), c, op);
  }
  throw new PipelineError(op, undefined, new TypeError('from() needs an array, an iterable, an async iterable, or a function returning one.'));
}

/** The number of elements `from()` will produce, when it is an array. */
export function sourceCardinality(src: unknown): number | undefined {
  return Array.isArray(src) ? src.length : undefined;
}

class RangeChunks implements Chunks<number> {
  private i = 0;
  constructor(
    private readonly start: number,
    private readonly step: number,
    private readonly count: number,
    private readonly c: OpCounters | null,
  ) {}
  async next(hint: number): Promise<number[] | null> {
    const turn = turnIfDue();
    if (turn) await turn;
    const n = Math.min(hint, SOURCE_CHUNK_MAX, this.count - this.i);
    if (n <= 0) return null;
    const out = new Array<number>(n);
    const s = this.start + this.i * this.step;
    for (let k = 0; k < n; k++) out[k] = s + k * this.step;
    this.i += n;
    if (this.c !== null) {
      this.c.produced += n;
      this.c.bytesProduced += 8 * n;
    }
    return out;
  }
  async return(): Promise<void> {
    this.i = this.count;
  }
}

/** How many numbers range(start, end, step) yields. */
export function rangeCount(start: number, end: number, step: number): number {
  if (step === 0) throw new RangeError('range() needs a non-zero step.');
  if (end === Infinity || end === -Infinity) return end > start === step > 0 ? Infinity : 0;
  return Math.max(0, Math.ceil((end - start) / step));
}

export function openRange(start: number, step: number, count: number, c: OpCounters | null): Chunks<number> {
  return new RangeChunks(start, step, count, c);
}
