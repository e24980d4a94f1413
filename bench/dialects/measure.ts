/**
 * Rates for bench:dialects: one untraced run of a pipeline in a child process (probe.ts), one
 * traced run through Plumber's runner, and the statistics over alternating rounds that every
 * figure is judged by (the median, with the rounds' spread beside it).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { runProfile } from '../../src/runner/spawn';
import { ROOT } from './examples';

const PROBE = join(__dirname, 'probe.ts');

/** A run's window and warm-up, seconds. */
export interface Window {
  seconds: number;
  warmupSeconds: number;
}

/** One untraced run: its window's rate, and its first pass's from its first element when that pass ended within the run. */
export interface UntracedRun {
  rate: number;
  firstPass?: number;
}

/**
 * One untraced run of `exportName` in `file`, in a process of its own under tsx.
 */
export function untracedRun(file: string, exportName: string, w: Window): Promise<UntracedRun> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', PROBE, file, exportName, String(w.warmupSeconds), String(w.seconds)],
      { cwd: ROOT, timeout: (w.warmupSeconds + w.seconds + 60) * 1000, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        const line = stdout.split('\n').find((l) => l.startsWith('{'));
        if (error || !line) {
          reject(new Error(`${file} (${exportName}) did not run: ${stderr.trim().split('\n').slice(-3).join(' ') || error?.message}`));
          return;
        }
        const r = JSON.parse(line) as { rate: number; firstPass?: { rate: number } };
        resolve({ rate: r.rate, ...(r.firstPass ? { firstPass: r.firstPass.rate } : {}) });
      },
    );
  });
}

/** Elements per second of one untraced run's window (see `untracedRun`). */
export async function untracedRate(file: string, exportName: string, w: Window): Promise<number> {
  return (await untracedRun(file, exportName, w)).rate;
}

/**
 * One run through Plumber's runner (tracing on): its rate, and whether it measured the whole run
 * from its first element (the source ended during the warm-up: a finite pipeline shorter than
 * warm-up and window, read once), or the runner's reason it could not run.
 */
export async function tracedRun(file: string, exportName: string, w: Window): Promise<{ rate: number; wholeRun: boolean } | { error: string }> {
  const p = await runProfile({ file, exportName, seconds: w.seconds, warmupSeconds: w.warmupSeconds, probes: false, startSeconds: 60, timeoutSeconds: w.warmupSeconds + w.seconds + 90 });
  if (p.error) return { error: p.error.message };
  if (p.run.elements === 0 || p.run.seconds <= 0) return { error: `the runner measured no element (end: ${p.run.endReason})` };
  return { rate: p.run.elements / p.run.seconds, wholeRun: p.run.endReason === 'exhausted' && p.run.warmupElements <= 1 };
}

export function median(xs: readonly number[]): number {
  const s = [...xs].filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The lowest and highest of a figure over the rounds. */
export function spread(xs: readonly number[]): [number, number] {
  const s = xs.filter(Number.isFinite);
  return s.length ? [Math.min(...s), Math.max(...s)] : [Number.NaN, Number.NaN];
}

/** Round by round a ÷ b (a round's rates were measured next to each other, under the same load). */
export function ratios(a: readonly number[], b: readonly number[]): number[] {
  return a.map((x, i) => (b[i]! > 0 ? x / b[i]! : Number.NaN));
}

/**
 * Runs each configuration once per round, the order rotating from round to round so that none
 * always runs first (or last) under a load that drifts. Returns each configuration's rates in
 * round order.
 */
export async function alternate<K extends string>(configs: ReadonlyArray<{ key: K; run(): Promise<number> }>, rounds: number, log: (s: string) => void): Promise<Record<K, number[]>> {
  const out = Object.fromEntries(configs.map((c) => [c.key, [] as number[]])) as Record<K, number[]>;
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < configs.length; i++) {
      const c = configs[(i + r) % configs.length]!;
      const rate = await c.run();
      out[c.key][r] = rate;
      log(`  round ${r + 1}: ${c.key} ${Number.isFinite(rate) ? `${rate.toFixed(2)}/s` : 'not measured'}`);
    }
  }
  return out;
}
