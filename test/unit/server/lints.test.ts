import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { RULES, lintPipelines, type LintFinding } from '../../../src/engine/lints/rules';
import { FIXTURES, matchesFixture, open } from './helpers';

const DIR = path.join(FIXTURES, 'lints');

function summary(findings: LintFinding[]): unknown {
  return findings.map((f) => ({
    rule: f.rule,
    severity: f.severity,
    at: `${f.op.name.range.start.line + 1}:${f.op.name.range.start.character + 1}`,
    op: f.op.label,
    related: f.related.map((r) => r.op.label),
    message: f.message,
  }));
}

describe('server lints', () => {
  const lintsOf = (file: string, cores = 4): LintFinding[] => lintPipelines(open(path.join(DIR, file)).graph.pipelines, { cores });

  it('reports the findings of the lint fixture as expected.json says', () => {
    matchesFixture(summary(lintsOf('input.ts')), path.join(DIR, 'expected.json'));
  });

  it('fires every rule it documents at least once on the fixture', () => {
    const fired = new Set(lintsOf('input.ts').map((f) => f.rule));
    assert.deepEqual(
      [...Object.keys(RULES)].filter((r) => !fired.has(r)),
      [],
    );
  });

  it('finds nothing wrong in a well-built pipeline', () => {
    assert.deepEqual(summary(lintsOf('clean.ts')), []);
  });

  it('does not flag parallelism on an async function', () => {
    const findings = lintsOf('input.ts').filter((f) => f.rule === 'plumber/parallelism-on-main-thread');
    assert.deepEqual(
      findings.map((f) => f.op.label),
      ['map(decode)'],
    );
    assert.equal(findings[0]!.op.fn?.name, 'decode');
  });

  it('counts worker threads against the machine it is told about', () => {
    assert.equal(
      lintsOf('input.ts', 128).some((f) => f.rule === 'plumber/workers-above-cores'),
      false,
    );
    assert.equal(
      lintsOf('input.ts', 2).some((f) => f.rule === 'plumber/workers-above-cores'),
      true,
    );
  });

  it('points cache-after-random at the random operator', () => {
    const f = lintsOf('input.ts').filter((x) => x.rule === 'plumber/cache-after-random');
    assert.deepEqual(
      f.map((x) => x.related.map((r) => r.op.kind)),
      [['shuffle'], ['map'], ['map', 'shuffle']],
    );
    // After a shuffle and a random map, above the shuffle: between the two it still replays the first epoch's order.
    assert.match(f[2]!.message, /^cache\(\) after shuffle\(100\) and map\(.*\) stores .* Move cache\(\) above shuffle\(100\)\.$/);
  });
});
