/**
 * bench:dialects — the pipelines people already have (tfjs-data, Node streams, async generators):
 * for each example, its rate as written, with the plan Plumber's engine keeps applied to its source
 * (the dialect's own knobs, or a conversion to plumber-data), and hand-tuned by an expert
 * (bench/dialects/hand/), judged by the median of alternating rounds with their spread; whether
 * the analysis names the line the example marks `// bottleneck`; and what tracing costs on a heavy
 * stage (the runner's traced run against a plain loop, alternating).
 *
 *   npm run bench:dialects -- [--json] [--quick] [--rounds N (default 3)] [--only tfjs-digits,generators]
 *
 * `--quick` shortens every window and the diagnosis (a check that everything runs, not figures).
 * Full runs write their section of bench/RESULTS.md. Exits 1 when an example or its hand-tuned
 * variant fails to run, so the smoke test catches one that rots.
 */
import { relative } from 'node:path';
import { diagnoseFile, type FileDiagnosis } from '../../src/engine/diagnose';
import { offeredChanges } from '../../src/engine/offer';
import { DEFAULTS } from '../../src/runner/request';
import { siteOfOpId } from '../../src/shared/opId';
import { writeResults } from '../results';
import { EXAMPLES, ROOT, markedBottleneck, type DialectExample } from './examples';
import { alternate, median, ratios, spread, tracedRun, untracedRate, untracedRun, type UntracedRun, type Window } from './measure';
import { applyKeptPlan, keptKind, type AppliedPlan, type Kept } from './plumberSource';
import { allChecks, goalsText, markdown, rate, type DialectLine, type TracingLine } from './report';

/** The examples whose CPU-heavy stage the tracing cost is measured on (quick runs: the first). */
const TRACED = ['streams-transform', 'generators', 'tfjs-digits'];

interface Args {
  json: boolean;
  quick: boolean;
  rounds: number;
  only: string[];
}

function parseArgs(argv: string[]): Args {
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const names = EXAMPLES.map((e) => e.name);
  const only = value('--only')?.split(',').filter(Boolean) ?? names;
  const unknown = only.filter((n) => !names.includes(n));
  if (unknown.length) {
    console.error(`bench:dialects: no example called ${unknown.join(', ')}; the examples are ${names.join(', ')}.`);
    process.exit(2);
  }
  const rounds = Number(value('--rounds') ?? 3);
  if (!(rounds >= 1)) {
    console.error('bench:dialects: --rounds takes a whole number ≥ 1 (3 or more to judge a goal).');
    process.exit(2);
  }
  return { json: argv.includes('--json'), quick: argv.includes('--quick'), rounds: Math.floor(rounds), only };
}

const log = (s: string): void => void process.stderr.write(`${s}\n`);
const rel = (f: string): string => relative(ROOT, f).split('\\').join('/');

function windowOf(e: DialectExample, args: Args): Window {
  return args.quick ? { seconds: Math.min(1.5, e.seconds), warmupSeconds: 1 } : { seconds: e.seconds, warmupSeconds: e.warmupSeconds };
}

/** Plumber's diagnosis of the example as `plumber plan` makes it (quick runs: one pass, a short verification). */
async function diagnosed(e: DialectExample, args: Args): Promise<{ d?: FileDiagnosis; seconds: number; problem?: string }> {
  const t0 = performance.now();
  try {
    const d = await diagnoseFile({
      file: e.file,
      exportName: e.exportName,
      runs: args.quick ? { seconds: 1, warmupSeconds: 1, timeoutSeconds: 90 } : { seconds: DEFAULTS.seconds, timeoutSeconds: 120 },
      ...(args.quick ? { passes: 1, verifyBudgetSeconds: 0 } : {}),
    });
    const seconds = (performance.now() - t0) / 1000;
    const failed = d.error?.message ?? d.first.error?.message;
    return failed ? { seconds, problem: `Plumber could not profile it yet: ${failed}` } : { d, seconds };
  } catch (error) {
    return { seconds: (performance.now() - t0) / 1000, problem: `Plumber's engine failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** Where the analysis says the bottleneck is, as a file relative to the repository and a line. */
function namedBottleneck(e: DialectExample, d: FileDiagnosis | undefined): { file: string; line: number } | undefined {
  const id = d?.analysis.bottleneck.opId;
  const site = id === undefined ? undefined : siteOfOpId(id, e.file);
  return site && { file: rel(site.file), line: site.line };
}

async function benchOne(e: DialectExample, args: Args): Promise<DialectLine> {
  const marked = markedBottleneck(e);
  const w = windowOf(e, args);
  log(`${e.name}: diagnosing ${rel(e.file)} (${e.exportName}) as \`plumber plan\` does…`);
  const { d, seconds, problem } = await diagnosed(e, args);
  const notes: string[] = problem ? [problem] : [];
  const offered = d ? offeredChanges(d.plan) : [];
  // What the plan kept, even when it cannot be written into the source (then the note says so and
  // "plumber" is what a user is left with: the pipeline as written).
  const kept: Kept = keptKind(offered);
  let applied: AppliedPlan | undefined;
  if (d && kept !== 'none') {
    try {
      applied = applyKeptPlan(e.file, d);
    } catch (error) {
      notes.push(`${error instanceof Error ? error.message : String(error)}; "plumber" is the pipeline as written.`);
    }
  }
  log(`${e.name}: kept ${kept}${d ? ` (${d.plan.verification?.summary ?? 'not verified'})` : ''}; measuring ${args.rounds} round(s)…`);
  try {
    const configs = [
      { key: 'asWritten' as const, run: () => untracedRate(e.file, e.exportName, w) },
      { key: 'hand' as const, run: () => untracedRate(e.hand, e.exportName, w) },
      ...(applied
        ? [
            {
              key: 'plumber' as const,
              run: () =>
                untracedRate(applied.file, e.exportName, w).catch((error: unknown) => {
                  throw new Error(`with Plumber's kept plan written into it (${kept}), ${error instanceof Error ? error.message : String(error)}`);
                }),
            },
          ]
        : []),
    ];
    const rates = await alternate(configs, args.rounds, log);
    // Nothing kept: what a user runs is the pipeline as written, so the same runs stand for both.
    const plumber = rates.plumber ?? rates.asWritten;
    const named = namedBottleneck(e, d);
    if (d && !named) notes.push(`The analysis named no operator's line: ${d.analysis.bottleneck.reason}`);
    const vsWritten = ratios(plumber, rates.asWritten);
    const vsHand = ratios(plumber, rates.hand);
    return {
      bench: 'dialects',
      pipeline: e.name,
      asWritten: median(rates.asWritten),
      plumber: median(plumber),
      hand: median(rates.hand),
      bottleneckLine: named?.line ?? null,
      kept,
      profileSeconds: seconds,
      dialect: e.dialect,
      markedLine: marked.line,
      markedFile: rel(marked.file),
      bottleneckFile: named?.file ?? null,
      plumberVsAsWritten: median(vsWritten),
      plumberVsAsWrittenSpread: spread(vsWritten),
      plumberVsHand: median(vsHand),
      plumberVsHandSpread: spread(vsHand),
      rounds: args.rounds,
      ...(notes.length ? { note: notes.join(' ') } : {}),
    };
  } finally {
    applied?.remove();
  }
}

/**
 * The runner's traced rate against the plain loop's on the example, in a process of its own under
 * tsx as the user runs it, alternating. Both sides measure the same elements: where the runner's
 * run read the pipeline once and measured it from its first element (a finite pipeline that ends
 * during the warm-up), the loop's first pass is measured the same way, not its later, warmer passes.
 */
async function tracingCost(e: DialectExample, args: Args): Promise<TracingLine> {
  const w = windowOf(e, args);
  log(`${e.name}: tracing cost, ${args.rounds} round(s) of the runner against a plain loop…`);
  let problem: string | undefined;
  const runs: { bare: UntracedRun[]; wholeRun: boolean[] } = { bare: [], wholeRun: [] };
  const rates = await alternate(
    [
      {
        key: 'bare' as const,
        run: async () => {
          const r = await untracedRun(e.file, e.exportName, w);
          runs.bare.push(r);
          return r.rate;
        },
      },
      {
        key: 'traced' as const,
        run: async () => {
          if (problem) return Number.NaN;
          const r = await tracedRun(e.file, e.exportName, w);
          if ('rate' in r) {
            runs.wholeRun.push(r.wholeRun);
            return r.rate;
          }
          problem = r.error;
          return Number.NaN;
        },
      },
    ],
    args.rounds,
    log,
  );
  // The loop's figure for the elements the runner measured, round by round: its first pass where that round's traced run was the whole run.
  const matched = (list: UntracedRun[]): number[] => list.map((r, i) => (runs.wholeRun[i] ? (r.firstPass ?? Number.NaN) : r.rate));
  const whole = runs.wholeRun.filter(Boolean).length;
  const measuredOver = whole === 0 ? ('a window after warm-up' as const) : whole === runs.wholeRun.length ? ('the first pass, from its first element' as const) : ('either, as each round’s traced run was' as const);
  const base = { bench: 'dialects-tracing' as const, pipeline: e.name, bare: median(matched(runs.bare)), rounds: args.rounds, measuredOver };
  if (problem) return { ...base, bare: median(rates.bare), traced: null, overhead: null, overheadSpread: null, note: `the runner could not trace it yet: ${problem}` };
  const costs = ratios(rates.traced, matched(runs.bare)).map((x) => 1 - x);
  return { ...base, traced: median(rates.traced), overhead: median(costs), overheadSpread: spread(costs) };
}

function printLine(l: DialectLine): void {
  log(
    `${l.pipeline}: as written ${rate(l.asWritten)}/s · plumber ${rate(l.plumber)}/s (${l.plumberVsAsWritten.toFixed(2)}× as written, ${l.plumberVsHand.toFixed(2)}× hand) · hand ${rate(l.hand)}/s · kept ${l.kept} · bottleneck ${l.bottleneckLine ?? 'none named'} (marked ${l.markedLine})${l.note ? `\n  note: ${l.note}` : ''}`,
  );
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const lines: DialectLine[] = [];
  const tracing: TracingLine[] = [];
  let failed = false;
  for (const e of EXAMPLES.filter((x) => args.only.includes(x.name))) {
    try {
      const line = await benchOne(e, args);
      lines.push(line);
      printLine(line);
      if (args.json) process.stdout.write(`${JSON.stringify(line)}\n`);
    } catch (error) {
      failed = true;
      log(`${e.name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const traced = EXAMPLES.filter((e) => args.only.includes(e.name) && TRACED.includes(e.name)).slice(0, args.quick ? 1 : undefined);
  for (const e of traced) {
    try {
      const t = await tracingCost(e, args);
      tracing.push(t);
      if (args.json) process.stdout.write(`${JSON.stringify(t)}\n`);
    } catch (error) {
      failed = true;
      log(`${e.name} (tracing cost): ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const checks = allChecks(lines, tracing);
  log(goalsText(checks));
  if (!args.json) process.stdout.write(`${markdown(lines, tracing)}\n`);
  if (failed) {
    log("bench:dialects: an example failed to run; bench/RESULTS.md keeps the last full run's results.");
    process.exitCode = 1;
    return;
  }
  writeResults('bench:dialects', markdown(lines, tracing));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
