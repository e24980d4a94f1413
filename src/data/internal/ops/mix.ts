/**
 * sampleFromDatasets and chooseFromDatasets: one output stream drawn from several inputs. Each
 * input keeps its own order; which input the next element comes from depends only on the seed
 * (sample) or the choice dataset (choose), never on timing.
 */
import type { OpCounters } from '../../tracing';
import { PipelineError, type OpRef } from '../../errors';
import { type Chunks, countProduced, type OpNode, pull, Sampler, type Session } from '../core';
import { Rng } from '../rng';
import { Op } from './flow';
import { refOf } from './select';

/** One input, read a chunk at a time. */
class Source<T> {
  buf: T[] = [];
  pos = 0;
  done = false;
  readonly s = new Sampler();
  constructor(
    readonly it: Chunks<T>,
    readonly c: OpCounters | null,
  ) {}
  /** Makes an element ready in `buf`; false when the input has ended. */
  async fill(ask: number, mine: OpCounters | null): Promise<boolean> {
    if (this.pos < this.buf.length) return true;
    if (this.done) return false;
    const chunk = await pull(this.it, ask, this.c, this.s);
    if (chunk === null) {
      this.done = true;
      return false;
    }
    if (mine !== null) mine.pulled += chunk.length;
    this.buf = chunk;
    this.pos = 0;
    return true;
  }
}

/**
 * Inputs are asked for what the request is expected to take from them: a bulk consumer pays one
 * promise per input per chunk, and a consumer pulling one element at a time makes no input compute
 * elements ahead of need (the first element of an expensive input is not held back by others).
 */
const MAX_ASK = 1024;

class SampleFrom<T> extends Op<T> {
  private readonly srcs: Source<T>[];
  private readonly w: number[];
  private total: number;
  private readonly rng: Rng;
  constructor(
    nodes: readonly OpNode<T>[],
    session: Session,
    private readonly c: OpCounters | null,
    weights: readonly number[],
    seed: number,
    private readonly stopOnEmpty: boolean,
  ) {
    super();
    this.srcs = nodes.map((n) => new Source(n.open(session), n.counters));
    this.w = weights.slice();
    this.total = this.w.reduce((a, b) => a + b, 0);
    this.rng = new Rng(seed);
  }
  async next(hint: number): Promise<T[] | null> {
    const out: T[] = [];
    while (out.length < hint && this.closing === null && this.total > 0) {
      // Pick an input with probability weight / (sum of the weights of inputs not yet ended).
      let r = this.rng.float() * this.total;
      let i = 0;
      const last = this.w.length - 1;
      while (i < last && (r >= this.w[i] || this.w[i] === 0)) {
        r -= this.w[i];
        i++;
      }
      const src = this.srcs[i];
      // Checked before awaiting: an await per element would cost a microtask each.
      if (src.pos >= src.buf.length && !(await src.fill(Math.min(MAX_ASK, Math.ceil(((hint - out.length) * this.w[i]) / this.total)), this.c))) {
        if (this.stopOnEmpty) {
          this.total = 0;
          break;
        }
        // Renormalise over the inputs left; the pick is redrawn.
        this.total -= this.w[i];
        this.w[i] = 0;
        if (this.total < 1e-12) this.total = 0;
        continue;
      }
      out.push(src.buf[src.pos++]);
    }
    if (out.length === 0) {
      await this.return();
      return null;
    }
    if (this.c !== null) countProduced(this.c, out);
    return out;
  }
  protected async stop(): Promise<void> {
    await Promise.all(this.srcs.map((s) => s.it.return()));
  }
}

class ChooseFrom<T> extends Op<T> {
  private readonly srcs: Source<T>[];
  private readonly choice: Source<unknown>;
  private index = 0;
  private ended = false;
  constructor(
    nodes: readonly OpNode<T>[],
    choiceNode: OpNode,
    session: Session,
    private readonly c: OpCounters | null,
    private readonly stopOnEmpty: boolean,
    private readonly op: OpRef,
  ) {
    super();
    this.srcs = nodes.map((n) => new Source(n.open(session), n.counters));
    this.choice = new Source(choiceNode.open(session), choiceNode.counters);
  }
  async next(hint: number): Promise<T[] | null> {
    const out: T[] = [];
    while (out.length < hint && this.closing === null && !this.ended) {
      const choice = this.choice;
      if (choice.pos >= choice.buf.length && !(await choice.fill(Math.min(MAX_ASK, hint - out.length), null))) {
        this.ended = true;
        break;
      }
      const k = this.choice.buf[this.choice.pos];
      if (typeof k !== 'number' || !Number.isInteger(k) || k < 0 || k >= this.srcs.length) {
        void this.return();
        throw new PipelineError(this.op, this.index, new RangeError(`the choice dataset gave ${String(k)}; choices must be integers in [0, ${this.srcs.length}), one per input dataset.`));
      }
      const src = this.srcs[k];
      if (src.pos >= src.buf.length && !(await src.fill(this.need(k, hint - out.length), null))) {
        if (this.stopOnEmpty) {
          this.ended = true;
          break;
        }
        // The chosen dataset has ended: skip this choice, or end when all have.
        this.choice.pos++;
        this.index++;
        if (this.srcs.every((s) => s.done)) this.ended = true;
        continue;
      }
      this.choice.pos++;
      this.index++;
      if (this.c !== null) this.c.pulled++;
      out.push(src.buf[src.pos++]);
    }
    if (out.length === 0) {
      await this.return();
      return null;
    }
    if (this.c !== null) countProduced(this.c, out);
    return out;
  }
  /** How many of the next `n` buffered choices pick input k (at least 1): what to ask it for. */
  private need(k: number, n: number): number {
    const c = this.choice;
    const end = Math.min(c.buf.length, c.pos + n);
    let need = 0;
    for (let p = c.pos; p < end; p++) if (c.buf[p] === k) need++;
    return Math.max(1, need);
  }

  protected async stop(): Promise<void> {
    await Promise.all([...this.srcs.map((s) => s.it.return()), this.choice.it.return()]);
  }
}

export function openSample<T>(node: OpNode<T>, session: Session, weights: readonly number[], seed: number, stopOnEmpty: boolean): Chunks<T> {
  return new SampleFrom(node.inputs as OpNode<T>[], session, node.counters, weights, seed, stopOnEmpty);
}

export function openChoose<T>(node: OpNode<T>, session: Session, stopOnEmpty: boolean): Chunks<T> {
  const inputs = node.inputs as OpNode<T>[];
  return new ChooseFrom(inputs.slice(0, -1), inputs[inputs.length - 1], session, node.counters, stopOnEmpty, refOf(node));
}
