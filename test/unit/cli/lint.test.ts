/**
 * `plumber lint` as a real process: its lines, exit codes, rule selection, formats, suppression
 * comments and the files it picks when none are named.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { ROOT, plumber } from './bin';
import { TWO_FINDINGS, lint, project } from './lintRun';

const LINTS = path.join(ROOT, 'test/fixtures/server/lints');
const SHUFFLE_AFTER_BATCH = 'a.ts:4:37  warning  plumber/shuffle-after-batch  shuffle() after batch(2) shuffles whole batches: the same elements share a batch every epoch. Shuffle before batch().';
const NO_PREFETCH = 'a.ts:3:35  information  plumber/no-prefetch-at-end  Pipeline p does not end with prefetch(): the consumer and the pipeline take turns instead of overlapping. Add .prefetch(2) or more at the end.';

describe('plumber lint', function () {
  this.timeout(60_000);

  it('prints one line per finding, file:line:col severity rule message, and exits 1 on a warning', async () => {
    const p = project({ 'a.ts': TWO_FINDINGS });
    try {
      const r = await lint(p.dir, 'a.ts');
      assert.equal(r.stdout, `${NO_PREFETCH}\n${SHUFFLE_AFTER_BATCH}\n`);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /2 findings \(1 warning, 1 information\) in a\.ts/);
    } finally {
      p.remove();
    }
  });

  it('fails only at or above --max-severity: information passes by default and fails when asked', async () => {
    const p = project({ 'a.ts': TWO_FINDINGS });
    try {
      const info = await lint(p.dir, 'a.ts', '--rule', 'no-prefetch-at-end');
      assert.deepEqual([info.code, info.stdout], [0, `${NO_PREFETCH}\n`]);
      const strict = await lint(p.dir, 'a.ts', '--rule', 'plumber/no-prefetch-at-end', '--max-severity', 'information');
      assert.equal(strict.code, 1);
      const ignored = await lint(p.dir, 'a.ts', '--ignore-rule', 'shuffle-after-batch');
      assert.deepEqual([ignored.code, ignored.stdout], [0, `${NO_PREFETCH}\n`]);
    } finally {
      p.remove();
    }
  });

  it('finds every static rule of the lint fixture, and nothing on the clean one', async () => {
    const r = await lint(LINTS, 'input.ts', '--cores', '8', '--format', 'json');
    const rules = new Set((JSON.parse(r.stdout) as { findings: Array<{ rule: string }> }).findings.map((f) => f.rule));
    assert.equal(rules.size, 13);
    assert.equal(r.code, 1);
    const clean = await lint(LINTS, 'clean.ts', '--cores', '8');
    assert.deepEqual([clean.code, clean.stdout], [0, '']);
    assert.match(clean.stderr, /no findings in clean\.ts/);
  });

  it('says what was wrong and exits 2 on a wrong rule, format, severity, or a file that is not there', async () => {
    const p = project({ 'a.ts': TWO_FINDINGS, 'tsconfig.json': '{ "files": [], "references": [{ "path": "./lib" }] }' });
    try {
      for (const [args, said] of [
        [['a.ts', '--rule', 'shuffle-afterbatch'], /--rule shuffle-afterbatch: there is no such rule\. Rules: cache-after-random, /],
        [['a.ts', '--format', 'xml'], /--format must be one of text, json, sarif, github, got "xml"/],
        [['a.ts', '--max-severity', 'error'], /--max-severity must be warning or information/],
        [['missing.ts'], /missing\.ts does not exist/],
        [['src/**/*.ts'], /src\/\*\*\/\*\.ts matches no TypeScript or JavaScript file/],
        [['--rule', 'noop-buffer'], /there are no TypeScript files to lint in .*\(its tsconfig\.json includes none, or git ignores them all\)/],
      ] as const) {
        const r = await lint(p.dir, ...args);
        assert.equal(r.code, 2, args.join(' '));
        assert.match(r.stderr, said);
        assert.equal(r.stdout, '');
      }
    } finally {
      p.remove();
    }
  });

  it("prints GitHub's workflow commands: a warning and a notice with the finding's range and rule", async () => {
    const p = project({ 'src/a,b.ts': TWO_FINDINGS });
    try {
      const r = await lint(p.dir, '--format', 'github', 'src/*.ts');
      assert.equal(
        r.stdout,
        [
          '::notice file=src/a%2Cb.ts,line=3,col=35,endLine=3,endColumn=40,title=plumber/no-prefetch-at-end::Pipeline p does not end with prefetch(): the consumer and the pipeline take turns instead of overlapping. Add .prefetch(2) or more at the end.',
          '::warning file=src/a%2Cb.ts,line=4,col=37,endLine=4,endColumn=44,title=plumber/shuffle-after-batch::shuffle() after batch(2) shuffles whole batches: the same elements share a batch every epoch. Shuffle before batch().',
          '',
        ].join('\n'),
      );
    } finally {
      p.remove();
    }
  });

  it('honours plumber-disable-next-line, plumber-disable-line and a file-wide plumber-disable', async () => {
    const [head, fn, p3, p4] = TWO_FINDINGS.split('\n');
    const files = {
      'next.ts': [head, fn, '// plumber-disable-next-line no-prefetch-at-end -- a consumer that prefetches itself', p3, p4].join('\n'),
      'same.ts': [head, fn, p3, `${p4} // plumber-disable-line plumber/shuffle-after-batch`].join('\n'),
      'all.ts': [head, fn, `${p3} /* plumber-disable-line */`, p4].join('\n'),
      'file.ts': ['// plumber-disable shuffle-after-batch, no-prefetch-at-end', head, fn, p3, p4].join('\n'),
      'other.ts': [head, fn, '// plumber-disable-next-line cache-after-random', p3, p4].join('\n'),
    };
    const p = project(files);
    try {
      const r = await lint(p.dir, '--format', 'json', ...Object.keys(files));
      const found = (JSON.parse(r.stdout) as { findings: Array<{ file: string; line: number; rule: string }> }).findings.map((f) => `${f.file}:${f.line} ${f.rule}`);
      assert.deepEqual(found.sort(), [
        'all.ts:4 plumber/shuffle-after-batch',
        'next.ts:5 plumber/shuffle-after-batch',
        // A directive naming another rule silences nothing else.
        'other.ts:4 plumber/no-prefetch-at-end',
        'other.ts:5 plumber/shuffle-after-batch',
        'same.ts:3 plumber/no-prefetch-at-end',
      ]);
    } finally {
      p.remove();
    }
  });

  it('is in plumber --help with examples, and plumber lint --help lists its options and the comments', async () => {
    const p = project({});
    try {
      const main = await lint(p.dir, '--help');
      assert.equal(main.code, 0);
      assert.match(main.stdout, /^Usage: plumber lint \[files\|directories\|globs…\]/);
      for (const flag of ['--format', '--max-severity', '--rule', '--ignore-rule', '--profile', 'plumber-disable-next-line', 'plumber-disable-line']) assert.ok(main.stdout.includes(flag), flag);
      const help = await plumber('--help');
      assert.match(help.stdout, /plumber lint \[files\|globs…\] \[options\]/);
      assert.match(help.stdout, /Examples:[\s\S]*plumber lint 'src\/\*\*\/\*\.ts' --format sarif/);
    } finally {
      p.remove();
    }
  });

  it("lints the project's tsconfig files when none are named, leaving out what git ignores", async function () {
    const p = project({
      'tsconfig.json': '{\n  // comments, as tsc reads them\n  "include": ["src"],\n}\n',
      '.gitignore': 'src/generated/\n',
      'src/a.ts': TWO_FINDINGS,
      'src/generated/g.ts': TWO_FINDINGS,
      'scripts/s.ts': TWO_FINDINGS,
    });
    try {
      execFileSync('git', ['init', '-q'], { cwd: p.dir });
      const r = await lint(p.dir, '--format', 'json');
      const report = JSON.parse(r.stdout) as { files: number; findings: Array<{ file: string }> };
      assert.equal(report.files, 1);
      assert.deepEqual([...new Set(report.findings.map((f) => f.file))], ['src/a.ts']);
    } finally {
      p.remove();
    }
  });
});
