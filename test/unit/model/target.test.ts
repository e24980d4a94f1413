/**
 * Plans for another machine (issue 52, part 4): the target the model gives a plan made for other
 * cores than here, and the one wording every surface labels its figure with.
 */
import * as assert from 'node:assert/strict';
import { plan as planOf, planTarget } from '../../../src/model';
import { verdictLine } from '../../../src/cli/render';
import { planFigure } from '../../../src/server/features/advice';
import type { Plan, PlanTarget, Verification } from '../../../src/shared/analysis';
import { forOtherMachine, targetWords } from '../../../src/shared/words';
import { ProfileBuilder } from './builder';

/** range → map(decode) in one worker thread → batch(8), on a 2-core machine. */
const profile = new ProfileBuilder({ cores: 2 }).range().map('decode', { placement: 'worker', worker: 4e-3, dispatch: 50e-6, parallelism: 1 }).batch(8).build({ rootElements: 200, rate: 30 });
const decode = profile.ops.find((o) => o.kind === 'map')!.id;

function planWith(parallelism: number, verification?: Verification): Plan {
  return {
    changes: [{ kind: 'parallelism', opId: decode, from: 1, to: parallelism, reason: 'cores are idle' }],
    currentRate: 30,
    predictedRate: 30 * parallelism,
    predictedBound: 30 * parallelism,
    predictedBottleneck: { resource: 'cpu', reason: 'all cores busy' },
    overrides: { [decode]: { parallelism } },
    ...(verification ? { verification } : {}),
  };
}

const gain: Verification = {
  verdict: 'gain',
  asWritten: { rate: 30, halfWidth: 1, windows: 8 },
  kept: { changes: [`parallelism:${decode}`], measured: { rate: 54, halfWidth: 3, windows: 8 } },
  tried: [],
  speedup: 1.8,
  speedupHalfWidth: 0.3,
  dropped: [],
  summary: 'verified 1.8× ± 0.3',
  seconds: 3,
};

describe('A plan for another machine', () => {
  describe('targetWords, the one label', () => {
    it('says nothing without a target or when the target is the cores here', () => {
      assert.equal(targetWords(undefined, '1.8× ± 0.3'), undefined);
      assert.equal(targetWords({ cores: 2, hereCores: 2, threads: 2, verifiable: true }, '1.8× ± 0.3'), undefined);
      assert.equal(forOtherMachine({ cores: 2, hereCores: 2, threads: 2, verifiable: true }), false);
    });

    it('says "not verifiable here" for more cores than here when the plan needs them, whatever was measured', () => {
      const t: PlanTarget = { cores: 8, hereCores: 2, threads: 8, verifiable: false };
      assert.equal(targetWords(t, '1.8× ± 0.3'), 'predicted for 8 cores — not verifiable here (this machine has 2)');
      assert.equal(targetWords(t), 'predicted for 8 cores — not verifiable here (this machine has 2)');
    });

    it('says "verified here on M cores" with the measurement when the plan fits here, for more or fewer cores', () => {
      assert.equal(targetWords({ cores: 8, hereCores: 2, threads: 2, verifiable: true }, '1.8× ± 0.3'), 'predicted for 8 cores — verified here on 2 cores: 1.8× ± 0.3');
      assert.equal(targetWords({ cores: 1, hereCores: 2, threads: 1, verifiable: true }, '1.2× ± 0.1'), 'predicted for 1 core — verified here on 2 cores: 1.2× ± 0.1');
      assert.equal(targetWords({ cores: 8, hereCores: 1, threads: 1, verifiable: true }), 'predicted for 8 cores — verifiable here on 1 core, not verified');
    });
  });

  describe('planTarget', () => {
    it('is absent without a target machine', () => {
      assert.equal(planTarget(profile, planWith(2), {}), undefined);
    });

    it("counts the plan's worker threads against the cores here", () => {
      assert.deepEqual(planTarget(profile, { ...planWith(2), cores: 8 }, { cores: 8 }), { cores: 8, hereCores: 2, threads: 2, verifiable: true });
      assert.deepEqual(planTarget(profile, { ...planWith(6), cores: 8 }, { cores: 8 }), { cores: 8, hereCores: 2, threads: 6, verifiable: false });
      // The model's own plan for 2 cores is for the cores here: no label.
      assert.equal(forOtherMachine(planTarget(profile, planOf(profile, { cores: 2 }), { cores: 2 })), false);
    });

    it('takes the cores here from the machine, not the share other work left free while it ran', () => {
      const busy = new ProfileBuilder({ cores: 4 }).range().map('decode', { placement: 'worker', worker: 4e-3, dispatch: 50e-6, parallelism: 1 }).batch(8).build({ rootElements: 200, rate: 30, availableCores: 1.2 });
      const t = planTarget(busy, { ...planWith(2), cores: 4 }, { cores: 4 });
      assert.deepEqual(t, { cores: 4, hereCores: 4, threads: 2, verifiable: true });
      assert.equal(targetWords(t, '1.8× ± 0.3'), undefined);
    });
  });

  describe('the surfaces', () => {
    it('plumber plan and the lens show the label with the measured figure only when the plan fits here', () => {
      const fits = { ...planWith(2, gain), target: { cores: 8, hereCores: 2, threads: 2, verifiable: true } };
      assert.equal(verdictLine(fits), 'est. 2.0× predicted for 8 cores — verified here on 2 cores: 1.8× ± 0.3');
      assert.equal(planFigure(fits), 'est. 2.0× predicted for 8 cores — verified here on 2 cores: 1.8× ± 0.3');
      const starved = { ...planWith(6, gain), target: { cores: 8, hereCores: 2, threads: 6, verifiable: false } };
      assert.equal(verdictLine(starved), 'est. 6.0× predicted for 8 cores — not verifiable here (this machine has 2)');
      assert.equal(planFigure(starved), 'est. 6.0× predicted for 8 cores — not verifiable here (this machine has 2)');
      const unverified = { ...planWith(2), target: { cores: 8, hereCores: 2, threads: 2, verifiable: true } };
      assert.equal(verdictLine(unverified, 'no-verify'), 'est. 2.0× predicted for 8 cores — verifiable here on 2 cores, not verified (--no-verify)');
      // Same cores: the words as before.
      const here = { ...planWith(2, gain), target: { cores: 2, hereCores: 2, threads: 2, verifiable: true } };
      assert.equal(verdictLine(here), 'est. 2.0×, verified 1.8× ± 0.3');
      assert.equal(planFigure(here), 'est. 2.0×, verified 1.8× ± 0.3');
    });
  });
});
