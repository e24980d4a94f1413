/** batch and unbatch, with stacking of typed arrays (and objects of them) into one buffer. */
import type { OpCounters } from '../../tracing';
import { PipelineError, type OpRef } from '../../errors';
import { type Chunks, countProduced, now, type OpNode, type Session, pull, Sampler } from '../core';
import { Batch, type TypedArray } from '../batch-class';

type TypedArrayCtor = new (n: number) => TypedArray;

function shapeOf(x: unknown): { ctor: TypedArrayCtor; shape: number[] } | null {
  if (x instanceof Batch) return { ctor: x.data.constructor as TypedArrayCtor, shape: x.shape };
  if (ArrayBuffer.isView(x) && !(x instanceof DataView)) return { ctor: x.constructor as TypedArrayCtor, shape: [(x as TypedArray).length] };
  return null;
}

function stackTensors(xs: readonly unknown[], ctor: TypedArrayCtor, shape: number[]): Batch | null {
  const size = shape.reduce((a, b) => a * b, 1);
  const out = new ctor(xs.length * size);
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    const s = shapeOf(x);
    if (s === null || s.ctor !== ctor || s.shape.length !== shape.length || s.shape.some((d, k) => d !== shape[k])) return null;
    (out as Uint8Array).set((x instanceof Batch ? x.data : x) as Uint8Array, i * size);
  }
  return new Batch(out, [xs.length, ...shape]);
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (x === null || typeof x !== 'object') return false;
  const p = Object.getPrototypeOf(x);
  return p === Object.prototype || p === null;
}

/** One batch: a Batch, an object of Batches, or (anything else) the elements as an array. */
export function stack(xs: unknown[]): unknown {
  const first = xs[0];
  const s = shapeOf(first);
  if (s !== null) return stackTensors(xs, s.ctor, s.shape) ?? xs;
  if (isPlainObject(first)) {
    const keys = Object.keys(first);
    if (keys.length === 0) return xs;
    const out: Record<string, Batch> = {};
    for (const k of keys) {
      const v = first[k];
      let b: Batch | null = null;
      if (typeof v === 'number') {
        const data = new Float64Array(xs.length);
        for (let i = 0; i < xs.length; i++) {
          const x = xs[i];
          const y = isPlainObject(x) ? x[k] : undefined;
          if (typeof y !== 'number') return xs;
          data[i] = y;
        }
        b = new Batch(data, [xs.length]);
      } else {
        const vs = shapeOf(v);
        if (vs === null) return xs;
        b = stackTensors(
          xs.map((x) => (isPlainObject(x) ? x[k] : undefined)),
          vs.ctor,
          vs.shape,
        );
      }
      if (b === null) return xs;
      out[k] = b;
    }
    // Every element must have exactly these keys, or stacking would drop fields.
    for (const x of xs) if (!isPlainObject(x) || Object.keys(x).length !== keys.length) return xs;
    return out;
  }
  return xs;
}

/** The rows of one batch: the inverse of `stack`. */
export function unstack(b: unknown): unknown[] | null {
  if (Array.isArray(b)) return b;
  if (b instanceof Batch) {
    const rows = new Array<unknown>(b.length);
    for (let i = 0; i < b.length; i++) rows[i] = b.row(i);
    return rows;
  }
  if (isPlainObject(b)) {
    const keys = Object.keys(b);
    if (keys.length === 0 || !keys.every((k) => b[k] instanceof Batch)) return null;
    const n = (b[keys[0]] as Batch).length;
    if (!keys.every((k) => (b[k] as Batch).length === n)) return null;
    const rows = new Array<unknown>(n);
    for (let i = 0; i < n; i++) {
      const row: Record<string, unknown> = {};
      for (const k of keys) row[k] = (b[k] as Batch).row(i);
      rows[i] = row;
    }
    return rows;
  }
  return null;
}

class BatchOp implements Chunks<unknown> {
  private readonly s = new Sampler();
  /** Stacking is timed apart from waiting: its cost differs (a copy of every element). */
  private readonly st = new Sampler();
  private held: unknown[] = [];
  private done = false;
  constructor(
    private readonly up: Chunks<unknown>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private readonly n: number,
    private readonly dropRemainder: boolean,
  ) {}
  async next(): Promise<unknown[] | null> {
    // One batch per call: the upstream is asked only for what this batch still lacks.
    const upC = this.upC;
    while (!this.done && this.held.length < this.n) {
      const w = upC === null ? 0 : this.s.tick();
      const t0 = w === 0 ? 0 : now();
      const chunk = await this.up.next(this.n - this.held.length);
      if (w !== 0) {
        const t1 = now();
        (upC as OpCounters).waitSeconds += this.s.credit(t1 - t0, w, t1) / 1000;
      }
      if (chunk === null) this.done = true;
      else {
        if (this.c !== null) this.c.pulled += chunk.length;
        if (this.held.length === 0) this.held = chunk;
        else for (let i = 0; i < chunk.length; i++) this.held.push(chunk[i]);
      }
    }
    const xs = this.held;
    if (xs.length === 0 || (xs.length < this.n && this.dropRemainder)) return null;
    this.held = [];
    const c = this.c;
    const w = c === null ? 0 : this.st.tick();
    const t0 = w === 0 ? 0 : now();
    const out = [stack(xs)];
    if (c !== null) {
      if (w !== 0) {
        const d = now() - t0;
        c.selfSeconds += (d * w) / 1000;
        this.st.adapt(d);
      }
      countProduced(c, out);
    }
    return out;
  }
  async return(): Promise<void> {
    this.done = true;
    this.held = [];
    await this.up.return();
  }
}

class UnbatchOp implements Chunks<unknown> {
  private readonly s = new Sampler();
  private rows: unknown[] = [];
  private pos = 0;
  private index = 0;
  constructor(
    private readonly up: Chunks<unknown>,
    private readonly upC: OpCounters | null,
    private readonly c: OpCounters | null,
    private readonly op: OpRef,
  ) {}
  async next(hint: number): Promise<unknown[] | null> {
    while (this.pos >= this.rows.length) {
      const chunk = await pull(this.up, 1, this.upC, this.s);
      if (chunk === null) return null;
      const rows = unstack(chunk[0]);
      if (rows === null) {
        void this.return();
        throw new PipelineError(this.op, this.index, new TypeError(`unbatch() needs batches: arrays, Batch objects, or objects of Batches (what batch() produces), not ${kindOf(chunk[0])}.`));
      }
      this.index++;
      if (this.c !== null) this.c.pulled++;
      this.rows = rows;
      this.pos = 0;
    }
    let out: unknown[];
    if (this.pos === 0 && this.rows.length <= hint) out = this.rows;
    else out = this.rows.slice(this.pos, this.pos + hint);
    this.pos += out.length;
    if (this.pos >= this.rows.length) this.rows = [];
    if (this.c !== null) countProduced(this.c, out);
    return out;
  }
  async return(): Promise<void> {
    this.rows = [];
    await this.up.return();
  }
}

export function openBatch(node: OpNode, session: Session, n: number, dropRemainder: boolean): Chunks<unknown> {
  const input = node.inputs[0];
  return new BatchOp(input.open(session), input.counters, node.counters, n, dropRemainder);
}
export function openUnbatch(node: OpNode, session: Session): Chunks<unknown> {
  const input = node.inputs[0];
  return new UnbatchOp(input.open(session), input.counters, node.counters, { kind: node.kind, key: node.key, site: node.site });
}

/** What a value is, for an error message: "a Float32Array", "a string", "null". */
export function kindOf(x: unknown): string {
  if (x === null || x === undefined) return String(x);
  if (typeof x !== 'object') return `a ${typeof x}`;
  const name = (Object.getPrototypeOf(x) as { constructor?: { name?: string } } | null)?.constructor?.name;
  return name && name !== 'Object' ? `a ${name}` : 'a plain object';
}
