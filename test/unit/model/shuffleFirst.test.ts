import * as assert from 'node:assert/strict';
import { analyze, plan, reshapedProfile, shuffleCandidates } from '../../../src/model';
import type { ModelOptions, OpFields, PlanChange } from '../../../src/shared/analysis';
import type { Profile } from '../../../src/shared/profile';
import { ProfileBuilder } from './builder';

const id = ProfileBuilder.id;

/** range(10,000) → map(decode) 4 ms → shuffle(size) → batch(10), the shuffle's fill behind the decode. */
function shuffled(size = 1000, first?: number): Profile {
  const p = new ProfileBuilder()
    .op({ kind: 'range', cardinality: 10000, bytes: 8 })
    .map('decode', { self: 4e-3, bytes: 4000 })
    .op({ kind: 'shuffle', bufferSize: size, bytes: 4000 })
    .op({ kind: 'batch', batchSize: 10, cardinality: 1000 })
    .build({ rootElements: 250, rate: 25 });
  if (first !== undefined) p.run.firstElementSeconds = first;
  p.run.baseRssBytes = 50e6;
  return p;
}

const decodeFields = (extra: Partial<OpFields> = {}): ModelOptions => ({ cores: 1, fields: { [id(1)]: { reads: [], writes: ['image'], ...extra } } });

function reorderOf(changes: PlanChange[]): Extract<PlanChange, { kind: 'reorder' }> | undefined {
  return changes.find((c): c is Extract<PlanChange, { kind: 'reorder' }> => c.kind === 'reorder');
}

describe('model: a shuffle moved ahead of the work its buffer fills behind', () => {
  it('is proposed when the fill dominates the first batch, priced by the reshaped first batch, the rate kept', () => {
    const p = shuffled(1000, 5);
    const asWritten = plan(p, { cores: 1, reshape: false });
    const planned = plan(p, decodeFields());
    const r = reorderOf(planned.changes);
    assert.ok(r, JSON.stringify(planned.changes));
    assert.equal(r.opId, id(2));
    assert.equal(r.before, id(1));
    assert.equal(planned.changes[0], r, 'the reorder comes first');
    // As written: start (5 − 4.04 s measured) + 1,000 decodes at 4 ms + one batch. Moved: the buffer
    // fills from the range (no work), then one batch of 10 decodes: the start + ≈ 0.04 s.
    const before = asWritten.time!.firstBatchSeconds;
    assert.ok(Math.abs(before - 5) < 1e-6, `as written ${before}`);
    assert.ok(r.firstBatchSeconds !== undefined && r.firstBatchSeconds < 1.1 && r.firstBatchSeconds > 0.96, `moved ${r.firstBatchSeconds}`);
    assert.equal(planned.time?.firstBatchSeconds, r.firstBatchSeconds);
    // The decode still runs once per element: the rate is the plan as written's.
    assert.ok(Math.abs(planned.predictedRate - asWritten.predictedRate) <= 1e-6 * asWritten.predictedRate, `${planned.predictedRate} vs ${asWritten.predictedRate}`);
    // The buffer holds the range's numbers instead of the decoded images.
    const buffer = (plan: typeof planned) => plan.memory?.parts.find((x) => x.what === 'shuffle buffer')?.bytes;
    assert.equal(buffer(asWritten), 1000 * 4000);
    assert.equal(buffer(planned), 1000 * 8);
    assert.match(r.reason, /^the shuffle buffer of 1,000 fills behind map\(decode\): ≈ 4 s; moved before it, the first batch comes in ≈ 1(\.\d+)? s \(predicted\)$/);
  });

  it('the reshaped profile hands the shuffle the elements from above the map, at their size, and keeps every count', () => {
    const p = shuffled();
    const [c] = shuffleCandidates(p, decodeFields());
    assert.deepEqual(c, { opId: id(2), before: id(1), crossed: [id(1)] });
    const moved = reshapedProfile(p, c!);
    const byId = new Map(moved.ops.map((o) => [o.id, o]));
    assert.deepEqual(byId.get(id(2))!.inputs, [id(0)]);
    assert.deepEqual(byId.get(id(1))!.inputs, [id(2)]);
    assert.deepEqual(byId.get(id(3))!.inputs, [id(1)]);
    assert.deepEqual(byId.get(id(1))!.counters, p.ops[1]!.counters, 'a map crossed by a shuffle sees every element');
    const range = p.ops[0]!.counters;
    assert.equal(byId.get(id(2))!.counters.bytesProduced, (range.bytesProduced / range.produced) * p.ops[2]!.counters.produced);
    assert.equal(analyze(p).time!.firstBatchParts[0]!.what, 'shuffle fill');
  });

  it('is not proposed across a map that takes the element context, is random, is pinned, or whose fields are unknown; nor with reshape: false', () => {
    const p = shuffled(1000, 5);
    for (const [what, options] of [
      ['context', decodeFields({ usesContext: true })],
      ['pinned map', decodeFields({ pinned: true })],
      ['pinned shuffle', { cores: 1, fields: { [id(1)]: { reads: [], writes: ['image'] }, [id(2)]: { pinned: true } } }],
      ['random', { ...decodeFields(), randomOps: [id(1)] }],
      ['unknown', { cores: 1 }],
      ['knobs only', { ...decodeFields(), reshape: false }],
    ] as const) {
      assert.equal(reorderOf(plan(p, options as ModelOptions).changes), undefined, what);
    }
  });

  it('is not proposed when the fill does not dominate the first batch or is short', () => {
    // A buffer of 10 fills in 40 ms: a share of the first batch, but no one waits for it.
    assert.equal(reorderOf(plan(shuffled(10), decodeFields()).changes), undefined, 'short');
    // A start of 60 s measured: the fill of 4 s is not what the first batch waits for.
    assert.equal(reorderOf(plan(shuffled(1000, 60), decodeFields()).changes), undefined, 'not dominant');
  });
});
