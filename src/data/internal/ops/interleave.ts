/**
 * interleave(fn, { cycleLength, blockLength, parallelism, deterministic }): up to cycleLength inner
 * datasets are open at once; elements are taken round-robin, blockLength consecutive elements from
 * one inner dataset per turn. An exhausted inner dataset ends its turn and is replaced in place by
 * the next input's, which takes that place's next turn (tf.data's order). With deterministic order the
 * output depends only on the inputs and cycleLength; `parallelism` inner datasets are pulled
 * concurrently ahead of their turn.
 */
import type { OpCounters } from '../../tracing';
import { asPipelineError, type OpRef } from '../../errors';
import { type Chunks, countProduced, type OpNode, pull, Sampler, type Session, Wakeup } from '../core';
import { chunksOf } from './sources';
import { nestedCounters, withParent } from '../build';

interface Inner {
  it: Chunks<unknown>;
  /**
   * The counters of the inner dataset's last operator (traced), which get the time this
   * interleave waits on its pulls, as a consumer's wait on its input counts: a source read record
   * by record inside an inner dataset shows its latency there, and the model sees it.
   */
  c: OpCounters | null;
  buf: unknown[];
  pos: number;
  done: boolean;
  pulling: boolean;
  err: { e: unknown } | null;
}

class Interleave implements Chunks<unknown> {
  private readonly s = new Sampler();
  /** Times the pulls on inner datasets (their durations differ from the pulls on the input). */
  private readonly innerS = new Sampler();
  private slots: Inner[] = [];
  private turn = 0;
  /** Elements taken from the current turn's slot so far (a turn takes `block`). */
  private taken = 0;
  private inputs: unknown[] = [];
  private ipos = 0;
  private index = 0;
  private upDone = false;
  private pulling = 0;
  private closed = false;
  private readonly wake = new Wakeup();
  /** See `plainInner`; undefined until a plain iterable is opened. */
  private plainC: OpCounters | null | undefined;

  constructor(
    private readonly up: Chunks<unknown>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private readonly fn: (x: unknown) => unknown,
    private readonly cycle: number,
    private readonly block: number,
    private readonly parallelism: number,
    private readonly deterministic: boolean,
    private readonly op: OpRef,
    private readonly session: Session,
  ) {}

  async next(hint: number): Promise<unknown[] | null> {
    const out: unknown[] = [];
    try {
      while (out.length < hint && !this.closed) {
        if (this.slots.length < this.cycle && !this.upDone) {
          const opened = await this.openSlot(this.slots.length);
          if (opened) continue;
        }
        if (this.slots.length === 0) break;
        const i = this.deterministic ? this.turn % this.slots.length : this.readySlot();
        const s = this.slots[i];
        if (s.pos < s.buf.length) {
          out.push(s.buf[s.pos++]);
          if (++this.taken >= this.block) {
            this.turn = i + 1;
            this.taken = 0;
          } else this.turn = i;
          continue;
        }
        if (s.err !== null) throw s.err.e;
        if (s.done) {
          // The turn ends; the place is refilled with the next input's dataset, which takes its next
          // turn, or dropped when inputs ran out (the next place then takes the turn).
          await s.it.return();
          this.taken = 0;
          if (await this.openSlot(i, true)) this.turn = i + 1;
          else {
            this.slots.splice(i, 1);
            this.turn = i;
          }
          continue;
        }
        if (out.length > 0) break;
        this.prefetch(i);
        if (!s.pulling) this.startPull(s);
        await this.wake.wait();
      }
    } catch (e) {
      void this.return();
      throw asPipelineError(this.op, undefined, e);
    }
    if (out.length === 0) return null;
    this.prefetch(this.deterministic ? this.turn % Math.max(1, this.slots.length) : 0);
    if (this.c !== null) countProduced(this.c, out);
    return out;
  }

  /** Non-deterministic order: the first slot with an element ready (or the current turn's). */
  private readySlot(): number {
    const n = this.slots.length;
    for (let k = 0; k < n; k++) {
      const i = (this.turn + k) % n;
      const s = this.slots[i];
      if (s.pos < s.buf.length || s.done || s.err !== null) return i;
    }
    return this.turn % n;
  }

  /** Opens fn(next input) at slot i (replacing it when `replace`). False when the input is exhausted. */
  private async openSlot(i: number, replace = false): Promise<boolean> {
    if (this.ipos >= this.inputs.length) {
      if (this.upDone) return false;
      const chunk = await pull(this.up, Math.max(1, this.cycle - this.slots.length), this.upC, this.s);
      if (chunk === null) {
        this.upDone = true;
        return false;
      }
      if (this.c !== null) this.c.pulled += chunk.length;
      this.inputs = chunk;
      this.ipos = 0;
    }
    const x = this.inputs[this.ipos++];
    const index = this.index++;
    let it: Chunks<unknown>;
    let innerC: OpCounters | null = null;
    try {
      if (this.c !== null) this.c.calls++;
      // Traced: operators the fn builds are recorded as nested in this interleave.
      const made = this.c !== null ? withParent(this.op.key, () => this.fn(x)) : this.fn(x);
      const node = made !== null && typeof made === 'object' ? (made as { node?: OpNode }).node : undefined;
      if (this.c !== null) innerC = node !== undefined ? node.counters : this.plainInner();
      // A Dataset counts its own elements; a plain iterable (an async generator reading a shard
      // record by record) counts them on the operator made for it, and its waits show there.
      it = chunksOf(made, node !== undefined ? null : innerC, this.op, this.session);
    } catch (e) {
      const err = asPipelineError(this.op, index, e);
      // Inside ignoreErrors an input whose fn threw is skipped: open the next one instead.
      if (this.session.skip === null) throw err;
      this.session.skip(err);
      return this.openSlot(i, replace);
    }
    const s: Inner = { it, c: innerC, buf: [], pos: 0, done: false, pulling: false, err: null };
    if (replace) this.slots[i] = s;
    else this.slots.push(s);
    return true;
  }

  /**
   * The counters of the inner datasets the fn returns as plain iterables (arrays, generators,
   * async iterables), which have no operator of their own: one `from` nested in this interleave,
   * so a shard read record by record shows its latency inside it as a `from()` source would.
   */
  private plainInner(): OpCounters | null {
    if (this.plainC === undefined) this.plainC = nestedCounters(this.op.key, `from@inner:${this.op.key}`, 'from');
    return this.plainC;
  }

  /** Starts background pulls on up to `parallelism` slots, in turn order from `from`. */
  private prefetch(from: number): void {
    const n = this.slots.length;
    for (let k = 0; k < n && this.pulling < this.parallelism; k++) {
      const s = this.slots[(from + k) % n];
      if (!s.pulling && !s.done && s.err === null && s.pos >= s.buf.length) this.startPull(s);
    }
  }

  private startPull(s: Inner): void {
    s.pulling = true;
    this.pulling++;
    if (this.c !== null && this.pulling > this.c.inFlightHighWater) this.c.inFlightHighWater = this.pulling;
    pull(s.it, 16, s.c, this.innerS).then(
      (chunk) => {
        s.pulling = false;
        this.pulling--;
        if (chunk === null) s.done = true;
        else {
          s.buf = chunk;
          s.pos = 0;
        }
        this.wake.notify();
      },
      (e: unknown) => {
        s.pulling = false;
        this.pulling--;
        s.err = { e };
        this.wake.notify();
      },
    );
  }

  async return(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const slots = this.slots;
    this.slots = [];
    this.wake.notify();
    await Promise.all([this.up.return(), ...slots.map((s) => s.it.return())]);
  }
}

export function openInterleave(node: OpNode, session: Session, fn: (x: unknown) => unknown, cycle: number, block: number, parallelism: number, deterministic: boolean): Chunks<unknown> {
  const input = node.inputs[0];
  return new Interleave(input.open(session), input.counters, node.counters, fn, cycle, block, parallelism, deterministic, { kind: 'interleave', key: node.key, site: node.site }, session);
}
