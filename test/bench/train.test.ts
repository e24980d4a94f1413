import * as assert from 'node:assert/strict';
import type { Ran } from '../unit/cli/bin';
import { runQuick, type QuickRun } from './quickRun';

// `npm run test:bench`, not part of `npm test`: each ground-truth script is profiled by the runner
// in a process of its own. Small windows on a busy machine may miss the 5-point goal: the exit code
// is the full run's verdict, not this test's.
describe('bench:train ground truth, small', function () {
  // The limit only stops a hang; nothing here depends on how fast the machine is.
  this.timeout(5 * 60_000);
  let result: Ran;
  let lines: Record<string, unknown>[];
  let quick: QuickRun<Record<string, unknown>>;

  before(async () => {
    quick = await runQuick<Record<string, unknown>>('train', ['--only', 'truth', '--seconds', '1']);
    ({ result, lines } = quick);
  });

  it('prints a true and a measured input-bound fraction for every case, the spin mixes’ truth from the script’s own clock', () => {
    assert.ok(result.code === 0 || result.code === 1, result.stderr.slice(-4000));
    const cases = lines.map((l) => l['case']);
    for (const name of ['input-bound', 'trainer-bound', 'balanced', 'shared-main-thread', 'shared-main-thread-input-heavy']) assert.ok(cases.includes(name), `${name} missing: ${JSON.stringify(cases)}`);
    for (const l of lines) {
      assert.equal(l['bench'], 'train-truth');
      if (l['skipped'] !== undefined) continue;
      for (const k of ['true', 'measured']) {
        const v = l[k];
        assert.ok(typeof v === 'number' && v >= 0 && v <= 1, `${String(l['case'])}.${k} is ${String(v)}`);
      }
    }
    // Equal spins on the one thread: about half the loop is the input's.
    const shared = lines.find((l) => l['case'] === 'shared-main-thread')!;
    assert.ok(Math.abs((shared['true'] as number) - 0.5) < 0.15, JSON.stringify(shared));
  });

  it('leaves bench/RESULTS.md alone (a partial run)', () => {
    assert.ok(quick.resultsUnchanged());
  });
});
