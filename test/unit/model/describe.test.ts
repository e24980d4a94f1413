import * as assert from 'node:assert/strict';
import { changeTitle, describeOp, formatBytes, formatRate, formatSeconds } from '../../../src/model';
import { ProfileBuilder } from './builder';

const id = ProfileBuilder.id;

describe('model: words', () => {
  const profile = new ProfileBuilder()
    .op({ kind: 'files' })
    .map('decode')
    .op({ kind: 'shuffle', bufferSize: 1024 })
    .batch(32)
    .op({ kind: 'repeat', count: -1 })
    .op({ kind: 'take', count: 5 })
    .prefetch(4)
    .build({ rootElements: 10, rate: 1 });

  it('labels operators the way the user wrote them', () => {
    assert.deepEqual(profile.ops.map(describeOp), ['files', 'map(decode)', 'shuffle(1024)', 'batch(32)', 'repeat()', 'take(5)', 'prefetch(4)']);
  });

  it('says where an inline fn is written, so two of them in one sentence are told apart', () => {
    const p = new ProfileBuilder().range().op({ kind: 'map' }).op({ kind: 'map' }).op({ kind: 'filter' }).op({ kind: 'interleave' }).build({ rootElements: 10, rate: 1 });
    const [, fetch, parse, keep, inner] = p.ops;
    assert.deepEqual(
      [fetch, parse, keep, inner].map((o) => describeOp(o!)),
      ['map(fn) on line 11', 'map(fn) on line 12', 'filter(fn) on line 13', 'interleave on line 14'],
    );
    assert.equal(changeTitle({ kind: 'parallelism', opId: fetch!.id, from: 1, to: 65, reason: '' }, p), 'set parallelism of map(fn) on line 11 to 65');
    // In another file than the pipeline's: the file too.
    fetch!.id = 'lib/fetch.ts:3:10';
    assert.equal(describeOp(fetch!), 'map(fn) at lib/fetch.ts:3');
    // A named fn needs no place; an id that names none (a cache the runner inserted) adds nothing.
    assert.equal(describeOp({ ...fetch!, fnName: 'fetchRecord' }), 'map(fetchRecord)');
    assert.equal(describeOp({ ...fetch!, id: 'cache#0' }), 'map(fn)');
  });

  it('titles each kind of change for a quick fix', () => {
    assert.equal(changeTitle({ kind: 'parallelism', opId: id(1), from: 1, to: 2, reason: '' }, profile), 'set parallelism of map(decode) to 2');
    assert.equal(changeTitle({ kind: 'placement', opId: id(1), to: 'worker', parallelism: 2, reason: '' }, profile), 'run map(decode) in worker threads');
    assert.equal(changeTitle({ kind: 'prefetch', opId: id(3), existing: false, size: 4, reason: '' }, profile), 'insert prefetch(4) after batch(32)');
    assert.equal(changeTitle({ kind: 'prefetch', opId: id(6), existing: true, from: 4, size: 8, reason: '' }, profile), 'change prefetch(4) after take(5) to prefetch(8)');
    assert.equal(changeTitle({ kind: 'cache', opId: id(1), estimatedBytes: 410e6, reason: '' }, profile), 'cache after map(decode) (≈ 410 MB)');
  });

  it('formats numbers with units a person reads at a glance', () => {
    assert.equal(formatSeconds(12.1e-3), '12.1 ms');
    assert.equal(formatSeconds(840e-6), '840 µs');
    assert.equal(formatSeconds(1.5), '1.5 s');
    assert.equal(formatRate(83.33), '83.3 el/s');
    assert.equal(formatRate(12400), '12,400 el/s');
    assert.equal(formatRate(1234), '1,234 el/s');
    // A cache serving epochs from memory: three figures, not "1,147,599".
    assert.equal(formatRate(1_147_599), '1,150,000 el/s');
    assert.equal(formatBytes(1.2e9), '1.2 GB');
  });
});
