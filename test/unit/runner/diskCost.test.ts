/** The disk cache probe: what cache(path) would pay per element, by doing what it does on the sample. */
import * as assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { serialize } from 'node:v8';
import { diskCacheCost, diskCacheStartCost } from '../../../src/runner/diskCost';

describe('runner: the disk cache probe', () => {
  it('gives the serialised bytes of an element and a write and a read per element, leaving no file', () => {
    const values = Array.from({ length: 8 }, (_, i) => ({ id: i, pixels: new Float64Array(1024).fill(i) }));
    const before = readdirSync(tmpdir()).filter((f) => f.startsWith('plumber-diskcost-')).length;
    const cost = diskCacheCost(values);
    assert.ok(cost);
    assert.equal(cost.samples, 8);
    assert.equal(cost.serializedBytes, serialize(values[0]).length);
    assert.ok(cost.writeSeconds > 0 && cost.readSeconds > 0, JSON.stringify(cost));
    assert.equal(readdirSync(tmpdir()).filter((f) => f.startsWith('plumber-diskcost-')).length, before);
  });

  it('prices nothing for elements cache(path) cannot store, or no sample', () => {
    assert.equal(diskCacheCost([{ f: () => 1 }]), undefined);
    assert.equal(diskCacheCost([]), undefined);
  });

  it('times what a first pass waits before its first record is written and a later pass before its first is read, leaving no file', async () => {
    const before = readdirSync(tmpdir()).filter((f) => f.startsWith('plumber-diskstart-')).length;
    const cost = await diskCacheStartCost({ id: 1, pixels: new Float64Array(8192).fill(1) });
    assert.ok(cost, 'expected a measurement');
    assert.ok(cost.startSeconds > 0 && cost.openSeconds > 0, JSON.stringify(cost));
    assert.equal(readdirSync(tmpdir()).filter((f) => f.startsWith('plumber-diskstart-')).length, before);
    // A value cache(path) cannot store: no figure.
    assert.equal(await diskCacheStartCost({ f: () => 1 }), undefined);
  });
});
