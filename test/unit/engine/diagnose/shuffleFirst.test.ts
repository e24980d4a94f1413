/**
 * A shuffle moved ahead of the decode its buffer fills behind, on the real runner: the front door
 * proposes it (the model prices the first batch), verification judges it by each run's first
 * batch, the reshaped sibling yields the same sequence on a seeded sample; moved above a decode
 * that reads its position (ctx.index) it does not, and it is not offered. The sibling is always
 * removed.
 */
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { diagnoseFile } from '../../../../src/engine/diagnose/file';
import { GraphWorkspace } from '../../../../src/engine/graph/workspace';
import { ReshapedFiles, reshapedSiblingOf } from '../../../../src/engine/reshape/sibling';

const FILE = path.resolve(__dirname, '../../../fixtures/pipelines/shuffle-first.ts');
const RUNS = { seconds: 1, warmupSeconds: 0.3, timeoutSeconds: 90 };

describe('diagnose: a shuffle moved before the decode on the real runner', function () {
  this.timeout(240_000);
  const ws = new GraphWorkspace();
  const id = (pipeline: string, label: string): string => {
    const p = ws.graphOf(FILE).pipelines.find((x) => x.name === pipeline)!;
    return (p.ops.find((o) => o.label === label) ?? assert.fail(`no ${label} in ${pipeline}: ${p.ops.map((o) => o.label).join(', ')}`)).id;
  };

  it('proposes moving the shuffle before the decode, with both first batches in its sentence, after the sample check', async () => {
    const d = await diagnoseFile({ file: FILE, exportName: 'shuffledLate', runs: RUNS, passes: 1, verify: false });
    assert.equal(d.error, undefined, d.error?.message);
    const reorder = d.plan.changes.find((c) => c.kind === 'reorder');
    assert.ok(reorder && reorder.kind === 'reorder', `no reorder in ${JSON.stringify(d.plan.changes)} (time: ${JSON.stringify(d.analysis.time)})`);
    assert.match(reorder.reason, /^the shuffle buffer of 5,000 fills behind map\(slowDecode\): ≈ [\d.]+ s; moved before it, the first batch comes in ≈ [\d.]+ (ms|s) \(predicted\)$/);
    assert.equal(d.first.ops.find((o) => o.id === reorder.opId)?.kind, 'shuffle');
    assert.equal(d.first.ops.find((o) => o.id === reorder.before)?.fnName, 'slowDecode');
    assert.ok(reorder.firstBatchSeconds !== undefined && reorder.firstBatchSeconds < (d.analysis.time?.firstBatchSeconds ?? 0) / 2, `${reorder.firstBatchSeconds} vs ${d.analysis.time?.firstBatchSeconds}`);
  });

  it('verification judges the move by each run’s first batch and says what the first batches measured, kept or dropped', async () => {
    const d = await diagnoseFile({ file: FILE, exportName: 'shuffledLate', runs: RUNS, passes: 1 });
    assert.equal(d.error, undefined, d.error?.message);
    const v = d.plan.verification;
    assert.ok(v, 'verified');
    const kept = d.plan.changes.some((c) => c.kind === 'reorder');
    const words = /the first batch in ≈ [\d.]+ (ms|s) \((one run|[\d.]+ (ms|s)–[\d.]+ (ms|s) over \d+ runs)\) against ≈ [\d.]+ (ms|s) \((one run|[^)]+ over \d+ runs)\) as written, measured$/;
    if (kept) assert.match(v.summary, words);
    else assert.match(v.dropped.find((x) => x.change.kind === 'reorder')?.why ?? '(the reorder was not planned)', words);
  });

  it('the reshaped sibling yields the same sequence on a seeded sample; above a decode that reads its position, it differs and is not offered', async () => {
    const files = new ReshapedFiles(FILE);
    const same = { kind: 'reorder' as const, opId: id('shuffledLate', 'shuffle(5000)'), before: id('shuffledLate', 'map(slowDecode)'), reason: '' };
    const written = await files.outcome(same);
    assert.ok(written.ok);
    assert.match(written.text, /export const shuffledLate = range\(Infinity\)\n {2}\.map\(row\)\n {2}\.shuffle\(5000\)\n {2}\.map\(slowDecode\)\n {2}\.batch\(10\);/);
    assert.equal(await files.unoffered(same, 'shuffledLate', { elements: 40 }), undefined);
    const stamped = { kind: 'reorder' as const, opId: id('shuffledStamped', 'shuffle(5000)'), before: id('shuffledStamped', 'map(stampedDecode)'), reason: '' };
    assert.match((await files.unoffered(stamped, 'shuffledStamped', { elements: 40 })) ?? '', /differs/);
    assert.equal(existsSync(reshapedSiblingOf(FILE)), false);
  });
});
