/**
 * The trainer-in-the-loop benchmark (issue 13).
 *
 * Ground truth: a synthetic training script (test/fixtures/train/synthetic.ts) whose step and
 * pipeline have known costs — awaits, whose real lengths the script reports (timers fire late on a
 * busy machine), or JIT-stable int32 spins on the one main thread, whose ratio is the ratio of their
 * rounds — over several mixes;
 * the runner's measured input-bound fraction against the true one.
 *   {"bench":"train-truth","case":…,"true":F,"measured":F}
 *
 * A tfjs-data training script (./fit-dataset.ts: `tf.data.generator(…).batch(…)` trained with
 * `model.fitDataset`) with known awaits on both sides, the same way; reported as skipped where the
 * runner cannot profile such a script (it needs the runner's tfjs-data tracing, issue 49).
 *   {"bench":"train-truth","case":"tfjs-fitDataset-…","skipped":"…"}
 *
 * End to end: the tfjs example (examples/train-digits) trained as written, with the Node
 * heuristic (every exported sync map in worker threads at the machine's cores, prefetch 2) and with
 * the plan Plumber keeps for the trainer (profiled, planned and verified as `plumber plan` does,
 * with `--verify-budget` seconds for verification), in ≥ 3 alternating rounds; each ratio is the
 * median of the rounds' ratios, with the smallest and largest round's as its spread.
 *   {"bench":"train","example":…,"config":"asWritten|nodeHeuristic|plumber","stepsPerSec":median,"min":N,"max":N,"rounds":N,"inputBound":F,"predictedStepsPerSec":N,"workers":N}
 *   {"bench":"train-ratio","example":…,"ratio":"plumberOverAsWritten|nodeHeuristicOverAsWritten|plumberOverNodeHeuristic","median":N,"min":N,"max":N,"rounds":N}
 *
 *   npm run bench:train -- [--json] [--quick] [--only truth|e2e] [--seconds S] [--repeat R] [--verify-budget S] [--example NAME]
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadavg, tmpdir } from 'node:os';
import { trainerFigures, trainerRate } from '../../src/model/trainer';
import { runProfile } from '../../src/runner/spawn';
import type { Overrides, Profile } from '../../src/shared/profile';
import { plumberAdvice } from '../advice';
import { nodeHeuristicOverrides } from '../baselines';
import { groupedRowsTables, writeResults } from '../results';

const ROOT = resolve(__dirname, '..', '..');
const SYNTHETIC = resolve(ROOT, 'test/fixtures/train/synthetic.ts');
const FIT_DATASET = resolve(__dirname, 'fit-dataset.ts');
const EXAMPLES: Record<string, string> = {
  'train-digits': resolve(ROOT, 'examples/train-digits/train.ts'),
  'train-digits-trainer-bound': resolve(ROOT, 'examples/train-digits/trainer-bound.ts'),
};

interface Args {
  json: boolean;
  quick: boolean;
  only?: 'truth' | 'e2e';
  seconds: number;
  repeat: number;
  /** Wall seconds verification may take for the kept plan (what `plan.budgetSeconds` gives a user). */
  verifyBudget: number;
  /** Only this end-to-end example. */
  example?: string;
}

function parse(argv: string[]): Args {
  const a: Args = { json: false, quick: false, seconds: 0, repeat: 0, verifyBudget: 0 };
  for (let i = 0; i < argv.length; i++) {
    const f = argv[i];
    if (f === '--json') a.json = true;
    else if (f === '--quick') a.quick = true;
    else if (f === '--only') a.only = argv[++i] as Args['only'];
    else if (f === '--seconds') a.seconds = Number(argv[++i]);
    else if (f === '--repeat') a.repeat = Number(argv[++i]);
    else if (f === '--verify-budget') a.verifyBudget = Number(argv[++i]);
    else if (f === '--example') a.example = argv[++i];
    else throw new Error(`bench:train: unknown flag ${f}. Flags: --json --quick --only truth|e2e --seconds S --repeat R --verify-budget S --example NAME`);
  }
  if (a.seconds <= 0) a.seconds = a.quick ? 3 : 5;
  // Three rounds at least: a ratio is judged by its median over rounds, with their spread.
  if (a.repeat <= 0) a.repeat = 3;
  if (a.verifyBudget <= 0) a.verifyBudget = a.quick ? 45 : 90;
  return a;
}

const out: string[] = [];
function emit(line: Record<string, unknown>, args: Args): void {
  const text = JSON.stringify(line);
  out.push(text);
  if (args.json) process.stdout.write(`${text}\n`);
}
function say(text: string, args: Args): void {
  if (!args.json) process.stderr.write(`${text}\n`);
}

/** Runs `file` with the environment set for the run child (it inherits process.env). */
async function withEnv<T>(env: Record<string, number | string>, f: () => Promise<T>): Promise<T> {
  const saved = { ...process.env };
  for (const [k, v] of Object.entries(env)) process.env[k] = String(v);
  try {
    return await f();
  } finally {
    for (const k of Object.keys(env)) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
}

/** One mix of the ground truth: the script's environment and how its true input-bound fraction follows from known costs. */
interface Mix {
  name: string;
  /** The training script (default: the synthetic plumber-data one). */
  file?: string;
  env: Record<string, number>;
  /** The true fraction, from the lengths the script's awaits really took (its report) or its spins' rounds. */
  truth(took: Took | undefined): number;
}

/** What a ground-truth script reports it really took, in ms per step (or per await). */
interface Took {
  pipeMs: number;
  stepMs?: number;
  /** The loop's own step, whole. */
  ownMs?: number;
  /** From one step's start to the next's. */
  cycleMs?: number;
}

/**
 * Awaits of known length on both sides (the pipeline's element latency L, the step's A, a prefetch
 * between): the loop waits L − A per step when L > A, so the true fraction is max(0, L − A) ÷
 * max(L, A). Spins on the main thread on both sides (P rounds in the pipeline, S in the step, the
 * same int32 loop): one thread does both in turn, so the true fraction is about P ÷ (P + S); it is
 * taken from the script's own clock as the share of the loop's cycle that is not its own step
 * (the library's bookkeeping and the input's work are the input's, wherever they ran).
 */
const MIXES: Mix[] = [
  { name: 'input-bound', env: { TRAIN_PIPE_ROUNDS: 0, TRAIN_STEP_ROUNDS: 0, TRAIN_PIPE_AWAIT_MS: 20, TRAIN_STEP_AWAIT_MS: 5 }, truth: awaitTruth },
  { name: 'trainer-bound', env: { TRAIN_PIPE_ROUNDS: 0, TRAIN_STEP_ROUNDS: 0, TRAIN_PIPE_AWAIT_MS: 5, TRAIN_STEP_AWAIT_MS: 20 }, truth: awaitTruth },
  { name: 'balanced', env: { TRAIN_PIPE_ROUNDS: 0, TRAIN_STEP_ROUNDS: 0, TRAIN_PIPE_AWAIT_MS: 15, TRAIN_STEP_AWAIT_MS: 10 }, truth: awaitTruth },
  { name: 'shared-main-thread', env: { TRAIN_PIPE_ROUNDS: 1_500_000, TRAIN_STEP_ROUNDS: 1_500_000 }, truth: ownTruth },
  { name: 'shared-main-thread-input-heavy', env: { TRAIN_PIPE_ROUNDS: 2_400_000, TRAIN_STEP_ROUNDS: 800_000 }, truth: ownTruth },
  // tfjs-data with fitDataset, no prefetch: the loop waits for the whole of the generator's time,
  // so the true fraction is its time per step over the step's whole time, as the script measured.
  { name: 'tfjs-fitDataset-input-bound', file: FIT_DATASET, env: { FIT_PIPE_AWAIT_MS: 4, FIT_STEP_AWAIT_MS: 8, FIT_BATCH: 8 }, truth: serialTruth },
  { name: 'tfjs-fitDataset-trainer-bound', file: FIT_DATASET, env: { FIT_PIPE_AWAIT_MS: 1, FIT_STEP_AWAIT_MS: 30, FIT_BATCH: 8 }, truth: serialTruth },
];

/** One after the other (no prefetch between): the input's share of the loop's whole time per step. */
function serialTruth(took: Took | undefined): number {
  if (!took || !(took.cycleMs !== undefined && took.cycleMs > 0)) return Number.NaN;
  return took.pipeMs / took.cycleMs;
}

/** The share of the loop's time per step that is not the trainer's own step, by the script's clock. */
function ownTruth(took: Took | undefined): number {
  if (!took || took.ownMs === undefined || !(took.cycleMs !== undefined && took.cycleMs > 0)) return Number.NaN;
  return Math.max(0, 1 - took.ownMs / took.cycleMs);
}

function awaitTruth(took: Took | undefined): number {
  if (!took || took.stepMs === undefined) return Number.NaN;
  return Math.max(0, took.pipeMs - took.stepMs) / Math.max(took.pipeMs, took.stepMs);
}

/** The input-bound fraction Plumber shows for the profile (the model's: waits and the input's work inside the steps). */
function inputBound(p: Profile): number {
  return trainerFigures(p)?.inputBound ?? Number.NaN;
}

function stepsPerSec(p: Profile): number {
  const t = p.trainer;
  return t && t.seconds > 0 ? t.steps / t.seconds : 0;
}

async function truth(args: Args): Promise<boolean> {
  let ok = true;
  for (const mix of MIXES) {
    const report = join(tmpdir(), `plumber-bench-train-${process.pid}.json`);
    rmSync(report, { force: true });
    const p = await withEnv({ ...mix.env, TRAIN_REPORT: report }, () => runProfile({ file: mix.file ?? SYNTHETIC, seconds: args.seconds, warmupSeconds: 0.3, probes: false }));
    const took = existsSync(report) ? (JSON.parse(readFileSync(report, 'utf8')) as Took) : undefined;
    rmSync(report, { force: true });
    const expected = mix.truth(took);
    // A script the runner does not profile yet (a tfjs-data fitDataset loop before the runner's
    // tfjs-data tracing): skipped, and said so, not failed.
    if (mix.file && mix.file !== SYNTHETIC && (p.error?.kind === 'no-pipeline' || (!p.error && !p.trainer))) {
      const why = `the runner does not profile this script as a training loop yet (${p.error?.message ?? 'no trainer in its profile'})`;
      emit({ bench: 'train-truth', case: mix.name, skipped: why }, args);
      say(`train-truth ${mix.name}: skipped — ${why}`, args);
      continue;
    }
    if (p.error) {
      say(`train-truth ${mix.name}: ${p.error.message}`, args);
      ok = false;
      continue;
    }
    const measured = inputBound(p);
    emit({ bench: 'train-truth', case: mix.name, true: round(expected), measured: round(measured), steps: p.trainer?.steps, load: loadavg()[0] }, args);
    const within = Math.abs(measured - expected) <= 0.05;
    ok &&= within;
    say(`train-truth ${mix.name}: true ${pct(expected)}, measured ${pct(measured)} over ${p.trainer?.steps} steps ${within ? '(within 5 points)' : '(OFF by more than 5 points)'}`, args);
  }
  return ok;
}

/** Worker threads a configuration runs: the profile's worker ops with the overrides applied, plus the maps the overrides move. */
function workersOf(p: Profile, overrides: Overrides): number {
  let n = 0;
  for (const op of p.ops) {
    const o = overrides[op.id];
    const placement = o?.placement ?? op.placement;
    if (placement !== 'worker') continue;
    n += typeof o?.parallelism === 'number' ? o.parallelism : (op.knobs.resolvedParallelism ?? 1);
  }
  return n;
}

/** The median of `xs` (undefined for none). */
function median(xs: number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1]! + s[m]!) / 2;
}

/** A ratio over rounds: its median and the smallest and largest round's. */
function spreadOf(xs: number[]): { median: number; min: number; max: number } | undefined {
  const m = median(xs);
  return m === undefined ? undefined : { median: m, min: Math.min(...xs), max: Math.max(...xs) };
}

const CONFIGS = ['asWritten', 'nodeHeuristic', 'plumber'] as const;
type ConfigName = (typeof CONFIGS)[number];

/**
 * Each example: Plumber's kept plan as `plumber plan` gets it (profile, plan in passes, verify
 * and keep the best measured: ../advice.ts), then rounds that run as written, the Node heuristic
 * and the kept plan once each, starting each round with the next of them (a load that drifts
 * over a round weighs on each in turn). A ratio is taken within a round and judged by its median
 * over the rounds, with the smallest and largest round's as its spread.
 */
async function e2e(args: Args): Promise<boolean> {
  let ok = true;
  for (const [example, file] of Object.entries(EXAMPLES)) {
    if (args.example !== undefined && args.example !== example) continue;
    const run = (overrides: Overrides): Promise<Profile> => runProfile({ file, seconds: args.seconds, warmupSeconds: 1, overrides, probes: false, timeoutSeconds: 120 });
    const advice = await plumberAdvice({ file, runs: { seconds: args.seconds, warmupSeconds: 1, timeoutSeconds: 120 }, verifyBudgetSeconds: args.verifyBudget });
    const first = advice.first;
    if (advice.error || !first.trainer) {
      say(`train ${example}: ${advice.error ?? 'not profiled as a training run'}`, args);
      ok = false;
      continue;
    }
    const configs: Record<ConfigName, Overrides> = { asWritten: {}, nodeHeuristic: nodeHeuristicOverrides(first), plumber: advice.overrides };
    say(`train ${example}: ${advice.plan.trainer?.summary ?? '(no verdict)'} [${advice.summary ?? 'not verified'}; ${advice.profileSeconds.toFixed(0)} s; kept: ${advice.changes.join('; ') || 'nothing'}]`, args);
    const rates: Record<ConfigName, number[]> = { asWritten: [], nodeHeuristic: [], plumber: [] };
    const waits: Record<ConfigName, number[]> = { asWritten: [], nodeHeuristic: [], plumber: [] };
    const ratios: Record<string, number[]> = { plumberOverAsWritten: [], nodeHeuristicOverAsWritten: [], plumberOverNodeHeuristic: [] };
    for (let r = 0; r < args.repeat; r++) {
      const round: Partial<Record<ConfigName, number>> = {};
      for (let i = 0; i < CONFIGS.length; i++) {
        const name = CONFIGS[(r + i) % CONFIGS.length]!;
        const p = await run(configs[name]);
        if (p.error || !p.trainer) {
          say(`train ${example} ${name}: ${p.error?.message ?? 'not profiled as a training run'}`, args);
          continue;
        }
        round[name] = stepsPerSec(p);
        rates[name].push(round[name]);
        waits[name].push(inputBound(p));
      }
      const { asWritten, nodeHeuristic, plumber } = round;
      if (asWritten && plumber) ratios.plumberOverAsWritten!.push(plumber / asWritten);
      if (asWritten && nodeHeuristic) ratios.nodeHeuristicOverAsWritten!.push(nodeHeuristic / asWritten);
      if (nodeHeuristic && plumber) ratios.plumberOverNodeHeuristic!.push(plumber / nodeHeuristic);
    }
    for (const name of CONFIGS) {
      const s = spreadOf(rates[name]);
      if (!s) continue;
      emit(
        {
          bench: 'train',
          example,
          config: name,
          stepsPerSec: round(s.median, 3),
          min: round(s.min, 3),
          max: round(s.max, 3),
          rounds: rates[name].length,
          inputBound: round(median(waits[name]) ?? Number.NaN),
          predictedStepsPerSec: round(trainerRate(first, configs[name]).rate, 3),
          workers: workersOf(first, configs[name]),
          load: loadavg()[0],
        },
        args,
      );
    }
    const line = (k: string): string => {
      const s = spreadOf(ratios[k]!);
      return s ? `${s.median.toFixed(2)}× [${s.min.toFixed(2)}–${s.max.toFixed(2)}]` : 'n/a';
    };
    for (const [k, xs] of Object.entries(ratios)) {
      const s = spreadOf(xs);
      if (s) emit({ bench: 'train-ratio', example, ratio: k, median: round(s.median), min: round(s.min), max: round(s.max), rounds: xs.length }, args);
    }
    const m = (name: ConfigName): string => (median(rates[name]) ?? Number.NaN).toFixed(2);
    say(`train ${example}: median steps/s as written ${m('asWritten')}, nodeHeuristic ${m('nodeHeuristic')}, plumber ${m('plumber')}`, args);
    say(
      `train ${example}: plumber/as written ${line('plumberOverAsWritten')}, nodeHeuristic/as written ${line('nodeHeuristicOverAsWritten')}, plumber/nodeHeuristic ${line('plumberOverNodeHeuristic')} (median [min–max] of ${args.repeat} rounds)`,
      args,
    );
  }
  return ok;
}

const round = (x: number, digits = 3): number => Number(x.toFixed(digits));
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  say(
    `bench:train ${args.quick ? '(quick) ' : ''}load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
    args,
  );
  let ok = true;
  if (args.only !== 'e2e') ok = (await truth(args)) && ok;
  if (args.only !== 'truth') ok = (await e2e(args)) && ok;
  say(
    `load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
    args,
  );
  writeResults('bench:train', groupedRowsTables(out.map((l) => JSON.parse(l) as Record<string, unknown>)));
  process.exitCode = ok ? 0 : 1;
}

void main();
