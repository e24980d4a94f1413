/**
 * A shuffle buffer. Each output is drawn uniformly from the buffer and its place taken by the next
 * input, so the order depends only on the seed and the input sequence — never on how large the
 * chunks downstream asks for are, or on timing.
 */
import type { OpCounters } from '../../tracing';
import { type Chunks, countProduced, now, type OpNode, type Session, pull, Sampler } from '../core';
import { Rng } from '../rng';

class Shuffle<T> implements Chunks<T> {
  private readonly s = new Sampler();
  private buf: T[] = [];
  /** Inputs pulled but not yet in the buffer: each replaces one output. */
  private pending: T[] = [];
  private ppos = 0;
  private upDone = false;
  private readonly rng: Rng;
  constructor(
    private readonly up: Chunks<T>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private readonly size: number,
    seed: number,
  ) {
    this.rng = new Rng(seed);
  }

  async next(hint: number): Promise<T[] | null> {
    // Fill the buffer before the first output.
    while (!this.upDone && this.buf.length < this.size) {
      const chunk = await this.pullInput(this.size - this.buf.length);
      if (chunk === null) break;
      for (let i = 0; i < chunk.length; i++) this.buf.push(chunk[i]);
    }
    const out: T[] = [];
    while (out.length < hint && this.buf.length > 0) {
      if (!this.upDone && this.ppos >= this.pending.length) {
        if (out.length > 0) break; // return what we have rather than wait
        const chunk = await this.pullInput(hint);
        if (chunk === null) continue;
        this.pending = chunk;
        this.ppos = 0;
      }
      const c = this.c;
      const t0 = c === null ? 0 : now();
      while (out.length < hint && this.buf.length > 0 && (this.upDone || this.ppos < this.pending.length)) {
        const i = this.rng.int(this.buf.length);
        out.push(this.buf[i]);
        if (this.ppos < this.pending.length) this.buf[i] = this.pending[this.ppos++];
        else {
          this.buf[i] = this.buf[this.buf.length - 1];
          this.buf.pop();
        }
      }
      if (c !== null) c.selfSeconds += (now() - t0) / 1000;
    }
    if (out.length === 0) return null;
    if (this.c !== null) countProduced(this.c, out);
    return out;
  }

  private async pullInput(n: number): Promise<T[] | null> {
    const chunk = await pull(this.up, n, this.upC, this.s);
    if (chunk === null) this.upDone = true;
    else if (this.c !== null) {
      this.c.pulled += chunk.length;
      const held = this.buf.length + chunk.length;
      if (held > this.c.bufferHighWater) this.c.bufferHighWater = held;
    }
    return chunk;
  }

  async return(): Promise<void> {
    this.buf = [];
    this.pending = [];
    this.upDone = true;
    await this.up.return();
  }
}

export function openShuffle<T>(node: OpNode<T>, session: Session, size: number, seed: number): Chunks<T> {
  const input = node.inputs[0] as OpNode<T>;
  return new Shuffle(input.open(session), input.counters, node.counters, size, seed);
}
