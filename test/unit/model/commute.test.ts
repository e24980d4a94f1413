import * as assert from 'node:assert/strict';
import { plan, predict, reorderCandidates, reshapedProfile } from '../../../src/model';
import type { ModelOptions, OpFields, PlanChange } from '../../../src/shared/analysis';
import type { MoveCost, Profile } from '../../../src/shared/profile';
import { ProfileBuilder } from './builder';

const id = ProfileBuilder.id;

/** Cloning a 1 MB element costs 400 µs each way (sampled at 1 MB). */
const clone: MoveCost = { samples: 16, cloneInSeconds: 400e-6, cloneOutSeconds: 400e-6, inBytes: 1e6, outBytes: 1e6, inSizeBytes: 1e6, outSizeBytes: 1e6, mainCpuSeconds: 1e-3 };

/**
 * range → map(load) makes 1 MB elements → map(tokenize) in 2 worker threads (1 ms of work, 500 µs
 * of dispatch a call, mostly the clones) → map(resize) shrinks each element to 10 kB on the main thread.
 */
function pipeline(): Profile {
  return new ProfileBuilder({ cores: 4, availableCores: 4 })
    .range()
    .map('load', { self: 20e-6, bytes: 1e6 })
    .map('tokenize', { placement: 'worker', parallelism: 2, worker: 1e-3, dispatch: 500e-6, moveCost: clone, module: true, bytes: 1e6 })
    .map('resize', { self: 50e-6, bytes: 1e4 })
    .build({ rootElements: 1000, rate: 1000 / 0.6 });
}

const fields = (resize: Partial<OpFields> = {}, tokenize: Partial<OpFields> = {}): ModelOptions => ({
  cores: 4,
  fields: { [id(2)]: { reads: ['text'], writes: ['tokens'], ...tokenize }, [id(3)]: { reads: ['image'], writes: ['image'], ...resize } },
});

function reorderOf(changes: PlanChange[]): Extract<PlanChange, { kind: 'reorder' }> | undefined {
  return changes.find((c): c is Extract<PlanChange, { kind: 'reorder' }> => c.kind === 'reorder');
}

describe('model: a shrinking map moved ahead of a worker map it commutes with', () => {
  it('the reshaped profile carries the smaller elements through the crossed map, and its clones cost that much less', () => {
    const p = pipeline();
    const c = reorderCandidates(p, fields()).find((x) => x.opId === id(3));
    assert.deepEqual(c, { opId: id(3), before: id(2), crossed: [id(2)] });
    const moved = reshapedProfile(p, c!);
    const byId = new Map(moved.ops.map((o) => [o.id, o]));
    assert.deepEqual(byId.get(id(3))!.inputs, [id(1)]);
    assert.deepEqual(byId.get(id(2))!.inputs, [id(3)]);
    const k = byId.get(id(2))!.counters;
    const calls = k.calls;
    // Each element 990 kB smaller each way: 0.99 × 400 µs less per clone, half on each side.
    assert.ok(Math.abs(k.bytesProduced / k.produced - 1e4) < 1e-6);
    assert.ok(Math.abs(k.dispatchSeconds / calls - (500e-6 - 0.99 * 400e-6)) < 1e-9, `${k.dispatchSeconds / calls}`);
    assert.ok(Math.abs(k.workerCpuSeconds / calls - (1e-3 - 0.99 * 400e-6)) < 1e-9, `${k.workerCpuSeconds / calls}`);
    assert.ok(Math.abs(byId.get(id(3))!.counters.bytesProduced / byId.get(id(3))!.counters.produced - 1e4) < 1e-6);
  });

  it('is proposed with its bytes in the sentence, priced above the plan as written', () => {
    const p = pipeline();
    const asWritten = plan(p, { cores: 4, reshape: false });
    const planned = plan(p, fields());
    const r = reorderOf(planned.changes);
    assert.ok(r, JSON.stringify(planned.changes));
    assert.equal(r.opId, id(3));
    assert.equal(r.before, id(2));
    assert.match(r.reason, /^map\(resize\) shrinks its elements from 1 MB to 10 kB; running it before map\(tokenize\), which runs in worker threads, hands that map 10 kB an element instead of 1 MB$/);
    assert.ok(planned.predictedRate > asWritten.predictedRate * 1.2, `${planned.predictedRate} vs ${asWritten.predictedRate}`);
    assert.ok(predict(p, {}).rate < planned.predictedRate);
  });

  it('is not proposed when one reads or writes what the other writes, when either is pinned, or knobs only', () => {
    const p = pipeline();
    for (const [what, options] of [
      ['tokenize reads the image', fields({}, { reads: ['text', 'image'] })],
      ['resize writes the tokens', fields({ writes: ['image', 'tokens'] })],
      ['resize reads the tokens', fields({ reads: ['image', 'tokens'] })],
      ['pinned', fields({ pinned: true })],
      ['resize unknown', { cores: 4, fields: { [id(2)]: { reads: ['text'], writes: ['tokens'] } } }],
      ['knobs only', { ...fields(), reshape: false }],
    ] as const) {
      assert.equal(reorderOf(plan(p, options as ModelOptions).changes), undefined, what);
    }
  });
});
