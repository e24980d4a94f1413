/**
 * `plumber lint --profile`: a profile stored by `plumber profile --json` adds the measured rules on
 * the pipeline it ran — here a shuffle buffer sized against the file count the library counted,
 * which the source alone cannot tell.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BIN, ROOT } from './bin';
import { lint, project } from './lintRun';

const PIPELINE = ["import { files } from 'plumber-data';", '', "export const shuffled = files(__dirname + '/data/*.txt').shuffle(5).prefetch(2);", ''].join('\n');

describe('plumber lint --profile', function () {
  this.timeout(120_000);

  it('adds the measured rules from a stored profile of the pipeline, and only with it', async () => {
    const p = project({ 'pipeline.ts': PIPELINE });
    try {
      fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(p.dir, 'node_modules'), 'dir');
      fs.mkdirSync(path.join(p.dir, 'data'));
      for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(p.dir, 'data', `${String(i).padStart(3, '0')}.txt`), `line ${i}\n`);
      const profiled = spawnSync(process.execPath, [BIN, 'profile', 'pipeline.ts', '--json', '--quiet', '--seconds', '0.5', '--warmup', '0'], { cwd: p.dir, encoding: 'utf8' });
      assert.equal(profiled.status, 0, profiled.stderr);
      fs.writeFileSync(path.join(p.dir, 'profile.json'), profiled.stdout);

      const plain = await lint(p.dir, 'pipeline.ts', '--rule', 'shuffle-buffer-small');
      assert.deepEqual([plain.code, plain.stdout], [0, '']);
      const measured = await lint(p.dir, 'pipeline.ts', '--profile', 'profile.json', '--format', 'json');
      const findings = (JSON.parse(measured.stdout) as { findings: Array<{ rule: string; line: number; column: number; message: string }> }).findings.filter((f) => f.rule === 'plumber/shuffle-buffer-small');
      assert.equal(findings.length, 1, measured.stdout);
      assert.deepEqual([findings[0]!.line, findings[0]!.column], [3, 58]);
      assert.match(findings[0]!.message, /^shuffle\(5\) holds 3% of the 200 elements it shuffles \(as the library counted it in the profiled run\)/);
      // An information finding: printed, and the lint passes unless asked to fail on it.
      assert.equal(measured.code, 0);
    } finally {
      p.remove();
    }
  });

  it('refuses a file that is not a profile, with the command that makes one', async () => {
    const p = project({ 'pipeline.ts': PIPELINE, 'profile.json': '{"version": 0}' });
    try {
      const r = await lint(p.dir, 'pipeline.ts', '--profile', 'profile.json');
      assert.equal(r.code, 2);
      assert.match(r.stderr, /profile\.json is not a Plumber profile of version \d+: profile the pipeline again/);
    } finally {
      p.remove();
    }
  });
});
