/**
 * Arrays of numbers keep their representation across a worker thread: a structured clone turns an
 * array of unboxed doubles into an array of boxed numbers; plumber-data sends such arrays as
 * Float64Array values and rebuilds arrays of doubles, with exact values. Only plain dense number arrays
 * qualify; anything else is left to the clone and arrives as the clone makes it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { join } from 'node:path';
import { from } from 'plumber-data';
import { encodeAll, restoreAll } from '../../../src/data/internal/crossing';

const MODULE = join(__dirname, '../../fixtures/data/number-work.ts');
const PROBE = join(__dirname, '../../fixtures/data/number-representation.ts');

/** `xs` as the other side of a crossing gets them. */
function crossed(xs: unknown[]): unknown[] {
  const sent = encodeAll(xs);
  const { items, numbers } = structuredClone({ items: sent.items, numbers: sent.numbers }, { transfer: sent.transfer });
  restoreAll(items, sent.marks, undefined, { numbers });
  return items;
}

const SPECIAL = [0.1, -0, NaN, Infinity, -Infinity, Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 53 + 2, -(2 ** 31) - 1, 1 / 3, 0, 7];

describe('plumber-data number arrays crossing worker threads', function () {
  this.timeout(60_000);

  it('keeps every value exactly: -0, NaN, infinities, extremes', () => {
    const original = [...SPECIAL];
    const [back] = crossed([original]) as [number[]];
    assert.notEqual(back, original);
    assert.ok(Array.isArray(back));
    assert.equal(back.length, SPECIAL.length);
    for (let i = 0; i < SPECIAL.length; i++) assert.ok(Object.is(back[i], SPECIAL[i]), `index ${i}: ${back[i]} vs ${SPECIAL[i]}`);
    // The sender's array is not changed.
    assert.deepEqual(original, SPECIAL);
  });

  it('sends the values of plain arrays of doubles in one Float64Array, at any depth, and nothing else', () => {
    const doubles = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5];
    const holey = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5];
    delete holey[3];
    const extra = Object.assign([0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5], { note: 'kept' });
    const mixed = [0.5, 1.5, 2.5, '3.5', 4.5, 5.5, 6.5, 7.5];
    const ints = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    const short = [0.5, 1.5];
    class Row extends Array<number> {}
    const sub = Row.from(doubles);
    const sent = encodeAll([doubles, { nested: { rows: [doubles, doubles] } }, holey, extra, mixed, ints, short, sub]);
    // The values travel in one Float64Array; the element holds where its array starts in it.
    assert.equal(sent.items[0], 0);
    const nested = sent.items[1] as { nested: { rows: unknown[] } };
    assert.equal(nested.nested.rows[0], 8);
    // A value shared by two paths goes once, and is shared on arrival as it was.
    assert.equal(nested.nested.rows[1], 8);
    assert.deepEqual(Array.from(sent.numbers ?? []), [...doubles, ...doubles]);
    assert.ok(sent.transfer.includes(sent.numbers!.buffer as ArrayBuffer));
    for (let i = 2; i < 8; i++) assert.equal(sent.items[i], [doubles, null, holey, extra, mixed, ints, short, sub][i], `element ${i} is left to the clone`);
    const back = crossed([{ nested: { rows: [doubles, doubles] } }, holey, extra, mixed, ints]) as [{ nested: { rows: number[][] } }, number[], number[] & { note: string }, unknown[], number[]];
    assert.equal(back[0].nested.rows[0], back[0].nested.rows[1]);
    assert.deepEqual(back[0].nested.rows[0], doubles);
    assert.equal(3 in back[1], false);
    assert.equal(back[2].note, 'kept');
    assert.deepEqual(back[3], mixed);
    assert.deepEqual(back[4], ints);
  });

  it('any element arrives as a structured clone of it would, number arrays included (property)', () => {
    const doubles = fc.array(fc.double(), { minLength: 8, maxLength: 40 });
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        doubles,
        fc.anything({ maxDepth: 2, withTypedArray: true, withMap: true, withSet: true, withSparseArray: true }),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(fc.string(), tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(fc.array(value, { maxLength: 6 }), (xs) => {
        const before = structuredClone(xs);
        const back = crossed(xs);
        assert.ok(isDeepStrictEqual(back, structuredClone(xs)), 'crossed differently from a clone');
        // The sender's elements are never changed (compared clone to clone: a clone is not always deep-equal to its original).
        assert.ok(isDeepStrictEqual(structuredClone(xs), before));
      }),
      { numRuns: 300 },
    );
  });

  it('through a worker map, elements and results keep their values, in order', async () => {
    const inputs = [...Array(30).keys()].map((i) => ({ id: i, v: SPECIAL.map((x) => x * (i + 1)) }));
    const out = (await from(inputs)
      .map((x: unknown) => x, { placement: 'worker', module: MODULE, exportName: 'echo', parallelism: 2 })
      .toArray()) as typeof inputs;
    assert.equal(out.length, 30);
    for (let i = 0; i < 30; i++) {
      assert.equal(out[i]!.id, i);
      for (let k = 0; k < SPECIAL.length; k++) assert.ok(Object.is(out[i]!.v[k], SPECIAL[k]! * (i + 1)));
    }
    const ramps = (await from([3, 1, 2])
      .map((x: number) => x, { placement: 'worker', module: MODULE, exportName: 'ramp' })
      .toArray()) as unknown as number[][];
    assert.deepEqual(
      ramps.map((a) => a[1]),
      [3.25, 1.25, 2.25],
    );
  });

  it('V8 stores the arrays a worker fn is handed, and the arrays it returns, as unboxed doubles', () => {
    const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', PROBE], { cwd: join(__dirname, '../../..'), encoding: 'utf8', timeout: 60_000 });
    const r = JSON.parse(out) as { original: boolean; cloned: boolean; inWorker: { doubles: boolean; sum: number }[]; sums: number[]; returned: boolean[]; returnedEqual: boolean };
    // The check itself tells the two apart: a clone holds boxed numbers.
    assert.equal(r.original, true);
    assert.equal(r.cloned, false);
    assert.deepEqual(
      r.inWorker.map((g) => g.doubles),
      [true, true, true, true],
    );
    assert.deepEqual(
      r.inWorker.map((g) => g.sum),
      r.sums,
    );
    assert.deepEqual(r.returned, [true, true, true, true]);
    assert.equal(r.returnedEqual, true);
  });
});
