/**
 * The end-to-end benchmark: for each example pipeline, the rate as written, with the
 * count-the-cores heuristic, with Plumber's plan (one profile, the plan applied through runner
 * overrides), and the best of a small grid search (the oracle), plus the model's predicted rate
 * and how long profile + plan took. Rates are root elements per second.
 *
 *   npm run bench:e2e -- [--json] [--smoke] [--only images,text] [--seconds 2.5] [--repeat 2]
 *
 * Writes `artifacts/bench-e2e/results.md`, `results.json` and `chart.svg` (`--smoke`: in
 * `artifacts/bench-e2e/smoke/`). Exits 1 when an example fails to run, so the smoke test catches
 * an example that rots.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { changeTitle, plan } from '../../src/model';
import { runProfile } from '../../src/runner/spawn';
import type { Overrides, Profile } from '../../src/shared/profile';
import { CLIP_COUNT, ensureClips } from '../../examples/audio/prepare';
import { ensureImages, IMAGE_COUNT } from '../../examples/images/prepare';
import { heuristicOverrides, oracleGrid, type ModuleOf } from './configs';
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
}

function parseArgs(argv: string[]): Args {
  const smoke = argv.includes('--smoke');
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const only = value('--only')?.split(',').filter(Boolean) ?? EXAMPLES;
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
    repeat: Math.max(1, Number(value('--repeat') ?? 1)),
  };
}

function rateOf(p: Profile): number {
  return p.run.seconds > 0 ? p.run.elements / p.run.seconds : 0;
}

class RunFailed extends Error {}

/**
 * One measured run of an example with the given overrides. `userBudgets`: the runner's own
 * defaults (what `plumber plan` uses), for the profile the plan is made from.
 */
async function run(name: string, overrides: Overrides, args: Args, what: string, userBudgets = false): Promise<Profile> {
  const budgets = userBudgets && !args.smoke
    ? {}
    : { seconds: args.seconds || SECONDS[name] || 2.5, maxElements: args.maxElements, warmupSeconds: args.warmupSeconds ?? WARMUP[name] ?? 0.5 };
  const profile = await runProfile({ file: join(ROOT, 'examples', name, 'pipeline.ts'), overrides, timeoutSeconds: 120, ...budgets });
  if (profile.error) throw new RunFailed(`${what} failed: ${profile.error.message}`);
  if (profile.run.elements === 0) throw new RunFailed(`${what} produced no element in its measured window (end: ${profile.run.endReason}).`);
  return profile;
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

async function benchOne(name: string, args: Args, log: (s: string) => void): Promise<{ result: E2eResult; detail: E2eDetail }> {
  // What a user waits for: profiling the pipeline as written with the runner's default budgets
  // (as `plumber plan` does), then planning.
  const t0 = performance.now();
  const profile = await run(name, {}, args, `${name} as written`, true);
  const thePlan = plan(profile);
  const profileSeconds = (performance.now() - t0) / 1000;
  log(`${name}: plan: ${thePlan.changes.map((c) => changeTitle(c, profile)).join('; ') || 'no change'} (predicted ${thePlan.predictedRate.toFixed(2)}/s)`);

  const moduleOf = await modulesOf(name);
  const filledProfile = args.smoke ? undefined : fillGaps(profile, moduleOf, FILE_COUNTS[name]);
  const filledPlan = filledProfile && plan(filledProfile);
  const grid = oracleGrid(profile, args.gridLimit, moduleOf);
  const configs: { key: string; what: string; overrides: Overrides }[] = [
    ...(args.smoke ? [] : [{ key: 'asWritten', what: 'as written', overrides: {} }]),
    { key: 'heuristic', what: 'heuristic', overrides: heuristicOverrides(profile) },
    { key: 'plumber', what: "with Plumber's plan", overrides: thePlan.overrides },
    ...(filledPlan ? [{ key: 'filled', what: 'with the plan of the gap-filled profile', overrides: filledPlan.overrides }] : []),
    ...grid.map((g) => ({ key: `oracle:${g.name}`, what: `oracle [${g.name}]`, overrides: g.overrides })),
  ];
  // Round-robin rather than back to back, so that a burst of other work on a shared machine
  // slows one run of several configurations instead of every run of one; the best run counts.
  const rates = new Map<string, number>(args.smoke ? [['asWritten', rateOf(profile)]] : []);
  for (let round = 0; round < args.repeat; round++) {
    for (const c of configs) {
      const rate = rateOf(await run(name, c.overrides, args, `${name} ${c.what}`));
      rates.set(c.key, Math.max(rates.get(c.key) ?? 0, rate));
      log(`${name}: ${c.what} ${rate.toFixed(2)}/s`);
    }
  }
  const rate = (key: string): number => rates.get(key) ?? 0;
  const oracleRates: Record<string, number> = Object.fromEntries(grid.map((g) => [g.name, rate(`oracle:${g.name}`)]));
  const best = Object.entries(oracleRates).sort((a, b) => b[1] - a[1])[0] ?? ['as written', rate('asWritten')];
  const gapsFilled: E2eDetail['gapsFilled'] =
    filledProfile && filledPlan
      ? { plumber: rate('filled'), predicted: filledPlan.predictedRate, planChanges: filledPlan.changes.map((c) => changeTitle(c, filledProfile)) }
      : undefined;
  return {
    result: {
      bench: 'e2e',
      pipeline: name,
      asWritten: rate('asWritten'),
      heuristic: rate('heuristic'),
      plumber: rate('plumber'),
      oracle: best[1],
      predicted: thePlan.predictedRate,
      profileSeconds,
    },
    detail: { oracleConfig: best[0], planChanges: thePlan.changes.map((c) => changeTitle(c, profile)), grid: oracleRates, gapsFilled },
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
  for (const name of args.only) {
    try {
      const { result, detail } = await benchOne(name, args, log);
      results.push(result);
      details.set(name, detail);
      if (args.json) console.log(jsonLine(result));
    } catch (e) {
      const message = e instanceof RunFailed ? e.message : `${name}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`;
      failures.push(message);
      console.error(`bench:e2e: ${message}`);
    }
  }

  if (!args.json) console.log(`\n${textTable(results)}`);
  // Smoke results go to their own folder so that the test suite never overwrites a real run's.
  const out = join(ROOT, 'artifacts', 'bench-e2e', ...(args.smoke ? ['smoke'] : []));
  mkdirSync(out, { recursive: true });
  const header = [
    `# End-to-end benchmark${args.smoke ? ' (smoke budgets)' : ''}`,
    '',
    `${new Date().toISOString()} · ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}) · load average ${loadavg()[0].toFixed(2)} · Node ${process.version} · ${args.maxElements ? `${args.maxElements} elements` : args.seconds ? `${args.seconds} s` : '2.5 s (images: 6 s)'} per run after ${args.warmupSeconds ?? 'a 0.5 s (audio: 3 s)'} warm-up · best of ${args.repeat} run(s) per configuration`,
  ].join('\n');
  writeFileSync(join(out, 'results.md'), markdownTable(results, details, header));
  writeFileSync(join(out, 'results.json'), JSON.stringify({ results, details: Object.fromEntries(details), failures }, null, 2));
  if (results.length) writeFileSync(join(out, 'chart.svg'), svgChart(results));
  log(`\nwrote ${out}/results.md, results.json and chart.svg`);
  if (failures.length) process.exitCode = 1;
}

main().catch((e: unknown) => {
  console.error(`bench:e2e crashed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exitCode = 1;
});
