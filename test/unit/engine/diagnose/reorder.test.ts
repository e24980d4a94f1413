/**
 * The front door proposes a reorder on a real pipeline run by the real runner: the source says the
 * filter reads only `label`, the model prices moving it ahead of the decode, and the sample check
 * passes before anything is measured. A pinned filter (keepPosition) is never moved. Verification
 * is off: what is checked is the plan, not a measurement.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { diagnoseFile } from '../../../../src/engine/diagnose/file';

const FILE = path.resolve(__dirname, '../../../fixtures/pipelines/reorder-chains.ts');
const RUNS = { seconds: 1, warmupSeconds: 0.3, timeoutSeconds: 90 };

describe('diagnose: a reorder on the real runner', function () {
  this.timeout(180_000);

  it('proposes moving the filter before the decode, with its sentence, after the sample check', async () => {
    const d = await diagnoseFile({ file: FILE, exportName: 'endless', runs: RUNS, passes: 1, verify: false });
    assert.equal(d.error, undefined, d.error?.message);
    const reorder = d.plan.changes.find((c) => c.kind === 'reorder');
    assert.ok(reorder && reorder.kind === 'reorder', `no reorder in ${JSON.stringify(d.plan.changes)} (notes: ${JSON.stringify(d.plan.notes)})`);
    assert.match(reorder.reason, /^filter\(isValid\) drops 3\d% of elements; running it before map\(heavyDecode\) saves 0\.3\d × [\d.]+ (µs|ms) per element$/);
    assert.equal(d.first.ops.find((o) => o.id === reorder.before)?.fnName, 'heavyDecode');
  });

  it('never moves a filter pinned with keepPosition: true', async () => {
    const d = await diagnoseFile({ file: FILE, exportName: 'endlessPinned', runs: RUNS, passes: 1, verify: false });
    assert.equal(d.error, undefined, d.error?.message);
    assert.equal(
      d.plan.changes.find((c) => c.kind === 'reorder'),
      undefined,
    );
  });
});
