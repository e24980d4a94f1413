import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { ROOT, plumber } from './bin';
import { megabytesFlag, parseArgs, type Parsed } from '../../../src/cli/args';
import type { Plan } from '../../../src/shared/analysis';

const PIPELINES = path.join(ROOT, 'test/fixtures/pipelines');

const SHORT = ['--seconds', '1', '--warmup', '0.3'];

describe('plumber (the built CLI)', function () {
  this.timeout(60_000);

  it('plans a misconfigured pipeline: prints the bottleneck and a change', async () => {
    const r = await plumber('plan', path.join(PIPELINES, 'latency-bound.ts'), ...SHORT);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Bottleneck: /);
    assert.match(r.stdout, /◀ bottleneck/);
    assert.match(r.stdout, /Changes:\n  • /);
    assert.match(r.stdout, /--override \d+:\d+=parallelism:\d+/);
    // Ten calls in flight hide a 10 ms wait on any machine: verification measured the gain.
    assert.match(r.stdout, /^Plan: est\. (?:\d+\.\d|\d{1,3}(?:,\d{3})*)×, verified (?:\d+\.\d+|\d{1,3}(?:,\d{3})*)× ± (?:\d+\.\d+|\d{1,3}(?:,\d{3})*)\.$/m);
    assert.match(r.stderr, /run 1: profiling as written\n(.*\n)*.*run 2: (re-profiling|verifying)/);
  });

  it('says "No reliable gain on this machine right now" when the plan measured no faster, and drops its change with why', async () => {
    const r = await plumber('plan', path.join(PIPELINES, 'verify-serialized.ts'), ...SHORT, '--passes', '1');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^No reliable gain on this machine right now: the plan measured .* as written \(\d\.\d+× ± /m);
    assert.match(r.stdout, /Dropped after verification:\n {2}• set parallelism of map\(lookup\) to \d+ — the plan measured \d\.\d+×/);
    assert.doesNotMatch(r.stdout, /Try the plan/);
  });

  it('never plans a cache after a map whose source calls Math.random(), though one run could not tell', async () => {
    const r = await plumber('plan', path.join(PIPELINES, 'verify-rare-random.ts'), ...SHORT, '--passes', '1', '--no-verify', '--cores', '2', '--json', '--quiet');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { profile: { ops: Array<{ id: string; randomObserved?: boolean }> }; plan: { changes: Array<{ kind: string; opId: string }>; notes?: string[] } };
    // map(augment) (18:4) flips one element in a million: the runner's second call did not tell.
    assert.notEqual(out.profile.ops.find((o) => o.id === '18:4')?.randomObserved, true);
    // Only the source says so: the cache goes after map(decode) (17:4), never after the augmentation.
    assert.equal(
      out.plan.changes.some((c) => c.kind === 'cache' && c.opId !== '17:4'),
      false,
      JSON.stringify(out.plan.changes),
    );
    assert.ok(
      out.plan.notes?.some((n) => /map\(augment\) is random \(its source draws random numbers\)/.test(n)),
      JSON.stringify(out.plan.notes),
    );
  });

  it('plans for the cores asked for and says so', async () => {
    const r = await plumber('plan', path.join(PIPELINES, 'latency-bound.ts'), ...SHORT, '--passes', '1', '--no-verify', '--cores', '3');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Cores: planning for 3 cores, as asked/m);
    // Three cores are not this machine's: the plan says it is for them (test/unit/cli/target.test.ts).
    assert.match(r.stdout, /^Plan: est\. (?:\d+\.\d|\d{1,3}(?:,\d{3})*)× predicted for 3 cores — verifiable here on \d cores?, not verified \(--no-verify\)\.$/m);
  });

  it('fixes a pipeline from the command line: a diff that moves the slow map to worker threads', async () => {
    const r = await plumber('fix', path.join(PIPELINES, 'main-thread-bound.ts'), '--seconds', '1', '--diff', '--cores', '2', '--no-verify');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\+\s+\.map\(decode, \{[^}]*placement: 'worker'/m);
    assert.match(r.stdout, /^-\s+\.map\(decode, \{ parallelism: 4 \}\)/m);
  });

  it('waits --start seconds for the first element, then names the shuffle buffer that holds it', async () => {
    const r = await plumber('profile', path.join(PIPELINES, 'slow-fill.ts'), '--export', 'awaiting', '--start', '1', '--seconds', '0.3');
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /produced no element in 1\.0 s\. It is not stuck: map\(fetchOne\) handed [\d,]+ elements on to shuffle\(400\)/);
    assert.match(r.stderr, /\(`--start \d+`/);
    const help = await plumber('profile', '--help');
    assert.match(help.stdout, /--start S +the longest wait for the first element/);
  });

  it('prints the profile, the analysis and the plan as JSON with --json', async () => {
    const r = await plumber('plan', path.join(PIPELINES, 'latency-bound.ts'), ...SHORT, '--json', '--quiet', '--passes', '1');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as {
      profile: { ops: unknown[] };
      analysis: { bottleneck: { reason: string }; time?: { firstBatchSeconds: number; firstBatchSummary: string } };
      plan: { predictedRate: number; verification?: { verdict: string; tried: unknown[] }; time?: { firstBatchSeconds: number } };
      passes: number;
    };
    assert.equal(out.passes, 1);
    // The first batch, predicted, as written and with the plan.
    assert.ok(out.analysis.time && out.analysis.time.firstBatchSeconds > 0 && out.analysis.time.firstBatchSummary.length > 0, JSON.stringify(out.analysis.time));
    assert.ok(out.plan.time && out.plan.time.firstBatchSeconds > 0, JSON.stringify(out.plan.time));
    assert.ok(out.plan.verification && out.plan.verification.tried.length >= 2, 'the JSON plan carries what verification measured');
    assert.ok(out.profile.ops.length >= 2);
    assert.ok(out.analysis.bottleneck.reason.length > 0);
    assert.ok(out.plan.predictedRate > 0);
  });

  it('fails the CI gate when the pipeline is slower than --min-rate, and passes below it', async () => {
    const slow = await plumber('check', path.join(PIPELINES, 'latency-bound.ts'), ...SHORT, '--min-rate', '1000000');
    assert.equal(slow.code, 1);
    // latency-bound.ts ends in a batch: the rates, and --min-rate, are batches/s.
    assert.match(slow.stderr, /plumber check: [\d.,]+ batches\/s is below the required 1,000,000 batches\/s/);
    const fine = await plumber('check', path.join(PIPELINES, 'latency-bound.ts'), ...SHORT, '--min-rate', '0.5', '--json');
    assert.equal(fine.code, 0, fine.stderr);
    assert.equal((JSON.parse(fine.stdout) as { pass: boolean }).pass, true);
  });

  it('runs with an override and reports it in the profile', async () => {
    const plan = JSON.parse((await plumber('plan', path.join(PIPELINES, 'latency-bound.ts'), ...SHORT, '--json', '--quiet', '--passes', '1', '--no-verify')).stdout) as {
      profile: { ops: { id: string; kind: string }[] };
    };
    const map = plan.profile.ops.find((o) => o.kind === 'map')!;
    const r = await plumber('profile', path.join(PIPELINES, 'latency-bound.ts'), ...SHORT, '--json', '--override', `${map.id}=parallelism:8`);
    assert.equal(r.code, 0, r.stderr);
    const profile = JSON.parse(r.stdout) as { run: { overrides: Record<string, unknown> }; ops: { id: string; knobs: { parallelism?: number } }[] };
    assert.deepEqual(profile.run.overrides, { [map.id]: { parallelism: 8 } });
    assert.equal(profile.ops.find((o) => o.id === map.id)?.knobs.parallelism, 8);
  });

  it('keeps calls in flight within --max-in-flight', async () => {
    const raise = async (...flags: string[]): Promise<number> => {
      const r = await plumber('plan', path.join(PIPELINES, 'latency-bound.ts'), ...SHORT, '--passes', '1', '--no-verify', '--cores', '2', '--json', '--quiet', ...flags);
      assert.equal(r.code, 0, r.stderr);
      const change = (JSON.parse(r.stdout) as { plan: Plan }).plan.changes.find((c) => c.kind === 'parallelism' && c.opId === '11:4');
      assert.ok(change?.kind === 'parallelism', r.stdout.slice(0, 400));
      return change.to;
    };
    // A 10 ms call one at a time before a cheap batch: the plan asks for far more than 8 unless told not to.
    assert.ok((await raise()) > 8);
    assert.equal(await raise('--max-in-flight', '8'), 8);
  });

  it('rejects a bad override with exit code 2 and says what is wrong', async () => {
    const knob = await plumber('plan', path.join(PIPELINES, 'latency-bound.ts'), '--override', '12:6=speed:fast');
    assert.equal(knob.code, 2);
    assert.match(knob.stderr, /unknown knob "speed"\. Knobs: parallelism, prefetch, cache/);
    const value = await plumber('profile', path.join(PIPELINES, 'latency-bound.ts'), '--override', '12:6=parallelism:zero', '--json');
    assert.equal(value.code, 2);
    assert.match((JSON.parse(value.stdout) as { error: { message: string } }).error.message, /parallelism must be a whole number/);
    const op = await plumber('profile', path.join(PIPELINES, 'latency-bound.ts'), '--override', 'map=parallelism:2');
    assert.equal(op.code, 2);
    assert.match(op.stderr, /"map" is not an operator id/);
  });

  it('says which operator ids exist when an override names none of them', async () => {
    const r = await plumber('profile', path.join(PIPELINES, 'latency-bound.ts'), ...SHORT, '--override', '99:1=parallelism:2');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /No operator has the id 99:1.*operators: /);
  });

  it('exits with 1 and a sentence when the pipeline fails, with an error field in JSON', async () => {
    const r = await plumber('profile', path.join(PIPELINES, 'bad/throws.ts'), ...SHORT, '--json');
    assert.equal(r.code, 1);
    const out = JSON.parse(r.stdout) as { error: { kind: string; message: string } };
    assert.equal(out.error.kind, 'throw');
    const missing = await plumber('plan', path.join(PIPELINES, 'nope.ts'));
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /nope\.ts does not exist/);
  });

  it('explains usage mistakes with exit code 2', async () => {
    const none = await plumber('plan');
    assert.equal(none.code, 2);
    assert.match(none.stderr, /needs the pipeline file/);
    const unknown = await plumber('plna', 'x.ts');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /"plna" is not a plumber command/);
    const gate = await plumber('check', 'x.ts');
    assert.equal(gate.code, 2);
    assert.match(gate.stderr, /needs --min-rate/);
    // plan and fix share their options: a bad --budget is refused alike, before anything runs.
    for (const [command, value] of [
      ['plan', '-3'],
      ['fix', 'soon'],
    ]) {
      const budget = await plumber(command, path.join(PIPELINES, 'latency-bound.ts'), '--budget', value);
      assert.equal(budget.code, 2, budget.stderr);
      assert.match(budget.stderr, new RegExp(`--budget must be a number of at least 0, got "${value}"`));
      assert.doesNotMatch(budget.stderr, /profiling/);
    }
  });

  it('takes sizes in megabytes or with a unit, and says which forms it takes when a size is wrong', async () => {
    const parsed = (value: string): Parsed => parseArgs(['x.ts', '--memory-budget', value], { 'memory-budget': { value: true } }, 'plan');
    assert.equal(megabytesFlag(parsed('512'), 'memory-budget', { min: 0 }), 512);
    assert.equal(megabytesFlag(parsed('512MB'), 'memory-budget', { min: 0 }), 512);
    assert.equal(megabytesFlag(parsed('1.5GB'), 'memory-budget', { min: 0 }), 1536);
    assert.equal(megabytesFlag(parsed('2gib'), 'memory-budget', { min: 0 }), 2048);
    assert.equal(megabytesFlag(parsed('512k'), 'memory-budget', { min: 0 }), 0.5);
    assert.equal(megabytesFlag(parsed('100.2M'), 'memory-budget', { min: 16, integer: true }), 101);
    for (const bad of ['4XB', '-3', 'lots', ''])
      assert.throws(() => megabytesFlag(parsed(bad), 'memory-budget', { min: 0 }), /--memory-budget must be a size of at least 0 MB: megabytes \(512\), or with a unit \(512MB, 1\.5GB, 800KB\); got/);
    // Through the CLI, refused before anything runs.
    const r = await plumber('plan', path.join(PIPELINES, 'latency-bound.ts'), '--memory-budget', '4XB');
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--memory-budget must be a size/);
  });

  it('prints help and the version', async () => {
    const help = await plumber('--help');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /plumber plan <file>/);
    const planHelp = await plumber('plan', '--help');
    assert.match(planHelp.stdout, /--override OP=KNOB:VALUE/);
    assert.match(planHelp.stdout, /--no-verify/);
    const fixHelp = await plumber('fix', '--help');
    assert.match(fixHelp.stdout, /--cores N/);
    assert.match(fixHelp.stdout, /--from-profile FILE/);
    const version = await plumber('--version');
    assert.match(version.stdout.trim(), /^\d+\.\d+\.\d+/);
  });
});

describe('plumber plan on a chain it cannot follow', function () {
  this.timeout(60_000);

  it('says where and why before the numbers, and in --json', async () => {
    const file = path.join(PIPELINES, 'dialects/stops-loop.ts');
    const r = await plumber('plan', file, ...SHORT, '--passes', '1', '--no-verify');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^plumber: stops-loop\.ts:8: .*loop/m);
    const j = await plumber('plan', file, ...SHORT, '--passes', '1', '--no-verify', '--json', '--quiet');
    const out = JSON.parse(j.stdout) as { stops?: Array<{ range: { start: { line: number } }; message: string }> };
    assert.deepEqual(
      out.stops?.map((s) => s.range.start.line + 1),
      [8],
    );
  });
});
