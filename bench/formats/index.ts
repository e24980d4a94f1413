/**
 * bench:formats — each plumber-data reader against the best loop a user would write by hand over
 * the same library (bench/formats/loops.ts), on the same seeded, generated, gzip'd shards: on one
 * thread (one shard at a time, on the main thread), and with the parallelism the model plans for a
 * reader (as many shards at once as the cores, in worker threads when the read is CPU-bound). The
 * configurations alternate round by round; each figure is the median of the rounds, the spread
 * beside it. A read is CPU-bound as the model says it (src/model/readers.ts): its decompression and
 * parsing took longer than its waits for bytes, by the reader's counters in a traced calibration
 * run on one thread.
 *
 *   npm run bench:formats -- [--json] [--quick] [--rounds N (default 3)] [--only csv,jsonLines,tfrecord,arrow,parquet]
 *
 * Prints per reader `{"bench":"formats","reader":…,"mbPerSec":…,"rowsPerSec":…,"handMbPerSec":…,
 * "parallelMbPerSec":…,"cpuBound":…}` (MB of stored, compressed shards per second), with the
 * ratios' medians and spreads and `parallelCpu`: the parallel read's CPU per pass (all threads) ÷
 * one thread's, which a busy machine leaves as it is; `oneThreadCores`, `parallelMainShare` and
 * `parallelCeiling`: the most the parallel read can gain on these cores by the CPU measured (see ceilingOf). Goals: one thread ≥ 0.9 × hand; with the
 * planned parallelism ≥ 1.6 × one thread on 2 cores where CPU-bound.
 * Full runs write their section of bench/RESULTS.md. Exits 1 when a read fails.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { alternate, median, ratios, spread } from '../dialects/measure';
import { rowsTable, writeResults } from '../results';
import { READERS, type ReaderBench } from './loops';

const ROOT = resolve(__dirname, '..', '..');
const RUN = join(__dirname, 'run.ts');
const SEED = 51;
export const GOAL_ONE_THREAD = 0.9;
export const GOAL_PARALLEL = 1.6;

interface Args {
  json: boolean;
  quick: boolean;
  rounds: number;
  only: string[];
}

export interface FormatsLine {
  bench: 'formats';
  reader: string;
  mbPerSec: number;
  rowsPerSec: number;
  handMbPerSec: number;
  parallelMbPerSec: number;
  cpuBound: boolean;
  /** plumber ÷ hand, one thread: median of the rounds and their spread. */
  vsHand: number;
  vsHandSpread: [number, number];
  /** parallel ÷ one thread. */
  parallelSpeedup: number;
  parallelSpeedupSpread: [number, number];
  /**
   * CPU seconds per pass, every thread of the process, parallel ÷ one thread (measured, round by
   * round): what the parallel read costs in CPU beyond one thread's. It holds on a busy machine,
   * where the speedup does not: on C idle cores the speedup is at most C ÷ this.
   */
  parallelCpu: number;
  parallelCpuSpread: [number, number];
  /**
   * Cores one thread's read keeps busy at full speed: its CPU per pass, every thread (zlib's pool,
   * the GC's helpers), ÷ its main thread's, which bounds it (median of the rounds; null where no
   * clock sees one thread). On C cores the parallel read can be at most C ÷ this ÷ parallelCpu as
   * fast, and at most as fast as its own main thread allows: `parallelCeiling`.
   */
  oneThreadCores: number | null;
  /** The main thread's share of the parallel read's CPU per pass (median). */
  parallelMainShare: number | null;
  /** The most the parallel read can gain over one thread on these cores, from the CPU measured: min(C × main₁ ÷ all∥, main₁ ÷ main∥). */
  parallelCeiling: number | null;
  parallelism: number;
  placement: 'main' | 'worker';
  shards: number;
  mb: number;
  rounds: number;
}

function parseArgs(argv: string[]): Args {
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const names = READERS.map((r) => r.name as string);
  const only = value('--only')?.split(',').filter(Boolean) ?? names;
  const unknown = only.filter((n) => !names.includes(n));
  if (unknown.length) {
    console.error(`bench:formats: no reader called ${unknown.join(', ')}; the readers are ${names.join(', ')}.`);
    process.exit(2);
  }
  const rounds = Number(value('--rounds') ?? 3);
  if (!(rounds >= 1)) {
    console.error('bench:formats: --rounds takes a whole number ≥ 1 (3 or more to judge a goal).');
    process.exit(2);
  }
  return { json: argv.includes('--json'), quick: argv.includes('--quick'), rounds: Math.floor(rounds), only };
}

const log = (s: string): void => void process.stderr.write(`${s}\n`);

interface Measured {
  rows: number;
  seconds: number;
  cpuSeconds: number;
  /** The main thread's own CPU over the same passes (absent where no clock sees one thread). */
  mainCpuSeconds?: number;
  counters?: { ioWaitSeconds: number; decompressSeconds: number; parseSeconds: number };
}

/** One read in a process of its own (run.ts). */
function read(reader: string, mode: 'plumber' | 'hand' | 'parallel' | 'calibrate', seconds: number, shards: string[], parallelism: number, placement: string): Promise<Measured> {
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', RUN, reader, mode, String(seconds), String(parallelism), placement, ...shards],
      { cwd: ROOT, timeout: (seconds + 120) * 1000, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        const line = stdout.split('\n').find((l) => l.startsWith('{'));
        if (error || !line) fail(new Error(`${reader} (${mode}) did not run: ${stderr.trim().split('\n').slice(-4).join(' ') || error?.message}`));
        else done(JSON.parse(line) as Measured);
      },
    );
  });
}

async function benchOne(r: ReaderBench, args: Args, dir: string): Promise<FormatsLine> {
  const shardsN = args.quick ? 4 : 8;
  const data = await r.generate(join(dir, r.name), shardsN, args.quick ? 5_000 : 40_000, SEED);
  const mb = data.bytes / 1e6;
  const seconds = args.quick ? 0.3 : 2;
  const cores = availableParallelism();
  log(`${r.name}: ${data.shards.length} gzip'd shards, ${data.rows.toLocaleString('en-US')} rows or records, ${mb.toFixed(1)} MB stored; calibrating…`);
  const calibration = await read(r.name, 'calibrate', seconds, data.shards, 1, 'main');
  const c = calibration.counters ?? { ioWaitSeconds: 0, decompressSeconds: 0, parseSeconds: 0 };
  const cpuBound = c.decompressSeconds + c.parseSeconds > c.ioWaitSeconds;
  const parallelism = Math.min(cores, data.shards.length);
  const placement = cpuBound ? 'worker' : 'main';
  log(
    `${r.name}: ${cpuBound ? 'CPU-bound' : 'not CPU-bound'} (one thread: ${c.ioWaitSeconds.toFixed(2)} s waiting for bytes, ${c.decompressSeconds.toFixed(2)} s decompressing, ${c.parseSeconds.toFixed(2)} s parsing); parallel: ${parallelism} shards at once, placement ${placement}`,
  );
  const passesPerSecond = (m: Measured) => m.rows / data.rows / m.seconds;
  /** CPU seconds per pass of each mode, round by round: every thread's, and the main thread's. */
  const cpu: Record<'plumber' | 'hand' | 'parallel', number[]> = { plumber: [], hand: [], parallel: [] };
  const mainCpu: Record<'plumber' | 'hand' | 'parallel', number[]> = { plumber: [], hand: [], parallel: [] };
  const measure = (mode: 'plumber' | 'hand' | 'parallel') => async (): Promise<number> => {
    const m = await read(r.name, mode, seconds, data.shards, parallelism, placement);
    cpu[mode].push(m.cpuSeconds / (m.rows / data.rows));
    if (m.mainCpuSeconds !== undefined) mainCpu[mode].push(m.mainCpuSeconds / (m.rows / data.rows));
    return passesPerSecond(m) * mb;
  };
  const rates = await alternate(
    [
      { key: 'plumber' as const, run: measure('plumber') },
      { key: 'hand' as const, run: measure('hand') },
      { key: 'parallel' as const, run: measure('parallel') },
    ],
    args.rounds,
    log,
  );
  const vsHand = ratios(rates.plumber, rates.hand);
  const speedup = ratios(rates.parallel, rates.plumber);
  const cpuRatio = ratios(cpu.parallel, cpu.plumber);
  const ceiling = ceilingOf(cores, cpu, mainCpu);
  return {
    bench: 'formats',
    reader: r.name,
    mbPerSec: median(rates.plumber),
    rowsPerSec: (median(rates.plumber) / mb) * data.rows,
    handMbPerSec: median(rates.hand),
    parallelMbPerSec: median(rates.parallel),
    cpuBound,
    vsHand: median(vsHand),
    vsHandSpread: spread(vsHand),
    parallelSpeedup: median(speedup),
    parallelSpeedupSpread: spread(speedup),
    parallelCpu: median(cpuRatio),
    parallelCpuSpread: spread(cpuRatio),
    ...ceiling,
    parallelism,
    placement,
    shards: data.shards.length,
    mb,
    rounds: args.rounds,
  };
}

/**
 * The parallel read's ceiling over one thread on `cores`, from the CPU per pass measured (medians):
 * one thread runs as fast as its main thread allows (main₁ per pass) while keeping `oneThreadCores`
 * busy; the parallel read needs all∥ CPU per pass across its threads, at most `cores` of it at
 * once, and main∥ of it on its main thread, one core at most. Null where the main thread's CPU was
 * not measured.
 */
export function ceilingOf(cores: number, cpu: Record<'plumber' | 'parallel', number[]>, mainCpu: Record<'plumber' | 'parallel', number[]>): Pick<FormatsLine, 'oneThreadCores' | 'parallelMainShare' | 'parallelCeiling'> {
  if (mainCpu.plumber.length === 0 || mainCpu.parallel.length === 0) return { oneThreadCores: null, parallelMainShare: null, parallelCeiling: null };
  const main1 = median(mainCpu.plumber);
  const mainP = median(mainCpu.parallel);
  const allP = median(cpu.parallel);
  return {
    oneThreadCores: median(cpu.plumber) / main1,
    parallelMainShare: mainP / allP,
    parallelCeiling: Math.min((cores * main1) / allP, main1 / mainP),
  };
}

/** The goal checks of one line: met or not, in words. */
export function goalsOf(l: FormatsLine, cores: number): Array<{ goal: string; met: boolean }> {
  const out = [{ goal: `${l.reader}: one thread ÷ hand ≥ ${GOAL_ONE_THREAD}: ${l.vsHand.toFixed(2)}× (${l.vsHandSpread.map((x) => x.toFixed(2)).join('–')})`, met: l.vsHand >= GOAL_ONE_THREAD }];
  if (l.cpuBound && cores >= 2)
    out.push({
      goal: `${l.reader}: planned parallelism ÷ one thread ≥ ${GOAL_PARALLEL}: ${l.parallelSpeedup.toFixed(2)}× (${l.parallelSpeedupSpread.map((x) => x.toFixed(2)).join('–')}); its CPU per pass ÷ one thread's ${l.parallelCpu.toFixed(2)} (${l.parallelCpuSpread.map((x) => x.toFixed(2)).join('–')})${ceilingWords(l, cores)}`,
      met: l.parallelSpeedup >= GOAL_PARALLEL,
    });
  return out;
}

const f2 = (x: number): number => Math.round(x * 100) / 100;

/** The measured ceiling in words, when it was measured. */
function ceilingWords(l: FormatsLine, cores: number): string {
  if (l.parallelCeiling === null || l.oneThreadCores === null || l.parallelMainShare === null) return '';
  return `; one thread keeps ${l.oneThreadCores.toFixed(2)} cores busy and the parallel read's main thread does ${Math.round(l.parallelMainShare * 100)}% of its CPU, so ${cores} cores allow at most ${l.parallelCeiling.toFixed(2)}×`;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'plumber-bench-formats-'));
  const lines: FormatsLine[] = [];
  let failed = false;
  try {
    for (const r of READERS.filter((x) => args.only.includes(x.name))) {
      try {
        const l = await benchOne(r, args, dir);
        lines.push(l);
        const { bench, reader, mbPerSec, rowsPerSec, handMbPerSec, parallelMbPerSec, cpuBound } = l;
        if (args.json)
          process.stdout.write(
            `${JSON.stringify({ bench, reader, mbPerSec: f2(mbPerSec), rowsPerSec: Math.round(rowsPerSec), handMbPerSec: f2(handMbPerSec), parallelMbPerSec: f2(parallelMbPerSec), cpuBound, ...spreads(l) })}\n`,
          );
        log(`${reader}: ${mbPerSec.toFixed(1)} MB/s (${Math.round(rowsPerSec).toLocaleString('en-US')} rows/s) · hand ${handMbPerSec.toFixed(1)} MB/s · parallel ${parallelMbPerSec.toFixed(1)} MB/s`);
      } catch (error) {
        failed = true;
        log(`${r.name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const cores = availableParallelism();
  const checks = lines.flatMap((l) => goalsOf(l, cores));
  log(`Goals: ${checks.filter((c) => c.met).length} of ${checks.length} met.`);
  for (const c of checks) log(`  ${c.met ? 'met' : 'MISSED'}: ${c.goal}`);
  if (!failed && lines.length > 0 && !args.quick) {
    const table = rowsTable(
      lines.map((l) => ({
        reader: l.reader,
        'MB/s': l.mbPerSec,
        'rows/s': l.rowsPerSec,
        'hand MB/s': l.handMbPerSec,
        '÷ hand': `${l.vsHand.toFixed(2)}× (${l.vsHandSpread.map((x) => x.toFixed(2)).join('–')})`,
        'parallel MB/s': l.parallelMbPerSec,
        'parallel ÷ one thread': `${l.parallelSpeedup.toFixed(2)}× (${l.parallelSpeedupSpread.map((x) => x.toFixed(2)).join('–')})`,
        'CPU, parallel ÷ one thread': `${l.parallelCpu.toFixed(2)} (${l.parallelCpuSpread.map((x) => x.toFixed(2)).join('–')})`,
        "one thread's cores": l.oneThreadCores === null ? '–' : l.oneThreadCores.toFixed(2),
        'ceiling ÷ one thread': l.parallelCeiling === null ? '–' : `${l.parallelCeiling.toFixed(2)}×`,
        'CPU-bound': l.cpuBound ? 'yes' : 'no',
        planned: `${l.parallelism} shards, ${l.placement}`,
        'MB stored': l.mb,
      })),
    );
    writeResults(
      'bench:formats',
      `${table}\n\nGoals: ${checks.filter((c) => c.met).length} of ${checks.length} met (median of ${args.rounds} alternating rounds, spread in parentheses).\n\n${checks.map((c) => `- ${c.met ? 'met' : 'MISSED'}: ${c.goal}`).join('\n')}`,
    );
  }
  process.exitCode = failed ? 1 : 0;
}

/** The spreads beside the medians in the JSON line. */
function spreads(l: FormatsLine): Record<string, unknown> {
  return {
    vsHand: f2(l.vsHand),
    vsHandSpread: l.vsHandSpread.map(f2),
    parallelSpeedup: f2(l.parallelSpeedup),
    parallelSpeedupSpread: l.parallelSpeedupSpread.map(f2),
    parallelCpu: f2(l.parallelCpu),
    parallelCpuSpread: l.parallelCpuSpread.map(f2),
    oneThreadCores: l.oneThreadCores === null ? null : f2(l.oneThreadCores),
    parallelMainShare: l.parallelMainShare === null ? null : f2(l.parallelMainShare),
    parallelCeiling: l.parallelCeiling === null ? null : f2(l.parallelCeiling),
    parallelism: l.parallelism,
    placement: l.placement,
    rounds: l.rounds,
  };
}

if (require.main === module) void main();
