import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchLine } from '../../../bench/goals';
import { benchLinesTable, emptyResults, endMarker, groupedRowsTables, partialRun, replaceSection, RESULTS_FILE, SECTIONS, sectionBody, startMarker, writeResults, type RunContext } from '../../../bench/results';

const run: RunContext = { date: new Date('2026-12-05T09:30:00Z'), cores: 2, cpu: 'Test CPU @ 2.0GHz', node: 'v22.0.0', loadAverage: [1.25, 1.5, 2], command: 'npm run bench:e2e -- --json --load 0,1' };

function line(pipeline: string, load: number, plumber: number): BenchLine {
  return { bench: 'e2e', pipeline, load, asWritten: 10, heuristic: 11, nodeHeuristic: 12, auto: 10, plumber, oracle: 20, predicted: plumber, verified: null, profileSeconds: 8.04 };
}

/** The text between a section's markers. */
function section(text: string, name: string): string {
  return text.slice(text.indexOf(startMarker(name)) + startMarker(name).length, text.indexOf(endMarker(name)));
}

describe('bench/RESULTS.md writer', () => {
  it('starts every benchmark with a placeholder between its markers and says the file is generated', () => {
    const text = emptyResults();
    assert.match(text, /generated/);
    for (const { name } of SECTIONS) assert.match(section(text, name), /Not run yet\./, name);
  });

  it('replaces only the named section, and tells bench apart from bench:e2e', () => {
    let text = emptyResults();
    text = replaceSection(text, 'bench', 'library figures');
    text = replaceSection(text, 'bench:e2e', 'first e2e');
    text = replaceSection(text, 'bench:e2e', 'second e2e');
    assert.equal(section(text, 'bench').trim(), 'library figures');
    assert.equal(section(text, 'bench:e2e').trim(), 'second e2e');
    assert.doesNotMatch(text, /first e2e/);
    assert.match(section(text, 'bench:model'), /Not run yet\./);
    assert.equal(text.split(startMarker('bench:e2e')).length, 2, 'one start marker, not two');
  });

  it('appends a section the file does not have yet', () => {
    const text = replaceSection('# Benchmark results\n', 'bench:new', 'figures');
    assert.equal(section(text, 'bench:new').trim(), 'figures');
  });

  it('refuses to guess when a section has lost a marker', () => {
    const broken = emptyResults().replace(endMarker('bench:model'), '');
    assert.throws(() => replaceSection(broken, 'bench:model', 'x'), /markers of section bench:model/);
  });

  it('says when, on what machine, under what load and with which command the figures were measured', () => {
    const body = sectionBody('bench:e2e', run, '| a |', ['load 0: load average 1.0 at start']);
    assert.match(body, /^## `npm run bench:e2e`/);
    assert.match(body, /`npm run bench:e2e -- --json --load 0,1`/);
    assert.match(body, /2026-12-05 09:30 UTC/);
    assert.match(body, /2 cores \(Test CPU @ 2\.0GHz\)/);
    assert.match(body, /load average 1\.25 1\.50 2\.00/);
    assert.match(body, /\n- load 0: load average 1\.0 at start$/);
  });

  it('leaves the file alone after a run that measured part of the set or at smoke budgets', () => {
    assert.equal(partialRun(['--json', '--load', '0,1']), undefined);
    assert.match(partialRun(['--only', 'text', '--load', '0']) ?? '', /--only/);
    assert.match(partialRun(['--smoke']) ?? '', /--smoke/);
    assert.match(partialRun(['--quick']) ?? '', /--quick/);
  });

  it('writes a full run into its section of the file it is given, and skips a partial one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plumber-results-'));
    const file = join(dir, 'RESULTS.md');
    const quiet = console.error;
    console.error = (): void => {};
    try {
      writeFileSync(file, emptyResults());
      writeResults('bench:model', 'partial figures', [], ['--only', 'records'], file);
      assert.equal(readFileSync(file, 'utf8'), emptyResults());
      writeResults('bench:model', 'full figures', [], ['--json'], file);
      const text = readFileSync(file, 'utf8');
      assert.match(section(text, 'bench:model'), /`npm run bench:model -- --json`[^\n]*\n\nfull figures/);
      assert.match(section(text, 'bench:e2e'), /Not run yet\./);
    } finally {
      console.error = quiet;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('tables bench lines with the ratios and the count of goals met', () => {
    const table = benchLinesTable([line('images', 0, 25), line('text', 1, 9)]);
    assert.match(table, /^\| pipeline \| load \|/);
    assert.match(table, /\| images \| 0 \| 10 \| 11 \| 12 \| 10 \| 25 \| 20 \| 25 \| – \| 2\.50× \| 1\.25× \| 8\.0 \|/);
    // text at 9/s against as written's 10 misses ≥ 0.97, the oracle and nodeHeuristic.
    assert.match(table, /\n\d+ of \d+ goal checks met\.\n/);
    assert.match(table, /\n### Goals\n/);
    assert.match(table, /\| text \| 1 \| 0\.90× MISSED \|/);
  });

  it('tables plain rows grouped by benchmark, with thousands separated', () => {
    const text = groupedRowsTables([
      { bench: 'memory', case: 'prefetch-16', peakHeapMB: 12.345 },
      { bench: 'async-map', parallelism: 32, elementsPerSec: 1234567 },
    ]);
    assert.match(text, /\*\*memory\*\*\n\n\| case \| peakHeapMB \|\n\|---\|---:\|\n\| prefetch-16 \| 12\.3 \|/);
    assert.match(text, /\| 32 \| 1,234,567 \|/);
  });

  it('has a results file whose sections are all there and in order', () => {
    const text = readFileSync(RESULTS_FILE, 'utf8');
    let at = -1;
    for (const { name } of SECTIONS) {
      const start = text.indexOf(startMarker(name));
      assert.ok(start > at, `section ${name} is missing or out of order`);
      at = text.indexOf(endMarker(name));
      assert.ok(at > start, `section ${name} has no end marker after its start`);
    }
  });
});
