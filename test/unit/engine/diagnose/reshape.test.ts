/**
 * Verification never runs a cache the plan's reorder frees from a random op without the reorder:
 * such a subset of the plan would replay the first epoch's draws. A plan with a reorder is judged
 * on the reshaped profile, where the random op is below the cache.
 */
import * as assert from 'node:assert/strict';
import { frozenWithoutReorder, reorderIn } from '../../../../src/engine/diagnose/reshape';
import { reshapedFor } from '../../../../src/model';
import { cacheAfterRandom } from '../../../../src/engine/randomness';
import type { PlanChange } from '../../../../src/shared/analysis';
import { ProfileBuilder } from '../../model/builder';

const [SRC, AUG, DEC] = [0, 1, 2].map((i) => ProfileBuilder.id(i));
const profile = new ProfileBuilder({ cores: 2 })
  .range(400)
  .map('augment', { self: 1e-6, random: true })
  .map('decode', { self: 2e-3, bytes: 600 })
  .op({ kind: 'repeat', passElements: 400 })
  .batch(8)
  .build({ rootElements: 50, rate: 60 });
const reorder: PlanChange = { kind: 'reorder', opId: DEC, before: AUG, reason: '' };
const cache: PlanChange = { kind: 'cache', opId: DEC, estimatedBytes: 240_000, reason: '' };

describe('diagnose: a cache a reorder frees', () => {
  it('is never run without the reorder', () => {
    assert.equal(frozenWithoutReorder([cache], profile, [AUG]), true);
    assert.equal(frozenWithoutReorder([reorder, cache], profile, [AUG]), false);
    assert.equal(frozenWithoutReorder([{ ...cache, opId: SRC }], profile, [AUG]), false);
    assert.equal(reorderIn([cache, reorder]), reorder);
  });

  it('is after a random op as written, and after none once the plan reshapes the pipeline', () => {
    assert.equal(cacheAfterRandom(DEC, profile, [AUG])?.id, AUG);
    assert.equal(cacheAfterRandom(DEC, reshapedFor(profile, [reorder, cache]), [AUG]), undefined);
    assert.equal(reshapedFor(profile, [cache]), profile);
  });
});
