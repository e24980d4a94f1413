/**
 * `plumber lint` finds exactly what the editor shows: on every pipeline file of the test fixtures
 * and the examples, the CLI's JSON findings and the diagnostics the language server publishes for
 * the same file (Session.diagnostics, what publishDiagnostics sends) are the same set.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Session } from '../../../src/server/session';
import { ROOT } from './bin';
import { lint } from './lintRun';

const SOURCE = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;

/** Every source file under `dir`, node_modules and generated data left out. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'data') out.push(...sources(full));
    } else if (SOURCE.test(e.name) && !/\.d\.[cm]?ts$/.test(e.name)) {
      out.push(full);
    }
  }
  return out;
}

/** A finding as both sides can say it. */
function key(file: string, f: { line: number; column: number; endLine: number; endColumn: number; severity: string; rule: string; message: string }): string {
  return JSON.stringify([file, f.line, f.column, f.endLine, f.endColumn, f.severity, f.rule, f.message]);
}

describe('plumber lint and the editor', function () {
  this.timeout(300_000);

  it('find the same set on every fixture and example', async () => {
    const files = [...sources(path.join(ROOT, 'test/fixtures')), ...sources(path.join(ROOT, 'examples'))].map((f) => path.relative(ROOT, f));
    assert.ok(files.length > 100, `only ${files.length} files`);
    const r = await lint(ROOT, '--format', 'json', '--max-severity', 'information', '--cores', '4', ...files);
    assert.ok(r.code === 0 || r.code === 1, r.stderr);
    const report = JSON.parse(r.stdout) as { files: number; findings: Array<Parameters<typeof key>[1] & { file: string }> };
    assert.equal(report.files, files.length);
    const cli = new Set(report.findings.map((f) => key(f.file, f)));

    const session = new Session(() => undefined);
    session.settings.model.cores = 4;
    const editor = new Set<string>();
    for (const rel of files) {
      const file = path.join(ROOT, rel);
      const uri = pathToFileURL(file).href;
      session.update(uri, 1, fs.readFileSync(file, 'utf8'));
      for (const d of session.diagnostics(uri)) {
        const severity = d.severity === 1 ? 'error' : d.severity === 2 ? 'warning' : 'information';
        const at = { line: d.range.start.line + 1, column: d.range.start.character + 1, endLine: d.range.end.line + 1, endColumn: d.range.end.character + 1 };
        editor.add(key(rel, { ...at, severity, rule: String(d.code), message: typeof d.message === 'string' ? d.message : d.message.value }));
      }
      session.close(uri);
    }
    assert.ok(cli.size > 20, `only ${cli.size} findings`);
    assert.deepEqual(
      [...cli].filter((k) => !editor.has(k)),
      [],
      'found by plumber lint only',
    );
    assert.deepEqual(
      [...editor].filter((k) => !cli.has(k)),
      [],
      'shown by the editor only',
    );
  });
});
