/**
 * How every surface writes a number for a person: rates, speed-ups, shares, durations, bytes, and
 * the few fixed phrases the editor and the terminal share. Each formatter exists once, here, so the
 * same quantity reads the same in a lens, the tree, the report, the status bar and the CLI.
 *
 * Two styles of number, one per kind of surface:
 * - `compact` for the editor's narrow places (lenses, inlay hints, the tree, the status bar): 2.1k, 1.5M;
 * - `formatNumber` for sentences and the terminal's tables: three significant figures, thousands
 *   grouped (1,234, 12.1, 0.48), the digits the model's sentences print beside them.
 */
import type { PlanTarget } from './analysis';

/** What every surface says about numbers taken before the last edit. */
export const STALE_WORDS = 'stale — profile again';

/** The start of every quick fix Plumber offers on one operator ("Apply Plumber fix: set parallelism of …"). */
export const FIX_PREFIX = 'Apply Plumber fix: ';

// ---------------------------------------------------------------------------------------------
// Numbers.

/** 310, 2.1k, 12k, 1.5M; one decimal below ten of a unit. Infinite values read `∞`, NaN `—`. */
export function compact(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? '∞' : '—';
  const abs = Math.abs(n);
  const unit = (v: number, s: string): string => `${v < 10 ? Number(v.toFixed(1)) : Math.round(v)}${s}`;
  if (abs >= 1e6) return unit(n / 1e6, 'M');
  if (abs >= 1e3) return unit(n / 1e3, 'k');
  if (abs >= 10) return String(Math.round(n));
  return String(Number(n.toFixed(abs >= 1 ? 1 : 2)));
}

/** Three significant figures, four below 10,000, thousands grouped: 12.1, 0.48, 1,234, 1,150,000. */
export function formatNumber(x: number): string {
  const a = Math.abs(x);
  if (a >= 10_000) return Number(x.toPrecision(3)).toLocaleString('en-US');
  if (a >= 100) return Math.round(x).toLocaleString('en-US');
  if (a >= 10) return String(Math.round(x * 10) / 10);
  if (a >= 1) return String(Math.round(x * 100) / 100);
  return String(Number(x.toPrecision(2)));
}

/** A count, thousands grouped whatever the locale: 1,000,000 elements, 16,384 steps. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: 1 });
}

// ---------------------------------------------------------------------------------------------
// Rates.

/** A rate in the editor's few characters, unit always written: `310 el/s`, `2.1k el/s`, `1.3 batches/s`, `∞ el/s`. */
export function rateWords(rate: number, unit = 'el'): string {
  return `${compact(rate)} ${unit}/s`;
}

/**
 * A rate in a sentence or a terminal's table: `1,234/s` in elements (the table's header and the
 * sentence say what is counted), `1.3 batches/s` in another unit; `∞` when unbounded.
 */
export function terminalRate(rate: number, unit = 'el'): string {
  if (!Number.isFinite(rate)) return '∞';
  return `${formatNumber(rate)}${unit === 'el' ? '' : ` ${unit}`}/s`;
}

/** A rate in elements (or `unit`s) per second in the model's sentences: 83 el/s, 9.5 el/s, 12,400 batches/s. */
export function formatRate(rate: number, unit = 'el'): string {
  if (!Number.isFinite(rate)) return 'unbounded';
  return `${formatNumber(rate)} ${unit}/s`;
}

/** A training loop's steps per second in the few digits a lens has room for: "14.1 steps/s", "250 steps/s". */
export function formatSteps(rate: number): string {
  if (!Number.isFinite(rate)) return '∞ steps/s';
  return `${rate.toLocaleString('en-US', { maximumFractionDigits: rate >= 100 ? 0 : rate >= 10 ? 1 : 2 })} steps/s`;
}

// ---------------------------------------------------------------------------------------------
// Speed-ups.

/**
 * A measured or predicted speed-up, with its 95% half-width when measured: "1.7× ± 0.1". One
 * decimal, two when the spread is below 0.05 (so it never reads "± 0.0"); from 100× whole numbers,
 * thousands grouped ("14,054× ± 1,373", a cache that serves epochs from memory).
 */
export function formatSpeedup(speedup: number, halfWidth?: number): string {
  if (speedup >= 100) {
    const whole = (x: number): string => Math.max(1, Math.round(x)).toLocaleString('en-US');
    return halfWidth === undefined ? `${whole(speedup)}×` : `${whole(speedup)}× ± ${whole(halfWidth)}`;
  }
  const digits = halfWidth !== undefined && halfWidth < 0.05 ? 2 : 1;
  const s = `${speedup.toFixed(digits)}×`;
  return halfWidth === undefined ? s : `${s} ± ${halfWidth.toFixed(digits)}`;
}

/** `rate` over `base` as a speed-up ("6.8×"); undefined when `base` is not a rate or `rate` is unbounded. */
export function speedupOver(rate: number | undefined, base: number | undefined): string | undefined {
  if (rate === undefined || base === undefined || !(base > 0) || !Number.isFinite(rate)) return undefined;
  return formatSpeedup(rate / base);
}

/**
 * A ratio of two of the model's predictions with two decimals ("1.25×"): a plan for a training
 * loop often gains a few percent, which one decimal would round away.
 */
export function formatRatio(x: number): string {
  return `${x.toFixed(2)}×`;
}

// ---------------------------------------------------------------------------------------------
// Shares, durations, bytes.

/** A share (0..1) at a glance, as a whole percentage: `37%`, and `<1%` for a tiny one that is not none. */
export function formatShare(share: number): string {
  if (share > 0 && share < 0.005) return '<1%';
  return `${Math.round(share * 100)}%`;
}

/** A fraction as a percentage in a sentence: 0.5%, 12%, 40%. */
export function formatPercent(x: number): string {
  const p = x * 100;
  return p < 1 && p > 0 ? `${Number(p.toPrecision(1))}%` : `${Math.round(p)}%`;
}

/** Seconds with a unit a person reads at a glance: 840 µs, 12.1 ms, 1.52 s. */
export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return String(s);
  if (s < 1e-3) return `${formatNumber(s * 1e6)} µs`;
  if (s < 1) return `${formatNumber(s * 1e3)} ms`;
  return `${formatNumber(s)} s`;
}

/**
 * Wall-clock time a run or a phase took, to a fixed number of decimals so a ticking or a listed
 * figure keeps its width: "3.2 s", "2.00 s".
 */
export function formatElapsed(seconds: number, digits = 1): string {
  return `${seconds.toFixed(digits)} s`;
}

/** Bytes in decimal units: 410 MB, 1.2 GB, 3.1 kB. */
export function formatBytes(b: number): string {
  if (b >= 1e9) return `${formatNumber(b / 1e9)} GB`;
  if (b >= 1e6) return `${formatNumber(b / 1e6)} MB`;
  if (b >= 1e3) return `${formatNumber(b / 1e3)} kB`;
  return `${Math.round(b)} B`;
}

// ---------------------------------------------------------------------------------------------
// Plans for another machine.

/** "1 core", "8 cores". */
export function coresWords(n: number): string {
  return `${n} core${n === 1 ? '' : 's'}`;
}

/** True when the plan was made for other cores than the pipeline gets here: every surface then labels its figure (`targetWords`). */
export function forOtherMachine(target: PlanTarget | undefined): target is PlanTarget {
  return target !== undefined && target.cores !== target.hereCores;
}

/**
 * The label of a plan made for another machine, the one wording every surface uses beside the
 * plan's figure; undefined when the plan is for the cores here (no label). `measured`: the
 * speed-up verification measured here ("1.8× ± 0.3"), when it ran. A plan whose threads do not fit
 * here is never labelled with a measurement from here: that run was starved of the target's cores.
 * - "predicted for 8 cores — verified here on 2 cores: 1.8× ± 0.3"
 * - "predicted for 8 cores — verifiable here on 2 cores, not verified"
 * - "predicted for 8 cores — not verifiable here (this machine has 2)"
 */
export function targetWords(target: PlanTarget | undefined, measured?: string): string | undefined {
  if (!forOtherMachine(target)) return undefined;
  const head = `predicted for ${coresWords(target.cores)}`;
  if (!target.verifiable) return `${head} — not verifiable here (this machine has ${target.hereCores})`;
  return measured !== undefined ? `${head} — verified here on ${coresWords(target.hereCores)}: ${measured}` : `${head} — verifiable here on ${coresWords(target.hereCores)}, not verified`;
}
