/**
 * `plumber plan` and `plumber fix` on pipelines in the dialects people already write (the fixtures
 * the protocol tests open too): a Node-streams chain, a tfjs-data pipeline on the real
 * @tensorflow/tfjs-data, an async-generator chain.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Dialect } from '../../../src/data/tracing';
import { ROOT, plumber } from './bin';

const FIXTURES = path.join(ROOT, 'test/fixtures/server/dialects');

/** Short runs, one pass, planned for 4 cores whatever this shared machine's cores are doing. */
const SHORT = ['--seconds', '1', '--warmup', '0.3', '--passes', '1', '--cores', '4'];

/** The op id (`line:column`, 1-based) of `name` where it first appears after `after` in the fixture. */
function idOf(file: string, after: string, name: string): string {
  const lines = readFileSync(path.join(FIXTURES, file), 'utf8').split('\n');
  const line = lines.findIndex((l) => l.includes(after));
  assert.ok(line >= 0, `${file} has no line with ${after}`);
  const column = lines[line]!.indexOf(name, lines[line]!.indexOf(after));
  return `${line + 1}:${column + 1}`;
}

interface Case {
  file: string;
  dialect: Dialect;
  /** The bottleneck's op id, from the fixture's text. */
  bottleneck: string;
  /** The change the plan must print, where the dialect's own knobs can raise the bound. */
  change?: RegExp;
}

const CASES: Case[] = [
  { file: 'streams.ts', dialect: 'node-streams', bottleneck: idOf('streams.ts', '.map(lookup', 'map'), change: /^ {2}• set concurrency of map\(lookup\) to \d+/m },
  { file: 'tfjs.ts', dialect: 'tfjs-data', bottleneck: idOf('tfjs.ts', '.map(decode)', 'map') },
  { file: 'generators.ts', dialect: 'async-generator', bottleneck: idOf('generators.ts', 'fetchAll(ids)', 'fetchAll') },
];

describe('plumber on dialect pipelines (the built CLI)', function () {
  // Limits that only guard a hang: every command profiles for real, slow on a busy machine.
  this.timeout(180_000);

  for (const c of CASES) {
    it(`plans ${c.file} (${c.dialect}): the bottleneck's row and line, and a plan or "no change"`, async () => {
      const r = await plumber('plan', path.join(FIXTURES, c.file), ...SHORT, '--no-verify');
      assert.equal(r.code, 0, r.stderr);
      const marked = r.stdout.split('\n').filter((l) => l.includes('◀ bottleneck'));
      assert.equal(marked.length, 1, r.stdout);
      assert.match(marked[0]!, new RegExp(`\\s${c.bottleneck}\\s`), r.stdout);
      assert.match(r.stdout, /^Bottleneck: /m);
      // Planned for 4 cores on this machine: labelled so (test/unit/cli/target.test.ts).
      assert.match(
        r.stdout,
        /^(Plan: est\. [\d.,]+× predicted for 4 cores — (verifiable here on \d+ cores?, not verified \(--no-verify\)|not verifiable here \(this machine has \d+\))\.|No change is predicted to help: .*)$/m,
      );
      if (c.change) assert.match(r.stdout, c.change);
    });

    it(`prints ${c.file}'s ops with their dialect in --json`, async () => {
      const r = await plumber('plan', path.join(FIXTURES, c.file), ...SHORT, '--no-verify', '--json', '--quiet');
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as {
        profile: { ops: Array<{ id: string; dialect?: Dialect }> };
        analysis: { bottleneck: { opId?: string } };
        plan: { changes: unknown[] };
        noChange?: string;
      };
      assert.equal(out.analysis.bottleneck.opId, c.bottleneck);
      // An empty plan (unverified: the model found nothing) says why, as the text output does.
      assert.equal(out.noChange !== undefined, out.plan.changes.length === 0, `noChange: ${out.noChange}; changes: ${JSON.stringify(out.plan.changes)}`);
      if (out.noChange !== undefined) assert.match(out.noChange, /binds|already runs at what this machine allows|not in the profile/);
      const op = out.profile.ops.find((o) => o.id === c.bottleneck);
      assert.equal(op?.dialect, c.dialect, JSON.stringify(out.profile.ops));
      // Every op says its dialect (a Node stream's source may be an async generator: still a dialect).
      assert.ok(
        out.profile.ops.every((o) => o.dialect !== undefined && o.dialect !== 'plumber-data'),
        JSON.stringify(out.profile.ops),
      );
    });
  }

  // As written with `{ concurrency: 1 }` the fix overwrites the value; as most people write it, with
  // no options (Node's default is one call in flight), it adds the option: both in Node's spelling.
  for (const [label, written] of [
    ['its concurrency: 1', '.map(lookup, { concurrency: 1 })'],
    ['no options', '.map(lookup)'],
  ] as const) {
    it(`fixes a Node-streams map with ${label} in its own knob, concurrency, and leaves the rest of the file byte-identical`, async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'plumber-cli-dialects-'));
      try {
        symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
        const file = path.join(root, 'streams.ts');
        const original = readFileSync(path.join(FIXTURES, 'streams.ts'), 'utf8');
        assert.ok(original.includes('.map(lookup, { concurrency: 1 })'));
        const before = original.replace('.map(lookup, { concurrency: 1 })', written);
        writeFileSync(file, before);
        // Verified as `plumber fix` does by default: 2 ms lookups gain with more in flight on any machine.
        const r = await plumber('fix', file, ...SHORT, '--write');
        assert.equal(r.code, 0, r.stderr);
        const after = readFileSync(file, 'utf8');
        const n = /\.map\(lookup, \{ concurrency: (\d+) \}\)/.exec(after);
        assert.ok(n, after);
        assert.ok(Number(n[1]) > 1, n[0]);
        // Only Node's own knobs, in its spelling: verification may also keep a read-ahead buffer
        // (highWaterMark) where the runs it measured say one paid; nothing else of the file changes.
        assert.doesNotMatch(after, /parallelism|prefetch/);
        assert.equal(after.replace(n[0], written).replace(/, \{ highWaterMark: \d+ \}\)/g, ')'), before);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  }
});
