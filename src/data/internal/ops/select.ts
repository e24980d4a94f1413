/**
 * Element-wise operators that keep the chunked pull of the executor: shard, enumerate, scan and
 * ignoreErrors. Each works on a whole chunk in one loop, so its cost per element is a few
 * instructions, not a promise.
 */
import type { OpCounters } from '../../tracing';
import { PipelineError, type OpRef } from '../../errors';
import { type Chunks, countProduced, type ErrorSink, type OpNode, pull, Sampler, SelfClock, type Session } from '../core';
import { Op } from './flow';

/** The operator of a node, for errors. */
export function refOf(node: OpNode): OpRef {
  return { kind: node.kind, key: node.key, site: node.site };
}

/** Every numShards-th element, starting at index; the same elements every pass. */
class Shard<T> extends Op<T> {
  private readonly s = new Sampler();
  /** Position in the input of the next element pulled. */
  private pos = 0;
  constructor(
    private readonly up: Chunks<T>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private readonly n: number,
    private readonly index: number,
  ) {
    super();
  }
  async next(hint: number): Promise<T[] | null> {
    for (;;) {
      if (this.closing !== null) return null;
      // Ask for enough inputs to fill the request; bounded so a huge hint does not read far ahead.
      const chunk = await pull(this.up, Math.min(hint * this.n, 4096), this.upC, this.s);
      if (chunk === null) return null;
      const len = chunk.length;
      // The first kept position in this chunk, then every n-th.
      let i = (((this.index - this.pos) % this.n) + this.n) % this.n;
      let w = 0;
      for (; i < len; i += this.n) chunk[w++] = chunk[i];
      chunk.length = w;
      this.pos += len;
      if (this.c !== null) this.c.pulled += len;
      if (w > 0) {
        if (this.c !== null) countProduced(this.c, chunk);
        return chunk;
      }
    }
  }
  protected stop(): Promise<void> {
    return this.up.return();
  }
}

/** [start + position, element]. */
class Enumerate<T> extends Op<[number, T]> {
  private readonly s = new Sampler();
  private i: number;
  constructor(
    private readonly up: Chunks<T>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
    start: number,
  ) {
    super();
    this.i = start;
  }
  async next(hint: number): Promise<[number, T][] | null> {
    if (this.closing !== null) return null;
    const chunk = (await pull(this.up, hint, this.upC, this.s)) as unknown[] | null;
    if (chunk === null) return null;
    // In place: the chunk is ours.
    for (let k = 0; k < chunk.length; k++) chunk[k] = [this.i++, chunk[k]];
    const out = chunk as [number, T][];
    if (this.c !== null) {
      this.c.pulled += out.length;
      countProduced(this.c, out);
    }
    return out;
  }
  protected stop(): Promise<void> {
    return this.up.return();
  }
}

/** A running state: fn(state, x) → [state, output]; the state starts afresh each pass. */
class Scan<S, T, U> extends Op<U> {
  private readonly s = new Sampler();
  private readonly clock: SelfClock;
  private index = 0;
  constructor(
    private readonly up: Chunks<T>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private state: S,
    private readonly fn: (state: S, x: T) => readonly [S, U],
    private readonly op: OpRef,
    private readonly skip: ErrorSink | null,
  ) {
    super();
    this.clock = new SelfClock(c);
  }
  async next(hint: number): Promise<U[] | null> {
    for (;;) {
      if (this.closing !== null) return null;
      const chunk = (await pull(this.up, hint, this.upC, this.s)) as unknown[] | null;
      if (chunk === null) return null;
      const n = chunk.length;
      const base = this.index;
      this.index += n;
      let w = 0;
      this.clock.start();
      for (let k = 0; k < n; k++) {
        let r: readonly [S, U];
        try {
          r = this.fn(this.state, chunk[k] as T);
          if (!Array.isArray(r) || r.length !== 2) throw new TypeError(`scan's fn must return [newState, output], not ${describe(r)}.`);
        } catch (e) {
          const err = new PipelineError(this.op, base + k, e);
          // Inside ignoreErrors the element is dropped and the state stays as it was.
          if (this.skip !== null) {
            this.skip(err);
            continue;
          }
          this.clock.stop();
          void this.return();
          throw err;
        }
        this.state = r[0];
        chunk[w++] = r[1];
      }
      this.clock.stop();
      chunk.length = w;
      if (this.c !== null) {
        this.c.pulled += n;
        this.c.calls += n;
        if (w > 0) countProduced(this.c, chunk);
      }
      if (w > 0) return chunk as U[];
    }
  }
  protected stop(): Promise<void> {
    return this.up.return();
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `an array of ${v.length}`;
  return typeof v;
}

/**
 * Passes elements on; its input's operators drop the elements they fail on (see `Session.skip`)
 * and this counts them. An error that still reaches it comes from an operator that cannot go on
 * after failing (a source whose iterator threw): it is counted and the pass ends there.
 */
class IgnoreErrors<T> extends Op<T> {
  private readonly s = new Sampler();
  private ended = false;
  constructor(
    private readonly up: Chunks<T>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private readonly sink: ErrorSink,
  ) {
    super();
  }
  async next(hint: number): Promise<T[] | null> {
    if (this.ended || this.closing !== null) return null;
    let chunk: T[] | null;
    try {
      chunk = await pull(this.up, hint, this.upC, this.s);
    } catch (e) {
      this.sink(e);
      this.ended = true;
      await this.return();
      return null;
    }
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

export function openShard<T>(node: OpNode<T>, session: Session, n: number, index: number): Chunks<T> {
  const input = node.inputs[0] as OpNode<T>;
  return new Shard(input.open(session), input.counters, node.counters, n, index);
}
export function openEnumerate<T>(node: OpNode<[number, T]>, session: Session, start: number): Chunks<[number, T]> {
  const input = node.inputs[0] as OpNode<T>;
  return new Enumerate(input.open(session), input.counters, node.counters, start);
}
export function openScan<S, T, U>(node: OpNode<U>, session: Session, initial: S, fn: (state: S, x: T) => readonly [S, U]): Chunks<U> {
  const input = node.inputs[0] as OpNode<T>;
  return new Scan(input.open(session), input.counters, node.counters, initial, fn, refOf(node), session.skip);
}
export function openIgnoreErrors<T>(node: OpNode<T>, session: Session, logWarning: boolean): Chunks<T> {
  const input = node.inputs[0] as OpNode<T>;
  const c = node.counters;
  const sink: ErrorSink = (e) => {
    if (c !== null) c.errorsSkipped++;
    if (logWarning) console.warn(`ignoreErrors: skipped an element: ${e instanceof Error ? e.message : String(e)}`);
  };
  // The input runs in a view of the session whose operators skip failing elements into the sink.
  return new IgnoreErrors(input.open(session.skipping(sink)), input.counters, c, sink);
}
