/**
 * The model prices a reorder from the profile: a filter keeping share s moved ahead of a map
 * costing c per element saves (1 − s) × c per element of the map's input, and the plan proposes
 * it only where the source lets the filter cross (fields it reads are not written, nothing pinned).
 */
import { strict as assert } from 'node:assert';
import type { ModelOptions } from '../../../src/shared/analysis';
import { plan, predict, reshapedProfile } from '../../../src/model';
import { ProfileBuilder } from './builder';

const [SOURCE, DECODE, VALID] = [0, 1, 2].map((i) => ProfileBuilder.id(i));

function profile(): ReturnType<ProfileBuilder['build']> {
  // decode costs 21 ms of the main thread per call and cannot run in workers (no module); isValid keeps 38%.
  return new ProfileBuilder({ cores: 2 }).range().map('decode', { self: 21e-3 }).op({ kind: 'filter', fnName: 'isValid', self: 1e-6, keep: 0.38 }).build({ rootElements: 38, rate: 18 });
}

const independent: ModelOptions = { fields: { [DECODE]: { reads: ['bytes'], writes: ['image'] }, [VALID]: { reads: ['label'] } } };

describe('model: reorder a filter ahead of the maps it does not depend on', () => {
  it('proposes moving the filter before the map, with the saving in one sentence and the predicted rate', () => {
    const p = profile();
    const planned = plan(p, independent);
    const reorder = planned.changes[0];
    assert.ok(reorder && reorder.kind === 'reorder', JSON.stringify(planned.changes));
    assert.equal(reorder.opId, VALID);
    assert.equal(reorder.before, DECODE);
    assert.equal(reorder.reason, 'filter(isValid) drops 62% of elements; running it before map(decode) saves 0.62 × 21 ms per element');
    // As written a root element costs 21 ms / 0.38 of the main thread; reshaped, 21 ms.
    const asWritten = predict(p, {}, independent).rate;
    assert.ok(Math.abs(asWritten - 0.38 / 21e-3) / asWritten < 0.05, `as written ${asWritten}`);
    assert.ok(Math.abs(reorder.predictedRate! - 1 / 21e-3) / reorder.predictedRate! < 0.05, `reordered ${reorder.predictedRate}`);
    assert.ok(planned.predictedRate >= reorder.predictedRate! * 0.99);
  });

  it('reshapes the profile: the map sees the kept share of its calls, the filter pulls from the source', () => {
    const r = reshapedProfile(profile(), { opId: VALID, before: DECODE, crossed: [DECODE] });
    const byId = new Map(r.ops.map((o) => [o.id, o]));
    assert.deepEqual(byId.get(VALID)!.inputs, [SOURCE]);
    assert.deepEqual(byId.get(DECODE)!.inputs, [VALID]);
    assert.equal(r.pipeline.rootId, DECODE);
    assert.equal(byId.get(DECODE)!.counters.calls, 38);
    assert.deepEqual(
      r.ops.map((o) => o.id),
      [SOURCE, VALID, DECODE],
    );
  });

  const refused: Array<[string, ModelOptions]> = [
    ['the filter reads a field the map writes', { fields: { [DECODE]: { reads: ['bytes'], writes: ['image'] }, [VALID]: { reads: ['image'] } } }],
    ['the filter reads fields the source cannot name', { fields: { [DECODE]: { reads: ['bytes'], writes: ['image'] }, [VALID]: {} } }],
    ['the map builds a new element', { fields: { [DECODE]: { reads: ['bytes'] }, [VALID]: { reads: ['label'] } } }],
    ['the filter is pinned (keepPosition)', { fields: { [DECODE]: { reads: ['bytes'], writes: ['image'] }, [VALID]: { reads: ['label'], pinned: true } } }],
    ['the map is pinned (keepPosition)', { fields: { [DECODE]: { reads: ['bytes'], writes: ['image'], pinned: true }, [VALID]: { reads: ['label'] } } }],
    ['the map takes the element context', { fields: { [DECODE]: { reads: ['bytes'], writes: ['image'], usesContext: true }, [VALID]: { reads: ['label'] } } }],
    ['reshaping is off (knobs only)', { ...independent, reshape: false }],
  ];
  for (const [why, options] of refused) {
    it(`proposes no reorder when ${why}`, () => {
      assert.equal(
        plan(profile(), options).changes.find((c) => c.kind === 'reorder'),
        undefined,
      );
    });
  }

  it('proposes no reorder for a filter that keeps nearly everything', () => {
    const p = new ProfileBuilder({ cores: 2 }).range().map('decode', { self: 21e-3 }).op({ kind: 'filter', fnName: 'isValid', self: 1e-6, keep: 0.99 }).build({ rootElements: 99, rate: 47 });
    assert.equal(
      plan(p, independent).changes.find((c) => c.kind === 'reorder'),
      undefined,
    );
  });
});

describe('model: move deterministic work above a random step so a cache can keep it', () => {
  const [, AUG, DEC] = [0, 1, 2].map((i) => ProfileBuilder.id(i));
  // augment is random and cheap, decode costs 2 ms and is read again every pass of repeat().
  const build = (): ReturnType<ProfileBuilder['build']> =>
    new ProfileBuilder({ cores: 2 })
      .range(400)
      .map('augment', { self: 1e-6, random: true })
      .map('decode', { self: 2e-3, bytes: 600, heapBytes: 600 })
      .op({ kind: 'repeat', passElements: 400 })
      .batch(8)
      .build({ rootElements: 50, rate: 60 });
  const fields: ModelOptions['fields'] = { [AUG]: { reads: [], writes: ['flip'], usesContext: true }, [DEC]: { reads: ['bytes'], writes: ['image'] } };

  it('proposes moving the decode above the augmentation, then the cache it makes possible', () => {
    const planned = plan(build(), { fields, randomOps: [AUG] });
    assert.deepEqual(
      planned.changes.map((c) => [c.kind, c.opId]),
      [
        ['reorder', DEC],
        ['cache', DEC],
      ],
    );
    const reorder = planned.changes[0]!;
    assert.ok(reorder.kind === 'reorder');
    assert.equal(reorder.before, AUG);
    assert.equal(reorder.reason, 'map(decode) is deterministic and costs 2 ms per element; running it before map(augment), which is random, lets a cache keep its output across epochs');
    // As written no cache is allowed after the random augmentation: the plan is the reorder's.
    assert.ok(planned.predictedRate > 10 * plan(build(), { randomOps: [AUG] }).predictedRate);
  });

  it('proposes nothing when the decode reads what the augmentation writes', () => {
    const dependent = { ...fields, [DEC]: { reads: ['bytes', 'flip'], writes: ['image'] } };
    assert.equal(
      plan(build(), { fields: dependent, randomOps: [AUG] }).changes.find((c) => c.kind === 'reorder'),
      undefined,
    );
  });
});
