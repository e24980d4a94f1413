/**
 * What the runner's tracing costs: each pipeline of ./pipelines.ts measured by the runner (as
 * `plumber profile` runs it, probes off) and in a plain `for await` in a process of its own, in
 * alternating runs. Every figure Plumber gives (profile, prediction, verification, the peak memory
 * a cache is sized against) is a traced figure; this says how far it is from the pipeline's own.
 * A runner that kept every element of its window alive ran 800 kB batches 13× slower than plain
 * node, in 6× the memory, and no other benchmark showed it: they compare traced runs with traced
 * runs.
 *
 *   npm run bench:runner -- [--json] [--only numbers,arrays] [--seconds S] [--repeat R] [--load 0,1]
 *
 * One line per pipeline and load:
 *   {"bench":"runner","pipeline":…,"load":N,"untraced":rate,"traced":rate,"ratio":traced÷untraced,
 *    "addedMicros":µs the runner adds per root element,"untracedRssMB":…,"tracedRssMB":…}
 * Rates are root elements per second, the best of `--repeat` runs each.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { runProfile } from '../../src/runner/spawn';
import { loadAverageText, parseLoads, underLoad } from '../load';

const PIPELINES = resolve(__dirname, 'pipelines.ts');
const UNTRACED = resolve(__dirname, 'untraced.ts');
const NAMES = ['numbers', 'arrays', 'records', 'replayed'];
/**
 * A line meets the goal when the traced rate is at least GOAL_RATIO of the untraced one, or the
 * runner adds at most GOAL_MICROS per root element. Its tracing is a few counter updates per
 * operator and element; a cost that grows with the element (a copy, memory kept alive) or a system
 * call per element shows as far more (the kept window added 2.3 ms per 800 kB batch, 0.07×). The
 * ratio alone would not do: a pipeline of 0.4 µs an element halves under any tracing at all.
 */
const GOAL_RATIO = 0.8;
const GOAL_MICROS = 2;
const WARMUP_SECONDS = 0.5;

interface Args {
  json: boolean;
  only: string[];
  seconds: number;
  repeat: number;
  loads: number[];
}

function parse(argv: string[]): Args {
  const a: Args = { json: false, only: NAMES, seconds: 2, repeat: 3, loads: [0] };
  for (let i = 0; i < argv.length; i++) {
    const f = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`bench:runner: ${f} needs a value`);
      return v;
    };
    if (f === '--json') a.json = true;
    else if (f === '--only') a.only = value().split(',');
    else if (f === '--seconds') a.seconds = Number(value());
    else if (f === '--repeat') a.repeat = Number(value());
    else if (f === '--load') a.loads = parseLoads(value());
    else throw new Error(`bench:runner: unknown flag ${f}. Flags: --json --only ${NAMES.join(',')} --seconds S --repeat R --load 0,1`);
  }
  const unknown = a.only.filter((n) => !NAMES.includes(n));
  if (unknown.length > 0) throw new Error(`bench:runner: no pipeline named ${unknown.join(', ')}; the pipelines are ${NAMES.join(', ')}.`);
  if (!(a.seconds > 0) || !Number.isInteger(a.repeat) || a.repeat < 1) throw new Error('bench:runner: --seconds takes a positive number and --repeat a whole number ≥ 1.');
  return a;
}

interface Measured {
  rate: number;
  peakRssBytes: number;
}

function untraced(name: string, seconds: number, signal: AbortSignal): Promise<Measured> {
  return new Promise((done, fail) => {
    execFile(process.execPath, ['--import', 'tsx', UNTRACED, name, String(WARMUP_SECONDS), String(seconds)], { signal, timeout: (seconds + 30) * 1000 }, (error, stdout, stderr) => {
      if (error) return fail(new Error(`bench:runner: the untraced run of ${name} failed: ${error.message}\n${stderr}`));
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (!last.startsWith('{')) return fail(new Error(`bench:runner: the untraced run of ${name} printed no rate.\n${stdout}${stderr}`));
      done(JSON.parse(last) as Measured);
    });
  });
}

async function traced(name: string, seconds: number, signal: AbortSignal): Promise<Measured> {
  const p = await runProfile({ file: PIPELINES, exportName: name, seconds, warmupSeconds: WARMUP_SECONDS, probes: false, signal });
  if (p.error) throw new Error(`bench:runner: the traced run of ${name} failed: ${p.error.message}`);
  return { rate: p.run.elements / p.run.seconds, peakRssBytes: p.run.peakRssBytes ?? 0 };
}

const fmt = (x: number): string => (x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toPrecision(3));

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  const log = (s: string): void => void process.stderr.write(`${s}\n`);
  const rows: string[] = [];
  for (const load of args.loads) {
    await underLoad(load, log, async (signal) => {
      for (const name of args.only) {
        const best = { untraced: { rate: 0, peakRssBytes: 0 }, traced: { rate: 0, peakRssBytes: 0 } };
        // Alternating, so a burst of other work on a shared machine slows one run of each side
        // rather than every run of one.
        for (let round = 0; round < args.repeat; round++) {
          const u = await untraced(name, args.seconds, signal);
          const t = await traced(name, args.seconds, signal);
          log(`${name} (load ${load}): untraced ${fmt(u.rate)}/s, traced ${fmt(t.rate)}/s`);
          if (u.rate > best.untraced.rate) best.untraced = u;
          if (t.rate > best.traced.rate) best.traced = t;
        }
        const ratio = best.traced.rate / best.untraced.rate;
        const line = {
          bench: 'runner',
          pipeline: name,
          load,
          untraced: best.untraced.rate,
          traced: best.traced.rate,
          ratio,
          addedMicros: (1 / best.traced.rate - 1 / best.untraced.rate) * 1e6,
          untracedRssMB: Math.round(best.untraced.peakRssBytes / 2 ** 20),
          tracedRssMB: Math.round(best.traced.peakRssBytes / 2 ** 20),
        };
        if (args.json) process.stdout.write(`${JSON.stringify(line)}\n`);
        const met = ratio >= GOAL_RATIO || line.addedMicros <= GOAL_MICROS;
        const added = `${line.addedMicros.toFixed(2)} µs ${met ? 'met' : 'MISSED'}`;
        rows.push(
          `${name.padEnd(8)} ${String(load).padStart(4)} ${fmt(line.untraced).padStart(10)} ${fmt(line.traced).padStart(10)} ${`${ratio.toFixed(2)}×`.padStart(7)} ${added.padStart(16)} ${String(line.untracedRssMB).padStart(9)} ${String(line.tracedRssMB).padStart(9)}`,
        );
      }
    });
  }
  log(`load average at end ${loadAverageText()}`);
  process.stdout.write(
    `\nTraced (the runner) against untraced (a plain for await), root elements/s, best of ${args.repeat}; goal: traced ≥ ${GOAL_RATIO} × untraced, or the runner adds at most ${GOAL_MICROS} µs per element:\n`,
  );
  process.stdout.write(`pipeline load   untraced     traced   ratio  added per element  untr. MB  traced MB\n${rows.join('\n')}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
