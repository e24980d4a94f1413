import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { ROOT, plumber } from './bin';
import type { Baseline } from '../../../src/engine/gate';

const PIPELINE = path.join(ROOT, 'test/fixtures/pipelines/gate-steady.ts');
const SHORT = ['--seconds', '1.5', '--warmup', '0.3', '--quiet'];
/**
 * The machines these tests run on are shared and often busier than their cores (other suites,
 * other checkouts): the tests that are not about the busy-machine rule set its bar out of reach,
 * so they test the comparison they name whatever else runs.
 */
const ANY_LOAD = ['--max-load', '1000'];

describe('plumber check --baseline (the built CLI)', function () {
  this.timeout(120_000);
  let dir: string;
  let base: string;
  let saved: Baseline;

  /** The saved baseline, changed by `edit`, written to a file of its own. */
  const edited = (name: string, edit: (b: Baseline) => void): string => {
    const b = JSON.parse(JSON.stringify(saved)) as Baseline;
    edit(b);
    const file = path.join(dir, name);
    writeFileSync(file, JSON.stringify(b));
    return file;
  };

  /**
   * Claims the baseline ran four times as fast (every slice and curve point took a quarter of the
   * time) on a machine that left it every core it used: whatever share of the cores other work
   * leaves this run, it measured far slower than that, and not on a starved machine.
   */
  const fourTimesAsFast = (b: Baseline): void => {
    for (const s of b.run.slices) s.seconds /= 4;
    if (b.run.curve) b.run.curve.t = b.run.curve.t.map((t) => t / 4);
    b.machine.ownCores = 0;
    delete b.machine.availableCores;
  };

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'plumber-gate-'));
    base = path.join(dir, 'base.json');
    const r = await plumber('check', PIPELINE, ...SHORT, ...ANY_LOAD, '--save-baseline', base);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /plumber check: saved [\d,.]+\/s ± [\d,.]+\/s \(\d+ slices\) as the baseline .*base\.json\./);
    saved = JSON.parse(readFileSync(base, 'utf8')) as Baseline;
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('stores the run: its window slices and curve, the machine and its load, the configuration, schema-versioned', () => {
    assert.equal(saved.schema, 'plumber-baseline');
    assert.equal(saved.version, 1);
    assert.ok(saved.run.slices.length >= 2 && saved.run.slices.every((s) => s.elements >= 0 && s.seconds > 0));
    assert.ok(saved.run.rate > 0);
    assert.equal(saved.machine.cores, os.availableParallelism());
    assert.equal(saved.machine.nodeVersion, process.version);
    assert.equal(typeof saved.machine.loadAverage, 'number');
    assert.match(saved.pipeline.sha256, /^[0-9a-f]{64}$/);
    assert.equal(saved.pipeline.file, 'test/fixtures/pipelines/gate-steady.ts');
    assert.deepEqual(saved.config.overrides, {});
  });

  it('passes the unchanged pipeline against its own baseline and prints the ratio with its interval', async () => {
    // 50% allowed: the test is about the verdict on an unchanged pipeline, not about how tight a busy machine lets the interval be.
    const r = await plumber('check', PIPELINE, ...SHORT, ...ANY_LOAD, '--baseline', base, '--max-slowdown', '50%');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /plumber check: [\d,.]+\/s against the baseline's [\d,.]+\/s: \d\.\d\d× \(95% interval \d\.\d\d–\d\.\d\d\), not reliably slower than the 50% slowdown allowed\. ok/);
  });

  it('fails against a baseline edited to claim four times the rate, with the ratio, in text and JUnit XML', async () => {
    const fast = edited('fast.json', fourTimesAsFast);
    const r = await plumber('check', PIPELINE, ...SHORT, ...ANY_LOAD, '--baseline', fast);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /: 0\.\d\d× \(95% interval 0\.\d\d–0\.\d\d\), reliably slower than the 10% slowdown allowed\. Run `.* plan .*gate-steady\.ts` to see what holds it back\./);

    const junit = await plumber('check', PIPELINE, ...SHORT, ...ANY_LOAD, '--baseline', fast, '--format', 'junit');
    assert.equal(junit.code, 1, junit.stderr);
    assert.equal(XMLValidator.validate(junit.stdout), true);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(junit.stdout) as {
      testsuites: { testsuite: { tests: string; failures: string; testcase: { name: string; failure: { message: string; type: string } } } };
    };
    const suite = doc.testsuites.testsuite;
    assert.equal(suite.tests, '1');
    assert.equal(suite.failures, '1');
    assert.match(suite.testcase.name, /gate-steady\.ts#pipeline$/);
    assert.equal(suite.testcase.failure.type, 'slower');
    assert.match(suite.testcase.failure.message, /baseline: .*0\.\d\d× \(95% interval/);
  });

  it('annotates the pipeline for GitHub Actions: ::error on a failure, ::notice on a pass', async () => {
    const fast = edited('fast-gh.json', fourTimesAsFast);
    const r = await plumber('check', PIPELINE, ...SHORT, ...ANY_LOAD, '--baseline', fast, '--format', 'github');
    assert.equal(r.code, 1, r.stderr);
    // GitHub reads % in a message as %25.
    assert.match(r.stdout, /^::error file=.*gate-steady\.ts,line=10,title=plumber check \(baseline\)::.*0\.\d\d× \(95%25 interval .*reliably slower than the 10%25 slowdown/m);
    const ok = await plumber('check', PIPELINE, ...SHORT, '--min-rate', '1', '--format', 'github');
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^::notice file=.*gate-steady\.ts,line=10,title=plumber check \(min-rate\)::.* ≥ 1(\.00)?\/s: ok$/m);
  });

  it('says a baseline from another machine cannot be compared, with its own exit code, and fails it only with --strict', async () => {
    const other = edited('other.json', (b) => {
      b.machine.cores = 64;
      fourTimesAsFast(b);
    });
    const r = await plumber('check', PIPELINE, ...SHORT, ...ANY_LOAD, '--baseline', other);
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /cannot compare the runs: the baseline ran on 64 cores and this run on \d+[.;]/);
    const json = await plumber('check', PIPELINE, ...SHORT, ...ANY_LOAD, '--baseline', other, '--format', 'json');
    assert.equal(json.code, 4);
    const out = JSON.parse(json.stdout) as { outcome: string; pass: boolean; baseline: { reasons: string[] } };
    assert.equal(out.outcome, 'incomparable');
    assert.equal(out.pass, true);
    assert.equal(out.baseline.reasons.length, 1);
    const strict = await plumber('check', PIPELINE, ...SHORT, ...ANY_LOAD, '--baseline', other, '--strict', '--format', 'junit');
    assert.equal(strict.code, 1);
    assert.match(strict.stdout, /<failure message="baseline: .*cannot compare the runs: the baseline ran on 64 cores/);
  });

  it('says a baseline saved on a busy machine cannot be compared', async () => {
    const busy = edited('busy.json', (b) => {
      b.machine.loadAverage = b.machine.cores * 3 + b.machine.ownCores;
    });
    const r = await plumber('check', PIPELINE, ...SHORT, '--baseline', busy, '--max-slowdown', '50%');
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /the machine was busy during the baseline \(load average [\d.]+, [\d.]+ of it other work, on \d+ cores\)/);
  });

  it('shows --save-baseline, --baseline and --max-slowdown in plumber --help and check --help, with examples', async () => {
    const main = await plumber('--help');
    assert.equal(main.code, 0);
    assert.match(main.stdout, /^ {2}plumber check src\/pipeline\.ts --save-baseline plumber-baseline\.json$/m);
    assert.match(main.stdout, /^ {2}plumber check src\/pipeline\.ts --baseline plumber-baseline\.json --max-slowdown 10%$/m);
    assert.match(main.stdout, /4 `check --baseline`\ncannot compare this run with the baseline/);
    const check = await plumber('check', '--help');
    for (const flag of ['--baseline FILE', '--save-baseline FILE', '--max-slowdown P', '--max-load L', '--strict', '--format F']) assert.ok(check.stdout.includes(`  ${flag}`), flag);
    assert.match(check.stdout, /Examples:\n {2}plumber check src\/pipeline\.ts --save-baseline plumber-baseline\.json/);
  });

  it('refuses what it cannot use before running: no check asked for, a missing or broken baseline, a bad slowdown or format', async () => {
    const cases: Array<[string[], RegExp]> = [
      [[], /needs --min-rate R .*, --baseline FILE .* or --save-baseline FILE/],
      [['--baseline', path.join(dir, 'nope.json')], /the baseline .*nope\.json does not exist\. Make it once with `plumber check FILE --save-baseline/],
      [['--baseline', PIPELINE], /is not JSON/],
      [['--baseline', base, '--max-slowdown', '150%'], /--max-slowdown must be a percentage above 0% and below 100% \(10%\) or a fraction \(0\.1\); got "150%"/],
      [['--baseline', base, '--max-slowdown', '10'], /--max-slowdown must be/],
      [['--min-rate', '1', '--max-slowdown', '10%'], /--max-slowdown goes with --baseline FILE/],
      [['--baseline', base, '--format', 'xml'], /--format must be one of text, json, junit, github; got "xml"/],
    ];
    for (const [flags, message] of cases) {
      const r = await plumber('check', PIPELINE, ...flags);
      assert.equal(r.code, 2, `${flags.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
  });
});
