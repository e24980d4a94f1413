/**
 * bench:epoch — the model's time to the first batch and per epoch (src/model/epochs.ts) against a
 * fresh process's. Each round profiles each finite pipeline of bench/epoch/pipelines.ts with
 * Plumber's runner, plans it (the model's plan, with a memory budget the disk-cache case cannot
 * fit its cache in), takes the plan's predicted first batch and epochs, and measures the pipeline
 * with the plan's overrides in a process of its own (run.ts): the time from iterating to the first
 * root element, and each epoch's wall time. The disk-cache case also measures its pipeline with the
 * cache in memory, for the second epoch's ratio. A disk cache file is removed before each run
 * that names it and after the benchmark. Rounds alternate the pipelines; each figure is the median
 * of the rounds, the spread beside it.
 *
 *   npm run bench:epoch -- [--json] [--quick] [--rounds N (default 3)]
 *
 * Prints per pipeline `{"bench":"epoch","pipeline":…,"predictedFirstBatchSeconds":…,
 * "measuredFirstBatchSeconds":…,"predictedEpochSeconds":[…],"measuredEpochSeconds":[…]}` and, for
 * the disk cache, `{"bench":"epoch","pipeline":"diskCache","secondEpochDiskOverMemory":…}` (the
 * speed of the second epoch from disk over that from memory). Goals (issue 52): first batch within
 * ±25%, first and second epoch within ±20%, disk ≥ 0.9 × memory. Full runs write their section of
 * bench/RESULTS.md.
 */
import { execFile } from 'node:child_process';
import { unlinkSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { plan as modelPlan } from '../../src/model';
import { runProfile } from '../../src/runner/spawn';
import type { Overrides } from '../../src/shared/profile';
import { median, spread } from '../dialects/measure';
import { rowsTable, writeResults } from '../results';
import { epochsOf } from './pipelines';

const RUN = join(__dirname, 'run.ts');
const PIPELINES = join(__dirname, 'pipelines.ts');
export const GOAL_FIRST_BATCH = 0.25;
export const GOAL_EPOCH = 0.2;
export const GOAL_DISK_OVER_MEMORY = 0.9;

interface Case {
  name: 'shuffleFill' | 'memoryCache' | 'diskCache';
  /** Epochs to measure; the pipeline iterated again for each when it has no repeat. */
  passes: number;
  iterateAgain: boolean;
  /** Memory budget for the plan, bytes (the disk-cache case: too small for its cache). */
  budgetBytes?: number;
  /** What the plan must propose for the case to measure what it is named for. */
  expects?: 'memory cache' | 'disk cache';
}

const CASES: Case[] = [
  { name: 'shuffleFill', passes: 2, iterateAgain: true },
  { name: 'memoryCache', passes: 3, iterateAgain: false, expects: 'memory cache' },
  { name: 'diskCache', passes: 3, iterateAgain: false, budgetBytes: 16 * 2 ** 20, expects: 'disk cache' },
];

interface Args {
  json: boolean;
  quick: boolean;
  rounds: number;
}

function parseArgs(argv: string[]): Args {
  const i = argv.indexOf('--rounds');
  const rounds = i >= 0 ? Number(argv[i + 1]) : 3;
  if (!(rounds >= 1)) {
    console.error('bench:epoch: --rounds takes a whole number ≥ 1 (3 or more to judge a goal).');
    process.exit(2);
  }
  return { json: argv.includes('--json'), quick: argv.includes('--quick'), rounds: Math.floor(rounds) };
}

const log = (s: string): void => void process.stderr.write(`${s}\n`);

interface Timed {
  firstBatchSeconds: number;
  epochSeconds: number[];
}

/** One measured run in a process of its own (run.ts). */
function measure(c: Case, overrides: Overrides, epoch: number, env: NodeJS.ProcessEnv): Promise<Timed> {
  for (const p of diskCaches(overrides)) removeQuietly(p);
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', RUN, PIPELINES, c.name, JSON.stringify(overrides), String(epoch), String(c.passes), c.iterateAgain ? '1' : '0'],
      { cwd: __dirname, env, timeout: 300_000, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        const line = stdout.split('\n').find((l) => l.startsWith('{'));
        if (error || !line) fail(new Error(`${c.name} did not run: ${stderr.trim().split('\n').slice(-4).join(' ') || error?.message}`));
        else done(JSON.parse(line) as Timed);
      },
    );
  });
}

function diskCaches(overrides: Overrides): string[] {
  return Object.values(overrides)
    .map((o) => o.cache)
    .filter((c): c is string => typeof c === 'string' && c !== 'memory');
}

function removeQuietly(p: string): void {
  try {
    unlinkSync(p);
  } catch {
    // Not there: nothing to remove.
  }
}

interface Round {
  predictedFirst: number;
  predictedEpochs: number[];
  measured: Timed;
  /** diskCache: the same pipeline with its cache in memory. */
  memory?: Timed;
  changes: string;
}

/** One round of one case: profile, plan, predict, measure. */
async function round(c: Case, epoch: number, env: NodeJS.ProcessEnv, seconds: number, made: Set<string>): Promise<Round> {
  const profile = await runProfile({ file: PIPELINES, exportName: c.name, seconds, startSeconds: 60, timeoutSeconds: 240 });
  if (profile.error) throw new Error(`${c.name}: the runner failed: ${profile.error.message}`);
  const plan = modelPlan(profile, c.budgetBytes !== undefined ? { memoryBudgetBytes: c.budgetBytes } : {});
  const cache = plan.changes.find((ch) => ch.kind === 'cache');
  const has = cache === undefined ? undefined : cache.path !== undefined ? 'disk cache' : 'memory cache';
  if (c.expects && has !== c.expects) log(`${c.name}: the plan proposes ${has ?? 'no cache'}, not the ${c.expects} this case is for (notes: ${(plan.notes ?? []).join(' | ') || 'none'})`);
  const time = plan.time;
  if (!time) throw new Error(`${c.name}: the plan has no time projection`);
  for (const p of diskCaches(plan.overrides)) made.add(p);
  const measured = await measure(c, plan.overrides, epoch, env);
  let memory: Timed | undefined;
  if (has === 'disk cache' && cache) {
    const inMemory: Overrides = { ...plan.overrides, [cache.opId]: { ...plan.overrides[cache.opId], cache: 'memory' } };
    memory = await measure(c, inMemory, epoch, env);
  }
  const changes = plan.changes.map((ch) => (ch.kind === 'cache' ? (ch.path !== undefined ? `cache(${ch.path})` : 'cache()') : ch.kind)).join(', ') || 'none';
  return { predictedFirst: time.firstBatchSeconds, predictedEpochs: time.epochSeconds ?? [], measured, ...(memory ? { memory } : {}), changes };
}

export interface EpochLine {
  bench: 'epoch';
  pipeline: string;
  predictedFirstBatchSeconds: number;
  /** The prediction comes from a profile run's first element: it varies round to round as a fresh process does. */
  predictedFirstBatchSpread: [number, number];
  measuredFirstBatchSeconds: number;
  measuredFirstBatchSpread: [number, number];
  /** Predicted: the first epoch, then each later one (repeated to the epochs measured). */
  predictedEpochSeconds: number[];
  measuredEpochSeconds: number[];
  measuredEpochSpread: Array<[number, number]>;
  changes: string;
  rounds: number;
  /** diskCache: second-epoch speed from disk over from memory (time in memory ÷ time from disk). */
  secondEpochDiskOverMemory?: number;
  secondEpochDiskOverMemorySpread?: [number, number];
}

function lineOf(c: Case, rounds: Round[]): EpochLine {
  const epochs = Array.from({ length: c.passes }, (_, k) => rounds.map((r) => r.measured.epochSeconds[k] ?? NaN));
  const predicted = Array.from({ length: c.passes }, (_, k) => median(rounds.map((r) => r.predictedEpochs[Math.min(k, r.predictedEpochs.length - 1)] ?? NaN)));
  const ratios = rounds.filter((r) => r.memory).map((r) => (r.memory!.epochSeconds[1] ?? NaN) / (r.measured.epochSeconds[1] ?? NaN));
  const first = rounds.map((r) => r.measured.firstBatchSeconds);
  return {
    bench: 'epoch',
    pipeline: c.name,
    predictedFirstBatchSeconds: median(rounds.map((r) => r.predictedFirst)),
    predictedFirstBatchSpread: spread(rounds.map((r) => r.predictedFirst)),
    measuredFirstBatchSeconds: median(first),
    measuredFirstBatchSpread: spread(first),
    predictedEpochSeconds: predicted,
    measuredEpochSeconds: epochs.map(median),
    measuredEpochSpread: epochs.map(spread),
    changes: rounds[0]?.changes ?? 'none',
    rounds: rounds.length,
    ...(ratios.length > 0 ? { secondEpochDiskOverMemory: median(ratios), secondEpochDiskOverMemorySpread: spread(ratios) } : {}),
  };
}

const within = (predicted: number, measured: number, tol: number): boolean => Math.abs(predicted - measured) <= tol * measured;
/** Two spreads within `tol` of each other somewhere: a prediction measured too, against the measured. */
const spreadsMeet = (p: [number, number], s: [number, number], tol: number): boolean => p[1] >= s[0] * (1 - tol) && p[0] <= s[1] * (1 + tol);
const inSpread = (predicted: number, s: [number, number], tol: number): boolean => spreadsMeet([predicted, predicted], s, tol);
const r2 = (x: number): number => Math.round(x * 1000) / 1000;

/** The goal checks of one line, in words: met, missed, or missed inside the spread. */
export function goalsOf(l: EpochLine): Array<{ goal: string; met: boolean; inSpread: boolean }> {
  const pct = (p: number, m: number): string => `${p >= m ? '+' : ''}${Math.round(((p - m) / m) * 100)}%`;
  const out = [
    {
      goal: `${l.pipeline}: first batch predicted ${r2(l.predictedFirstBatchSeconds)} s (${l.predictedFirstBatchSpread.map(r2).join('–')}) vs measured ${r2(l.measuredFirstBatchSeconds)} s (${l.measuredFirstBatchSpread.map(r2).join('–')}), ${pct(l.predictedFirstBatchSeconds, l.measuredFirstBatchSeconds)}, within ±${GOAL_FIRST_BATCH * 100}%`,
      met: within(l.predictedFirstBatchSeconds, l.measuredFirstBatchSeconds, GOAL_FIRST_BATCH),
      inSpread: spreadsMeet(l.predictedFirstBatchSpread, l.measuredFirstBatchSpread, GOAL_FIRST_BATCH),
    },
  ];
  for (const k of [0, 1]) {
    const p = l.predictedEpochSeconds[k];
    const m = l.measuredEpochSeconds[k];
    if (p === undefined || m === undefined || !Number.isFinite(m)) continue;
    out.push({
      goal: `${l.pipeline}: ${k === 0 ? 'first' : 'second'} epoch predicted ${r2(p)} s vs measured ${r2(m)} s (${l.measuredEpochSpread[k]!.map(r2).join('–')}), ${pct(p, m)}, within ±${GOAL_EPOCH * 100}%`,
      met: within(p, m, GOAL_EPOCH),
      inSpread: inSpread(p, l.measuredEpochSpread[k]!, GOAL_EPOCH),
    });
  }
  if (l.secondEpochDiskOverMemory !== undefined) {
    out.push({
      goal: `${l.pipeline}: second epoch from disk at ${l.secondEpochDiskOverMemory.toFixed(2)}× (${l.secondEpochDiskOverMemorySpread!.map((x) => x.toFixed(2)).join('–')}) the speed from memory, ≥ ${GOAL_DISK_OVER_MEMORY}`,
      met: l.secondEpochDiskOverMemory >= GOAL_DISK_OVER_MEMORY,
      inSpread: l.secondEpochDiskOverMemorySpread![1] >= GOAL_DISK_OVER_MEMORY,
    });
  }
  return out;
}

/** Runs bench:epoch with the process's arguments; `npm run bench:memory` runs it after the memory lines. */
export async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const env = { ...process.env, ...(args.quick ? { EPOCH_BENCH_QUICK: '1' } : {}) };
  // The pipelines read their sizes when their module loads: the runner's child and run.ts inherit this.
  if (args.quick) process.env['EPOCH_BENCH_QUICK'] = '1';
  const EPOCHS = epochsOf(args.quick);
  const load = loadavg();
  const seconds = args.quick ? 0.5 : 2;
  const made = new Set<string>();
  const rounds = new Map<string, Round[]>(CASES.map((c) => [c.name, []]));
  let failed = false;
  try {
    for (let r = 0; r < args.rounds; r++) {
      for (let i = 0; i < CASES.length; i++) {
        const c = CASES[(i + r) % CASES.length]!;
        try {
          const got = await round(c, EPOCHS[c.name], env, seconds, made);
          rounds.get(c.name)!.push(got);
          log(
            `  round ${r + 1}: ${c.name}: first batch ${r2(got.predictedFirst)} s predicted, ${r2(got.measured.firstBatchSeconds)} s measured; epochs ${got.predictedEpochs.map(r2).join(', ')} s predicted, ${got.measured.epochSeconds.map(r2).join(', ')} s measured${got.memory ? `; in memory ${got.memory.epochSeconds.map(r2).join(', ')} s` : ''} (plan: ${got.changes})`,
          );
        } catch (error) {
          failed = true;
          log(`${c.name}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    }
  } finally {
    for (const p of made) removeQuietly(p);
  }
  const lines = CASES.map((c) => rounds.get(c.name)!)
    .map((rs, i) => (rs.length > 0 ? lineOf(CASES[i]!, rs) : undefined))
    .filter((l): l is EpochLine => l !== undefined);
  for (const l of lines) {
    const { bench, pipeline, predictedFirstBatchSeconds, measuredFirstBatchSeconds, predictedEpochSeconds, measuredEpochSeconds } = l;
    const json = {
      bench,
      pipeline,
      predictedFirstBatchSeconds: r2(predictedFirstBatchSeconds),
      measuredFirstBatchSeconds: r2(measuredFirstBatchSeconds),
      predictedFirstBatchSpread: l.predictedFirstBatchSpread.map(r2),
      predictedEpochSeconds: predictedEpochSeconds.map(r2),
      measuredEpochSeconds: measuredEpochSeconds.map(r2),
      measuredFirstBatchSpread: l.measuredFirstBatchSpread.map(r2),
      measuredEpochSpread: l.measuredEpochSpread.map((s) => s.map(r2)),
      changes: l.changes,
      rounds: l.rounds,
      ...(l.secondEpochDiskOverMemory !== undefined ? { secondEpochDiskOverMemory: r2(l.secondEpochDiskOverMemory), secondEpochDiskOverMemorySpread: l.secondEpochDiskOverMemorySpread!.map(r2) } : {}),
    };
    if (args.json) process.stdout.write(`${JSON.stringify(json)}\n`);
  }
  const checks = lines.flatMap(goalsOf);
  const word = (c: { met: boolean; inSpread: boolean }): string => (c.met ? 'met' : c.inSpread ? 'missed inside the spread' : 'MISSED');
  log(`Goals: ${checks.filter((c) => c.met).length} of ${checks.length} met (load average ${load.map((x) => x.toFixed(2)).join(', ')} at the start).`);
  for (const c of checks) log(`  ${word(c)}: ${c.goal}`);
  if (!failed && lines.length > 0 && !args.quick) {
    const table = rowsTable(
      lines.map((l) => ({
        pipeline: l.pipeline,
        plan: l.changes,
        'first batch predicted': `${r2(l.predictedFirstBatchSeconds)} s (${l.predictedFirstBatchSpread.map(r2).join('–')})`,
        'first batch measured': `${r2(l.measuredFirstBatchSeconds)} s (${l.measuredFirstBatchSpread.map(r2).join('–')})`,
        'epochs predicted': l.predictedEpochSeconds.map((x) => `${r2(x)} s`).join(', '),
        'epochs measured': l.measuredEpochSeconds.map((x, k) => `${r2(x)} s (${l.measuredEpochSpread[k]!.map(r2).join('–')})`).join(', '),
        'disk ÷ memory, 2nd epoch': l.secondEpochDiskOverMemory !== undefined ? `${l.secondEpochDiskOverMemory.toFixed(2)}×` : '',
      })),
    );
    writeResults(
      'bench:epoch',
      `${table}\n\nGoals: ${checks.filter((c) => c.met).length} of ${checks.length} met (median of ${args.rounds} alternating rounds, spread in parentheses).\n\n${checks.map((c) => `- ${word(c)}: ${c.goal}`).join('\n')}`,
      [`Load average at the start: ${load.map((x) => x.toFixed(2)).join(', ')}.`],
    );
  }
  process.exitCode = failed ? 1 : 0;
}

if (require.main === module) void main();
