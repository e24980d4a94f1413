import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Batch, from, range } from 'plumber-data';
import { rejection } from './helpers';

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
  norm(): number {
    return Math.hypot(this.x, this.y);
  }
}

describe('plumber-data serialisation: what round-trips through cache(path) and worker threads', function () {
  // Worker threads that load tsx take a few hundred ms to start on a busy machine.
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'plumber-serial-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** Writes `els` through cache(path) and reads them back in a second pass. */
  async function roundTrip<T>(els: T[]): Promise<unknown[]> {
    const path = join(dir, `${readdirSync(dir).length}.cache`);
    await from(els).cache(path).toArray();
    return from([] as unknown[])
      .cache(path)
      .toArray();
  }

  it('never mistakes a user object with a $plumberBatch key for a Batch', async () => {
    const user = { $plumberBatch: [new Float32Array([1, 2]), [2]], label: 'mine' };
    const [back] = await roundTrip([user]);
    assert.ok(!(back instanceof Batch));
    assert.deepEqual(back, user);
  });

  it('restores Batches at any depth of plain objects and arrays, next to look-alike user data', async () => {
    const b = new Batch(new Float32Array([1, 2, 3, 4]), [2, 2]);
    const el = { deep: [{ a: { b: { c: b } } }], lookalike: { data: new Float32Array([9]), shape: [1], length: 1 } };
    const [back] = (await roundTrip([el])) as [typeof el];
    assert.ok(back.deep[0].a.b.c instanceof Batch);
    assert.deepEqual(back.deep[0].a.b.c.row(1), new Float32Array([3, 4]));
    assert.ok(!(back.lookalike instanceof Batch));
    assert.deepEqual(back, el);
  });

  it('brings class instances back as plain objects with their own fields, and built-in types as themselves', async () => {
    const el = { p: new Point(3, 4), when: new Date(0), m: new Map([['k', 1n]]), s: new Set(['a']), re: /x+/g, u: new Uint16Array([7]) };
    const [back] = (await roundTrip([el])) as [Record<string, unknown>];
    assert.equal(Object.getPrototypeOf(back.p), Object.prototype, 'a class instance loses its class');
    assert.deepEqual(back.p, { x: 3, y: 4 });
    assert.ok(back.when instanceof Date && back.m instanceof Map && back.s instanceof Set && back.re instanceof RegExp && back.u instanceof Uint16Array);
    assert.deepEqual(back, { ...el, p: { x: 3, y: 4 } });
  });

  it('names the element and the value when a cache element holds a function, and keeps no file', async () => {
    const path = join(dir, 'fn.cache');
    const e = await rejection(
      range(6)
        .map((i) => (i === 3 ? { i, onload: function onload(): void {} } : { i }))
        .cache(path)
        .toArray(),
    );
    assert.equal(e.op.kind, 'cache');
    assert.equal(e.index, 3);
    assert.ok(e.message.includes(path), e.message);
    assert.match(e.message, /element 3 cannot be stored .*: it holds a function \(onload\) at \.onload\. cache\(path\) stores elements with v8\.serialize/);
    assert.deepEqual(readdirSync(dir), []);
  });

  it('names the element and the symbol when a cache element is one', async () => {
    const e = await rejection(
      from([1, Symbol('tag'), 3] as unknown[])
        .cache(join(dir, 's.cache'))
        .toArray(),
    );
    assert.equal(e.index, 1);
    assert.match(e.message, /element 1 cannot be stored .*: it holds a symbol \(Symbol\(tag\)\)\./);
  });

  describe('in worker threads', () => {
    let module: string;
    beforeEach(() => {
      module = join(dir, 'transforms.cjs');
      writeFileSync(
        module,
        [
          'exports.decode = (x) => (x === 12 ? () => x : x);',
          'exports.keep = (x) => x;',
          // What a worker fn sees, in words: a Buffer's base64, a Batch's second row.
          "exports.digest = (i) => ({ id: i, hash: Buffer.from([i, 255 - i, 7]), parts: [Buffer.from('ab')] });",
          "exports.seen = (x) => [Buffer.isBuffer(x.hash) ? x.hash.toString('base64') : 'not a Buffer', x.batch && typeof x.batch.row === 'function' ? Array.from(x.batch.row(1)) : 'not a Batch'];",
          'exports.scale = (b) => new b.constructor(b.data.map((v) => v * 2), b.shape);',
        ].join('\n'),
      );
    });

    it('brings Buffers back as Buffers, at any depth of plain objects and arrays', async () => {
      const main = await range(3)
        .map((i: number) => ({ id: i, hash: Buffer.from([i, 255 - i, 7]), parts: [Buffer.from('ab')] }))
        .toArray();
      const moved = await range(3)
        .map((i: number): unknown => i, { placement: 'worker', module, exportName: 'digest', parallelism: 2 })
        .toArray();
      assert.ok(moved.every((m) => Buffer.isBuffer((m as { hash: unknown }).hash) && Buffer.isBuffer((m as { parts: unknown[] }).parts[0])));
      // What code after the map computes from them is what it computes from the main thread's.
      const words = (xs: unknown[]): string[] => xs.map((m) => `${(m as { hash: Buffer }).hash.toString('base64')}/${(m as { parts: Buffer[] }).parts[0]!.toString()}`);
      assert.deepEqual(words(moved), words(main));
    });

    it('hands a worker fn Buffers and Batches as themselves, and brings a Batch it returns back as a Batch', async () => {
      const batch = new Batch(new Float32Array([1, 2, 3, 4]), [2, 2]);
      const [seen] = await from([{ hash: Buffer.from('hi'), batch }])
        .map((x: unknown) => x, { placement: 'worker', module, exportName: 'seen', parallelism: 1 })
        .toArray();
      assert.deepEqual(seen, [Buffer.from('hi').toString('base64'), [3, 4]]);
      const [scaled] = await from([batch])
        .map((b: Batch) => b, { placement: 'worker', module, exportName: 'scale', parallelism: 1 })
        .toArray();
      assert.ok(scaled instanceof Batch);
      assert.deepEqual(Array.from(scaled.row(1) as Float32Array), [6, 8]);
    });

    it('names the operator, the element and the function when a worker fn returns one', async () => {
      const e = await rejection(
        range(20)
          .map((x: number) => x, { placement: 'worker', module, exportName: 'decode', parallelism: 2 })
          .toArray(),
      );
      assert.equal(e.op.kind, 'map');
      assert.equal(e.index, 12);
      assert.match(e.message, /map\(decode\) in a worker thread returned a function at element 12: results must be structured-cloneable/);
      assert.doesNotMatch(e.message, /\[object Object\]/);
    });

    it('names the element and the value that cannot be sent to a worker', async () => {
      const e = await rejection(
        range(10)
          .map((x) => ({ x, tag: x === 7 ? Symbol('seven') : 'ok' }))
          .map((x: unknown) => x, { placement: 'worker', module, exportName: 'keep', parallelism: 1 })
          .toArray(),
      );
      assert.equal(e.op.kind, 'map');
      assert.equal(e.index, 7);
      assert.match(e.message, /map\(keep\) cannot send element 7 to a worker thread: it holds a symbol \(Symbol\(seven\)\) at \.tag\./);
    });
  });
});
