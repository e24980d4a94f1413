/**
 * Model validation: `npm run bench:model -- [--json] [--only A,B] [--load 0,1] [--passes 1|2] [--seconds S] [--grid-seconds S] [--repeat R]`.
 *
 * For each synthetic pipeline in test/fixtures/pipelines (known costs, written the way a newcomer
 * writes them) and each load (`--load N`: N background CPU-burning threads for the whole run):
 * Plumber's engine profiles, plans and verifies it as `plumber plan` does (bench/advice.ts); a grid search over its knobs (through runner
 * overrides) picks the oracle's two finalists, and one full run of each picks the oracle (so the
 * runs that choose it are not the runs that measure it); then the pipeline as written, the
 * baselines (heuristic, nodeHeuristic, every knob auto), the configuration Plumber kept and the
 * oracle are measured in turns, `repeat` rounds, each keeping its best run. Prints one JSON line per
 * pipeline and load and the goals summary (bench/goals.ts); writes
 * `artifacts/bench-model/results.md`. Rates are root elements per second.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runProfile } from '../../src/runner/spawn';
import type { Overrides, Profile } from '../../src/shared/profile';
import { plumberAdvice } from '../advice';
import { autoOverrides, configKey, heuristicOverrides, nodeHeuristicOverrides } from '../baselines';
import { allChecks, goalsMarkdown, goalsText, type BenchLine } from '../goals';
import { loadAverageText, parseLoads, underLoad } from '../load';
import { writeBenchLines } from '../results';
import { gridFor } from './grid';

const PIPELINES = ['main-thread-bound', 'worker-bound', 'latency-bound', 'disk-bound', 'cacheable', 'mixed', 'sharded', 'awaited-work', 'records'];
const ROOT = path.resolve(__dirname, '../..');
const DIR = path.join(ROOT, 'test/fixtures/pipelines');

const argv = process.argv.slice(2);
const json = argv.includes('--json');
const flag = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const only = flag('only')?.split(',');
// Undefined: the engine's default, as `plumber plan`.
const passes = flag('passes') === undefined ? undefined : Math.max(1, Number(flag('passes')));
const seconds = Number(flag('seconds') ?? 1.5);
const gridSeconds = Number(flag('grid-seconds') ?? 1);
// Other work shares these cores and only ever slows a run down, so each rate that is compared
// is the best of `repeat` runs, taken in turns with the others.
const repeat = Math.max(1, Number(flag('repeat') ?? 2));

const log = (s: string): void => console.error(s);

function rate(p: Profile): number {
  return p.run.seconds > 0 ? p.run.elements / p.run.seconds : 0;
}

function fileOf(name: string): string {
  return path.join(DIR, `${name}.ts`);
}

/** What every run of the benchmark sets besides its window, Plumber's advice included. */
const RUN_SETTINGS = { warmupSeconds: 0.5, timeoutSeconds: 60 } as const;

function runOnce(name: string, overrides: Overrides, budget: number, signal: AbortSignal): Promise<Profile> {
  return runProfile({ file: fileOf(name), seconds: budget, ...RUN_SETTINGS, overrides, signal });
}

/** The measured rate of one run; 0 (and a line on stderr) when the run failed. */
async function rateOf(name: string, what: string, overrides: Overrides, budget: number, signal: AbortSignal): Promise<number> {
  const p = await runOnce(name, overrides, budget, signal);
  if (!p.error) return rate(p);
  // One failing configuration (a library error under some knob mix) must not sink the benchmark.
  log(`${name}: ${what} ${JSON.stringify(overrides)} failed: ${p.error.message}`);
  return 0;
}

type ModelLine = BenchLine & { bench: 'model' };

interface Detail {
  planChanges: string[];
  sourceSeconds: number;
  verification?: string;
  planOverrides: Overrides;
  oracleOverrides: Overrides;
  /** The oracle's rate in the run that chose it (a winner of two: above its measured rate, on average). */
  oracleChosenAt: number;
  gridSize: number;
}

const round = (x: number): number => Number(x.toPrecision(4));

async function benchOne(name: string, load: number, signal: AbortSignal): Promise<{ line: ModelLine; detail: Detail }> {
  // Verification runs are shorter, and a later pass's when the engine asks, as in `plumber plan`:
  // the engine's run policy decides them from the benchmark's window.
  const advice = await plumberAdvice({ file: fileOf(name), runs: { seconds, ...RUN_SETTINGS }, ...(passes !== undefined ? { passes } : {}), signal });
  if (advice.first.error) throw new Error(`${name} as written: ${advice.first.error.message}`);
  if (advice.error) throw new Error(`${name}: Plumber's engine failed: ${advice.error}`);
  const profile = advice.first;

  // The grid is screened with one short run per point; its two best get one full run each, and
  // the faster of those is the oracle, measured in the round-robin like every other
  // configuration. Taking the best of the finalists' round-robin runs instead would give the
  // oracle the best of 2 × repeat noisy runs against Plumber's best of `repeat`: a bias of its
  // own, whichever configuration is really faster.
  const grid = gridFor(profile);
  const scored: { overrides: Overrides; rate: number }[] = [];
  for (const overrides of grid) scored.push({ overrides, rate: await rateOf(name, 'grid point', overrides, gridSeconds, signal) });
  scored.sort((a, b) => b.rate - a.rate);
  const finalists: { overrides: Overrides; rate: number }[] = [];
  for (const g of scored.slice(0, 2)) finalists.push({ overrides: g.overrides, rate: await rateOf(name, 'oracle finalist', g.overrides, seconds, signal) });
  const chosen = finalists.reduce<{ overrides: Overrides; rate: number } | undefined>((a, f) => (a === undefined || f.rate > a.rate ? f : a), undefined);

  const configs: { key: string; overrides: Overrides }[] = [
    { key: 'asWritten', overrides: {} },
    { key: 'heuristic', overrides: heuristicOverrides(profile) },
    { key: 'nodeHeuristic', overrides: nodeHeuristicOverrides(profile) },
    { key: 'auto', overrides: autoOverrides(profile) },
    { key: 'plumber', overrides: advice.overrides },
    ...(chosen ? [{ key: 'oracle', overrides: chosen.overrides }] : []),
  ];
  // A configuration several names share runs once (Plumber keeping no change is as written).
  const unique = new Map<string, { overrides: Overrides; what: string; best: number }>();
  for (const c of configs) {
    const u = unique.get(configKey(c.overrides));
    if (u) u.what += ` = ${c.key}`;
    else unique.set(configKey(c.overrides), { overrides: c.overrides, what: c.key, best: 0 });
  }
  // In turns, so that a change in the machine's load hits every configuration alike.
  for (let i = 0; i < repeat; i++) {
    for (const u of unique.values()) u.best = Math.max(u.best, await rateOf(name, u.what, u.overrides, seconds, signal));
  }
  const best = (c: { overrides: Overrides } | undefined): number => (c ? (unique.get(configKey(c.overrides))?.best ?? 0) : 0);
  const byKey = (key: string): number => best(configs.find((c) => c.key === key));
  const oracle = { overrides: chosen?.overrides ?? {}, best: chosen ? byKey('oracle') : byKey('asWritten') };
  return {
    line: {
      bench: 'model',
      pipeline: name,
      load,
      asWritten: round(byKey('asWritten')),
      heuristic: round(byKey('heuristic')),
      nodeHeuristic: round(byKey('nodeHeuristic')),
      auto: round(byKey('auto')),
      plumber: round(byKey('plumber')),
      oracle: round(oracle.best),
      predicted: round(advice.predicted),
      verified: advice.verified === undefined ? null : round(advice.verified),
      profileSeconds: round(advice.profileSeconds),
    },
    detail: {
      planChanges: advice.changes,
      sourceSeconds: advice.sourceSeconds,
      verification: advice.summary,
      planOverrides: advice.overrides,
      oracleOverrides: oracle.overrides,
      oracleChosenAt: chosen?.rate ?? 0,
      gridSize: grid.length,
    },
  };
}

const COLUMNS = ['pipeline', 'load', 'as written', 'heuristic', 'nodeHeuristic', 'auto', 'plumber', 'oracle', 'predicted', 'verified', 'profile s'];

function cells(l: ModelLine): string[] {
  const f = (x: number | null): string => (x === null ? '–' : x.toFixed(1));
  return [l.pipeline, String(l.load), f(l.asWritten), f(l.heuristic), f(l.nodeHeuristic), f(l.auto), f(l.plumber), f(l.oracle), f(l.predicted), f(l.verified), l.profileSeconds.toFixed(1)];
}

async function main(): Promise<void> {
  const loads = parseLoads(flag('load'));
  const names = PIPELINES.filter((p) => !only || only.includes(p));
  const lines: ModelLine[] = [];
  const details: string[] = [];
  const loadNotes: string[] = [];
  let failed = false;
  for (const load of loads) {
    const before = loadAverageText();
    await underLoad(load, log, async (signal) => {
      for (const name of names) {
        try {
          const { line, detail } = await benchOne(name, load, signal);
          lines.push(line);
          const text = `${name} at load ${load}: kept ${detail.planChanges.join('; ') || 'no change'} ${JSON.stringify(detail.planOverrides)}${detail.verification ? ` (${detail.verification})` : ''}; reading the source ${detail.sourceSeconds.toFixed(1)} s; oracle (grid of ${detail.gridSize}; ${detail.oracleChosenAt.toPrecision(4)}/s in the run that chose it) ${JSON.stringify(detail.oracleOverrides)}`;
          details.push(text);
          if (json) console.log(JSON.stringify(line));
          log(text);
        } catch (e) {
          failed = true;
          log(`bench:model: load ${load}: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
    });
    loadNotes.push(`load ${load}: load average ${before} at start, ${loadAverageText()} at end (1, 5, 15 min)`);
  }

  const widths = COLUMNS.map((h, i) => Math.max(h.length, ...lines.map((l) => cells(l)[i].length)));
  const row = (c: string[]): string => c.map((x, i) => (i === 0 ? x.padEnd(widths[i]) : x.padStart(widths[i]))).join('  ');
  const out = json ? log : (s: string): void => console.log(s);
  if (!json) out([row(COLUMNS), ...lines.map((l) => row(cells(l)))].join('\n'));
  out(`\n(${passes ?? "the engine's default"} planning pass(es), best of ${repeat} runs in turns; ${os.availableParallelism()} cores)\n${loadNotes.join('\n')}\n`);
  out(goalsText(lines));
  if (json) {
    const checks = allChecks(lines);
    console.log(JSON.stringify({ bench: 'model', summary: { passes: passes ?? null, repeat, loads, checks: checks.length, missed: checks.filter((c) => !c.met).length } }));
  }

  const dir = path.join(ROOT, 'artifacts', 'bench-model');
  mkdirSync(dir, { recursive: true });
  const md = [
    '# Model benchmark',
    '',
    `${new Date().toISOString()} · ${os.cpus().length} cores · Node ${process.version} · ${seconds} s per run (grid screening ${gridSeconds} s) · best of ${repeat} runs in turns · ${passes ?? "the engine's default"} planning pass(es)`,
    '',
    ...loadNotes.map((n) => `- ${n}`),
    '',
    `| ${COLUMNS.join(' | ')} |`,
    `|${COLUMNS.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
    ...lines.map((l) => `| ${cells(l).join(' | ')} |`),
    '',
    ...details.map((d) => `- ${d}`),
    '',
    goalsMarkdown(lines),
  ].join('\n');
  writeFileSync(path.join(dir, 'results.md'), md);
  out(`wrote ${dir}/results.md`);
  writeBenchLines('bench:model', lines, loadNotes);
  if (failed) process.exitCode = 1;
}

main().catch((e: unknown) => {
  console.error(`bench:model failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
});
