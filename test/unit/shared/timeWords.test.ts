import * as assert from 'node:assert/strict';
import type { TimeProjection } from '../../../src/shared/analysis';
import { epochsLine, firstBatchLine, timeLines, timeShort } from '../../../src/shared/timeWords';

const filling: TimeProjection = {
  firstBatchSeconds: 41,
  firstBatchParts: [
    { what: 'shuffle fill', opId: '3:4', seconds: 40 },
    { what: 'first element', opId: '4:4', seconds: 1 },
  ],
  firstBatchSummary: 'the shuffle buffer of 10,000 fills behind map(decode): ≈ 40 s of ≈ 41 s; move shuffle(10000) before map(decode) or shrink its buffer',
  epochSeconds: [42, 9],
  epochSummary: '1,000 batches an epoch (the root’s cardinality): the first ≈ 42 s (the cache fills), each later one ≈ 9 s',
};

describe('words for the first batch and the epochs', () => {
  it('marks every figure as predicted, the first epoch then the later ones', () => {
    assert.equal(firstBatchLine(filling), `First batch ≈ 41 s (predicted): ${filling.firstBatchSummary}.`);
    assert.equal(epochsLine(filling), `Epochs ≈ 42 s, then 9 s (predicted): ${filling.epochSummary}.`);
    assert.equal(timeShort(filling), 'first batch ≈ 41 s · epoch ≈ 42 s, then 9 s (predicted)');
  });

  it('says "each" when later epochs take as long, and nothing of epochs for an endless pipeline', () => {
    assert.match(epochsLine({ ...filling, epochSeconds: [42, 41] }) ?? '', /^Epochs ≈ 42 s each \(predicted\)/);
    const endless = { ...filling, epochSeconds: undefined, epochSummary: undefined };
    assert.equal(epochsLine(endless), undefined);
    assert.equal(timeShort(endless), 'first batch ≈ 41 s (predicted)');
  });

  it('gives the plan’s figures when the plan changes something, else the pipeline’s as written', () => {
    const planned = { ...filling, firstBatchSeconds: 2 };
    assert.deepEqual(timeLines(filling, { changes: [], time: planned }), [firstBatchLine(filling), epochsLine(filling)]);
    const lines = timeLines(filling, { changes: [{ kind: 'cache', opId: '2:4', estimatedBytes: 1, reason: 'r' }], time: planned });
    assert.match(lines[0]!, /^With the plan: First batch ≈ 2 s \(predicted\)/);
    assert.deepEqual(timeLines(undefined, { changes: [] }), []);
  });
});
