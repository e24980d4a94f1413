import { strict as assert } from 'node:assert';
import { BASELINE_SCHEMA, BASELINE_VERSION, BaselineError, compareToBaseline, parseBaseline, type Baseline, type BaselineMachine } from '../../../src/engine/gate';
import type { WindowSlice } from '../../../src/shared/profile';

const MACHINE: BaselineMachine = { cores: 2, cpuModel: 'AMD EPYC', nodeVersion: 'v20.20.2', platform: 'linux', arch: 'x64', loadAverage: 1, ownCores: 1 };

/**
 * Slices of 0.1 s at `rate` elements per second, their counts alternating ± `noise` (a share of
 * the count) around it: a deterministic spread, so the interval it gives is the same every time.
 */
function slices(rate: number, noise: number, m = 20): WindowSlice[] {
  return Array.from({ length: m }, (_, k) => ({ elements: Math.round(rate * 0.1 * (1 + (k % 2 === 0 ? noise : -noise))), seconds: 0.1 }));
}

function baseline(s: WindowSlice[], machine: Partial<BaselineMachine> = {}): Baseline {
  const elements = s.reduce((a, x) => a + x.elements, 0);
  const seconds = s.reduce((a, x) => a + x.seconds, 0);
  return {
    schema: BASELINE_SCHEMA,
    version: BASELINE_VERSION,
    createdAt: '2026-12-05T00:00:00.000Z',
    pipeline: { file: 'pipeline.ts', sha256: 'abc' },
    config: { overrides: {}, knobs: {}, seconds, warmupSeconds: 0.5 },
    machine: { ...MACHINE, ...machine },
    run: { rate: elements / seconds, halfWidth: 0, unit: 'el', slices: s, endReason: 'budget' },
  };
}

describe('the regression gate (engine/gate)', () => {
  it('fails a run 30% slower than its baseline when both runs measured tight slices', () => {
    const r = compareToBaseline(baseline(slices(1000, 0.02)), baseline(slices(700, 0.02)));
    assert.equal(r.outcome, 'fail', r.message);
    assert.ok(Math.abs(r.ratio - 0.7) < 0.01, String(r.ratio));
    assert.ok(r.low < r.ratio && r.ratio < r.high && r.high < 0.9);
    assert.match(r.message, /0\.70× \(95% interval 0\.\d\d–0\.\d\d\), reliably slower than the 10% slowdown allowed/);
  });

  it('passes a run as fast as its baseline, and one 5% slower, within the 10% allowed', () => {
    assert.equal(compareToBaseline(baseline(slices(1000, 0.02)), baseline(slices(1000, 0.02))).outcome, 'pass');
    assert.equal(compareToBaseline(baseline(slices(1000, 0.02)), baseline(slices(950, 0.02))).outcome, 'pass');
  });

  it('does not fail a slower run whose noise is too wide to tell, and says the runs cannot be compared', () => {
    // 15% slower, but every slice is 40% off the rate: the interval reaches past 0.9.
    const r = compareToBaseline(baseline(slices(1000, 0.4, 6)), baseline(slices(850, 0.4, 6)));
    assert.equal(r.outcome, 'incomparable', r.message);
    assert.ok(r.high >= 0.9);
    assert.match(r.message, /cannot compare the runs: the runs' own noise \(± 0\.\d\d\) is wider than the 10% slowdown allowed/);
  });

  it('fails at the threshold it is given: 30% slower passes with --max-slowdown 40%', () => {
    const base = baseline(slices(1000, 0.02));
    const now = baseline(slices(700, 0.02));
    assert.equal(compareToBaseline(base, now, { maxSlowdown: 0.4 }).outcome, 'pass');
    assert.equal(compareToBaseline(base, now, { maxSlowdown: 0.2 }).outcome, 'fail');
  });

  it('will not compare runs on different core counts or CPU models, however much slower', () => {
    const r = compareToBaseline(baseline(slices(1000, 0.02), { cores: 8 }), baseline(slices(500, 0.02)));
    assert.equal(r.outcome, 'incomparable');
    assert.deepEqual(r.reasons, ['the baseline ran on 8 cores and this run on 2']);
    const cpu = compareToBaseline(baseline(slices(1000, 0.02), { cpuModel: 'Apple M2' }), baseline(slices(1000, 0.02)));
    assert.equal(cpu.outcome, 'incomparable');
    assert.match(cpu.reasons[0]!, /the baseline ran on a Apple M2 and this run on a AMD EPYC/);
  });

  it("calls a machine busy when other work's load reaches its cores, not counting the pipeline's own threads", () => {
    const tight = slices(1000, 0.02);
    // Load 2.5 of which the pipeline kept 1 core busy: other work 1.5 < 2 cores.
    assert.equal(compareToBaseline(baseline(tight, { loadAverage: 2.5, ownCores: 1 }), baseline(tight)).outcome, 'pass');
    const busy = compareToBaseline(baseline(tight), baseline(tight, { loadAverage: 3.2, ownCores: 1 }));
    assert.equal(busy.outcome, 'incomparable');
    assert.match(busy.reasons[0]!, /the machine was busy during this run \(load average 3\.20, 2\.20 of it other work, on 2 cores\)/);
    // A higher bar (--max-load) lets the runs be compared.
    assert.equal(compareToBaseline(baseline(tight), baseline(tight, { loadAverage: 3.2, ownCores: 1 }), { maxLoad: 4 }).outcome, 'pass');
  });

  it('will not compare a run that other work left fewer cores than the baseline kept busy (a burst of load is not a regression)', () => {
    const tight = slices(1000, 0.02);
    const starved = compareToBaseline(baseline(tight, { ownCores: 1, availableCores: 1.6 }), baseline(slices(300, 0.02), { ownCores: 0.3, availableCores: 0.32 }), { maxLoad: 100 });
    assert.equal(starved.outcome, 'incomparable');
    assert.deepEqual(starved.reasons, ['other work left this run 0.32 cores, fewer than the 1.00 the pipeline kept busy in the baseline']);
    // A change that uses fewer cores on a machine that still had them free is judged: it fails.
    const fewerWorkers = compareToBaseline(baseline(tight, { ownCores: 2, availableCores: 2 }), baseline(slices(500, 0.02), { ownCores: 1, availableCores: 2 }));
    assert.equal(fewerWorkers.outcome, 'fail');
  });

  it('notes a changed file and another Node version without refusing to compare', () => {
    const base = baseline(slices(1000, 0.02));
    const now = { ...baseline(slices(1000, 0.02), { nodeVersion: 'v22.1.0' }), pipeline: { file: 'pipeline.ts', sha256: 'def' } };
    const r = compareToBaseline(base, now);
    assert.equal(r.outcome, 'pass');
    assert.deepEqual(r.notes, ['the pipeline file changed since the baseline', 'the baseline ran on Node v20.20.2 and this run on v22.1.0']);
  });

  it('reads back the baseline it writes, and refuses files that are not baselines, naming what is wrong', () => {
    const b = baseline(slices(1000, 0.02));
    assert.deepEqual(parseBaseline(JSON.parse(JSON.stringify(b)), 'base.json'), b);
    assert.throws(
      () => parseBaseline({ schema: 'other' }, 'base.json'),
      (e: unknown) => e instanceof BaselineError && /base\.json is not a Plumber baseline: its "schema" field/.test(e.message),
    );
    assert.throws(() => parseBaseline({ ...b, version: 2 }, 'base.json'), /layout version 2; this Plumber reads version 1/);
    assert.throws(() => parseBaseline({ ...b, run: { ...b.run, slices: [{ elements: 3, seconds: 0 }] } }, 'base.json'), /"run" needs "slices"/);
    assert.throws(() => parseBaseline({ ...b, machine: { ...b.machine, cores: 'two' } }, 'base.json'), /"machine" needs "cores"/);
  });
});
