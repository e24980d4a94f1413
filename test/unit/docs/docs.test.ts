/**
 * The user's pages stay true to the code they describe: the settings table against package.json,
 * the lint rules against the server's rule lists, the quick start against what CI runs, and every
 * relative link against the tree.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { MEASURED_RULES } from '../../../src/engine/lints/measured';
import { RULES } from '../../../src/engine/lints/rules';

const ROOT = resolve(__dirname, '../../..');
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  'CHANGELOG.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The rows of the first markdown table after `heading`, as arrays of cells. */
function tableAfter(text: string, heading: string): string[][] {
  const at = text.indexOf(heading);
  assert.ok(at >= 0, `no "${heading}" heading`);
  const lines = text.slice(at).split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(' | ')
        .map((c) => c.trim()),
    );
  }
  return rows;
}

/** `plumber.a.b` / `.c` → plumber.a.b and plumber.a.c: a row may name siblings by their last part. */
function settingNames(cell: string): string[] {
  const parts = cell.split(' / ').map((p) => p.replaceAll('`', ''));
  const first = parts[0];
  return parts.map((p) => (p.startsWith('.') ? first.slice(0, first.lastIndexOf('.')) + p : p));
}

describe('the user documentation', () => {
  it('lists every setting of package.json in the README, with its default', () => {
    const pkg = JSON.parse(read('package.json')) as { contributes: { configuration: { properties: Record<string, { default: unknown }> } } };
    const properties = pkg.contributes.configuration.properties;
    const documented = new Map<string, string>();
    for (const [names, defaults] of tableAfter(read('README.md'), '### Settings')) {
      const keys = settingNames(names);
      const values = defaults.split(' / ');
      keys.forEach((k, i) => documented.set(k, (values.length === keys.length ? values[i] : defaults).replaceAll('`', '')));
    }
    assert.deepEqual([...documented.keys()].sort(), Object.keys(properties).sort());
    for (const [key, { default: value }] of Object.entries(properties)) {
      // A word is written as it is (`off`), an empty string and everything else as JSON (`""`, `[]`, `true`).
      assert.equal(documented.get(key), typeof value === 'string' && value !== '' ? value : JSON.stringify(value), `default of ${key}`);
    }
  });

  it('describes every lint rule the language server reports', () => {
    const documented = tableAfter(read('docs/editor.md'), '## Lint rules').map((r) => /`(plumber\/[a-z-]+)`/.exec(r[0])?.[1]);
    for (const id of [...Object.keys(RULES), ...Object.keys(MEASURED_RULES)]) assert.ok(documented.includes(id), `${id} is not in docs/editor.md`);
  });

  it('gives a fresh machine the two commands CI runs: npm ci, then npm start or npm test', () => {
    const readme = read('README.md');
    assert.match(readme, /^npm ci && npm start\b/m);
    assert.match(readme, /^npm ci && npm test\b/m);
    const ci = read('.ci/run');
    assert.match(ci, /^npm ci\b/m);
    assert.match(ci, /^npm test$/m);
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    assert.ok(scripts.start && scripts.test, 'package.json has no start or test script');
  });

  it('links only to files that exist', () => {
    for (const page of PAGES) {
      for (const [, target] of read(page).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        assert.ok(existsSync(resolve(ROOT, dirname(page), target)), `${page} links to ${target}, which does not exist`);
      }
    }
  });

  it('keeps the development story out of the README (it belongs in commit messages)', () => {
    const readme = read('README.md');
    assert.doesNotMatch(readme, /\bstop \d+/i);
    assert.doesNotMatch(readme, /load average \d/i);
    assert.doesNotMatch(readme, /by hand/i);
  });
});
