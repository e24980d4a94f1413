/**
 * `plumber plan` shows a person the changes the editor would offer and `plumber fix` would apply
 * (src/engine/offer.ts), so the three agree: a plan whose prediction reads as no gain lists no
 * change and no command to try it, and a plan that predicts a gain prints as it came.
 */
import * as assert from 'node:assert/strict';
import { renderPlan } from '../../../src/cli/render';
import { offeredPlan } from '../../../src/engine/offer';
import { newCounters } from '../../../src/data/tracing';
import { PROFILE_VERSION, type OpProfile, type Profile } from '../../../src/shared/profile';
import type { Analysis, Plan } from '../../../src/shared/analysis';

function op(id: string, kind: OpProfile['kind'], inputs: string[], produced: number): OpProfile {
  return { id, kind, inputs, placement: 'main', knobs: kind === 'map' ? { parallelism: 1 } : {}, random: false, counters: { ...newCounters(), produced } };
}

/** range → map(decode), two seconds at 100 elements/s. */
const profile: Profile = {
  version: PROFILE_VERSION,
  pipeline: { file: '/p/pipeline.ts', exportName: 'images', rootId: '2:4' },
  machine: { cores: 2, memoryTotalBytes: 8e9, memoryFreeBytes: 4e9, nodeVersion: 'v20.20.2', platform: 'linux', arch: 'x64', cpuModel: 'test', libuvThreads: 4, cpuClock: 'schedstat' },
  run: {
    startedAt: '2026-12-05T09:00:00.000Z',
    elements: 200,
    seconds: 2,
    warmupElements: 10,
    warmupSeconds: 0.5,
    converged: true,
    endReason: 'converged',
    rateEstimates: [100],
    overrides: {},
    mainThreadCpuSeconds: 1.9,
    processCpuSeconds: 2,
    peakRssBytes: 1e8,
  },
  ops: [op('1:1', 'range', [], 201), op('2:4', 'map', ['1:1'], 200)],
};
const analysis: Analysis = {
  measuredRate: 100,
  bound: 105,
  bottleneck: { resource: 'sequential-op', opId: '2:4', reason: 'map(decode) decodes one image at a time.' },
  bounds: [],
  ops: [
    { opId: '1:1', visitRatio: 1, measuredRate: 100, bound: 9000, isBottleneck: false, ratePerCore: 1, cpuPerRootElement: 0.001, cpuShare: 0.05, mainThreadPerRootElement: 0.001, placement: 'main' },
    { opId: '2:4', visitRatio: 1, measuredRate: 100, bound: 105, isBottleneck: true, ratePerCore: 1, cpuPerRootElement: 0.01, cpuShare: 0.9, mainThreadPerRootElement: 0.01, placement: 'main' },
  ],
  cores: 2,
};
function planPredicting(predictedRate: number): Plan {
  return {
    changes: [{ kind: 'parallelism', opId: '2:4', from: 1, to: 2, reason: 'a second core is idle' }],
    currentRate: 100,
    predictedRate,
    predictedBound: predictedRate,
    predictedBottleneck: { resource: 'cpu', reason: 'all cores busy' },
    overrides: { '2:4': { parallelism: 2 } },
  };
}

describe('plumber plan, as offered', () => {
  it('lists no change and no command to try when the prediction reads as no gain (est. 1.0×), as the editor offers none', () => {
    const text = renderPlan(profile, analysis, offeredPlan(planPredicting(103)), 'pipeline.ts', profile, { command: 'npx plumber' });
    assert.doesNotMatch(text, /Changes:/);
    assert.doesNotMatch(text, /Try the plan/);
    assert.match(text, /No change is predicted to help/);
  });

  it('prints a plan that predicts a gain as it came', () => {
    const gain = planPredicting(180);
    assert.equal(offeredPlan(gain), gain);
    const text = renderPlan(profile, analysis, offeredPlan(gain), 'pipeline.ts', profile, { command: 'npx plumber' });
    assert.equal(text, renderPlan(profile, analysis, gain, 'pipeline.ts', profile, { command: 'npx plumber' }));
    assert.match(text, /Changes:\n\s+• set parallelism of map/);
  });
});
