/**
 * The one source op every reader is (csv, jsonLines, tfrecord, webdataset, parquet, arrow): a
 * format over a list of shards.
 *
 * Order (deterministic): the shards expand on the first pull (globs sorted, lists as written).
 * `parallelism` p shards are open at once in a cycle, and elements are taken one at a time from
 * each in turn, in shard order; a shard found ended at its turn ends that turn and is replaced in
 * its place by the next unopened shard, which reads on that place's next turn — the order of
 * `interleave` with cycle p and block 1 over the shards (tf.data's). With
 * p = 1 the shards are read one after another. The same files give the same order every pass.
 *
 * Each open shard reads one chunk ahead of the consumer, so p shards read (and, on worker threads,
 * decompress and parse) at once. `placement: 'worker'` runs each open shard's whole read — open,
 * decompress, parse — in a worker thread of its own (p threads, started on the first pull and
 * terminated when the pass ends or fails); a thread that has read its shard to the end starts on
 * the next unopened one (see prefetch), so up to 2p shards are open. Everything opened is closed
 * on `return()` and on error.
 */
import { stat } from 'node:fs/promises';
import type { OpCounters, OpKind, OpKnobs } from '../../tracing';
import type { HttpOptions } from '../../options';
import { asPipelineError, type OpRef } from '../../errors';
import { type Chunks, countProduced, type OpNode, SOURCE_CHUNK_MAX } from '../core';
import type { Compression } from './compression';
import type { Format, ParseClock, Shard } from './format';
import { formatFor } from './formats';
import { readShard, type ShardReadOptions } from './shard-read';
import { expandShards, isUrl } from './source';
import type { WorkerHost, ShardSource } from './worker-host';
import { acquireHost, releaseHost } from './worker-pool';

/** What one reader op was built with (options resolved). */
export interface ReaderConfig {
  kind: OpKind;
  patterns: string | readonly string[];
  cwd: string;
  compression: 'auto' | Compression;
  http?: HttpOptions;
  parallelism: number;
  placement: 'main' | 'worker';
  /** The format's own options: plain data, sent as they are to worker threads. */
  formatOptions: Record<string, unknown>;
  /** The order this pass reads the shards in (webdataset's `shuffleShards`); default as expanded. */
  order?: (shards: Shard[]) => Shard[];
  /** The op's traced knobs: the shards matched are added as `numShards` (the most it can read at once). */
  knobs?: OpKnobs;
}

interface Slot<T> {
  src: ShardSource<T>;
  host: WorkerHost | null;
  /** The next chunk, requested ahead of its turn; null while none is requested. */
  pending: Promise<T[] | null> | null;
  buf: T[];
  pos: number;
  done: boolean;
}

/** Starts `src.next()` ahead of its use; a failure surfaces when it is awaited, never as an unhandled rejection. */
function ahead<T>(src: ShardSource<T>): Promise<T[] | null> {
  const p = src.next();
  p.catch(() => undefined);
  return p;
}

/** A shard read on this thread. */
function mainSource<T>(format: Format<T>, shard: Shard, o: ShardReadOptions, c: OpCounters | null, clock: ParseClock): ShardSource<T> {
  const abort = new AbortController();
  const it = readShard(format, shard, { ...o, signal: abort.signal }, c, clock);
  return {
    next: async () => {
      const r = await it.next();
      return r.done === true ? null : r.value;
    },
    close: async () => {
      abort.abort();
      await it.return(undefined).catch(() => undefined);
    },
  };
}

/**
 * `rounds` whole turns of every slot in slot order, the same elements in the same order as taking
 * them one turn at a time: round r gives each slot's element at `pos + r`. The turn is left at the
 * first slot, where it started.
 */
function takeRounds<T>(slots: Slot<T>[], rounds: number, out: T[]): void {
  const n = slots.length;
  if (n === 2) {
    // The common case (two shards on two cores), without the inner loop.
    const [a, b] = slots;
    const ab = a.buf;
    const bb = b.buf;
    for (let r = 0, pa = a.pos, pb = b.pos; r < rounds; r++) out.push(ab[pa + r], bb[pb + r]);
  } else {
    for (let r = 0; r < rounds; r++) for (let j = 0; j < n; j++) out.push(slots[j].buf[slots[j].pos + r]);
  }
  for (const s of slots) s.pos += rounds;
}

class Reader<T> implements Chunks<T> {
  private shards: Shard[] | null = null;
  private nextShard = 0;
  private slots: Slot<T>[] = [];
  private turn = 0;
  private closed = false;
  /** Every shard was read to its end. */
  private finished = false;
  private readonly hosts: WorkerHost[] = [];
  /**
   * Shards opened ahead on threads that read theirs to the end before the reader took it all, in
   * shard order, the first being the next to open (`nextShard`): at most one a thread.
   */
  private readonly early: Array<{ host: WorkerHost; src: ShardSource<T> }> = [];
  private readonly format: Format<T> | null;
  private readonly clock: ParseClock;

  constructor(
    private readonly cfg: ReaderConfig,
    private readonly c: OpCounters | null,
    private readonly op: OpRef,
  ) {
    this.format = cfg.placement === 'main' ? (formatFor(cfg.kind, cfg.formatOptions) as Format<T>) : null;
    // Parsing on the main thread is the op's own main-thread work.
    this.clock = {
      parsed: (s) => {
        if (c === null) return;
        c.parseSeconds = (c.parseSeconds ?? 0) + s;
        c.selfSeconds += s;
      },
    };
  }

  next(hint: number): Promise<T[] | null> {
    // Elements already buffered go on at once, without an async step per pull: a consumer that
    // iterates pulls one element at a time, and on the reader's thread each step is its cost.
    if (!this.closed && this.shards !== null) {
      const out = this.takeReady(Math.min(hint, SOURCE_CHUNK_MAX), []);
      if (out.length > 0) {
        if (this.c !== null) countProduced(this.c, out);
        return Promise.resolve(out);
      }
    }
    return this.pull(hint);
  }

  private async pull(hint: number): Promise<T[] | null> {
    if (this.closed) return null;
    try {
      if (this.shards === null) await this.start();
      const out = await this.take(hint);
      if (out === null) {
        await this.return();
        return null;
      }
      if (this.c !== null) countProduced(this.c, out);
      return out;
    } catch (e) {
      await this.return();
      throw asPipelineError(this.op, undefined, e);
    }
  }

  /**
   * Adds to `out` the elements that are buffered, in turn order, up to `hint` in all; stops at the
   * first turn whose shard has none buffered (it has ended or its next chunk is not in yet). With
   * one shard open and `out` empty, a run of its chunk is returned instead of `out`.
   */
  private takeReady(hint: number, out: T[]): T[] {
    const slots = this.slots;
    while (out.length < hint && slots.length > 0) {
      const i = this.turn % slots.length;
      const s = slots[i];
      if (s.pos >= s.buf.length) break;
      if (slots.length === 1 && out.length === 0) {
        const end = Math.min(s.buf.length, s.pos + hint);
        if (s.pos === 0 && end === s.buf.length) {
          // The whole chunk: the receiver owns it from here.
          const whole = s.buf;
          s.buf = [];
          return whole;
        }
        const run = s.buf.slice(s.pos, end);
        s.pos = end;
        return run;
      }
      if (i === 0 && slots.length > 1) {
        const rounds = this.wholeRounds(hint - out.length);
        if (rounds > 0) {
          takeRounds(slots, rounds, out);
          continue;
        }
      }
      out.push(s.buf[s.pos++]);
      this.turn = i + 1;
    }
    return out;
  }

  /** Up to `hint` (at most SOURCE_CHUNK_MAX) elements in turn order; null when every shard is done. */
  private async take(wanted: number): Promise<T[] | null> {
    const hint = Math.min(wanted, SOURCE_CHUNK_MAX);
    let out: T[] = [];
    while (out.length < hint && !this.closed && this.slots.length > 0) {
      const i = this.turn % this.slots.length;
      const s = this.slots[i];
      if (s.pos < s.buf.length) {
        const got = this.takeReady(hint, out);
        // A run of one shard's chunk (nothing was taken before it) goes on as it is.
        if (got !== out) return got;
        out = got;
        continue;
      }
      if (s.done) {
        // Finding the end took this place's turn; the next shard opens here and reads on its next turn.
        const next = this.openNext(s.host);
        if (next !== null) {
          this.slots[i] = next;
          this.turn = i + 1;
        } else {
          this.slots.splice(i, 1);
          this.turn = i;
        }
        continue;
      }
      // Hand on what is ready rather than wait for this shard's next chunk.
      if (out.length > 0) break;
      const r = await (s.pending as Promise<T[] | null>);
      s.buf = r ?? [];
      s.pos = 0;
      if (r === null) s.done = true;
      else s.pending = ahead(s.src);
    }
    if (this.slots.length === 0 && !this.closed) this.finished = true;
    return out.length > 0 ? out : null;
  }

  /** Whole turns of every slot, first to last, that their buffered elements cover: at most `room` elements. */
  private wholeRounds(room: number): number {
    let rounds = Math.floor(room / this.slots.length);
    for (const s of this.slots) rounds = Math.min(rounds, s.buf.length - s.pos);
    return rounds;
  }

  private async start(): Promise<void> {
    const expanded = await expandShards(this.cfg.patterns, this.cfg.cwd);
    const shards = this.cfg.order ? this.cfg.order(expanded) : expanded;
    this.shards = shards;
    if (this.cfg.knobs) this.cfg.knobs.numShards = shards.length;
    // How much there is to read, for tools that estimate a pass's length from the bytes per element.
    if (this.c !== null) {
      const sizes = await Promise.all(
        shards.map((s) =>
          isUrl(s.location)
            ? 0
            : stat(s.location).then(
                (st) => st.size,
                () => 0,
              ),
        ),
      );
      this.c.sourceBytes = sizes.reduce((a, b) => a + b, 0);
    }
    for (let k = 0; k < this.cfg.parallelism; k++) {
      const slot = this.openNext(null);
      if (slot === null) break;
      this.slots.push(slot);
    }
  }

  /** The next unopened shard in a slot (on a worker thread free for it, `host` if it is), or null when none is left. */
  private openNext(host: WorkerHost | null): Slot<T> | null {
    const shards = this.shards as Shard[];
    if (this.nextShard >= shards.length || this.closed) return null;
    if (this.cfg.placement === 'worker') {
      // Opened ahead, it is the next shard (see prefetch).
      const e = this.early.shift();
      if (e !== undefined) {
        this.nextShard++;
        return { src: e.src, host: e.host, pending: ahead(e.src), buf: [], pos: 0, done: false };
      }
      const h = this.freeHost(host);
      const src = this.openOn(h, shards[this.nextShard++]);
      return { src, host: h, pending: ahead(src), buf: [], pos: 0, done: false };
    }
    const shard = shards[this.nextShard++];
    const src = mainSource(this.format as Format<T>, shard, { compression: this.cfg.compression, http: this.cfg.http }, this.c, this.clock);
    return { src, host: null, pending: ahead(src), buf: [], pos: 0, done: false };
  }

  private openOn(host: WorkerHost, shard: Shard): ShardSource<T> {
    return host.open<T>({ kind: this.cfg.kind, options: this.cfg.formatOptions }, shard, { compression: this.cfg.compression, http: this.cfg.http }, this.c);
  }

  /** A thread of this pass with nothing left to read (`preferred` if it has nothing), else one from the pool. */
  private freeHost(preferred: WorkerHost | null): WorkerHost {
    const free = (h: WorkerHost): boolean => h.idle() && !this.early.some((e) => e.host === h);
    if (preferred !== null && free(preferred)) return preferred;
    const other = this.hosts.find(free);
    if (other !== undefined) return other;
    const h = acquireHost();
    this.hosts.push(h);
    h.onIdle = () => this.prefetch(h);
    return h;
  }

  /**
   * A thread that has read its shard to the end starts on the next shard not yet opened, which
   * the slot that finds its end first will take: without it the thread sat idle while the reader
   * took the chunks it had posted ahead, and the reader then waited for the new shard's first
   * chunk (measured: 8–18 ms a shard switch on Parquet row groups, 1–10 ms on text). The order of
   * the elements is the same: which thread reads a shard does not change which slot takes it.
   */
  private prefetch(host: WorkerHost): void {
    const shards = this.shards;
    if (this.closed || shards === null || this.early.some((e) => e.host === host)) return;
    const index = this.nextShard + this.early.length;
    if (index >= shards.length) return;
    this.early.push({ host, src: this.openOn(host, shards[index]) });
  }

  async return(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const slots = this.slots;
    this.slots = [];
    this.early.length = 0;
    for (const h of this.hosts) h.onIdle = null;
    await Promise.all(slots.map((s) => s.src.close()));
    // Threads that read every shard to its end stay warm for the next pass; the others end.
    await Promise.all(this.hosts.map((h) => (this.finished ? releaseHost(h) : h.close())));
  }
}

/** One pass of a reader op. */
export function openReader<T>(node: OpNode<T>, cfg: ReaderConfig): Chunks<T> {
  return new Reader<T>(cfg, node.counters, { kind: node.kind, key: node.key, site: node.site });
}
