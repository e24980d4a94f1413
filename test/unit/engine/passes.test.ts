import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { inheritProbes, planInPasses, probesFor } from '../../../src/engine/passes';
import { runProfile } from '../../../src/runner/spawn';
import type { Overrides, Profile } from '../../../src/shared/profile';

const FILE = path.resolve(__dirname, '../../fixtures/pipelines/latency-bound.ts');
const MOVES = path.resolve(__dirname, '../../fixtures/pipelines/probe-moves.ts');

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
  it('probes only the first run; the second pass inherits its move costs and calibration and plans the same moves from them', async () => {
    assert.deepEqual((['profile', 'replan', 'verify'] as const).map(probesFor), [true, false, false]);
    const seen: Profile[] = [];
    const profile = async (o: Overrides, pass: number): Promise<Profile> => {
      const p = await runProfile({ file: MOVES, seconds: 0.8, warmupSeconds: 0.2, overrides: o, ...(probesFor(pass === 1 ? 'profile' : 'replan') ? {} : { probes: false }) });
      seen.push(p);
      return p;
    };
    // For a 4-core target: a second pass needs a first plan, and on a machine whose other work
    // left one core free the heavy fn's move may not pay (that decision is the model's, tested there).
    const planned = await planInPasses(profile, 2, { cores: 4 }, {});
    const [first, second] = seen;
    assert.ok(first && second, `two runs; the first plan: ${JSON.stringify(planned.plan.changes)} ${planned.plan.notes?.join(' ') ?? ''} ${planned.plan.coresNote ?? ''}`);
    const priced = first.ops.filter((o) => o.moveCost !== undefined);
    assert.ok(priced.length > 0, 'the first run priced a move');
    // The second run measured no move costs itself, and the pass planned from them all the same.
    assert.ok(second.ops.every((o) => o.moveCost === undefined));
    for (const op of priced) assert.deepEqual(planned.last.ops.find((o) => o.id === op.id)?.moveCost, op.moveCost);
    assert.equal(planned.last.machine.workerDispatchSeconds, first.machine.workerDispatchSeconds);
  });

  it('keeps what a later run measured itself over what the first measured', () => {
    const first = { machine: { workerDispatchSeconds: 1e-4 }, ops: [{ id: 'a', kind: 'map', randomObserved: true, moveCost: { samples: 8 } }] } as unknown as Profile;
    const next = { machine: { workerDispatchSeconds: 2e-4 }, ops: [{ id: 'a', kind: 'map', randomObserved: false }, { id: 'b', kind: 'map' }] } as unknown as Profile;
    const out = inheritProbes(next, first);
    assert.equal(out.machine.workerDispatchSeconds, 2e-4);
    assert.equal(out.ops[0]!.randomObserved, false);
    assert.deepEqual(out.ops[0]!.moveCost, { samples: 8 });
    assert.equal(out.ops[1]!.moveCost, undefined);
  });
});
