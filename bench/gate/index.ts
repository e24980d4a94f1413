/**
 * The regression gate's benchmark (issue 53): how often `plumber check --baseline` fails on a
 * pipeline a change made 25% slower, and how often it raises a false alarm on one left unchanged,
 * at each load (`--load N`: N background CPU-burning threads).
 *
 *   npm run bench:gate -- [--json] [--load 0,1] [--runs 20] [--seconds 2] [--max-slowdown 0.1] [--quick]
 *
 * Each run is what CI does after a change: a baseline run of the pipeline as committed, then the
 * file is changed (a JIT-stable CPU fn doing 1.25× the work, or nothing) and run again, and the
 * engine's comparison (the one the CLI calls) judges the second against the first. Every run gets
 * a fresh baseline, so the runs are independent; the two changes alternate, so a drift of the
 * machine's load reaches both alike.
 *
 * `failed` counts the statistics' verdict alone (the busy-machine rule set aside, as with
 * `--max-load` set high): the benchmark sets the load itself, and the machines it runs on are
 * shared. `busy` counts the runs the default rule (other work's load ≥ the cores) would have
 * called incomparable instead; `incomparable` those the comparison itself would not judge (an
 * interval wider than the slowdown allowed, a run left fewer cores than the other kept busy).
 * A line per load and change: {"bench":"gate","load":…,"change":"slower25"|"none","runs":…,"failed":…}.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { baselineOf, compareToBaseline, fileHash, type Baseline, type GateResult } from '../../src/engine/gate';
import { runProfile } from '../../src/runner/spawn';
import { parseLoads, underLoad } from '../load';
import { rowsTable, writeResults } from '../results';

const ROOT = path.resolve(__dirname, '../..');
/** Under the repository, so the pipeline resolves plumber-data; artifacts/ is not committed. */
const DIR = path.join(ROOT, 'artifacts/bench-gate');
const FILE = path.join(DIR, 'pipeline.ts');

/** Iterations of the int32 loop per element as committed: about 0.3 ms of a core. */
const BASE_WORK = 300_000;
const CHANGES = { none: 1, slower25: 1.25 } as const;
type Change = keyof typeof CHANGES;

/** The pipeline file as a change leaves it: its fn does `work` iterations per element. */
function pipelineSource(work: number): string {
  return `// Written by bench/gate/index.ts: a CPU-bound map whose fn does ${work} int32 steps per element.
import { range } from 'plumber-data';

export function work(x: number): number {
  let h = x & 0xff;
  for (let i = 0; i < ${work}; i++) h = Math.imul(h ^ i, 0x01000193) | 0;
  return h;
}

export const pipeline = range(Infinity).map(work);
`;
}

interface Args {
  json: boolean;
  loads: number[];
  runs: number;
  seconds: number;
  maxSlowdown: number;
  quick: boolean;
}

function parseArgs(argv: string[]): Args {
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const quick = argv.includes('--quick');
  const runs = Number(value('--runs') ?? (quick ? 3 : 20));
  const seconds = Number(value('--seconds') ?? 2);
  const maxSlowdown = Number(value('--max-slowdown') ?? 0.1);
  if (!(Number.isInteger(runs) && runs > 0) || !(seconds > 0) || !(maxSlowdown > 0 && maxSlowdown < 1)) throw new Error('--runs takes a whole number, --seconds a positive number, --max-slowdown a fraction (0.1).');
  return { json: argv.includes('--json'), loads: parseLoads(value('--load')), runs, seconds, maxSlowdown, quick };
}

/** One run of the pipeline file as it is now, as a baseline keeps it. */
async function measure(args: Args, signal: AbortSignal): Promise<Baseline> {
  // As `plumber check` runs it: no probes (it measures the rate only).
  const profile = await runProfile({ file: FILE, seconds: args.seconds, probes: false, signal });
  if (profile.error) throw new Error(`the benchmark's pipeline failed: ${profile.error.message}`);
  return baselineOf(profile, { file: path.relative(ROOT, FILE), sha256: fileHash(FILE), seconds: profile.run.seconds, warmupSeconds: profile.run.warmupSeconds });
}

interface Tally {
  load: number;
  change: Change;
  results: GateResult[];
  busy: number;
  loadAverages: number[];
}

function lineOf(t: Tally, runs: number): Record<string, unknown> {
  const ratios = t.results.map((r) => r.ratio);
  const mean = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
  return {
    bench: 'gate',
    load: t.load,
    change: t.change,
    runs,
    failed: t.results.filter((r) => r.outcome === 'fail').length,
    passed: t.results.filter((r) => r.outcome === 'pass').length,
    incomparable: t.results.filter((r) => r.outcome === 'incomparable').length,
    busy: t.busy,
    ratio: Number(mean(ratios).toFixed(3)),
    minRatio: Number(Math.min(...ratios).toFixed(3)),
    maxRatio: Number(Math.max(...ratios).toFixed(3)),
    meanHalfWidth: Number(mean(t.results.map((r) => (r.high - r.low) / 2)).toFixed(3)),
    baseRate: Math.round(mean(t.results.map((r) => r.baseRate))),
    loadAverage: Number(mean(t.loadAverages).toFixed(2)),
  };
}

/**
 * A line against its goal, strictly: the unchanged pipeline must pass (a run the gate would not
 * judge is no pass), the slower one must fail, each in ≥ 19 of 20 runs. What else the runs gave
 * is said beside it.
 */
function goalOf(l: Record<string, unknown>): string {
  const runs = l['runs'] as number;
  const want = l['change'] === 'none' ? 'passed' : 'failed';
  const got = l[want] as number;
  const met = got >= Math.ceil((19 / 20) * runs);
  const rest = (['passed', 'failed', 'incomparable'] as const).filter((k) => k !== want).map((k) => `${String(l[k])} ${k}`);
  return `load ${String(l['load'])}, ${String(l['change'])}: ${want} ${got} of ${runs} (goal ≥ 19 of 20: ${met ? 'met' : 'NOT met'}); ${rest.join(', ')}`;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const args = parseArgs(argv);
  mkdirSync(DIR, { recursive: true });
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const lines: Array<Record<string, unknown>> = [];
  const notes: string[] = [];
  for (const load of args.loads) {
    const tallies = await underLoad(
      load,
      (l) => (log(l), notes.push(l)),
      async (signal) => {
        const ts = (Object.keys(CHANGES) as Change[]).map((change): Tally => ({ load, change, results: [], busy: 0, loadAverages: [] }));
        for (let i = 0; i < args.runs; i++) {
          for (const t of ts) {
            writeFileSync(FILE, pipelineSource(BASE_WORK));
            const base = await measure(args, signal);
            writeFileSync(FILE, pipelineSource(Math.round(BASE_WORK * CHANGES[t.change])));
            const now = await measure(args, signal);
            const r = compareToBaseline(base, now, { maxSlowdown: args.maxSlowdown, maxLoad: Number.POSITIVE_INFINITY });
            const busy = compareToBaseline(base, now, { maxSlowdown: args.maxSlowdown }).reasons.some((why) => why.startsWith('the machine was busy'));
            t.results.push(r);
            if (busy) t.busy++;
            t.loadAverages.push(base.machine.loadAverage ?? Number.NaN, now.machine.loadAverage ?? Number.NaN);
            log(`load ${load} ${t.change} run ${i + 1}/${args.runs}: ${r.outcome} ${r.message}`);
          }
        }
        return ts;
      },
    );
    for (const t of tallies) {
      const line = lineOf(t, args.runs);
      lines.push(line);
      if (args.json) process.stdout.write(`${JSON.stringify(line)}\n`);
    }
  }
  const table = rowsTable(lines);
  if (!args.json) process.stdout.write(`${table}\n`);
  const goals = lines.map(goalOf);
  writeResults(
    'bench:gate',
    `${table}\n\n${goals.map((g) => `- ${g}`).join('\n')}`,
    [
      `Each run: a ${args.seconds} s baseline run of a CPU-bound map (${BASE_WORK.toLocaleString('en-US')} int32 steps per element), the file changed (none, or 1.25× the steps), a ${args.seconds} s run again, judged with --max-slowdown ${args.maxSlowdown * 100}%.`,
      "`failed`/`passed`/`incomparable`: the statistics' verdict with the busy-machine rule set aside (the benchmark sets the load itself on a shared machine); `busy`: runs the default rule (other work's load average ≥ the cores) would have called incomparable.",
      ...notes,
    ],
    argv,
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:gate: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
