/**
 * The end-to-end benchmark: for each example pipeline and each load, the rate as written, with
 * the baselines (count-the-cores heuristic, a careful Node engineer's nodeHeuristic, every knob
 * 'auto'), with the configuration Plumber's engine keeps, and the best of a small grid search (the
 * oracle: the fastest grid point in one run each, so that the runs that choose it are not the runs
 * that measure it), all measured in one round-robin; plus the plan's predicted rate, the rate its
 * verification measured, and how long profile + plan + verification took. Rates are root elements
 * per second.
 *
 *   npm run bench:e2e -- [--json] [--smoke] [--only images,text] [--load 0,1] [--seconds 2.5] [--repeat 2 (default)] [--passes 1]
 *
 * `--load N` runs N background CPU-burning threads for the whole run (several loads, comma
 * separated, run one after the other). Writes `artifacts/bench-e2e/results.md` (with the goals
 * summary), `results.json` and `chart.svg` (`--smoke`: in `artifacts/bench-e2e/smoke/`). Exits 1
 * when an example fails to run, so the smoke test catches an example that rots.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { changeTitle, plan } from '../../src/model';
import { runProfile } from '../../src/runner/spawn';
import { DEFAULTS } from '../../src/runner/request';
import type { Overrides, Profile } from '../../src/shared/profile';
import { CLIP_COUNT, ensureClips } from '../../examples/audio/prepare';
import { ensureImages, IMAGE_COUNT } from '../../examples/images/prepare';
import type { RunSettings } from '../../src/engine/diagnose';
import { plumberAdvice } from '../advice';
import { autoOverrides, configKey, heuristicOverrides, nodeHeuristicOverrides, type ModuleOf } from '../baselines';
import { goalsMarkdown, goalsText } from '../goals';
import { loadAverageText, parseLoads, underLoad } from '../load';
import { writeBenchLines } from '../results';
import { oracleGrid } from './configs';
import { jsonLine, markdownTable, svgChart, textTable, type E2eDetail, type E2eResult } from './report';

const ROOT = resolve(__dirname, '..', '..');
const EXAMPLES = ['images', 'digits', 'text', 'remote', 'audio'];
/**
 * Warm-up per example in full runs. The benchmark compares steady states: the audio example's
 * warm-up covers the first epoch (1.4 s as written on an idle machine), which a cache has to compute once before it
 * can serve the others.
 */
const WARMUP: Record<string, number> = { audio: 3 };
/** Measurement per run in full runs, when 2.5 s is too few root elements: images yields a batch every ~0.5 s as written. */
const SECONDS: Record<string, number> = { images: 6 };
/** How many files each example's `files()` source lists (plumber-data does not report it; see fillGaps). */
const FILE_COUNTS: Record<string, number> = { images: IMAGE_COUNT, audio: CLIP_COUNT, text: 6046 };

interface Args {
  json: boolean;
  smoke: boolean;
  only: string[];
  /** Measurement per run; 0: per example (SECONDS, else 2.5 s). */
  seconds: number;
  /** Stop a run after this many root elements (smoke runs: a couple, whatever the time). */
  maxElements?: number;
  /** Warm-up of each run; undefined: per example (WARMUP, else 0.5 s). */
  warmupSeconds?: number;
  gridLimit: number;
  /** Runs of each configuration; the best counts (other work on a shared machine only slows a run down). */
  repeat: number;
  /** Background CPU-burning threads, one run of every example per entry. */
  loads: number[];
  /** Planning passes of Plumber's advice (undefined: the engine's default, as `plumber plan`). */
  passes?: number;
}

function parseArgs(argv: string[]): Args {
  const smoke = argv.includes('--smoke');
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const only = value('--only')?.split(',').filter(Boolean) ?? EXAMPLES;
  let loads: number[];
  try {
    loads = parseLoads(value('--load'));
  } catch (e) {
    console.error(`bench:e2e: ${(e as Error).message}`);
    process.exit(2);
  }
  const unknown = only.filter((n) => !EXAMPLES.includes(n));
  if (unknown.length) {
    console.error(`bench:e2e: no example called ${unknown.join(', ')}; the examples are ${EXAMPLES.join(', ')}.`);
    process.exit(2);
  }
  return {
    json: argv.includes('--json'),
    smoke,
    only,
    // Smoke runs check that every configuration produces elements, not how fast: one root
    // element after the first, however long the slowest example (remote, ~1 s a batch) takes.
    seconds: Number(value('--seconds') ?? (smoke ? 10 : 0)),
    maxElements: smoke ? 1 : undefined,
    warmupSeconds: smoke ? 0.05 : undefined,
    gridLimit: smoke ? 1 : 6,
    // Two rounds by default (smoke runs: one), as bench:model: one run each of the audio
    // example's cached configuration measured 2,426 to 3,737 batches/s on an idle machine, so a
    // single round decides a 0.9 ratio by which run drew the slow draw.
    repeat: Math.max(1, Number(value('--repeat') ?? (smoke ? 1 : 2))),
    loads,
    // Smoke runs plan once; full runs take as many passes as `plumber plan` unless told.
    passes: value('--passes') !== undefined ? Math.max(1, Number(value('--passes'))) : smoke ? 1 : undefined,
  };
}

function rateOf(p: Profile): number {
  return p.run.seconds > 0 ? p.run.elements / p.run.seconds : 0;
}

class RunFailed extends Error {}

/** What the benchmark's own runs of an example measure (the smoke budgets, or the example's). */
function runSettingsOf(name: string, args: Args): RunSettings {
  return {
    seconds: args.seconds || SECONDS[name] || 2.5,
    maxElements: args.maxElements,
    warmupSeconds: args.warmupSeconds ?? WARMUP[name] ?? 0.5,
    // A configuration that starts many workers on a busy machine can take longer than the
    // runner's 10 s to its first element; it is slow, not stuck, and is measured as such.
    startSeconds: 60,
    timeoutSeconds: 120,
  };
}

/**
 * What the runs of Plumber's advice measure: the budgets `plumber plan` uses (the runner's
 * defaults, and the engine's run policy by purpose), except in smoke runs, where every run takes
 * the benchmark's own smoke budgets.
 */
function adviceRunSettings(name: string, args: Args): RunSettings {
  return args.smoke ? { ...runSettingsOf(name, args), sameEveryRun: true } : { seconds: DEFAULTS.seconds, timeoutSeconds: 120 };
}

/** One run of an example with the given overrides, as it came. */
function runOnce(name: string, overrides: Overrides, args: Args, signal: AbortSignal): Promise<Profile> {
  const { seconds, maxElements, warmupSeconds, startSeconds, timeoutSeconds } = runSettingsOf(name, args);
  return runProfile({ file: pipelineFile(name), overrides, timeoutSeconds, signal, seconds, maxElements, warmupSeconds, startSeconds });
}

function pipelineFile(name: string): string {
  return join(ROOT, 'examples', name, 'pipeline.ts');
}

/** Why a run does not count: it failed, or it produced nothing in its measured window. */
function problemOf(profile: Profile, what: string): string | undefined {
  if (profile.error) return `${what} failed: ${profile.error.message}`;
  if (profile.run.elements === 0) return `${what} produced no element in its measured window (end: ${profile.run.endReason}).`;
  return undefined;
}

/**
 * Where the example's functions are exported: the profile's `fnModule` when the runner found it,
 * else the example's `transforms.ts` when it exports a function of that name. The oracle searches
 * over every placement a person could write, whatever the runner managed to discover.
 */
async function modulesOf(name: string): Promise<ModuleOf> {
  const file = join(ROOT, 'examples', name, 'transforms.ts');
  const mod = (await import(file)) as Record<string, unknown>;
  return (op) => op.fnModule ?? (op.fnName && typeof mod[op.fnName] === 'function' ? { file, exportName: op.fnName } : undefined);
}

/**
 * The profile with what the runner and the library did not record but could have: where each
 * function is exported (the runner looks only at the pipeline file's own exports) and how many
 * elements a `files()` source lists (the library globs lazily and reports no cardinality).
 * Planning on it shows what the model does once those gaps are closed. Undefined when nothing
 * was missing.
 */
function fillGaps(profile: Profile, moduleOf: ModuleOf, fileCount: number | undefined): Profile | undefined {
  let filled = false;
  const ops = profile.ops.map((op) => {
    const out = { ...op };
    const where = op.fnModule ? undefined : moduleOf(op);
    if (where && (op.kind === 'map' || op.kind === 'filter' || op.kind === 'flatMap')) {
      out.fnModule = where;
      filled = true;
    }
    if (op.kind === 'files' && op.cardinality === undefined && fileCount !== undefined) {
      out.cardinality = fileCount;
      filled = true;
    }
    return out;
  });
  return filled ? { ...profile, ops } : undefined;
}

async function benchOne(name: string, load: number, args: Args, signal: AbortSignal, log: (s: string) => void): Promise<{ result: E2eResult; detail: E2eDetail }> {
  // What a user waits for: Plumber's engine profiling the pipeline as written with the runner's
  // default budgets (as `plumber plan` does), planning and verifying.
  // Smoke runs verify with the first A/B pair only (its second run is the plan's configuration):
  // they check that every step runs, not its figures.
  const advice = await plumberAdvice({
    file: pipelineFile(name),
    runs: adviceRunSettings(name, args),
    passes: args.passes,
    verifyBudgetSeconds: args.smoke ? 0 : undefined,
    signal,
  });
  const profile = advice.first;
  const failed = problemOf(profile, `${name} as written`) ?? (advice.error && `${name}: Plumber's engine failed: ${advice.error}`);
  if (failed) throw new RunFailed(failed);
  log(
    `${name} (load ${load}): kept: ${advice.changes.join('; ') || 'no change'} (predicted ${advice.predicted.toFixed(2)}/s${advice.verified !== undefined ? `, verified ${advice.verified.toFixed(2)}/s` : ''}; ${advice.profileSeconds.toFixed(1)} s, of which reading the source ${advice.sourceSeconds.toFixed(1)} s)${advice.summary ? `: ${advice.summary}` : ''}`,
  );

  const moduleOf = await modulesOf(name);
  const filledProfile = args.smoke ? undefined : fillGaps(profile, moduleOf, FILE_COUNTS[name]);
  const filledPlan = filledProfile && plan(filledProfile);
  const grid = oracleGrid(profile, args.gridLimit, moduleOf);
  const configs: { key: string; what: string; overrides: Overrides }[] = [
    { key: 'asWritten', what: 'as written', overrides: {} },
    { key: 'heuristic', what: 'heuristic', overrides: heuristicOverrides(profile) },
    { key: 'nodeHeuristic', what: 'nodeHeuristic', overrides: nodeHeuristicOverrides(profile, moduleOf) },
    { key: 'auto', what: 'every knob auto', overrides: autoOverrides(profile) },
    { key: 'plumber', what: 'as Plumber keeps it', overrides: advice.overrides },
    ...(filledPlan ? [{ key: 'filled', what: 'with the plan of the gap-filled profile', overrides: filledPlan.overrides }] : []),
  ];
  // The configurations every figure rests on must run; a baseline or a grid point that fails
  // (say, a function that cannot move to a worker) counts as rate 0 and is named in the details.
  const mustRun = new Set(['asWritten', 'plumber']);
  const failures: Record<string, string> = {};
  const measureOnce = async (what: string, overrides: Overrides, must: boolean): Promise<number> => {
    const p = await runOnce(name, overrides, args, signal);
    const problem = problemOf(p, `${name} ${what}`);
    if (problem && must) throw new RunFailed(problem);
    if (problem) {
      failures[what] = problem;
      log(`bench:e2e: ${problem}`);
    }
    const rate = problem ? 0 : rateOf(p);
    log(`${name} (load ${load}): ${what} ${rate.toFixed(2)}/s`);
    return rate;
  };
  // The oracle is chosen on runs of its own and then measured like every other configuration.
  // Taking the best of the grid's round-robin rates instead would give it the best of (grid
  // points × repeat) noisy runs against Plumber's best of `repeat`: on a machine whose runs of one
  // configuration spread ±20 %, a bias of its own, whichever configuration is really faster.
  const screened: Record<string, number> = {};
  for (const g of grid) screened[g.name] = args.smoke ? 0 : await measureOnce(`oracle candidate [${g.name}]`, g.overrides, false);
  const chosen = grid.reduce<(typeof grid)[number] | undefined>((a, g) => (a === undefined || screened[g.name]! > screened[a.name]! ? g : a), undefined);
  if (chosen) configs.push({ key: 'oracle', what: `oracle [${chosen.name}]`, overrides: chosen.overrides });
  // A configuration several names share runs once (Plumber keeping no change is as written).
  const groups = new Map<string, { overrides: Overrides; keys: string[]; what: string[] }>();
  for (const c of configs) {
    const k = configKey(c.overrides);
    const g = groups.get(k) ?? { overrides: c.overrides, keys: [], what: [] };
    g.keys.push(c.key);
    g.what.push(c.what);
    groups.set(k, g);
  }
  // Smoke runs take the as-written rate from the advice's own profile.
  const measured = new Map<string, number>(args.smoke ? [[configKey({}), rateOf(profile)]] : []);
  const toRun = [...groups].filter(([k]) => !measured.has(k));
  // Round-robin rather than back to back, so that a burst of other work on a shared machine
  // slows one run of several configurations instead of every run of one; the best run counts.
  for (let round = 0; round < args.repeat; round++) {
    for (const [k, g] of toRun) {
      const rate = await measureOnce(
        g.what.join(' = '),
        g.overrides,
        g.keys.some((key) => mustRun.has(key)),
      );
      measured.set(k, Math.max(measured.get(k) ?? 0, rate));
    }
  }
  const rates = new Map(configs.map((c) => [c.key, measured.get(configKey(c.overrides)) ?? 0]));
  const rate = (key: string): number => rates.get(key) ?? 0;
  const best: [string, number] = chosen ? [chosen.name, rate('oracle')] : ['as written', rate('asWritten')];
  const gapsFilled: E2eDetail['gapsFilled'] =
    filledProfile && filledPlan ? { plumber: rate('filled'), predicted: filledPlan.predictedRate, planChanges: filledPlan.changes.map((c) => changeTitle(c, filledProfile)) } : undefined;
  return {
    result: {
      bench: 'e2e',
      pipeline: name,
      load,
      asWritten: rate('asWritten'),
      heuristic: rate('heuristic'),
      nodeHeuristic: rate('nodeHeuristic'),
      auto: rate('auto'),
      plumber: rate('plumber'),
      oracle: best[1],
      predicted: advice.predicted,
      verified: advice.verified ?? null,
      profileSeconds: advice.profileSeconds,
    },
    detail: { oracleConfig: best[0], planChanges: advice.changes, verification: advice.summary, grid: screened, gapsFilled, failures },
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const log = (s: string): void => {
    if (!args.json) console.log(s);
    else console.error(s);
  };
  // Generate the example data up front so that first-run generation is not timed as profiling.
  if (args.only.includes('images')) ensureImages();
  if (args.only.includes('audio')) ensureClips();

  const results: E2eResult[] = [];
  const details = new Map<string, E2eDetail>();
  const failures: string[] = [];
  const loadNotes: string[] = [];
  for (const load of args.loads) {
    const before = loadAverageText();
    await underLoad(load, log, async (signal) => {
      for (const name of args.only) {
        try {
          const { result, detail } = await benchOne(name, load, args, signal, log);
          results.push(result);
          details.set(`${name}@${load}`, detail);
          if (args.json) console.log(jsonLine(result));
        } catch (e) {
          const message = e instanceof RunFailed ? e.message : `${name}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`;
          failures.push(`load ${load}: ${message}`);
          console.error(`bench:e2e: load ${load}: ${message}`);
        }
      }
    });
    loadNotes.push(`load ${load}: load average ${before} at start, ${loadAverageText()} at end`);
  }

  if (!args.json) console.log(`\n${textTable(results)}`);
  // The goals summary ends the output; with --json it goes to stderr so stdout stays JSON lines.
  log(`\n${goalsText(results)}`);
  // Smoke results go to their own folder so that the test suite never overwrites a real run's.
  const out = join(ROOT, 'artifacts', 'bench-e2e', ...(args.smoke ? ['smoke'] : []));
  mkdirSync(out, { recursive: true });
  const header = [
    `# End-to-end benchmark${args.smoke ? ' (smoke budgets)' : ''}`,
    '',
    `${new Date().toISOString()} · ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}) · Node ${process.version} · ${args.maxElements ? `${args.maxElements} elements` : args.seconds ? `${args.seconds} s` : '2.5 s (images: 6 s)'} per run after ${args.warmupSeconds ?? 'a 0.5 s (audio: 3 s)'} warm-up · best of ${args.repeat} run(s) per configuration · ${args.passes ?? "the engine's default"} planning pass(es)`,
    '',
    ...loadNotes.map((n) => `- ${n} (1, 5, 15 min)`),
  ].join('\n');
  writeFileSync(join(out, 'results.md'), `${markdownTable(results, details, header)}\n${goalsMarkdown(results)}`);
  writeFileSync(join(out, 'results.json'), JSON.stringify({ results, details: Object.fromEntries(details), failures }, null, 2));
  if (results.length) writeFileSync(join(out, 'chart.svg'), svgChart(results));
  log(`\nwrote ${out}/results.md, results.json and chart.svg`);
  writeBenchLines(
    'bench:e2e',
    results,
    loadNotes.map((n) => `${n} (1, 5, 15 min)`),
  );
  if (failures.length) process.exitCode = 1;
}

main().catch((e: unknown) => {
  console.error(`bench:e2e crashed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exitCode = 1;
});
