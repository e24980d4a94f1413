/**
 * What bench:dialects prints and writes: one JSON line per example and per tracing measurement,
 * the goals of issue 49 checked against them (met, missed, or missed within the rounds' spread),
 * and the markdown of its section in bench/RESULTS.md.
 */
import { formatNumber, rowsTable } from '../results';
import type { Kept } from './plumberSource';

/** One example. Rates are elements of the export per second (batches for a pipeline that batches), medians over the rounds. */
export interface DialectLine {
  bench: 'dialects';
  pipeline: string;
  asWritten: number;
  /** With the kept plan applied; the same runs as `asWritten` when nothing was kept or the plan could not be written into the source (see `note`). */
  plumber: number;
  hand: number;
  /** The line of the op the analysis names as the bottleneck (in `bottleneckFile`); null when it names none. */
  bottleneckLine: number | null;
  kept: Kept;
  /** Wall seconds of the diagnosis (profile, plan, verification). */
  profileSeconds: number;
  dialect: string;
  /** The line the example marks with `// bottleneck`, and its file relative to the repository. */
  markedLine: number;
  markedFile: string;
  /** The file of `bottleneckLine`, relative to the repository; null with it. */
  bottleneckFile: string | null;
  /** Medians of the per-round ratios, and their lowest and highest. */
  plumberVsAsWritten: number;
  plumberVsAsWrittenSpread: [number, number];
  plumberVsHand: number;
  plumberVsHandSpread: [number, number];
  rounds: number;
  /** Why a figure is missing or stands for another (no diagnosis yet, a plan that could not be applied). */
  note?: string;
}

/** Tracing's cost on one pipeline: the runner's traced rate against an untraced loop's, alternating. */
export interface TracingLine {
  bench: 'dialects-tracing';
  pipeline: string;
  /** The plain loop's rate in a process of its own under tsx, as the user runs it. */
  bare: number;
  traced: number | null;
  /** 1 − traced ÷ bare, the median over the rounds; null when the runner could not trace it. */
  overhead: number | null;
  overheadSpread: [number, number] | null;
  rounds: number;
  /** The elements both sides measured: the runner's whole run of a pipeline that ended in its warm-up, or a window after it. */
  measuredOver: 'the first pass, from its first element' | 'a window after warm-up' | 'either, as each round’s traced run was';
  note?: string;
}

export interface Check {
  goal: string;
  pipeline: string;
  met: boolean;
  /** The figure and the bar, for a person. */
  text: string;
}

const times = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(2)}×` : '–');
const range = ([a, b]: [number, number]): string => `${times(a)}–${times(b)}`;

/** A ratio goal judged by its median; a miss whose spread reaches the bar says so. */
function ratioCheck(goal: string, pipeline: string, value: number, s: [number, number], bar: number): Check {
  const met = value >= bar;
  const within = !met && s[1] >= bar ? ' (missed within the rounds’ spread)' : '';
  return { goal, pipeline, met, text: `${times(value)} (rounds ${range(s)}) vs ≥ ${bar}×${within}` };
}

export function lineChecks(l: DialectLine): Check[] {
  const right = l.bottleneckLine !== null && l.bottleneckLine === l.markedLine && l.bottleneckFile === l.markedFile;
  return [
    ratioCheck('never below 0.97× as written', l.pipeline, l.plumberVsAsWritten, l.plumberVsAsWrittenSpread, 0.97),
    ratioCheck('plumber ≥ 0.85× hand-tuned', l.pipeline, l.plumberVsHand, l.plumberVsHandSpread, 0.85),
    {
      goal: 'the bottleneck on the right line',
      pipeline: l.pipeline,
      met: right,
      text: `named ${l.bottleneckLine === null ? 'no line' : `${l.bottleneckFile}:${l.bottleneckLine}`}, marked ${l.markedFile}:${l.markedLine}`,
    },
  ];
}

export function tracingChecks(t: TracingLine): Check[] {
  const met = t.overhead !== null && t.overhead <= 0.1;
  const text =
    t.overhead === null ? `not measured: ${t.note ?? 'the runner could not trace it'}` : `${(t.overhead * 100).toFixed(1)}% (rounds ${t.overheadSpread!.map((x) => `${(x * 100).toFixed(1)}%`).join('–')}) vs ≤ 10%`;
  return [{ goal: 'tracing costs ≤ 10% on a heavy stage', pipeline: t.pipeline, met, text }];
}

export function allChecks(lines: readonly DialectLine[], tracing: readonly TracingLine[]): Check[] {
  return [...lines.flatMap(lineChecks), ...tracing.flatMap(tracingChecks)];
}

export function goalsText(checks: readonly Check[]): string {
  const met = checks.filter((c) => c.met).length;
  return [`Goals: ${met} of ${checks.length} met.`, ...checks.map((c) => `  ${c.met ? 'met   ' : 'MISSED'} ${c.goal} — ${c.pipeline}: ${c.text}`)].join('\n');
}

/** The section of bench/RESULTS.md: the examples, the tracing cost, the goals, and the notes. */
export function markdown(lines: readonly DialectLine[], tracing: readonly TracingLine[]): string {
  const rows = lines.map((l) => ({
    pipeline: l.pipeline,
    dialect: l.dialect,
    'as written': l.asWritten,
    plumber: l.plumber,
    hand: l.hand,
    'plumber ÷ as written': `${times(l.plumberVsAsWritten)} (${range(l.plumberVsAsWrittenSpread)})`,
    'plumber ÷ hand': `${times(l.plumberVsHand)} (${range(l.plumberVsHandSpread)})`,
    kept: l.kept,
    bottleneck: l.bottleneckLine === null ? 'none named' : `${l.bottleneckFile}:${l.bottleneckLine}`,
    marked: `${l.markedFile}:${l.markedLine}`,
    'profile s': Number(l.profileSeconds.toFixed(1)),
  }));
  const trows = tracing.map((t) => ({
    pipeline: t.pipeline,
    'bare process': t.bare,
    traced: t.traced ?? '–',
    overhead: t.overhead === null ? '–' : `${(t.overhead * 100).toFixed(1)}%`,
    'measured over': t.measuredOver,
  }));
  const checks = allChecks(lines, tracing);
  const notes = [...lines, ...tracing].filter((l) => l.note).map((l) => `- ${l.pipeline}: ${l.note}`);
  return [
    rowsTable(rows),
    '',
    `Medians of ${lines[0]?.rounds ?? 0} alternating rounds; ratios in brackets are the lowest and highest round.`,
    '',
    '**Tracing on a heavy stage** (Plumber’s runner against a plain loop in a process of its own under tsx, alternating)',
    '',
    trows.length ? rowsTable(trows) : 'Not measured.',
    '',
    '### Goals',
    '',
    ...checks.map((c) => `- ${c.met ? '✅' : '❌'} ${c.goal} — ${c.pipeline}: ${c.text}`),
    ...(notes.length ? ['', '### Notes', '', ...notes] : []),
  ].join('\n');
}

/** A rate as the text table prints it. */
export const rate = (x: number | null): string => (x === null ? '–' : formatNumber(x));
