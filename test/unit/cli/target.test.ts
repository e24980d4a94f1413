/**
 * `plumber plan --cores N` for another machine (issue 52, part 4), run as a person runs it: the
 * built CLI on the test fixtures, its text and its JSON labelling the plan "predicted for N cores"
 * with whether this machine could verify it.
 */
import { strict as assert } from 'node:assert';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT, plumber } from './bin';
import type { Plan } from '../../../src/shared/analysis';

const PIPELINES = path.join(ROOT, 'test/fixtures/pipelines');
const SHORT = ['--seconds', '1', '--warmup', '0.3', '--passes', '1'];
/** The cores here: the most a plan can be verified on. */
const CORES = os.availableParallelism();
/** A target machine with more cores than here. */
const TARGET = Math.max(8, 2 * CORES);
const SPEEDUP = String.raw`(?:\d+\.\d+|\d{1,3}(?:,\d{3})*)×`;

describe('plumber plan --cores N, for another machine', function () {
  this.timeout(90_000);

  it('labels a plan whose threads fit here "predicted for N cores — verified here on M cores: …"', async () => {
    // Calls in flight, not worker threads: the plan for the target runs here as it would there.
    const r = await plumber('plan', path.join(PIPELINES, 'latency-bound.ts'), ...SHORT, '--cores', String(TARGET));
    assert.equal(r.code, 0, r.stderr);
    const m = new RegExp(String.raw`^Plan: est\. ${SPEEDUP} predicted for ${TARGET} cores — verified here on (\d+) cores?: ${SPEEDUP} ± (?:\d+\.\d+|\d{1,3}(?:,\d{3})*)\.$`, 'm').exec(r.stdout);
    assert.ok(m && Number(m[1]) >= 1 && Number(m[1]) <= CORES, r.stdout);
    assert.doesNotMatch(r.stdout, /, verified /);
  });

  it('says "not verifiable here" in text and JSON when the plan needs more worker threads than this machine has cores, and offers it unmeasured', async () => {
    // A CPU-bound map on the main thread: the plan for the target moves it to a worker thread per
    // core there. Verification is asked for (no --no-verify) and skipped: run here, starved, the
    // plan would read as no gain, so it stays the model's, labelled.
    const json = await plumber('plan', path.join(PIPELINES, 'main-thread-bound.ts'), ...SHORT, '--cores', String(TARGET), '--json', '--quiet');
    assert.equal(json.code, 0, json.stderr);
    const plan = (JSON.parse(json.stdout) as { plan: Plan }).plan;
    const target = plan.target!;
    assert.equal(target.cores, TARGET);
    assert.ok(target.hereCores >= 1 && target.hereCores <= CORES, JSON.stringify(target));
    assert.ok(target.threads > target.hereCores, JSON.stringify(target));
    assert.equal(target.verifiable, false);
    assert.equal(plan.verification, undefined, 'a plan this machine cannot run was verified here');
    assert.ok(
      plan.changes.some((c) => c.kind === 'placement'),
      JSON.stringify(plan.changes),
    );
    const text = await plumber('plan', path.join(PIPELINES, 'main-thread-bound.ts'), ...SHORT, '--cores', String(TARGET));
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(String.raw`^Plan: est\. ${SPEEDUP} predicted for ${TARGET} cores — not verifiable here \(this machine has ${target.hereCores}\)\.$`, 'm'));
    assert.doesNotMatch(text.stdout, /measured here|No reliable gain/);
  });
});
