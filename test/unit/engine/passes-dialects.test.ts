/**
 * Planning in passes (src/engine/passes.ts) with a conversion in the plan: a conversion sets no
 * knob the runner can apply, so it alone never takes another run, and its reason stays the
 * model's (no run had it). Hand-made profiles stand for the runs.
 */
import { strict as assert } from 'node:assert';
import { planInPasses } from '../../../src/engine/passes';
import type { Dialect, Lever, Overrides, Profile } from '../../../src/shared/profile';
import { ProfileBuilder } from '../model/builder';

function inDialect(profile: Profile, dialect: Dialect, levers: Lever[]): Profile {
  return { ...profile, ops: profile.ops.map((op) => ({ ...op, dialect, levers })) };
}

describe('planning in passes, with a conversion', () => {
  it('takes no second run for a plan whose only change is a conversion', async () => {
    const runs: Overrides[] = [];
    const profile = async (o: Overrides): Promise<Profile> => {
      runs.push(o);
      return inDialect(new ProfileBuilder({ cores: 2 }).op({ kind: 'from' }).map('augment', { self: 12e-3, module: true }).batch(32).build({ rootElements: 20, rate: 2.5 }), 'tfjs-data', ['prefetch']);
    };
    const planned = await planInPasses(profile, 2, {}, {});
    assert.equal(runs.length, 1);
    assert.deepEqual(
      planned.plan.changes.map((c) => c.kind),
      ['convert'],
    );
  });

  it('runs the dialect’s own change in the next pass and keeps the conversion’s reason as the model said it', async () => {
    const runs: Overrides[] = [];
    const profile = async (o: Overrides): Promise<Profile> => {
      runs.push(o);
      const b = new ProfileBuilder().op({ kind: 'from' }).map('lookup', { latency: 10e-3, self: 20e-6, parallelism: 1 }).map('parse', { self: 1e-3 });
      return inDialect(b.build({ rootElements: 500, rate: 98, overrides: o }), 'tfjs-data', ['prefetch']);
    };
    const planned = await planInPasses(profile, 2, {}, {});
    assert.equal(runs.length, 2);
    assert.equal(runs[1][ProfileBuilder.id(1)]?.prefetch, 2);
    const convert = planned.plan.changes.find((c) => c.kind === 'convert');
    assert.ok(convert, JSON.stringify(planned.plan.changes));
    assert.match(convert.reason, /^tfjs-data cannot set parallelism of map\(lookup\)/);
  });
});
