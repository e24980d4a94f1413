/**
 * The parallel engine behind async maps, worker maps and file reads: keeps up to `maxSlots` groups
 * of calls in flight, pulls its input in the background while they run, and hands results
 * downstream in input order (or as they finish, when not deterministic).
 *
 * `maxSlots` bounds the groups running. Finished groups wait, in order, for the consumer, and up to
 * `maxSlots` of them may wait beside the running ones: a call at the head of the order that runs
 * long, or a consumer that takes results in bursts (a worker map filling its tasks, a batch), does
 * not stop the calls behind it. When finished groups counted against the limit, an async map with
 * 10 calls in flight feeding two worker threads (test/fixtures/pipelines/mixed.ts) kept fewer than
 * 10 running whenever the threads were busy: 132–138 batches/s where 10 calls over their 3.4 ms
 * allow 180; holding finished groups apart, 146–156. Memory stays O(2 × maxSlots × group size).
 */
import type { OpCounters } from '../../tracing';
import { type Chunks, countProduced, isThenable, now, pull, Sampler, Wakeup } from '../core';

interface Slot<O> {
  /** 0 running, 1 done, 2 failed. */
  state: 0 | 1 | 2;
  out: O[] | null;
  /** Elements of `out` already handed downstream. */
  taken: number;
  err: unknown;
}

/** How the engine starts work; results must already be wrapped as the consumer should see them. */
export interface Launcher<I, O> {
  /** Start work on `items` (input indices base…base+n-1). A sync return or throw is fine. */
  launch(items: I[], base: number): O[] | PromiseLike<O[]>;
  /** The error to deliver for a sync throw or rejection of the group starting at `base`. */
  fail(e: unknown, base: number): unknown;
  /** Elements per launched group (worker maps batch small elements). */
  groupSize(): number;
}

export class Engine<I, O> {
  private readonly slots: Slot<O>[] = [];
  private backlog: I[] = [];
  private nextIndex: number;
  private upDone = false;
  private upFailed = false;
  private upError: unknown;
  private pumping = false;
  private closed = false;
  private running = 0;
  private readonly wake = new Wakeup();
  /** Samplers for the upstream pull and for launching (see Sampler). */
  private readonly s = new Sampler();
  private readonly sf = new Sampler();

  constructor(
    private readonly up: Chunks<I>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private readonly launcher: Launcher<I, O>,
    private readonly maxSlots: number,
    private readonly deterministic: boolean,
    /** Which counter the engine's own main-thread time goes to. */
    private readonly timeInto: 'selfSeconds' | 'dispatchSeconds',
    firstIndex = 0,
  ) {
    this.nextIndex = firstIndex;
  }

  /** Calls (or tasks) started and not yet settled. */
  get inFlight(): number {
    return this.running;
  }

  /** Adopt results computed before the engine existed (a map that turned out to be async). */
  pushDone(out: O[]): void {
    this.slots.push({ state: 1, out, taken: 0, err: undefined });
  }

  /** Adopt a call already started. */
  pushRunning(p: PromiseLike<O[]>): void {
    this.track(p);
  }

  /** Adopt inputs already pulled but not started; `base` is the index of the first. */
  pushBacklog(items: I[], base: number): void {
    this.backlog = items;
    this.nextIndex = base;
  }

  async next(hint: number): Promise<O[] | null> {
    for (;;) {
      if (this.closed) return null;
      this.fill();
      const held = this.slots.length;
      const out = this.deterministic ? this.collectOrdered(hint) : this.collectAny(hint);
      if (out.length > 0) {
        if (this.c !== null) countProduced(this.c, out);
        this.fill();
        return out;
      }
      if (this.slots.length === 0 && this.backlog.length === 0 && this.upDone) {
        if (this.upFailed) {
          await this.close();
          throw this.upError;
        }
        return null;
      }
      // Groups that yielded nothing (a filter's) were consumed: refill before waiting, or nothing
      // would be running to wake us.
      if (this.slots.length < held) continue;
      // Time spent here reaches waitSeconds through the downstream operator, which times its pull.
      await this.wake.wait();
    }
  }

  /** Stop pulling and drop results; in-flight calls are left to settle into the void. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.backlog = [];
    this.slots.length = 0;
    this.wake.notify();
    await this.up.return();
  }

  private collectOrdered(hint: number): O[] {
    let out: O[] | null = null;
    while (this.slots.length > 0) {
      const s = this.slots[0];
      if (s.state === 0) break;
      if (s.state === 2) {
        if (out !== null && out.length > 0) return out; // deliver what came before the failure first
        const err = s.err;
        void this.close();
        throw err;
      }
      const got = s.out as O[];
      const want = hint - (out === null ? 0 : out.length);
      if (out === null && s.taken === 0 && got.length <= want) {
        out = got;
        this.slots.shift();
        continue;
      }
      if (out === null) out = [];
      const n = Math.min(want, got.length - s.taken);
      for (let i = 0; i < n; i++) out.push(got[s.taken + i]);
      s.taken += n;
      if (s.taken === got.length) this.slots.shift();
      if (out.length >= hint) break;
    }
    return out ?? [];
  }

  private collectAny(hint: number): O[] {
    const out: O[] = [];
    for (let i = 0; i < this.slots.length && out.length < hint;) {
      const s = this.slots[i];
      if (s.state === 0) {
        i++;
        continue;
      }
      if (s.state === 2) {
        if (out.length > 0) return out;
        const err = s.err;
        void this.close();
        throw err;
      }
      const got = s.out as O[];
      const n = Math.min(hint - out.length, got.length - s.taken);
      for (let j = 0; j < n; j++) out.push(got[s.taken + j]);
      s.taken += n;
      if (s.taken === got.length) this.slots.splice(i, 1);
      else i++;
    }
    return out;
  }

  /** Launch from the backlog while there is room; start the background pull when more input is needed. */
  private fill(mayPump = true): void {
    if (this.closed) return;
    const c = this.c;
    const w = c === null ? 0 : this.sf.tick();
    const t0 = w === 0 ? 0 : now();
    const g = Math.max(1, this.launcher.groupSize());
    while (this.room() > 0 && this.backlog.length > 0) {
      // A small group waits for more input while others keep the workers busy.
      if (this.backlog.length < g && !this.upDone && this.running > 0) break;
      const items = this.backlog.length <= g ? this.backlog : this.backlog.slice(0, g);
      this.backlog = this.backlog.length <= g ? [] : this.backlog.slice(g);
      const base = this.nextIndex;
      this.nextIndex += items.length;
      let r: O[] | PromiseLike<O[]>;
      try {
        r = this.launcher.launch(items, base);
      } catch (e) {
        this.slots.push({ state: 2, out: null, taken: 0, err: this.launcher.fail(e, base) });
        continue;
      }
      if (isThenable(r)) this.track(r, base);
      else this.slots.push({ state: 1, out: r, taken: 0, err: undefined });
    }
    if (c !== null) {
      if (w !== 0) {
        const d = now() - t0;
        c[this.timeInto] += (d * w) / 1000;
        this.sf.adapt(d);
      }
      if (this.running > c.inFlightHighWater) c.inFlightHighWater = this.running;
      // Groups held: running or finished and not yet handed downstream.
      if (this.slots.length > c.bufferHighWater) c.bufferHighWater = this.slots.length;
    }
    if (mayPump && !this.pumping && !this.upDone && Math.ceil(this.backlog.length / g) < this.room()) void this.pump(g);
  }

  /** Groups that may start now: running ones stay within `maxSlots`, and all held (running or waiting for the consumer) within twice that. */
  private room(): number {
    return Math.min(this.maxSlots - this.running, 2 * this.maxSlots - this.slots.length);
  }

  private track(p: PromiseLike<O[]>, base?: number): void {
    const s: Slot<O> = { state: 0, out: null, taken: 0, err: undefined };
    this.slots.push(s);
    this.running++;
    p.then(
      (v) => {
        this.running--;
        s.state = 1;
        s.out = v;
        this.wake.notify();
      },
      (e: unknown) => {
        this.running--;
        s.state = 2;
        s.err = base === undefined ? e : this.launcher.fail(e, base);
        this.wake.notify();
      },
    );
  }

  private async pump(g: number): Promise<void> {
    this.pumping = true;
    try {
      while (!this.closed && !this.upDone) {
        const room = this.room() * g - this.backlog.length;
        if (room <= 0) break;
        const chunk = await pull(this.up, room, this.upC, this.s);
        if (this.closed) break;
        if (chunk === null) this.upDone = true;
        else {
          if (this.c !== null) this.c.pulled += chunk.length;
          if (this.backlog.length === 0) this.backlog = chunk;
          else for (let i = 0; i < chunk.length; i++) this.backlog.push(chunk[i]);
        }
        this.fill(false);
        this.wake.notify();
      }
    } catch (e) {
      this.upDone = true;
      this.upFailed = true;
      this.upError = e;
      this.wake.notify();
    } finally {
      this.pumping = false;
    }
  }
}
