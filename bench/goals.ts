/**
 * The line both benchmarks print per pipeline and load, and the goals of issue 9 checked against
 * it. Every ratio compares rates measured in the same run (the same round-robin of runs), so a
 * change in the machine's load hits both sides alike.
 *
 * Run on its own it combines the JSON lines of several runs (e.g. one at load 0, one at load 1):
 *
 *   node --import tsx bench/goals.ts artifacts/bench-e2e/load0.jsonl artifacts/bench-e2e/load1.jsonl
 */
import { readFileSync } from 'node:fs';

/** One pipeline at one load. Rates are root elements per second. */
export interface BenchLine {
  bench: 'e2e' | 'model';
  pipeline: string;
  /** Background CPU-burning threads during the run (`--load`). */
  load: number;
  asWritten: number;
  heuristic: number;
  nodeHeuristic: number;
  auto: number;
  /** The configuration Plumber's engine kept, measured in the round-robin with the others. */
  plumber: number;
  /** The best of the grid's finalists. */
  oracle: number;
  /** The plan's predicted rate for the kept configuration. */
  predicted: number;
  /** The rate the engine's verification measured for the kept configuration; null when it did not verify. */
  verified: number | null;
  /** Wall seconds of profile + plan + verification. */
  profileSeconds: number;
}

/** One goal on one line (or on a group of lines): the figure, the bar, met or not. */
export interface GoalCheck {
  goal: string;
  value: number;
  text: string;
  met: boolean;
}

const ratio = (a: number, b: number): number => (b > 0 ? a / b : Number.NaN);
const percent = (x: number): string => (Number.isFinite(x) ? `${(x * 100).toFixed(0)}%` : '–');
/**
 * A ratio with two decimals, or three when two would round it onto the bar (0.998 against ≥ 1
 * reads "1.00×" and would look met).
 */
const timesAgainst =
  (bar: number) =>
  (x: number): string =>
    Number.isFinite(x) ? `${x.toFixed(Math.abs(x - bar) < 0.005 ? 3 : 2)}×` : '–';

/** |predicted − plumber| ÷ plumber. */
export function predictionError(l: BenchLine): number {
  return l.plumber > 0 ? Math.abs(l.predicted - l.plumber) / l.plumber : Number.NaN;
}

/** The per-line goals: plumber against as written, the oracle and the Node heuristic, and the wait. */
export function lineGoals(l: BenchLine): GoalCheck[] {
  const checks: Array<[string, number, (x: number) => string, (x: number) => boolean]> = [
    ['plumber ÷ as written ≥ 0.97', ratio(l.plumber, l.asWritten), timesAgainst(0.97), (x) => x >= 0.97],
    ['plumber ÷ oracle ≥ 0.9', ratio(l.plumber, l.oracle), timesAgainst(0.9), (x) => x >= 0.9],
    ['plumber ÷ nodeHeuristic ≥ 1', ratio(l.plumber, l.nodeHeuristic), timesAgainst(1), (x) => x >= 1],
    ['|predicted − plumber| ÷ plumber ≤ 40%', predictionError(l), percent, (x) => x <= 0.4],
    ['profile + plan + verify ≤ 15 s', l.profileSeconds, (x) => `${x.toFixed(1)} s`, (x) => x <= 15],
  ];
  return checks.map(([goal, value, text, ok]) => ({ goal, value, text: text(value), met: Number.isFinite(value) && ok(value) }));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The prediction goal over a group of lines: median ≤ 15%, worst ≤ 40%. */
export function predictionGoals(lines: BenchLine[]): GoalCheck[] {
  const errors = lines.map(predictionError).filter(Number.isFinite);
  const med = median(errors);
  const worst = errors.length ? Math.max(...errors) : Number.NaN;
  return [
    { goal: 'median |predicted − plumber| ÷ plumber ≤ 15%', value: med, text: percent(med), met: Number.isFinite(med) && med <= 0.15 },
    { goal: 'worst |predicted − plumber| ÷ plumber ≤ 40%', value: worst, text: percent(worst), met: Number.isFinite(worst) && worst <= 0.4 },
  ];
}

/** The groups the prediction goal is judged over: each benchmark at each load, and over all its loads. */
function predictionGroups(lines: BenchLine[]): Array<[string, BenchLine[]]> {
  const benches = [...new Set(lines.map((l) => l.bench))];
  const groups: Array<[string, BenchLine[]]> = [];
  for (const bench of benches) {
    const prefix = benches.length > 1 ? `${bench}, ` : '';
    const ofBench = lines.filter((l) => l.bench === bench);
    const loads = [...new Set(ofBench.map((l) => l.load))];
    for (const n of loads) groups.push([`${prefix}load ${n}`, ofBench.filter((l) => l.load === n)]);
    if (loads.length > 1) groups.push([`${prefix}all loads`, ofBench]);
  }
  return groups;
}

/**
 * Every check the summary counts: each line's goals and the prediction goal of each group. The
 * printed count and a benchmark's JSON summary both come from here, so they agree.
 */
export function allChecks(lines: BenchLine[], groups = predictionGroups(lines)): GoalCheck[] {
  return [...lines.flatMap(lineGoals), ...groups.flatMap(([, g]) => predictionGoals(g))];
}

const mark = (c: GoalCheck): string => `${c.text} ${c.met ? 'met' : 'MISSED'}`;
const COLUMNS = ['pipeline', 'load', 'plumber÷as written', 'plumber÷oracle', 'plumber÷nodeHeuristic', '|pred−plumber|÷plumber', 'profile s'];

/**
 * The goals summary as rows (pipeline, load, then each goal's figure marked met/missed), followed
 * by the prediction goal per benchmark and load and over all loads, and a count of what was missed.
 */
function summaryParts(lines: BenchLine[]): { rows: string[][]; notes: string[] } {
  // Lines of both benchmarks (bench/goals.ts over several files) say which each is.
  const benches = [...new Set(lines.map((l) => l.bench))];
  const named = (l: BenchLine): string => (benches.length > 1 ? `${l.bench}: ${l.pipeline}` : l.pipeline);
  const rows = lines.map((l) => [named(l), String(l.load), ...lineGoals(l).map(mark)]);
  const notes: string[] = [];
  const groups = predictionGroups(lines);
  for (const [name, group] of groups)
    notes.push(
      `${name}: ${predictionGoals(group)
        .map((c) => `${c.goal}: ${mark(c)}`)
        .join('; ')}`,
    );
  const all = allChecks(lines, groups);
  const missed = all.filter((c) => !c.met).length;
  notes.push(missed === 0 ? `every goal met (${all.length} checks)` : `${missed} of ${all.length} checks missed`);
  return { rows, notes };
}

/** The goals summary for the terminal. */
export function goalsText(lines: BenchLine[]): string {
  const { rows, notes } = summaryParts(lines);
  const table = [COLUMNS, ...rows];
  const widths = COLUMNS.map((_, i) => Math.max(...table.map((r) => r[i].length)));
  const body = table.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
  return ['Goals (ratios of rates measured in the same run):', ...body, ...notes].join('\n');
}

/** The goals summary in markdown, for results.md (under `heading`). */
export function goalsMarkdown(lines: BenchLine[], heading = '## Goals'): string {
  const { rows, notes } = summaryParts(lines);
  return [
    heading,
    '',
    'Ratios of rates measured in the same run (the same round-robin of runs).',
    '',
    `| ${COLUMNS.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`,
    `|${COLUMNS.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
    '',
    ...notes.map((n) => `- ${n}`),
    '',
  ].join('\n');
}

/** The benchmark lines among a run's JSON output (summary lines and logs are skipped). */
export function parseLines(text: string): BenchLine[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Partial<BenchLine>)
    .filter((l): l is BenchLine => typeof l.pipeline === 'string' && typeof l.plumber === 'number');
}

if (require.main === module) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error('usage: node --import tsx bench/goals.ts <json lines of bench:e2e or bench:model>…');
    process.exitCode = 2;
  } else {
    console.log(goalsText(files.flatMap((f) => parseLines(readFileSync(f, 'utf8')))));
  }
}
