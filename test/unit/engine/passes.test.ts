import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { planInPasses } from '../../../src/engine/passes';
import { runProfile } from '../../../src/runner/spawn';
import type { Overrides, Profile } from '../../../src/shared/profile';

const FILE = path.resolve(__dirname, '../../fixtures/pipelines/latency-bound.ts');

describe('planning in passes', function () {
  this.timeout(60_000);

  it('re-runs the pipeline with the first plan applied and keeps its changes in the final plan', async () => {
    const runs: Overrides[] = [];
    const profile = (o: Overrides): Promise<Profile> => {
      runs.push(o);
      return runProfile({ file: FILE, seconds: 0.8, warmupSeconds: 0.2, overrides: o });
    };
    const planned = await planInPasses(profile, 2, {}, {});
    assert.equal(planned.passes, 2);
    assert.deepEqual(runs[0], {});
    // The second run applied the first plan: the awaiting map got more calls in flight.
    assert.ok(Number(runs[1]['11:4']?.parallelism ?? 1) > 1, JSON.stringify(runs[1]));
    assert.ok(Number(planned.last.ops.find((o) => o.id === '11:4')!.knobs.parallelism) > 1);
    // The final plan still says to raise the parallelism written in the source (1).
    assert.ok(planned.plan.changes.some((c) => c.kind === 'parallelism' && c.opId === '11:4'));
    assert.ok(Number(planned.plan.overrides['11:4']?.parallelism ?? 1) > 1);
    assert.equal(planned.plan.currentRate, planned.analysis.measuredRate);
  });

  it('stops after one run when asked for one pass', async () => {
    let runs = 0;
    const planned = await planInPasses((o) => (runs++, runProfile({ file: FILE, seconds: 0.5, warmupSeconds: 0.2, overrides: o })), 1, {}, {});
    assert.equal(runs, 1);
    assert.equal(planned.last, planned.first);
  });
});
