/**
 * The equivalence check on real pipelines run by the real runner: a filter moved ahead of a map
 * it does not depend on yields the same elements; one that reads what the map writes does not,
 * and the check refuses it. Random operators draw the same in both runs (the seed is fixed).
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { elementDigest } from '../../../src/runner/canonical';
import { checkEquivalence, compareSamples } from '../../../src/runner/equivalence';

const FILE = path.resolve(__dirname, '../../fixtures/pipelines/reorder-pairs.ts');

describe('runner: the equivalence check', function () {
  this.timeout(120_000);

  it('accepts a filter moved ahead of a map it does not read from', async () => {
    const v = await checkEquivalence({ file: FILE, exportName: 'mapThenFilter' }, { file: FILE, exportName: 'filterThenMap' }, { elements: 120 });
    assert.equal(v.equivalent, true, v.reason);
    assert.equal(v.elements, 120);
    assert.equal(v.sameSequence, true);
  });

  it('refuses a filter moved ahead of the map that writes the field it reads', async () => {
    const v = await checkEquivalence({ file: FILE, exportName: 'mapThenFilterImage' }, { file: FILE, exportName: 'filterImageThenMap' }, { elements: 50 });
    assert.equal(v.equivalent, false);
    assert.match(v.reason, /yields \d+ elements and the reshaped pipeline 0|differs|ended/);
  });

  it('fixes the seed, so a random map draws the same in both runs', async () => {
    const v = await checkEquivalence({ file: FILE, exportName: 'noisy' }, { file: FILE, exportName: 'noisy' }, { elements: 100 });
    assert.equal(v.equivalent, true, v.reason);
    const other = await checkEquivalence({ file: FILE, exportName: 'noisy' }, { file: FILE, exportName: 'noisy' }, { elements: 100, seed: 7 });
    assert.equal(other.equivalent, true, other.reason);
  });

  it('says why when a configuration cannot be sampled', async () => {
    const v = await checkEquivalence({ file: FILE, exportName: 'mapThenFilter' }, { file: FILE, exportName: 'nope' });
    assert.equal(v.equivalent, false);
    assert.match(v.reason, /reshaped pipeline could not be sampled: .*no pipeline named "nope"/);
  });

  it('compares the multiset where order is not kept, and the sequence where it is', () => {
    const a = { ok: true as const, digests: ['x', 'y', 'z'], exhausted: true };
    const b = { ok: true as const, digests: ['z', 'x', 'y'], exhausted: true };
    assert.equal(compareSamples(a, b, false).equivalent, true);
    const ordered = compareSamples(a, b, true);
    assert.equal(ordered.equivalent, false);
    assert.match(ordered.reason, /another order \(element 1 differs\)/);
    assert.equal(compareSamples(a, { ...b, digests: ['x', 'y', 'y'] }, false).equivalent, false);
  });

  it('digests elements by their structured content: keys in any order, bytes by value, -0 apart from 0', () => {
    assert.equal(elementDigest({ a: 1, b: Uint8Array.of(1, 2) }), elementDigest({ b: Uint8Array.of(1, 2), a: 1 }));
    assert.notEqual(elementDigest({ a: Uint8Array.of(1, 2) }), elementDigest({ a: Uint8Array.of(1, 3) }));
    assert.notEqual(elementDigest(Uint8Array.of(1, 0)), elementDigest(Uint16Array.of(1)));
    assert.notEqual(elementDigest(0), elementDigest(-0));
    assert.equal(
      elementDigest(
        new Map([
          [1, 'a'],
          [2, 'b'],
        ]),
      ),
      elementDigest(
        new Map([
          [2, 'b'],
          [1, 'a'],
        ]),
      ),
    );
    assert.notEqual(elementDigest({ a: undefined }), elementDigest({}));
    assert.throws(() => elementDigest({ f: () => 1 }), /function/);
  });
});
