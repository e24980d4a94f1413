/**
 * Model validation: `npm run bench:model -- [--json] [--only A,B] [--passes 1|2] [--seconds S] [--repeat R]`.
 *
 * For each synthetic pipeline in test/fixtures/pipelines (known costs, written the way a newcomer
 * writes them): profile it as written (naive), plan, run it with the plan's overrides (measured),
 * and grid-search its knobs through overrides (oracle). Goals: M1 the predicted rate is within
 * 15% of the measured one (median, 30% worst); M2 the plan reaches 90% of the oracle; M3 profile +
 * plan take at most 15 s. Rates are root elements per second.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { planInPasses } from '../../src/cli/passes';
import { runProfile } from '../../src/runner/spawn';
import type { Overrides, Profile } from '../../src/shared/profile';
import { gridFor } from './grid';

const PIPELINES = ['main-thread-bound', 'worker-bound', 'latency-bound', 'disk-bound', 'cacheable', 'mixed'];
const DIR = path.resolve(__dirname, '../../test/fixtures/pipelines');

const argv = process.argv.slice(2);
const json = argv.includes('--json');
const flag = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const only = flag('only')?.split(',');
const passes = Number(flag('passes') ?? 1);
const seconds = Number(flag('seconds') ?? 1.5);
const gridSeconds = Number(flag('grid-seconds') ?? 1);
// Other work shares these cores and only ever slows a run down, so each rate that is compared
// (the plan's, the oracle's finalists) is the best of `repeat` runs.
const repeat = Math.max(1, Number(flag('repeat') ?? 2));

function rate(p: Profile): number {
  return p.run.seconds > 0 ? p.run.elements / p.run.seconds : 0;
}

async function profileOf(name: string, overrides: Overrides, budget: number): Promise<Profile> {
  const p = await runProfile({ file: path.join(DIR, `${name}.ts`), seconds: budget, warmupSeconds: 0.5, overrides, timeoutSeconds: 60 });
  if (p.error) throw new Error(`${name} with ${JSON.stringify(overrides)}: ${p.error.message}`);
  return p;
}

interface Row {
  bench: 'model';
  pipeline: string;
  naive: number;
  predicted: number;
  measured: number;
  oracle: number;
  profileSeconds: number;
  oracleOverrides: Overrides;
  planOverrides: Overrides;
  bottleneck: string;
  gridSize: number;
  /** Measured rate of the last planning run (with the first plan applied when passes > 1). */
  lastPassRate: number;
}

const round = (x: number): number => Number(x.toPrecision(4));

async function benchOne(name: string): Promise<Row> {
  const t0 = performance.now();
  // What `plumber plan --passes N` does: profile, plan, re-profile with the plan applied, plan again.
  const planned = await planInPasses((o) => profileOf(name, o, seconds), passes, {}, {});
  const asWritten = planned.first;
  const thePlan = planned.plan;
  const profileSeconds = (performance.now() - t0) / 1000;
  const once = async (overrides: Overrides, budget: number): Promise<number> => rate(await profileOf(name, overrides, budget));
  const grid = gridFor(asWritten);
  const scored: { overrides: Overrides; rate: number }[] = [];
  for (const overrides of grid) {
    try {
      scored.push({ overrides, rate: await once(overrides, gridSeconds) });
    } catch (e) {
      // One failing grid point (a library error under some knob mix) must not sink the benchmark.
      console.error(`${name}: grid point ${JSON.stringify(overrides)} failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  scored.sort((a, b) => b.rate - a.rate);
  // The plan and the grid's two best points are then measured in turns, `repeat` times each, so
  // a change in the machine's load hits them alike; each keeps its best run.
  const finalists = [{ overrides: thePlan.overrides, best: 0 }, ...scored.slice(0, 2).map((g) => ({ overrides: g.overrides, best: g.rate }))];
  for (let i = 0; i < repeat; i++) {
    for (const f of finalists) f.best = Math.max(f.best, await once(f.overrides, seconds).catch(() => 0));
  }
  const measured = finalists[0].best;
  const oracleBest = finalists.slice(1).reduce((a, b) => (b.best > a.best ? b : a), { overrides: {}, best: 0 });
  const oracle = oracleBest.best;
  const oracleOverrides = oracleBest.overrides;
  return {
    bench: 'model',
    pipeline: name,
    naive: round(rate(asWritten)),
    predicted: round(thePlan.predictedRate),
    measured: round(measured),
    oracle: round(oracle),
    profileSeconds: round(profileSeconds),
    oracleOverrides,
    planOverrides: thePlan.overrides,
    bottleneck: thePlan.predictedBottleneck.reason,
    gridSize: grid.length,
    lastPassRate: round(rate(planned.last)),
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (const name of PIPELINES.filter((p) => !only || only.includes(p))) {
    const row = await benchOne(name);
    rows.push(row);
    if (json) {
      const { bench, pipeline, naive, predicted, measured, oracle, profileSeconds } = row;
      console.log(JSON.stringify({ bench, pipeline, naive, predicted, measured, oracle, profileSeconds }));
      console.error(`${pipeline}: plan ${JSON.stringify(row.planOverrides)}; oracle (grid of ${row.gridSize}) ${JSON.stringify(row.oracleOverrides)}; last planning run ${row.lastPassRate}/s; load ${os.loadavg()[0].toFixed(1)}`);
    } else {
      console.error(`${name}: done`);
    }
  }
  const errors = rows.map((r) => Math.abs(r.predicted - r.measured) / Math.max(r.measured, 1e-9));
  const m1 = { median: round(median(errors)), worst: round(Math.max(...errors)), pass: median(errors) <= 0.15 && Math.max(...errors) <= 0.3 };
  const ratios = rows.map((r) => r.measured / Math.max(r.oracle, 1e-9));
  const m2 = { worst: round(Math.min(...ratios)), pass: ratios.every((x) => x >= 0.9) };
  const m3 = { worstSeconds: round(Math.max(...rows.map((r) => r.profileSeconds))), pass: rows.every((r) => r.profileSeconds <= 15) };
  if (json) {
    console.log(JSON.stringify({ bench: 'model', summary: { passes, repeat, loadAverage: os.loadavg()[0], M1: m1, M2: m2, M3: m3 } }));
    return;
  }
  const header = ['pipeline', 'naive', 'predicted', 'measured', 'oracle', '|pred-meas|', 'plan/oracle', 'profile+plan'];
  const table = rows.map((r, i) => [r.pipeline, r.naive.toFixed(1), r.predicted.toFixed(1), r.measured.toFixed(1), r.oracle.toFixed(1), `${(errors[i] * 100).toFixed(0)}%`, `${(ratios[i] * 100).toFixed(0)}%`, `${r.profileSeconds.toFixed(1)} s`]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(header));
  for (const t of table) console.log(line(t));
  console.log('');
  for (const r of rows) console.log(`${r.pipeline}: plan ${JSON.stringify(r.planOverrides)}; oracle (grid of ${r.gridSize}) ${JSON.stringify(r.oracleOverrides)}`);
  console.log('');
  console.log(`(${passes} planning pass(es), best of ${repeat} runs; load average ${os.loadavg()[0].toFixed(1)} on ${os.availableParallelism()} cores)`);
  console.log(`M1 prediction: median error ${(m1.median * 100).toFixed(0)}%, worst ${(m1.worst * 100).toFixed(0)}% — ${m1.pass ? 'met' : 'NOT met'} (≤ 15% / ≤ 30%)`);
  console.log(`M2 plan quality: worst plan/oracle ${(m2.worst * 100).toFixed(0)}% — ${m2.pass ? 'met' : 'NOT met'} (≥ 90%)`);
  console.log(`M3 cost: worst profile+plan ${m3.worstSeconds.toFixed(1)} s — ${m3.pass ? 'met' : 'NOT met'} (≤ 15 s)`);
}

main().catch((e: unknown) => {
  console.error(`bench:model failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
});
