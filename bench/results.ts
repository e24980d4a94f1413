/**
 * bench/RESULTS.md, the one place the README's figures come from: each benchmark that gives a
 * headline number writes its current results into its own section of that file, between
 * `<!-- NAME:start -->` and `<!-- NAME:end -->` (NAME is its npm script: `bench:e2e`), and leaves
 * every other section as it was. A section says when, on what machine, under what load and with
 * which command its figures were measured, since figures from a shared machine mean nothing
 * without that.
 *
 * Only a run over everything a benchmark measures replaces its section: a run that picked some
 * pipelines (`--only`) or shortened every budget (`--smoke`, `--quick`) measures something else,
 * and leaves the file alone.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { allChecks, goalsMarkdown, type BenchLine } from './goals';

export const RESULTS_FILE = join(__dirname, 'RESULTS.md');

/** The benchmarks with a section, in the file's order, each with what it measures. */
export const SECTIONS: ReadonlyArray<{ name: string; title: string }> = [
  { name: 'bench:e2e', title: 'Examples end to end: as written, the baselines, Plumber and the oracle' },
  { name: 'bench:model', title: 'Synthetic pipelines of known cost: the same comparison' },
  { name: 'bench:train', title: 'Training scripts: input-bound fraction and steps per second' },
  { name: 'bench', title: 'plumber-data: executor overhead, worker and async maps, tracing, memory' },
  { name: 'bench:cluster', title: 'Stages on a Redis cluster: scaling, overhead, faults' },
  { name: 'bench:dialects', title: 'Pipelines people already have (tfjs-data, Node streams, async generators): as written, Plumber, hand-tuned' },
  { name: 'bench:formats', title: 'plumber-data readers against a hand-written loop over the same library, on one thread and with the planned shards at once' },
  { name: 'bench:gate', title: 'The regression gate: a 25% slower change caught, an unchanged pipeline passed' },
  { name: 'bench:memory', title: 'Peak memory: projected against measured, and plans within a budget' },
  { name: 'bench:reshape', title: 'Pipelines whose shape is the problem: as written, the best knobs-only plan, and Plumber with reshapes' },
];

/** Flags that make a run measure less than its benchmark's whole set, at its real budgets. */
const PARTIAL_FLAGS = ['--only', '--smoke', '--quick'];

export const GENERATED_NOTE = 'This file is generated: each benchmark rewrites its own section at the end of a full run. Do not edit it by hand.';

export const startMarker = (name: string): string => `<!-- ${name}:start -->`;
export const endMarker = (name: string): string => `<!-- ${name}:end -->`;

/** Where and how a run measured. */
export interface RunContext {
  date: Date;
  cores: number;
  cpu: string;
  node: string;
  /** 1-, 5- and 15-minute load averages when the results were written. */
  loadAverage: number[];
  /** The command that produced the results, as a person would type it. */
  command: string;
}

/** The context of this process's run of the benchmark `name`. */
export function currentRun(name: string, argv: string[] = process.argv.slice(2)): RunContext {
  return {
    date: new Date(),
    cores: os.availableParallelism(),
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown CPU',
    node: process.version,
    loadAverage: os.loadavg(),
    command: `npm run ${name}${argv.length ? ` -- ${argv.join(' ')}` : ''}`,
  };
}

/** Why a run with these arguments does not replace its section, or undefined when it does. */
export function partialRun(argv: string[]): string | undefined {
  const flags = PARTIAL_FLAGS.filter((f) => argv.includes(f));
  return flags.length ? `a partial run (${flags.join(', ')})` : undefined;
}

/** The file with no results yet: every section's markers around a placeholder. */
export function emptyResults(): string {
  const parts = [
    '# Benchmark results',
    '',
    GENERATED_NOTE,
    'To refresh a section, run the command it names; a run with `--only`, `--smoke` or `--quick` leaves the file alone.',
    '',
    'Rates are root elements per second (batches per second for a pipeline that ends in a batch) unless a column says otherwise. The machines are shared: compare ratios measured in the same run. What each configuration, column and goal means: [docs/benchmarks.md](../docs/benchmarks.md).',
    '',
  ];
  for (const s of SECTIONS) parts.push(startMarker(s.name), `## \`npm run ${s.name}\` — ${s.title}`, '', 'Not run yet.', endMarker(s.name), '');
  return parts.join('\n');
}

/**
 * `text` with the section `name` replaced by `body` (markers kept), or the section appended when
 * the file has none. Throws when the markers are there but out of order, rather than guess.
 */
export function replaceSection(text: string, name: string, body: string): string {
  const start = text.indexOf(startMarker(name));
  const end = text.indexOf(endMarker(name));
  const section = `${startMarker(name)}\n${body.trim()}\n${endMarker(name)}`;
  if (start < 0 && end < 0) return `${text.trimEnd()}\n\n${section}\n`;
  if (start < 0 || end < start) throw new Error(`${RESULTS_FILE}: the markers of section ${name} are missing or out of order; fix them by hand or delete the file to start afresh.`);
  return text.slice(0, start) + section + text.slice(end + endMarker(name).length);
}

/** A section's text: its heading, how it was produced, the figures and any notes. */
export function sectionBody(name: string, run: RunContext, figures: string, notes: string[] = []): string {
  const title = SECTIONS.find((s) => s.name === name)?.title;
  const load = run.loadAverage.map((x) => x.toFixed(2)).join(' ');
  return [
    `## \`npm run ${name}\`${title ? ` — ${title}` : ''}`,
    '',
    `Generated by \`${run.command}\` on ${run.date.toISOString().slice(0, 16).replace('T', ' ')} UTC · ${run.cores} cores (${run.cpu}) · Node ${run.node} · load average ${load} (1, 5, 15 min) when written.`,
    '',
    figures.trim(),
    ...(notes.length ? ['', ...notes.map((n) => `- ${n}`)] : []),
  ].join('\n');
}

/** A number as the tables print it: three significant figures, thousands separated. */
export function formatNumber(x: number): string {
  if (!Number.isFinite(x)) return '–';
  if (Number.isInteger(x)) return x.toLocaleString('en-US');
  const a = Math.abs(x);
  return a >= 100 ? Math.round(x).toLocaleString('en-US') : a >= 10 ? x.toFixed(1) : a >= 1 ? x.toFixed(2) : x.toPrecision(3);
}

function cell(v: unknown): string {
  if (typeof v === 'number') return formatNumber(v);
  if (v === undefined || v === null) return '–';
  return (typeof v === 'object' ? JSON.stringify(v) : String(v)).replaceAll('|', '\\|');
}

/** A markdown table of plain rows, with the union of their keys as columns, numbers right-aligned. */
export function rowsTable(rows: ReadonlyArray<Record<string, unknown>>): string {
  const keys: string[] = [];
  for (const r of rows) for (const k of Object.keys(r)) if (!keys.includes(k)) keys.push(k);
  const numeric = keys.map((k) => rows.some((r) => typeof r[k] === 'number'));
  return [`| ${keys.join(' | ')} |`, `|${numeric.map((n) => (n ? '---:' : '---')).join('|')}|`, ...rows.map((r) => `| ${keys.map((k) => cell(r[k])).join(' | ')} |`)].join('\n');
}

/** Plain rows grouped by their `bench` field, a table each (the library and cluster benchmarks print such rows). */
export function groupedRowsTables(rows: ReadonlyArray<Record<string, unknown>>): string {
  const groups = new Map<string, Record<string, unknown>[]>();
  for (const { bench, ...rest } of rows) groups.set(String(bench ?? ''), [...(groups.get(String(bench ?? '')) ?? []), rest]);
  return [...groups].map(([bench, rs]) => `${bench ? `**${bench}**\n\n` : ''}${rowsTable(rs)}`).join('\n\n');
}

const ratio = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(2)}×` : '–');

/** The comparison bench:e2e and bench:model make, one row per pipeline and load, with the goals' count. */
export function benchLinesTable(lines: readonly BenchLine[]): string {
  const head = ['pipeline', 'load', 'as written', 'heuristic', 'nodeHeuristic', 'auto', 'plumber', 'oracle', 'predicted', 'verified', 'plumber ÷ as written', 'plumber ÷ oracle', 'profile s'];
  const rows = lines.map((l) => [
    l.pipeline,
    String(l.load),
    ...[l.asWritten, l.heuristic, l.nodeHeuristic, l.auto, l.plumber, l.oracle, l.predicted].map(formatNumber),
    l.verified === null ? '–' : formatNumber(l.verified),
    ratio(l.plumber, l.asWritten),
    ratio(l.plumber, l.oracle),
    l.profileSeconds.toFixed(1),
  ]);
  const checks = allChecks([...lines]);
  const met = checks.filter((c) => c.met).length;
  const count = met === checks.length ? `Every goal met (${checks.length} checks).` : `${met} of ${checks.length} goal checks met.`;
  return [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`), '', count, '', goalsMarkdown([...lines], '### Goals')].join('\n');
}

/**
 * Writes the figures of the benchmark `name` into its section of `file`, unless the run was
 * partial (then says so on stderr). `notes`: what the figures need beside them (the load average
 * at the start and end of each load).
 */
export function writeResults(name: string, figures: string, notes: string[] = [], argv: string[] = process.argv.slice(2), file: string = RESULTS_FILE): void {
  const partial = partialRun(argv);
  if (partial) {
    console.error(`${name}: ${partial}; ${file} keeps the last full run's results.`);
    return;
  }
  const text = existsSync(file) ? readFileSync(file, 'utf8') : emptyResults();
  writeFileSync(file, replaceSection(text, name, sectionBody(name, currentRun(name, argv), figures, notes)));
  console.error(`${name}: wrote its results into ${file}.`);
}

/** The same for bench:e2e and bench:model, from their lines. */
export function writeBenchLines(name: 'bench:e2e' | 'bench:model', lines: readonly BenchLine[], notes: string[] = []): void {
  if (lines.length === 0) console.error(`${name}: no pipeline ran to the end; ${RESULTS_FILE} keeps the last full run's results.`);
  else writeResults(name, benchLinesTable(lines), notes);
}
