/**
 * bench:memory — projected peak memory against measured: for each pipeline (the examples that run
 * offline, and synthetic ones in bench/memory/pipelines: a big shuffle buffer of large elements, a
 * finite set a cache holds) and each configuration (as written, the model's plan, and one with a
 * large buffer or a cache), profile it with the runner, project its peak with the model
 * (src/model/memory.ts), then run it with that configuration in a fresh runner process (no probes)
 * and read that process's peak resident set. Each round profiles again and alternates the
 * configurations' runs; each figure, projected and measured, is the median of the rounds with
 * their range. Also checks that the plan never projects past a budget it was given (half of what
 * the plan projects without one, when that is below as written's peak).
 *
 *   npm run bench:memory -- [--json] [--quick] [--rounds N (default 3)] [--only shuffle,cache]
 *
 * `--quick` runs one pipeline briefly (a check that everything runs, not figures). Full runs write
 * their section of bench/RESULTS.md.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { plan, projectPeakMemory } from '../../src/model';
import { runProfile } from '../../src/runner/spawn';
import type { Overrides, Profile } from '../../src/shared/profile';
import { writeResults } from '../results';
import { median } from '../dialects/measure';
import { main as epochMain } from '../epoch/index';

const ROOT = path.resolve(__dirname, '..', '..');
const MB = 2 ** 20;

interface Pipeline {
  name: string;
  file: string;
  exportName: string;
}

const PIPELINES: Pipeline[] = [
  { name: 'shuffle', file: path.join(__dirname, 'pipelines', 'shuffle.ts'), exportName: 'shuffled' },
  { name: 'cache', file: path.join(__dirname, 'pipelines', 'cache.ts'), exportName: 'epochs' },
  { name: 'workers', file: path.join(__dirname, 'pipelines', 'workers.ts'), exportName: 'expanded' },
  { name: 'digits', file: path.join(ROOT, 'examples', 'digits', 'pipeline.ts'), exportName: 'digits' },
  { name: 'text', file: path.join(ROOT, 'examples', 'text', 'pipeline.ts'), exportName: 'text' },
];

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
  const quick = argv.includes('--quick');
  const only = value('--only')?.split(',').filter(Boolean) ?? (quick ? ['shuffle'] : PIPELINES.map((p) => p.name));
  const rounds = Math.max(1, Math.floor(Number(value('--rounds') ?? (quick ? 1 : 3))));
  return { json: argv.includes('--json'), quick, rounds, only };
}

const log = (s: string): void => void process.stderr.write(`${s}\n`);

/** The goal: each projected peak within this many percent of the measured one. */
const GOAL_PCT = 20;

/** Whether some projection of the rounds is within the goal of some measurement of them (MB ranges). */
function rangesMeet(projected: [number, number], measured: [number, number]): boolean {
  return projected[0] <= measured[1] * (1 + GOAL_PCT / 100) && projected[1] >= measured[0] * (1 - GOAL_PCT / 100);
}

/**
 * The configuration with a large buffer or a cache: a cache after the deterministic op of a finite
 * dataset whose pass holds the most bytes (nothing random above it), which a run fills before its
 * window (the runner waits for caches to fill); else a prefetch after the root's input sized to
 * hold about as many bytes as the run's base process. A prefetch fills only where what is below it
 * is slower than what is above it: the projection expects one drained below the bottleneck to hold
 * one burst of its producer, and the budget counts it full (see src/model/memory.ts).
 */
function largeConfig(profile: Profile): { name: string; overrides: Overrides } {
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const randomAbove = (id: string, seen = new Set<string>()): boolean => {
    const op = byId.get(id);
    if (!op || seen.has(id)) return false;
    seen.add(id);
    return op.random || op.inputs.some((i) => randomAbove(i, seen));
  };
  let best: { id: string; bytes: number; label: string } | undefined;
  for (const op of profile.ops) {
    const c = op.counters;
    const n = op.cardinality;
    if (op.parentId !== undefined || n === undefined || !Number.isFinite(n) || n <= 0 || c.produced <= 0 || randomAbove(op.id) || op.kind === 'cache') continue;
    if (op.kind !== 'map' && op.kind !== 'filter' && op.kind !== 'flatMap') continue;
    const bytes = n * (c.bytesProduced / c.produced);
    if (!best || bytes > best.bytes) best = { id: op.id, bytes, label: op.fnName ?? op.kind };
  }
  if (best) return { name: `cache after ${best.label}`, overrides: { [best.id]: { cache: 'memory' } } };
  const root = profile.ops.find((o) => o.id === profile.pipeline.rootId);
  const target = root?.inputs[0] !== undefined ? byId.get(root.inputs[0]) : root;
  if (!target) return { name: 'large prefetch', overrides: {} };
  const c = target.counters;
  const each = Math.max(1, c.produced > 0 ? c.bytesProduced / c.produced : 1);
  const n = Math.max(16, Math.min(20_000, Math.round((profile.run.baseRssBytes ?? 100 * MB) / each)));
  return { name: `prefetch(${n})`, overrides: { [target.id]: { prefetch: n } } };
}

interface Line {
  bench: 'memory';
  pipeline: string;
  config: string;
  /** Median over the rounds' profiles, and their lowest and highest. */
  projectedPeakMB: number;
  projectedRangeMB: [number, number];
  /** Median over the rounds' runs, and their lowest and highest. */
  measuredPeakMB: number;
  measuredRangeMB: [number, number];
  errorPct: number;
  rounds: number;
}

async function measureRun(p: Pipeline, overrides: Overrides, seconds: number): Promise<number> {
  const run = await runProfile({ file: p.file, exportName: p.exportName, overrides, probes: false, seconds, warmupSeconds: 0.5, timeoutSeconds: 180 });
  if (run.error) throw new Error(`${p.name}: ${run.error.message}`);
  return run.run.peakRssBytes;
}

/** A profile of the pipeline as written, with the runner's probes (what the projection reads). */
async function profileOf(p: Pipeline, seconds: number): Promise<Profile> {
  const profile = await runProfile({ file: p.file, exportName: p.exportName, seconds, timeoutSeconds: 180 });
  if (profile.error) throw new Error(`${p.name}: ${profile.error.message}`);
  return profile;
}

async function benchPipeline(p: Pipeline, args: Args): Promise<{ lines: Line[]; budget?: { kept: boolean; budgetMB: number; peakMB: number } }> {
  const seconds = args.quick ? 1 : 3;
  // The configurations come from the first profile; every round profiles again, so the projection
  // is judged as the measurement is, by its median over the rounds with its spread.
  const profile = await profileOf(p, seconds);
  const planned = plan(profile);
  const large = largeConfig(profile);
  const configs = [{ name: 'as written', overrides: {} as Overrides }, { name: 'plan', overrides: planned.overrides }, large];
  const projected: number[][] = configs.map(() => []);
  const measured: number[][] = configs.map(() => []);
  for (let r = 0; r < args.rounds; r++) {
    const round = r === 0 ? profile : await profileOf(p, seconds);
    configs.forEach((c, i) => projected[i]!.push(projectPeakMemory(round, c.overrides)?.peakBytes ?? NaN));
    // Alternate the order, so a drift of the machine's state weighs on every configuration alike.
    const order = r % 2 === 0 ? configs.map((_, i) => i) : configs.map((_, i) => configs.length - 1 - i);
    for (const i of order) measured[i]!.push(await measureRun(p, configs[i]!.overrides, seconds));
  }
  // A budget the plan must keep within: halfway between as written's projected peak and the
  // plan's, where the plan adds memory (else there is nothing for a budget to refuse), both from
  // the first profile, which the plan and the budget's plan come from.
  const [asWritten, withPlan] = [projected[0]![0]!, projected[1]![0]!];
  let budget: { kept: boolean; budgetMB: number; peakMB: number } | undefined;
  if (withPlan > asWritten) {
    const bytes = asWritten + (withPlan - asWritten) / 2;
    const peak = plan(profile, { memoryBudgetBytes: bytes }).memory?.peakBytes ?? Infinity;
    budget = { kept: peak <= bytes, budgetMB: Number((bytes / MB).toFixed(1)), peakMB: Number((peak / MB).toFixed(1)) };
  }
  const mb = (bytes: number): number => Number((bytes / MB).toFixed(1));
  const lines = configs.map((c, i) => {
    const med = median(measured[i]!);
    const proj = median(projected[i]!);
    return {
      bench: 'memory' as const,
      pipeline: p.name,
      config: c.name,
      projectedPeakMB: mb(proj),
      projectedRangeMB: [mb(Math.min(...projected[i]!)), mb(Math.max(...projected[i]!))] as [number, number],
      measuredPeakMB: mb(med),
      measuredRangeMB: [mb(Math.min(...measured[i]!)), mb(Math.max(...measured[i]!))] as [number, number],
      errorPct: Number((((proj - med) / med) * 100).toFixed(1)),
      rounds: args.rounds,
    };
  });
  return { lines, ...(budget ? { budget } : {}) };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const loadBefore = os.loadavg();
  const all: Line[] = [];
  const budgetChecks: string[] = [];
  let failed = false;
  for (const p of PIPELINES.filter((x) => args.only.includes(x.name))) {
    log(`bench:memory: ${p.name}…`);
    try {
      const { lines, budget } = await benchPipeline(p, args);
      for (const l of lines) {
        all.push(l);
        if (args.json) console.log(JSON.stringify(l));
        else log(`  ${l.config}: projected ${l.projectedPeakMB} MB (${l.projectedRangeMB.join('–')}), measured ${l.measuredPeakMB} MB (${l.measuredRangeMB.join('–')}), error ${l.errorPct}%`);
      }
      if (budget) budgetChecks.push(`${p.name}: with a ${budget.budgetMB} MB budget the plan projects ${budget.peakMB} MB${budget.kept ? '' : ', PAST THE BUDGET'}`);
      if (budget && !budget.kept) failed = true;
    } catch (e) {
      failed = true;
      log(`bench:memory: ${p.name} failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const errors = all.map((l) => Math.abs(l.errorPct)).filter(Number.isFinite);
  const medianError = errors.length ? median(errors) : NaN;
  const within = errors.filter((e) => e <= GOAL_PCT).length;
  const insideSpread = all.filter((l) => Math.abs(l.errorPct) > GOAL_PCT && rangesMeet(l.projectedRangeMB, l.measuredRangeMB));
  const loadAfter = os.loadavg();
  const inside = insideSpread.length > 0 ? `; missed inside the spread: ${insideSpread.map((l) => `${l.pipeline} ${l.config}`).join(', ')}` : '';
  const summary = `median |error| ${medianError.toFixed(1)}%; within ±${GOAL_PCT}%: ${within} of ${errors.length}${inside}; budget: ${budgetChecks.length > 0 ? budgetChecks.join('; ') : 'no plan added memory, nothing to refuse'}`;
  log(`bench:memory: ${summary}; load average ${loadBefore.map((x) => x.toFixed(2)).join(' ')} → ${loadAfter.map((x) => x.toFixed(2)).join(' ')}`);
  if (args.json)
    console.log(
      JSON.stringify({
        bench: 'memory',
        summary: true,
        medianErrorPct: Number(medianError.toFixed(1)),
        within20: within,
        missedInsideSpread: insideSpread.length,
        lines: errors.length,
        budgetKept: !budgetChecks.some((b) => b.includes('PAST')),
      }),
    );
  const range = (r: [number, number]): string => `${r[0]}–${r[1]}`;
  const table = [
    '| pipeline | config | projected peak MB (median, range) | measured peak MB (median, range) | error |',
    '|---|---|---:|---:|---:|',
    ...all.map((l) => `| ${l.pipeline} | ${l.config} | ${l.projectedPeakMB} (${range(l.projectedRangeMB)}) | ${l.measuredPeakMB} (${range(l.measuredRangeMB)}) | ${l.errorPct}% |`),
    '',
    `Goal: projected within ±${GOAL_PCT}% of measured on every line, median error ≤ 10%; each the median of ${args.rounds} rounds (a profile and a measured run of each configuration a round). ${summary}.`,
  ].join('\n');
  if (all.length > 0) writeResults('bench:memory', table, [`Load average ${loadBefore.map((x) => x.toFixed(2)).join(' ')} at the start, ${loadAfter.map((x) => x.toFixed(2)).join(' ')} at the end.`]);
  process.exitCode = failed ? 1 : 0;
}

/** `npm run bench:memory` prints both lines of issue 52: memory here, then the first batch and epochs (bench/epoch). */
async function both(): Promise<void> {
  await main();
  const memoryExit = process.exitCode ?? 0;
  if (process.argv.includes('--no-epoch')) return;
  await epochMain();
  process.exitCode = Math.max(Number(memoryExit), Number(process.exitCode ?? 0));
}

void both();
