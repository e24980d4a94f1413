/**
 * JSON Lines values packed for a worker crossing and rebuilt on the reader's thread are the values
 * JSON.parse gave: the same values, keys in the same order, plain objects — whether a chunk packs
 * by column in one pass (every row's values of the first row's kinds), falls back to packing column
 * by column (a value of another kind further down), or crosses as it is (differing keys).
 */
import assert from 'node:assert/strict';
import { deserialize, serialize } from 'node:v8';
import { jsonBuffers, packJson, unpackJson, type PackedJson } from '../../../src/data/internal/readers/jsonl-packed';

/** `values` packed, cloned as a worker's message is (buffers moved), and rebuilt, a few rows at a time. */
function roundTrip(values: unknown[]): { packed: PackedJson; back: unknown[] } {
  const packed = packJson(values);
  assert.ok(jsonBuffers(packed).every((b) => b instanceof ArrayBuffer));
  const crossed = deserialize(serialize(packed)) as PackedJson;
  const u = unpackJson(crossed);
  const back: unknown[] = [];
  for (let s = 0; s < u.count; s += 3) back.push(...u.take(s, Math.min(u.count, s + 3)));
  return { packed, back };
}

function sameAsParsed(lines: string[]): PackedJson {
  const values = lines.map((l) => JSON.parse(l) as unknown);
  const { packed, back } = roundTrip(values);
  assert.deepStrictEqual(back, values);
  back.forEach((v, i) => {
    const want = values[i];
    if (typeof want === 'object' && want !== null && !Array.isArray(want)) {
      assert.deepEqual(Object.keys(v as object), Object.keys(want), `row ${i}: keys in order`);
      assert.equal(Object.getPrototypeOf(v), Object.prototype, `row ${i}: a plain object`);
    }
  });
  return packed;
}

const kinds = (p: PackedJson): string => ('values' in p ? 'values' : p.columns.map((c) => c.t).join(''));

describe('plumber-data readers: JSON Lines packed for a worker crossing', () => {
  it('packs rows of one shape by column in one pass: numbers (-0 kept), booleans, strings (any UTF-16), values of any kind', () => {
    const lines = Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: i, x: i % 5 === 0 ? -0 : i / 3, ok: i % 2 === 0, name: `n${i}-é€😀${'\u0000'.repeat(i % 2)}`, any: i % 3 === 0 ? null : { i } }));
    // -0 does not survive JSON.stringify; write it by hand.
    lines[0] = lines[0].replace('"x":0', '"x":-0');
    const p = sameAsParsed(lines);
    assert.equal(kinds(p), 'nnbsa');
    assert.ok('columns' in p && p.columns[1].t === 'n' && Object.is(p.columns[1].v[0], -0), '-0 is packed as -0');
  });

  it('falls back when a value further down is of another kind than the first row’s, with the same values', () => {
    // One column at a time, each kind's check on its own: a number, a boolean, a string column.
    const row = (i: number, odd: 'a' | 'b' | 'c'): string => JSON.stringify({ a: odd === 'a' && i === 9 ? 'nine' : i, b: odd === 'b' && i === 4 ? 1 : i % 2 === 0, c: odd === 'c' && i === 7 ? 7 : `s${i}` });
    assert.equal(kinds(sameAsParsed(Array.from({ length: 12 }, (_, i) => row(i, 'a')))), 'abs');
    assert.equal(kinds(sameAsParsed(Array.from({ length: 12 }, (_, i) => row(i, 'b')))), 'nas');
    assert.equal(kinds(sameAsParsed(Array.from({ length: 12 }, (_, i) => row(i, 'c')))), 'nba');
    const nulls = Array.from({ length: 6 }, (_, i) => JSON.stringify({ a: i === 0 ? null : i }));
    assert.equal(kinds(sameAsParsed(nulls)), 'a');
  });

  it('crosses as they are rows with keys in another order, missing or extra keys, arrays and a __proto__ key', () => {
    assert.equal(kinds(sameAsParsed(['{"a":1,"b":2}', '{"b":3,"a":4}'])), 'values');
    assert.equal(kinds(sameAsParsed(['{"a":1,"b":2}', '{"a":3}'])), 'values');
    assert.equal(kinds(sameAsParsed(['{"a":1}', '{"a":3,"b":2}'])), 'values');
    assert.equal(kinds(sameAsParsed(['[1,2]', '[3,4]'])), 'values');
    assert.equal(kinds(sameAsParsed(['{"__proto__":{"p":1},"a":1}', '{"__proto__":{"p":2},"a":2}'])), 'values');
  });

  it('reads keys that look like code as keys: a key is never compiled into the packer as code', () => {
    const key = 'a"]; globalThis.packed = true; //';
    const lines = [JSON.stringify({ [key]: 1, 'b\n': 'x' }), JSON.stringify({ [key]: 2, 'b\n': 'y' })];
    assert.equal(kinds(sameAsParsed(lines)), 'ns');
    assert.equal((globalThis as Record<string, unknown>).packed, undefined);
  });

  it('packs shapes one after another with a packer each, values of the same keys in other kinds included', () => {
    const a = Array.from({ length: 5 }, (_, i) => JSON.stringify({ k: i, v: `s${i}` }));
    const b = Array.from({ length: 5 }, (_, i) => JSON.stringify({ k: `s${i}`, v: i }));
    assert.equal(kinds(sameAsParsed(a)), 'ns');
    assert.equal(kinds(sameAsParsed(b)), 'sn');
    assert.equal(kinds(sameAsParsed(a)), 'ns');
  });
});
