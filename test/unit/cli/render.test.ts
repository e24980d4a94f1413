/**
 * What `plumber plan` prints for people (issue 14): every rate in the pipeline's unit with the
 * operator's own count beside it, rows ranked by how close each is to holding the pipeline back,
 * and a hint that runs as printed from where the CLI was started.
 */
import * as assert from 'node:assert/strict';
import { renderPlan, sourceLabels } from '../../../src/cli/render';
import { commandName, type Invocation } from '../../../src/cli/help';
import { newCounters } from '../../../src/data/tracing';
import { PROFILE_VERSION, type OpProfile, type Profile } from '../../../src/shared/profile';
import type { Analysis, OpAnalysis, Plan } from '../../../src/shared/analysis';

function op(id: string, kind: OpProfile['kind'], inputs: string[], produced: number): OpProfile {
  return { id, kind, inputs, placement: 'main', knobs: kind === 'batch' ? { batchSize: 32 } : kind === 'map' ? { parallelism: 1 } : {}, random: false, counters: { ...newCounters(), produced } };
}

/** range → map(decode) → batch(32), two seconds at 1.3 batches/s: decode sees 32 images per batch. */
const profile: Profile = {
  version: PROFILE_VERSION,
  pipeline: { file: '/p/pipeline.ts', exportName: 'images', rootId: '3:4' },
  machine: { cores: 2, memoryTotalBytes: 8e9, memoryFreeBytes: 4e9, nodeVersion: 'v20.20.2', platform: 'linux', arch: 'x64', cpuModel: 'test', libuvThreads: 4, cpuClock: 'schedstat' },
  run: {
    startedAt: '2026-11-30T18:00:00.000Z',
    elements: 2.6,
    seconds: 2,
    warmupElements: 1,
    warmupSeconds: 0.5,
    converged: true,
    endReason: 'converged',
    rateEstimates: [1.3],
    overrides: {},
    mainThreadCpuSeconds: 1.9,
    processCpuSeconds: 2,
    peakRssBytes: 1e8,
  },
  ops: [op('1:1', 'range', [], 83), op('2:4', 'map', ['1:1'], 82), op('3:4', 'batch', ['2:4'], 2.6)],
};
const an = (opId: string, visitRatio: number, measuredRate: number, bound: number, isBottleneck = false): OpAnalysis => ({
  opId,
  visitRatio,
  measuredRate,
  bound,
  isBottleneck,
  ratePerCore: 1,
  cpuPerRootElement: 0.7,
  cpuShare: isBottleneck ? 0.9 : 0.05,
  mainThreadPerRootElement: 0.7,
  placement: 'main',
});
const analysis: Analysis = {
  measuredRate: 1.3,
  bound: 1.4,
  bottleneck: { resource: 'sequential-op', opId: '2:4', reason: 'map(decode) decodes one image at a time.' },
  bounds: [],
  ops: [an('1:1', 32, 41.6, 900), an('2:4', 32, 41, 1.4, true), an('3:4', 1, 1.3, 60)],
  cores: 2,
};
const plan: Plan = {
  changes: [{ kind: 'parallelism', opId: '2:4', from: 1, to: 2, reason: 'a second core is idle' }],
  currentRate: 1.3,
  predictedRate: 2.5,
  predictedBound: 2.7,
  predictedBottleneck: { resource: 'cpu', reason: 'all cores busy' },
  overrides: { '2:4': { parallelism: 2 } },
};

describe('plumber plan, as printed', () => {
  it("writes each operator's own rate and its rate and bound in the pipeline's unit, the bottleneck first", () => {
    const text = renderPlan(profile, analysis, plan, 'pipeline.ts', profile, { command: 'npx plumber' });
    const rows = text.split('\n').filter((l) => (/^\w+(\(|\s)/.test(l) && /\d+:\d+/.test(l)) || l.startsWith('operator'));
    assert.match(rows[0]!, /^operator\s+id\s+own rate\s+= batches\/s\s+bound\s+CPU/);
    assert.deepEqual(
      rows.slice(1).map((r) => r.split(/\s{2,}/).slice(1, 5)),
      [
        ['2:4', '41/s', '1.28 batches/s', '1.4 batches/s'],
        ['3:4', '1.3/s', '1.3 batches/s', '60 batches/s'],
        ['1:1', '41.6/s', '1.3 batches/s', '900 batches/s'],
      ],
    );
    assert.match(text, /Measured 1\.3 batches\/s; the model's bound with the current knobs is 1\.4 batches\/s\./);
  });

  it('says when the model does not explain the measured rate, instead of naming a bound that does not hold', () => {
    const unexplained = "The run measured 1.3/s, 9% of the 14/s its operators' measured work and waits allow: …";
    const none: Plan = { ...plan, changes: [], predictedRate: 1.3 };
    const text = renderPlan(profile, { ...analysis, bound: 14, unexplained }, none, 'pipeline.ts', profile, { command: 'npx plumber' });
    assert.match(text, /the model's bound with the current knobs is 14 batches\/s\.\nUnexplained: The run measured 1\.3\/s, 9% of the 14\/s/);
    assert.match(text, /No change is predicted to help: what holds the pipeline back is not in the profile \(above\)\./);
    assert.doesNotMatch(renderPlan(profile, analysis, none, 'pipeline.ts', profile, { command: 'npx plumber' }), /Unexplained|not in the profile/);
  });

  it('prints the first batch and the epochs, predicted, for the plan when it changes something, else as written', () => {
    const asWritten = {
      firstBatchSeconds: 41,
      firstBatchParts: [{ what: 'shuffle fill' as const, opId: '2:4', seconds: 40 }],
      firstBatchSummary: 'the shuffle buffer of 10,000 fills behind map(decode): ≈ 40 s of ≈ 41 s; move shuffle(10000) before map(decode) or shrink its buffer',
      epochSeconds: [42, 42],
      epochSummary: '100 batches an epoch',
    };
    const planned = { ...asWritten, firstBatchSeconds: 2, firstBatchSummary: 'the first batch’s own work: ≈ 2 s', epochSeconds: [42, 9] };
    const withPlan = renderPlan(profile, { ...analysis, time: asWritten }, { ...plan, time: planned }, 'pipeline.ts', profile, { command: 'npx plumber' });
    assert.match(withPlan, /\nWith the plan: First batch ≈ 2 s \(predicted\): the first batch’s own work: ≈ 2 s\.\nWith the plan: Epochs ≈ 42 s, then 9 s \(predicted\): 100 batches an epoch\./);
    const none = renderPlan(profile, { ...analysis, time: asWritten }, { ...plan, changes: [], time: planned }, 'pipeline.ts', profile, { command: 'npx plumber' });
    assert.match(none, /\nFirst batch ≈ 41 s \(predicted\): the shuffle buffer of 10,000 fills behind map\(decode\)/);
    assert.match(none, /\nEpochs ≈ 42 s each \(predicted\)/);
  });

  it('prints the hint with the command the person used', () => {
    const text = renderPlan(profile, analysis, plan, 'pipeline.ts', profile, { command: 'npx plumber' });
    assert.match(text, /Try the plan without editing the file:\n {2}npx plumber profile pipeline\.ts --override 2:4=parallelism:2/);
  });
});

describe('Operator labels in the CLI', () => {
  it("are the calls as written at their sites, the model's label when the source cannot be read", () => {
    const source = 'export const images = range(0, 1_000_000)\n  .map(decode, { parallelism: 1 }) // slow\n  .batch(32);\n';
    const sited: Profile = {
      ...profile,
      ops: [
        { ...profile.ops[0]!, site: { file: '/p/pipeline.ts', line: 1, column: 23 } },
        { ...profile.ops[1]!, site: { file: '/p/pipeline.ts', line: 2, column: 4 } },
        { ...profile.ops[2]!, site: { file: '/p/gone.ts', line: 3, column: 4 } },
      ],
    };
    const labels = sourceLabels(sited, (f) => (f === '/p/pipeline.ts' ? source : undefined));
    assert.deepEqual(
      [...labels],
      [
        ['1:1', 'range(0, 1_000_000)'],
        ['2:4', 'map(decode, { parallelism: 1 })'],
      ],
    );
  });
});

describe('The command a hint prints', () => {
  const links = new Map<string, string>();
  const inv = (script: string, path: string, cwd = '/home/me/project'): Invocation => ({ script, cwd, path, realpath: (f) => links.get(f) ?? (f === script ? script : undefined) });
  const installed = '/home/me/project/node_modules/plumber/bin/plumber.js';
  links.set('/home/me/project/node_modules/.bin/plumber', installed);
  links.set('/home/me/project/node_modules/plumber/bin/plumber.js', installed);
  const global = '/usr/lib/node_modules/plumber/bin/plumber.js';
  links.set('/usr/bin/plumber', global);
  links.set(global, global);

  it('is `npx plumber` for a local install, even under npx or an npm script (which put node_modules/.bin on PATH)', () => {
    assert.equal(commandName(inv('/home/me/project/node_modules/.bin/plumber', '/home/me/project/node_modules/.bin:/usr/bin')), 'npx plumber');
  });

  it('is `plumber` when the plumber on PATH is this install (global, or npm link)', () => {
    assert.equal(commandName(inv('/usr/bin/plumber', '/usr/local/bin:/usr/bin')), 'plumber');
  });

  it('is `node bin/plumber.js` from a checkout of Plumber itself', () => {
    assert.equal(commandName(inv('/home/me/plumber/bin/plumber.js', '/usr/bin', '/home/me/plumber')), 'node bin/plumber.js');
  });
});
