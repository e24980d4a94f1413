/**
 * bench:reshape — pipelines whose shape is the problem (bench/reshape/pipelines/*.ts, every module
 * there, each exporting one pipeline): as written, the best plan of knobs alone (Plumber with its
 * reshape levers off) and Plumber's kept plan (reshapes included), each diagnosed as `plumber plan`
 * does, then measured in alternating rounds through the runner (probes off). A kept reorder runs
 * as its reshaped sibling file, as verification ran it, and says whether the reshaped pipeline
 * yielded the same elements as the original on a seeded sample.
 *
 *   npm run bench:reshape -- [--json] [--smoke] [--rounds N (default 3)] [--only filter-after-map,…]
 *
 * Prints per pipeline `{"bench":"reshape","pipeline":…,"asWritten":…,"knobsOnly":…,"plumber":…,
 * "equivalent":true|false,"kept":[…]}` (rates: root elements per second, medians of the rounds,
 * with the spreads). Goals: plumber ≥ 1.5 × knobsOnly, never < 0.97 × asWritten, no reshape that
 * changes the output. Full runs write their section of bench/RESULTS.md.
 */
import { readdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { changeKey, type Plan, type PlanChange } from '../../src/shared/analysis';
import { diagnoseFile } from '../../src/engine/diagnose/file';
import { ReshapedFiles } from '../../src/engine/reshape/sibling';
import { flowUnoffered } from '../../src/engine/reshape/flow-check';
import { runProfile } from '../../src/runner/spawn';
import type { Overrides } from '../../src/shared/profile';
import { alternate, median, ratios, spread } from '../dialects/measure';
import { rowsTable, writeResults } from '../results';

const PIPELINES = join(__dirname, 'pipelines');
export const GOAL_VS_KNOBS = 1.5;
export const GOAL_VS_WRITTEN = 0.97;

interface Args {
  json: boolean;
  smoke: boolean;
  rounds: number;
  only?: string[];
}

export interface ReshapeLine {
  bench: 'reshape';
  pipeline: string;
  asWritten: number;
  knobsOnly: number;
  plumber: number;
  equivalent: boolean;
  /** The kept changes whose output was compared with as written on a seeded sample: reorders and fuses, and `deterministic: false` over a whole pass's rows. */
  checked: string[];
  kept: string[];
  knobsKept: string[];
  plumberVsKnobs: number;
  plumberVsKnobsSpread: [number, number];
  plumberVsWritten: number;
  plumberVsWrittenSpread: [number, number];
  rounds: number;
}

const log = (s: string): void => void process.stderr.write(`${s}\n`);

/** Every pipeline module of bench/reshape/pipelines, by name (the file without `.ts`). */
export function pipelineModules(dir = PIPELINES): Array<{ name: string; file: string }> {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.startsWith('.'))
    .sort()
    .map((f) => ({ name: basename(f, '.ts'), file: resolve(dir, f) }));
}

function parseArgs(argv: string[]): Args {
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const smoke = argv.includes('--smoke');
  const rounds = Number(value('--rounds') ?? (smoke ? 1 : 3));
  if (!(rounds >= 1)) {
    console.error('bench:reshape: --rounds takes a whole number ≥ 1 (3 or more to judge a goal).');
    process.exit(2);
  }
  const only = value('--only')?.split(',').filter(Boolean);
  return { json: argv.includes('--json'), smoke, rounds: Math.floor(rounds), ...(only ? { only } : {}) };
}

/** A configuration to measure: a file (the pipeline's, or its reshaped sibling) and overrides. */
interface Measurable {
  plan: Plan;
  overrides: Overrides;
  reorder?: Extract<PlanChange, { kind: 'reorder' }>;
}

async function diagnosed(file: string, args: Args, reshape: boolean): Promise<Measurable> {
  const d = await diagnoseFile({
    file,
    runs: args.smoke ? { seconds: 0.5, warmupSeconds: 0.3, timeoutSeconds: 90 } : { seconds: 2, timeoutSeconds: 120 },
    options: { reshape },
    ...(args.smoke ? { passes: 1, verifyBudgetSeconds: 0 } : {}),
  });
  if (d.error) throw new Error(`Plumber could not profile it: ${d.error.message}`);
  const reorder = d.plan.changes.find((c): c is Extract<PlanChange, { kind: 'reorder' }> => c.kind === 'reorder');
  return { plan: d.plan, overrides: d.plan.overrides, ...(reorder ? { reorder } : {}) };
}

async function rateOf(file: string, m: Measurable | undefined, reshapes: ReshapedFiles, seconds: number): Promise<number> {
  const once = async (f: string, overrides: Overrides): Promise<number> => {
    const p = await runProfile({ file: f, overrides, seconds, warmupSeconds: seconds / 2, probes: false, timeoutSeconds: seconds * 3 + 90 });
    if (p.error) throw new Error(p.error.message);
    return p.run.seconds > 0 ? p.run.elements / p.run.seconds : Number.NaN;
  };
  if (!m) return once(file, {});
  if (!m.reorder) return once(file, m.overrides);
  const out = await reshapes.run(m.reorder, m.overrides, (sibling, overrides) => once(sibling, overrides));
  if (typeof out !== 'number') throw new Error(`the reshaped pipeline could not be written: ${out.reason}`);
  return out;
}

async function benchOne(p: { name: string; file: string }, args: Args): Promise<ReshapeLine> {
  log(`${p.name}: diagnosing with knobs only…`);
  const knobs = await diagnosed(p.file, args, false);
  log(`${p.name}: knobs only kept ${knobs.plan.changes.map(changeKey).join(', ') || 'nothing'}; diagnosing with reshapes…`);
  const plumber = await diagnosed(p.file, args, true);
  log(`${p.name}: Plumber kept ${plumber.plan.changes.map(changeKey).join(', ') || 'nothing'}`);
  const reshapes = new ReshapedFiles(p.file);
  const checked: string[] = [];
  let equivalent = true;
  if (plumber.reorder) {
    equivalent = (await reshapes.equivalence(plumber.reorder, undefined)).equivalent;
    checked.push(changeKey(plumber.reorder));
  }
  for (const change of plumber.plan.changes.filter((c) => c.kind === 'fuse' || c.kind === 'deterministic')) {
    equivalent = (await flowUnoffered(change, p.file, undefined, {}, plumber.plan.overrides)) === undefined && equivalent;
    checked.push(changeKey(change));
  }
  const seconds = args.smoke ? 0.5 : 3;
  const rates = await alternate(
    [
      { key: 'asWritten' as const, run: () => rateOf(p.file, undefined, reshapes, seconds) },
      { key: 'knobsOnly' as const, run: () => rateOf(p.file, knobs, reshapes, seconds) },
      { key: 'plumber' as const, run: () => rateOf(p.file, plumber, reshapes, seconds) },
    ],
    args.rounds,
    log,
  );
  const vsKnobs = ratios(rates.plumber, rates.knobsOnly);
  const vsWritten = ratios(rates.plumber, rates.asWritten);
  return {
    bench: 'reshape',
    pipeline: p.name,
    asWritten: median(rates.asWritten),
    knobsOnly: median(rates.knobsOnly),
    plumber: median(rates.plumber),
    equivalent,
    checked,
    kept: plumber.plan.changes.map(changeKey),
    knobsKept: knobs.plan.changes.map(changeKey),
    plumberVsKnobs: median(vsKnobs),
    plumberVsKnobsSpread: spread(vsKnobs),
    plumberVsWritten: median(vsWritten),
    plumberVsWrittenSpread: spread(vsWritten),
    rounds: args.rounds,
  };
}

/** The goal checks of one line: met or not, in words. */
export function goalsOf(l: ReshapeLine): Array<{ goal: string; met: boolean }> {
  const range = (s: [number, number]): string => s.map((x) => x.toFixed(2)).join('–');
  return [
    { goal: `${l.pipeline}: plumber ÷ knobs only ≥ ${GOAL_VS_KNOBS}: ${l.plumberVsKnobs.toFixed(2)}× (${range(l.plumberVsKnobsSpread)})`, met: l.plumberVsKnobs >= GOAL_VS_KNOBS },
    { goal: `${l.pipeline}: plumber ÷ as written ≥ ${GOAL_VS_WRITTEN}: ${l.plumberVsWritten.toFixed(2)}× (${range(l.plumberVsWrittenSpread)})`, met: l.plumberVsWritten >= GOAL_VS_WRITTEN },
    {
      goal: `${l.pipeline}: the kept plan yields the same elements as written on a seeded sample (${l.checked.length > 0 ? `compared: ${l.checked.join(', ')}` : 'nothing it kept could be compared on a sample'})`,
      met: l.equivalent,
    },
  ];
}

const f2 = (x: number): number => Math.round(x * 100) / 100;

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const all = pipelineModules();
  const chosen = args.only ? all.filter((p) => args.only!.includes(p.name)) : all;
  if (args.only && chosen.length !== args.only.length) {
    console.error(`bench:reshape: no pipeline called ${args.only.filter((n) => !all.some((p) => p.name === n)).join(', ')}; the pipelines are ${all.map((p) => p.name).join(', ')}.`);
    process.exit(2);
  }
  const lines: ReshapeLine[] = [];
  let failed = false;
  for (const p of chosen) {
    try {
      const l = await benchOne(p, args);
      lines.push(l);
      if (args.json) {
        const { bench, pipeline, asWritten, knobsOnly, plumber, equivalent, kept } = l;
        process.stdout.write(
          `${JSON.stringify({ bench, pipeline, asWritten: f2(asWritten), knobsOnly: f2(knobsOnly), plumber: f2(plumber), equivalent, checked: l.checked, kept, knobsKept: l.knobsKept, plumberVsKnobs: f2(l.plumberVsKnobs), plumberVsKnobsSpread: l.plumberVsKnobsSpread.map(f2), plumberVsWritten: f2(l.plumberVsWritten), plumberVsWrittenSpread: l.plumberVsWrittenSpread.map(f2), rounds: l.rounds })}\n`,
        );
      }
      log(`${p.name}: as written ${asText(l.asWritten)} · knobs only ${asText(l.knobsOnly)} · plumber ${asText(l.plumber)} · equivalent ${l.equivalent}`);
    } catch (error) {
      failed = true;
      log(`${p.name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const checks = lines.flatMap(goalsOf);
  log(`Goals: ${checks.filter((c) => c.met).length} of ${checks.length} met.`);
  for (const c of checks) log(`  ${c.met ? 'met' : 'MISSED'}: ${c.goal}`);
  if (!failed && lines.length > 0) {
    const table = rowsTable(
      lines.map((l) => ({
        pipeline: l.pipeline,
        'as written': l.asWritten,
        'knobs only': l.knobsOnly,
        plumber: l.plumber,
        'plumber ÷ knobs only': `${l.plumberVsKnobs.toFixed(2)}× (${l.plumberVsKnobsSpread.map((x) => x.toFixed(2)).join('–')})`,
        'plumber ÷ as written': `${l.plumberVsWritten.toFixed(2)}× (${l.plumberVsWrittenSpread.map((x) => x.toFixed(2)).join('–')})`,
        equivalent: l.checked.length === 0 ? 'not compared' : l.equivalent ? 'yes' : 'NO',
        kept: l.kept.join(', ') || 'nothing',
      })),
    );
    writeResults(
      'bench:reshape',
      `${table}\n\nGoals: ${checks.filter((c) => c.met).length} of ${checks.length} met (median of ${args.rounds} alternating rounds, spread in parentheses).\n\n${checks.map((c) => `- ${c.met ? 'met' : 'MISSED'}: ${c.goal}`).join('\n')}`,
    );
  }
  process.exitCode = failed ? 1 : 0;
}

const asText = (r: number): string => (Number.isFinite(r) ? `${r.toFixed(2)}/s` : 'not measured');

if (require.main === module) void main();
