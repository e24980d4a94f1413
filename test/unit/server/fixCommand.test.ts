/**
 * `plumber fix` end to end: a real profile from the runner, the real model's plan, and the fix
 * engine writing the source — checked by re-extracting the graph, in a child process like a
 * terminal would run it.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { plan } from '../../../src/model';
import { offeredChanges } from '../../../src/engine/offer';
import { runProfile } from '../../../src/runner/spawn';
import type { Profile } from '../../../src/shared/profile';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import { FIXTURES } from './helpers';

const ROOT = path.resolve(__dirname, '../../..');
const PIPELINES = path.join(ROOT, 'test/fixtures/pipelines');

function plumberFix(args: string[], cwd: string): { code: number | null; stdout: string; stderr: string } {
  const script = `require(${JSON.stringify(path.join(ROOT, 'src/cli/fix.ts'))}).runFixCommand(process.argv.slice(1)).then((c) => { process.exitCode = c; })`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script, ...args], { cwd, encoding: 'utf8', timeout: 90_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('plumber fix', function () {
  this.timeout(120_000);
  let dir: string;
  let file: string;
  let profileFile: string;
  let profile: Profile;

  before(async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'plumber-fix-cli-'));
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
    dir = path.join(root, 'project');
    cpSync(path.join(FIXTURES, 'cli'), dir, { recursive: true });
    file = path.join(dir, 'pipeline.ts');
    profile = await runProfile({ file, exportName: 'numbers', seconds: 1 });
    assert.equal(profile.error, undefined, profile.error?.message);
    profileFile = path.join(root, 'numbers.profile.json');
    writeFileSync(profileFile, JSON.stringify(profile));
  });
  after(() => rmSync(path.dirname(dir), { recursive: true, force: true }));

  it('prints the plan as a unified diff and leaves the file alone', () => {
    const before = readFileSync(file, 'utf8');
    const r = plumberFix([file, '--from-profile', profileFile, '--diff', '--cores', '2'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /not verified \(saved profile\)/);
    assert.match(r.stdout, /^--- a\/pipeline\.ts/m);
    assert.match(r.stdout, /^\+\+\+ b\/pipeline\.ts/m);
    assert.match(r.stdout, /^@@ /m);
    assert.match(r.stdout, /^[-+]/m);
    assert.equal(readFileSync(file, 'utf8'), before);
    assert.match(r.stderr, /Plumber fix: /);
  });

  it('refuses what the editor would not offer: a plan whose prediction reads as no gain over the rate measured', () => {
    // The run as saved measured ten times the elements: the model's plan for two cores beats its own
    // prediction there, but not the rate the run measured, so the editor offers no fix from it.
    const measuredFaster: Profile = { ...profile, run: { ...profile.run, elements: profile.run.elements * 10 } };
    const thePlan = plan(measuredFaster, { cores: 2 });
    assert.ok(thePlan.changes.length > 0, 'the model still proposes a change');
    assert.deepEqual(offeredChanges(thePlan), [], 'the editor offers none of it');
    const saved = path.join(path.dirname(dir), 'measured-faster.profile.json');
    writeFileSync(saved, JSON.stringify(measuredFaster));
    const before = readFileSync(file, 'utf8');
    const r = plumberFix([file, '--from-profile', saved, '--write', '--cores', '2'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Nothing to fix: the plan predicts no gain over the rate measured as written \(est\. 0\.\d×, not verified \(saved profile\)\), so its change is not offered/);
    assert.doesNotMatch(r.stderr, /Plumber fix: run /);
    assert.equal(readFileSync(file, 'utf8'), before);
  });

  it('writes the plan into the source: the re-extracted graph has the planned knobs and the comments', () => {
    const thePlan = plan(profile, { cores: 2 });
    assert.ok(thePlan.changes.length > 0, 'the heavy map leaves the model something to fix');
    const r = plumberFix([file, '--from-profile', profileFile, '--write', '--cores', '2'], dir);
    assert.equal(r.code, 0, r.stderr);
    const text = readFileSync(file, 'utf8');
    assert.match(text, /\/\/ the slow step/);
    const ws = new GraphWorkspace();
    ws.setText(file, text);
    const p = ws.graphOf(file).pipelines.find((x) => x.name === 'numbers')!;
    const map = p.ops.find((o) => o.kind === 'map')!;
    for (const change of thePlan.changes) {
      const lit = (key: string): unknown => (map.knobs[key]?.state === 'literal' ? (map.knobs[key] as { value: unknown }).value : undefined);
      if (change.kind === 'placement') {
        assert.equal(lit('placement'), 'worker');
        assert.equal(lit('parallelism'), change.parallelism);
      } else if (change.kind === 'parallelism') {
        assert.equal(lit('parallelism'), change.to);
      } else if (change.kind === 'prefetch' && !change.existing) {
        const after = profile.ops.find((o) => o.id === change.opId)!;
        const i = p.ops.findIndex((o) => o.kind === after.kind);
        assert.equal(p.ops[i + 1]?.kind, 'prefetch');
        assert.equal(p.ops[i + 1]?.knobs['bufferSize']?.state === 'literal' && (p.ops[i + 1]!.knobs['bufferSize'] as { value: unknown }).value, change.size);
      } else if (change.kind === 'cache') {
        assert.ok(p.ops.some((o) => o.kind === 'cache'));
      }
    }
  });

  it('explains a wrong call with exit code 2', () => {
    const none = plumberFix([], dir);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /takes one pipeline file/);
    const both = plumberFix([file, '--diff', '--write'], dir);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /Choose one of --diff/);
  });

  it('profiles, plans in passes and verifies like plan when no profile is given, and says the verified figure or that nothing gained', () => {
    // A latency-bound map (one call in flight of a 20 ms await): the model always proposes more
    // calls in flight, so there is always a plan to verify (a CPU-bound one may not pay on a busy machine).
    const r = plumberFix([path.join(PIPELINES, 'latency-bound.ts'), '--seconds', '0.5', '--cores', '2'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /run 1: profiling as written/);
    assert.match(r.stderr, /run 2: re-profiling with the plan applied \(pass 2 of 2\)/);
    assert.match(
      r.stderr,
      /([\d,.]+ → [\d,.]+ batches\/s predicted; est\. (?:\d+\.\d|\d{1,3}(?:,\d{3})*)×, verified (?:\d+\.\d+|\d{1,3}(?:,\d{3})*)× ± (?:\d+\.\d+|\d{1,3}(?:,\d{3})*)\.|Nothing to fix: no reliable gain on this machine right now: )/,
    );
  });

  it('finds a pipeline built in a class method behind an exported factory, as the runner does', () => {
    const factory = path.join(PIPELINES, 'verify-class-factory.ts');
    const r = plumberFix([factory, '--seconds', '0.5', '--cores', '2', '--no-verify', '--passes', '1'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Plumber fix: run map\(heavy\) in worker threads/);
    assert.match(r.stdout, /^-\s+\.map\(heavy\)$/m);
    assert.match(r.stdout, /^\+\s+\.map\(heavy, \{ parallelism: 2, placement: 'worker', module: __filename \}\)$/m);
    assert.match(r.stderr, /not verified \(--no-verify\)/);
  });

  it('moves a fn from a module a bundler wrote, as the run found it exported, and the fixed copy runs it in worker threads', async () => {
    // The source does not show bundled-steps.js exporting heavy (getters on module.exports); the
    // runner found the export, so plan moved it and fix used to refuse ("not a named export").
    const copy = path.join(dir, 'bundled');
    cpSync(PIPELINES, copy, { recursive: true, filter: (f) => f === PIPELINES || /bundled(-steps)?\.js$/.test(f) });
    const fixed = path.join(copy, 'bundled.js');
    const r = plumberFix([fixed, '--seconds', '0.5', '--cores', '2', '--no-verify', '--passes', '1', '--write'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(readFileSync(fixed, 'utf8'), /\.map\(heavy, \{ parallelism: 2, placement: 'worker', module: require\.resolve\('\.\/bundled-steps\.js'\), exportName: 'heavy' \}\)/);
    const after = await runProfile({ file: fixed, seconds: 0.3 });
    assert.equal(after.error, undefined, after.error?.message);
    const map = after.ops.find((o) => o.kind === 'map');
    assert.equal(map?.placement, 'worker', JSON.stringify(map));
    assert.ok((map?.counters.calls ?? 0) > 0, 'the moved fn ran');
  });

  it('never writes a cache after a map that calls Math.random()', () => {
    const random = path.join(PIPELINES, 'verify-random-augment.ts');
    const r = plumberFix([random, '--seconds', '0.5', '--cores', '2', '--no-verify', '--passes', '1', '--json', '--quiet'], dir);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { plan: { changes: Array<{ kind: string; opId: string }> }; files: Array<{ diff: string }> };
    assert.ok(out.plan.changes.length > 0, 'the plan has something to write');
    assert.equal(
      out.plan.changes.some((c) => c.kind === 'cache' && c.opId !== '16:4'),
      false,
      JSON.stringify(out.plan.changes),
    );
    // The fixed text around the edit: context and added lines of the diff.
    const after = out.files
      .flatMap((f) => f.diff.split('\n'))
      .filter((l) => l.startsWith(' ') || (l.startsWith('+') && !l.startsWith('+++')))
      .map((l) => l.slice(1))
      .join('\n');
    assert.match(after, /\.map\(augment/);
    assert.doesNotMatch(after, /\.map\(augment[^\n]*\n\s*\.cache\(\)/);
  });
});
