/**
 * Peak memory in `plumber plan` (issue 52): the built CLI, a real run of a pipeline whose shuffle
 * buffer holds 2,000 elements of 8 kB, projected from the element sizes the runner measured; and a
 * memory budget the plan keeps within.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { ROOT, plumber } from './bin';
import type { Plan } from '../../../src/shared/analysis';

const PIPELINES = path.join(ROOT, 'test/fixtures/pipelines');
const SHORT = ['--seconds', '1', '--warmup', '0.3', '--passes', '1', '--no-verify'];

describe('plumber plan: peak memory', function () {
  this.timeout(120_000);

  it('prints the projected peak as written with the shuffle buffer and the budget', async () => {
    const r = await plumber('plan', path.join(PIPELINES, 'memory-shuffle.ts'), ...SHORT);
    assert.equal(r.code, 0, r.stderr);
    const line = /^Memory as written: ≈ ([\d.]+) MB at peak \(projected\): shuffle buffer ([\d.]+) MB.*; budget [\d.]+ [MG]B$/m.exec(r.stdout);
    assert.ok(line, r.stdout);
    // 2,000 × 8,192 bytes of doubles: 16.4 MB, and a little more on the heap per array.
    const buffer = Number(line[2]);
    assert.ok(buffer >= 16.3 && buffer < 20, `shuffle buffer ${buffer} MB`);
    // The process itself (Node, the runner, the modules) comes on top: far more than the buffer.
    assert.ok(Number(line[1]) > buffer + 20, line[0]);
  });

  it('carries the projection in --json, and leaves out a cache that a budget cannot hold', async () => {
    const r = await plumber('plan', path.join(PIPELINES, 'cacheable.ts'), ...SHORT, '--cores', '2', '--json', '--quiet', '--memory-budget', '1');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { plan: Plan; analysis: { memory?: { peakBytes: number } } };
    assert.ok(out.analysis.memory, 'expected the analysis to carry memory');
    assert.ok(out.plan.memory, 'expected the plan to carry memory');
    assert.equal(out.plan.memory.budgetBytes, 2 ** 20);
    assert.equal(
      out.plan.changes.some((c) => c.kind === 'cache'),
      false,
      JSON.stringify(out.plan.changes),
    );
    assert.ok(
      out.plan.notes?.some((n) => /^cache after map\(decode\).*past the 1\.05 MB memory budget; the pipeline as written already projects ≈ [\d.]+ MB, so the plan leaves it out\.$/.test(n)),
      JSON.stringify(out.plan.notes),
    );
  });
});
