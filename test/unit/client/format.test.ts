import * as assert from 'node:assert/strict';
import type { OpSummary, PipelineSummary } from '../../../src/shared/protocol';
import { describeOp, describePipeline, formatRate, formatShare, heatOf, pipelineAt, rankOps, statusText } from '../../../src/client/views/format';

const range = (line: number) => ({ start: { line, character: 0 }, end: { line, character: 10 } });
function op(id: string, extra: Partial<OpSummary>): OpSummary {
  return { id, kind: 'map', label: `map(${id})`, uri: 'file:///p.ts', range: range(Number(id)), severity: 'ok', ...extra };
}
function pipeline(name: string, line: number, extra: Partial<PipelineSummary> = {}): PipelineSummary {
  return { uri: 'file:///p.ts', name, range: range(line), ops: [], stale: false, ...extra };
}

describe('Tree and status formatting', () => {
  it('writes rates the way the lenses do', () => {
    assert.equal(formatRate(431.2), '431 el/s');
    assert.equal(formatRate(6896), '6.9k el/s');
    assert.equal(formatRate(24_100), '24k el/s');
    assert.equal(formatRate(1_530_000), '1.5M el/s');
    assert.equal(formatRate(3.14159), '3.1 el/s');
    assert.equal(formatRate(Infinity), '∞ el/s', 'as the lenses write an unbounded rate, unit included');
    assert.equal(formatRate(undefined), '–');
  });

  it('writes CPU shares as whole percentages, with <1% for tiny ones', () => {
    assert.equal(formatShare(0.714), '71%');
    assert.equal(formatShare(0.001), '<1%');
    assert.equal(formatShare(0), '0%');
  });

  it('ranks the bottleneck first, then warnings, then the lowest bound, keeping chain order for unprofiled operators', () => {
    const ranked = rankOps([
      op('1', { severity: 'ok', bound: 9000, cpuShare: 0.1 }),
      op('2', { severity: 'warning', bound: 5000 }),
      op('3', { severity: 'bottleneck', bound: 400 }),
      op('4', { severity: 'ok', bound: 2000, cpuShare: 0.3 }),
      op('5', { severity: 'unknown' }),
      op('6', { severity: 'unknown' }),
    ]);
    assert.deepEqual(
      ranked.map((o) => o.id),
      ['3', '2', '4', '1', '5', '6'],
    );
  });

  it('describes an operator by rate and CPU share, and says only "stale" once the file changed', () => {
    const o = op('1', { rate: 6896, cpuShare: 0.71 });
    assert.equal(describeOp(o, false), '6.9k el/s · 71% CPU');
    assert.equal(describeOp(o, true), 'stale');
    assert.equal(describeOp(op('2', {}), false), '', 'nothing measured, nothing said');
  });

  it("describes an operator in the pipeline's unit, with its own count first when it counts other elements", () => {
    const decode = op('1', { rate: 41, rootRate: 41 / 32, bound: 1.4, cpuShare: 0.64 });
    assert.equal(describeOp(decode, false, 'batches'), '41 el/s = 1.3 batches/s · bound 1.4 · 64% CPU');
    const batch = op('2', { rate: 1.28, rootRate: 1.28, bound: 9, cpuShare: 0.01 });
    assert.equal(describeOp(batch, false, 'batches'), '1.3 batches/s · bound 9 · 1% CPU');
  });

  it('draws heat in proportion to how busy each operator is at the pipeline rate, and none for stale numbers', () => {
    const p = pipeline('records', 0, { rate: 100, unit: 'el', ops: [op('1', { bound: 100 }), op('2', { bound: 400 }), op('3', {})] });
    const heat = heatOf(p);
    assert.deepEqual(
      heat.map((h) => [h.op.id, h.share]),
      [
        ['1', 1],
        ['2', 0.25],
      ],
    );
    assert.equal(heat[1]!.words, 'map(2): busy 25% of the time at 100 el/s (allows 400 el/s)');
    assert.deepEqual(heatOf({ ...p, stale: true }), []);
  });

  it('describes a pipeline by its rate and the predicted speed-up of the fixes', () => {
    assert.equal(describePipeline(pipeline('records', 0)), 'not profiled');
    assert.equal(describePipeline(pipeline('records', 0, { error: 'boom' })), 'profile failed');
    assert.equal(describePipeline(pipeline('records', 0, { rate: 431, bound: 431, predictedRate: 6420 })), '431 el/s · fixes: est. 14.9×');
    assert.equal(describePipeline(pipeline('records', 0, { rate: 431, bound: 450, predictedRate: 440, stale: true })), 'stale — profile again');
    assert.equal(describePipeline(pipeline('records', 0, { rate: 1.3, unit: 'batches' })), '1.3 batches/s');
  });

  it('says what the fixes are worth as verification found it, not what the model hoped', () => {
    const measured = { rate: 431, bound: 450, predictedRate: 730 };
    assert.equal(describePipeline(pipeline('records', 0, { ...measured, verdict: 'gain', verified: { speedup: 1.66, halfWidth: 0.1 } })), '431 el/s · fixes: verified 1.7×');
    assert.equal(describePipeline(pipeline('records', 0, { ...measured, predictedRate: 431, verdict: 'no-gain' })), '431 el/s · no reliable gain');
    assert.equal(describePipeline(pipeline('records', 0, { ...measured, predictedRate: 431, verdict: 'error' })), '431 el/s · fixes not verified');
    assert.equal(describePipeline(pipeline('records', 0, { ...measured, verdict: 'unverified' })), '431 el/s · fixes: est. 1.7× (not verified)');
    assert.equal(describePipeline(pipeline('records', 0, { ...measured, predictedRate: 431, verdict: 'none' })), '431 el/s');
  });

  it('puts the last result in the status bar', () => {
    assert.equal(statusText(undefined), 'Plumber');
    assert.equal(statusText(pipeline('records', 0, { rate: 431, predictedRate: 1000 })), 'Plumber: records 431 el/s (fixes: est. 2.3×)');
    assert.equal(statusText(pipeline('records', 0, { error: 'x' })), 'Plumber: records failed');
    assert.equal(statusText(pipeline('records', 0, { rate: 431, predictedRate: 1000, stale: true })), 'Plumber: records · stale — profile again');
  });

  it('finds the pipeline the cursor is in: the nearest head above it', () => {
    const ps = [pipeline('a', 3), pipeline('b', 10), pipeline('c', 20)];
    assert.equal(pipelineAt(ps, 12)?.name, 'b');
    assert.equal(pipelineAt(ps, 20)?.name, 'c');
    assert.equal(pipelineAt(ps, 0)?.name, 'a', 'above every pipeline: the first one');
    assert.equal(pipelineAt([], 5), undefined);
  });
});
