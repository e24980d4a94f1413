import { strict as assert } from 'node:assert';
import { Batch } from '../../../src/data/internal/batch-class';
import { copyChange, crossCopy } from '../../../src/runner/fidelity';

class Point {
  constructor(readonly x: number) {}
  twice(): number {
    return this.x * 2;
  }
}

describe('what a copy between threads changes in an element', () => {
  it('finds nothing in plain data: records, arrays, typed arrays, Maps, Sets, Dates', () => {
    const plain = { id: 3, label: 'cat', pixels: new Float32Array([0.5, 1]), tokens: [1, 2, 3], counts: new Map([['ab', 2]]), tags: new Set(['x']), at: new Date(0), raw: new Uint8Array([1, 2]).buffer };
    assert.equal(copyChange(plain, 'result'), undefined);
    assert.equal(copyChange([plain, plain], 'input'), undefined);
    assert.equal(copyChange('text', 'input'), undefined);
    assert.equal(copyChange(undefined, 'result'), undefined);
  });

  it('names the class whose instances arrive as plain objects, however deep they sit', () => {
    assert.deepEqual(copyChange(new Point(1), 'result'), { side: 'result', change: 'class', what: 'Point objects' });
    assert.deepEqual(copyChange({ batch: [new Point(1)] }, 'input'), { side: 'input', change: 'class', what: 'Point objects' });
    assert.deepEqual(copyChange(new Map([['p', new Point(2)]]), 'result'), { side: 'result', change: 'class', what: 'Point objects' });
  });

  it('takes Buffers and Batches that plain objects and arrays lead to as crossing whole (plumber-data rebuilds them), and finds them inside anything else', () => {
    const batch = new Batch(new Float32Array([1, 2, 3, 4]), [2, 2]);
    assert.equal(copyChange(Buffer.from('abc'), 'result'), undefined);
    assert.equal(copyChange({ path: 'a.wav', bytes: Buffer.from('abc'), rows: [batch] }, 'input'), undefined);
    assert.equal(copyChange(batch, 'input'), undefined);
    assert.deepEqual(copyChange(new Map([['k', Buffer.from('abc')]]), 'result'), { side: 'result', change: 'buffer', what: 'Buffers' });
    assert.deepEqual(copyChange({ byName: new Map([['b', batch]]) }, 'result'), { side: 'result', change: 'class', what: 'Batch objects' });
  });

  it('copies as a worker gets it: Buffers and Batches rebuilt around their own copied bytes', () => {
    const original = { hash: Buffer.from([1, 2, 3]), batch: new Batch(new Float32Array([1, 2]), [2]) };
    const copy = crossCopy(original);
    assert.ok(copy.ok);
    const c = copy.value as typeof original;
    assert.ok(Buffer.isBuffer(c.hash) && c.batch instanceof Batch);
    assert.deepEqual(c, original);
    c.hash[0] = 99;
    c.batch.data[0] = 99;
    assert.equal(original.hash[0], 1, 'the original Buffer is not shared');
    assert.equal(original.batch.data[0], 1, 'the original Batch is not shared');
  });

  it('names what cannot be copied at all', () => {
    assert.deepEqual(copyChange({ id: 1, onDone: () => 1 }, 'result'), { side: 'result', change: 'uncloneable', what: 'functions' });
    assert.deepEqual(copyChange([Promise.resolve(1)], 'result'), { side: 'result', change: 'uncloneable', what: 'promises' });
  });

  it('finds properties keyed by symbols, which a copy drops', () => {
    const tagged = { id: 1, [Symbol('meta')]: 'kept only here' };
    assert.deepEqual(copyChange(tagged, 'result'), { side: 'result', change: 'altered', what: 'properties keyed by symbols' });
    assert.deepEqual(copyChange([{ id: 2 }, tagged], 'input'), { side: 'input', change: 'altered', what: 'properties keyed by symbols' });
  });
});
