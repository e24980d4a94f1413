/**
 * The Bottlenecks tree's row for a training run (issue 13): the server's glance line heads the
 * pipeline's operators, with the verdict, the target and the plan as its tooltip, and goes away
 * when the numbers do (a stale or failed profile).
 */
import * as assert from 'node:assert/strict';
import type { PipelineSummary } from '../../../src/shared/protocol';
import { trainerRow } from '../../../src/client/views/format';
import { trainerReportLines } from '../../../src/shared/trainerWords';
import { FED } from '../../helpers/trainerVerdicts';

const range = { start: { line: 3, character: 0 }, end: { line: 3, character: 10 } };
const LINES = trainerReportLines(FED);

function pipeline(extra: Partial<PipelineSummary>): PipelineSummary {
  return { uri: 'file:///train.ts', name: 'local:batches@22', range, ops: [], stale: false, rate: 14.1, unit: 'batches', ...extra };
}

describe('the tree’s trainer row', () => {
  it('heads a training run’s operators with the lens’s glance line', () => {
    const row = trainerRow(pipeline({ trainer: LINES }));
    assert.equal(row?.label, 'trainer 14.1 steps/s · waits 39% on input · plan: +25%');
  });

  it('explains the verdict, then the target, then the plan in its tooltip', () => {
    const tooltip = trainerRow(pipeline({ trainer: LINES }))!.tooltip.split('\n\n');
    assert.deepEqual(tooltip, [LINES.verdict, LINES.target, LINES.plan]);
    assert.match(tooltip[0], /^The trainer waited 39%/);
    assert.match(tooltip[1], /^Target: 23\.1 steps\/s/);
    assert.match(tooltip[2], /^Plan: 17\.5 steps\/s predicted/);
  });

  it('shows nothing for a pipeline profile, a stale one or a failed one', () => {
    assert.equal(trainerRow(pipeline({})), undefined);
    assert.equal(trainerRow(pipeline({ trainer: LINES, stale: true })), undefined);
    assert.equal(trainerRow(pipeline({ trainer: LINES, error: 'the loop stalled' })), undefined);
  });
});
