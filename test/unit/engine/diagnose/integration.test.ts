/**
 * `diagnose` with the real runner (child processes) on fixture pipelines: a plan that cannot gain
 * is measured and not kept, and a cache never goes after an augmentation that calls Math.random().
 * Assertions are on the decision's consistency with its own measurements, never on wall time.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { diagnose, staticRandomOps, type RunPurpose } from '../../../../src/engine/diagnose';
import { measuredSlower, reliablyFaster } from '../../../../src/engine/stats';
import { GraphWorkspace } from '../../../../src/engine/graph/workspace';
import { locateOps } from '../../../../src/engine/locate';
import { overridesFor, plan as modelPlan, predict } from '../../../../src/model';
import { runProfile } from '../../../../src/runner/spawn';
import type { Overrides, Profile } from '../../../../src/shared/profile';
import { noChangeWords } from '../../../../src/shared/analysis';

const PIPELINES = path.resolve(__dirname, '../../../fixtures/pipelines');

function runner(file: string, log: Array<{ purpose: RunPurpose; overrides: Overrides }>, exportName?: string) {
  return (overrides: Overrides, purpose: RunPurpose): Promise<Profile> => {
    log.push({ purpose, overrides });
    return runProfile({ file, exportName, seconds: purpose === 'verify' ? 0.8 : 1, warmupSeconds: 0.3, overrides });
  };
}

describe('diagnose with the real runner', function () {
  this.timeout(120_000);

  it('measures a plan that cannot gain (calls queue behind one lock) and keeps no change it did not measure faster', async () => {
    const file = path.join(PIPELINES, 'verify-serialized.ts');
    const log: Array<{ purpose: RunPurpose; overrides: Overrides }> = [];
    const d = await diagnose({ run: runner(file, log), passes: 1, verifyBudgetSeconds: 30 });
    assert.equal(d.error, undefined, d.error?.message);
    const v = d.plan.verification;
    assert.ok(v, 'the model proposed more calls in flight, so there was a plan to verify');
    // The runs alternated: as written (the profile), the plan, then, unless that pair settled it
    // (no gain on runs that found the same cores free), the plan and as written again.
    const runs = log.map((r) => [r.purpose, Object.keys(r.overrides).length > 0]);
    assert.deepEqual(runs.slice(0, 2), [
      ['profile', false],
      ['verify', true],
    ]);
    if (runs.length > 2)
      assert.deepEqual(runs.slice(2, 4), [
        ['verify', true],
        ['verify', false],
      ]);
    const asWritten = v.asWritten;
    const planned = v.tried.find((t) => t.changes.length > 0)!;
    assert.ok(planned.measured.windows >= 2, 'the plan was measured with a spread');
    // The decision agrees with what it measured.
    if (v.verdict === 'gain') {
      assert.ok(reliablyFaster(v.kept.measured, asWritten), JSON.stringify(v));
    } else {
      assert.deepEqual(d.plan.changes, []);
      assert.deepEqual(d.plan.overrides, {});
      assert.match(v.summary, /^no reliable gain on this machine right now: the plan measured /);
    }
    for (const c of d.plan.changes) {
      const alone = v.tried.find((t) => t.changes.length === 1 && t.changes[0] === `${c.kind}:${c.opId}`);
      if (alone) assert.ok(!measuredSlower(alone.measured, asWritten));
    }
    // One lock serialises every call: more in flight only hide the pipeline's turn between one
    // call and the next (a few percent of a 4 ms call), nowhere near the many times the model
    // expected of an awaiting op with one call in flight. Either verification found no reliable
    // gain, or it kept the few percent it measured — and said so.
    if (v.verdict === 'gain') {
      assert.ok(v.speedup < 1.15, v.summary);
      assert.ok(v.kept.measured.rate < 0.5 * v.kept.predictedRate!, 'the plan fell far short of what the model expected');
    } else assert.equal(v.verdict, 'no-gain', v.summary);
  });

  it('never caches after a map that calls Math.random(), which the source shows and the model would otherwise cache after', async () => {
    const file = path.join(PIPELINES, 'verify-random-augment.ts');
    const randomOps = staticRandomOps(locateOps(file, new GraphWorkspace()));
    assert.deepEqual(randomOps, ['17:4'], 'the graph marks map(augment) as random');
    const log: Array<{ purpose: RunPurpose; overrides: Overrides }> = [];
    const d = await diagnose({ run: runner(file, log), passes: 1, verify: false, options: { cores: 2, randomOps } });
    assert.equal(d.error, undefined, d.error?.message);
    // Without any sign of randomness the model caches after the augmentation (it saves the most).
    const blind = structuredClone(d.first);
    for (const op of blind.ops) {
      op.random = false;
      delete op.randomObserved;
    }
    assert.ok(
      modelPlan(blind, { cores: 2 }).changes.some((c) => c.kind === 'cache' && c.opId === '17:4'),
      'the scenario needs the blind model to cache after augment',
    );
    const caches = d.plan.changes.filter((c) => c.kind === 'cache');
    assert.ok(
      caches.every((c) => c.opId !== '17:4' && c.opId !== '18:4' && c.opId !== '19:4'),
      JSON.stringify(caches),
    );
    assert.ok(Object.entries(d.plan.overrides).every(([id, o]) => o.cache === undefined || id === '16:4'));
  });

  /** One pass of `nested-latency.ts`'s pipeline `name`: its diagnosis and the shard source, recorded inside the operator of kind `container`. */
  async function nested(name: string, container: 'interleave' | 'flatMap') {
    const d = await diagnose({ run: runner(path.join(PIPELINES, 'nested-latency.ts'), [], name), passes: 1, verify: false, options: { cores: 2 } });
    assert.equal(d.error, undefined, d.error?.message);
    const source = d.first.ops.find((o) => o.kind === 'from');
    const outer = d.first.ops.find((o) => o.kind === container);
    assert.ok(source && outer && source.parentId === outer.id, `the shard source is recorded inside the ${container}`);
    // What the run waited on is the source inside the shards, not the cheap map after them.
    assert.equal(d.analysis.bottleneck.opId, source.id, JSON.stringify(d.analysis.bottleneck));
    return { d, outer };
  }

  it('finds latency inside an interleave’s inner datasets and turns the interleave’s levers for it', async () => {
    const { d, outer: interleave } = await nested('interleaved', 'interleave');
    const cycle = d.plan.changes.find((c) => c.kind === 'cycleLength');
    assert.ok(cycle && cycle.kind === 'cycleLength' && cycle.opId === interleave.id && cycle.to > 2, JSON.stringify(d.plan.changes));
    // What the run waits on is inside the shards: the interleave's levers carry the plan. A move
    // of the cheap parse (5 µs a call) may ride along once the main thread binds at the raised
    // cycleLength (verification then measures the plan without it), but the levers alone are the gain.
    const levers = d.plan.changes.filter((c) => c.kind !== 'placement');
    const withoutMoves = predict(d.first, overridesFor(d.first, levers, { cores: 2 }), { cores: 2 }).rate;
    assert.ok(withoutMoves > 5 * d.analysis.measuredRate, `raising the interleave is the gain: ${withoutMoves} without moves against ${d.analysis.measuredRate} measured: ${JSON.stringify(d.plan.changes)}`);
  });

  it('finds latency inside a flatMap’s datasets, and says that an interleave, not a knob, overlaps it', async () => {
    const { d } = await nested('flattened', 'flatMap');
    assert.match(d.analysis.bottleneck.reason, /inside the datasets flatMap\(shard\) returns, which flatMap reads one after another.*an interleave in its place/);
    assert.ok(!d.plan.changes.some((c) => c.kind === 'placement' || c.kind === 'cache'), JSON.stringify(d.plan.changes));
    assert.equal(noChangeWords(d.analysis.bottleneck.resource), 'no knob Plumber can turn relieves what binds (the bottleneck says what would)');
  });
});
