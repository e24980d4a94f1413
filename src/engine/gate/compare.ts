/**
 * The regression gate: a run compared with a stored baseline by the statistics verification
 * judges plans by (../paired.ts `compareSides`: the two runs timed on the stretches of elements
 * both covered when they share enough, else their pooled window slices), as the ratio new ÷
 * baseline with its 95% interval. A run fails only when it is reliably slower than the allowed
 * slowdown: the interval's upper end lies below 1 − maxSlowdown. Pure: no clocks, no files.
 */
import { formatPercent, formatRatio, terminalRate } from '../../shared/words';
import { compareSides, type MeasuredSide } from '../paired';
import { pooledRate } from '../stats';
import type { Baseline, BaselineMachine, BaselineRun } from './baseline';

/** The slowdown a run may show before it fails when none is asked for: 10%. */
export const DEFAULT_MAX_SLOWDOWN = 0.1;

/**
 * pass: not reliably slower than allowed, and measured precisely enough to have seen it.
 * fail: reliably slower than allowed. incomparable: the two runs cannot be compared (different
 * machines, a busy machine, or noise wider than the slowdown allowed), so the gate cannot say.
 */
export type GateOutcome = 'pass' | 'fail' | 'incomparable';

export interface GateResult {
  outcome: GateOutcome;
  /** New rate ÷ baseline rate, and its 95% interval. */
  ratio: number;
  low: number;
  high: number;
  /** The ratio was timed on the same stretches of elements (else from pooled slices). */
  paired: boolean;
  maxSlowdown: number;
  baseRate: number;
  rate: number;
  unit: string;
  /** Why the runs cannot be compared: empty unless the outcome is incomparable. */
  reasons: string[];
  /** What differs between the runs without stopping the comparison (the file changed, another Node). */
  notes: string[];
  /** The verdict in one sentence, with the ratio and its interval. */
  message: string;
}

/**
 * The load of work other than the pipeline: the load average less the cores the pipeline kept
 * busy itself (its own threads are counted in the load average too); undefined when not read.
 */
export function otherLoad(m: BaselineMachine): number | undefined {
  return m.loadAverage === undefined ? undefined : Math.max(0, m.loadAverage - m.ownCores);
}

/** How the gate decides: the slowdown allowed, and the load of other work from which a machine counts as busy. */
export interface GateOptions {
  /** 0.1: a run may be up to 10% slower (default DEFAULT_MAX_SLOWDOWN). */
  maxSlowdown?: number;
  /** Other work's load at or above which a run's machine was busy (default: its cores). */
  maxLoad?: number;
}

/**
 * Why two machines' runs are not comparable: another core count or CPU model (a rate measured on
 * one says nothing of another), or a busy machine at either run (other work's load ≥ maxLoad, by
 * default its cores: the rate measured is the share the pipeline got, not what it does).
 */
export function machineReasons(base: BaselineMachine, now: BaselineMachine, maxLoad?: number): string[] {
  const reasons: string[] = [];
  if (base.cores !== now.cores) reasons.push(`the baseline ran on ${base.cores} cores and this run on ${now.cores}`);
  if (base.cpuModel !== now.cpuModel) reasons.push(`the baseline ran on a ${base.cpuModel} and this run on a ${now.cpuModel}`);
  for (const [which, m] of [
    ['the baseline', base],
    ['this run', now],
  ] as const) {
    const load = otherLoad(m);
    if (load !== undefined && load >= (maxLoad ?? m.cores)) reasons.push(`the machine was busy during ${which} (load average ${m.loadAverage!.toFixed(2)}, ${load.toFixed(2)} of it other work, on ${m.cores} cores)`);
  }
  return reasons;
}

/**
 * Why the runs got too different a share of the machine to compare: one run could get fewer
 * cores (its own CPU and the idle CPU, over its window) than the other run's pipeline kept busy,
 * by more than the slowdown allowed. Its rate then says how much CPU other work left it, not what
 * the code does: a burst of other work during one run is not a regression. A change that makes
 * the pipeline use fewer cores (a worker pool taken away) leaves the cores it could get as they
 * were, and is judged.
 */
export function shareReasons(base: BaselineMachine, now: BaselineMachine, maxSlowdown: number): string[] {
  const reasons: string[] = [];
  for (const [which, got, other, used] of [
    ['this run', now, 'the baseline', base],
    ['the baseline', base, 'this run', now],
  ] as const) {
    if (got.availableCores !== undefined && got.availableCores < used.ownCores * (1 - maxSlowdown)) {
      reasons.push(`other work left ${which} ${got.availableCores.toFixed(2)} cores, fewer than the ${used.ownCores.toFixed(2)} the pipeline kept busy in ${other}`);
    }
  }
  return reasons;
}

/** What differs without stopping the comparison. */
function notesOf(base: Baseline, now: Baseline): string[] {
  const notes: string[] = [];
  if (base.pipeline.sha256 !== now.pipeline.sha256) notes.push('the pipeline file changed since the baseline');
  if (base.machine.nodeVersion !== now.machine.nodeVersion) notes.push(`the baseline ran on Node ${base.machine.nodeVersion} and this run on ${now.machine.nodeVersion}`);
  if (JSON.stringify(base.config.knobs) !== JSON.stringify(now.config.knobs)) notes.push("the operators' knobs differ from the baseline's");
  if (JSON.stringify(base.config.overrides) !== JSON.stringify(now.config.overrides)) notes.push('the --override flags differ from the baseline run');
  return notes;
}

/** A run as one side of a comparison; `seq` orders the two runs (the baseline first). */
function sideOfRun(run: BaselineRun, seq: number): MeasuredSide {
  return { slices: run.slices, curves: run.curve ? [{ curve: run.curve, seq }] : [] };
}

/** "0.80× (95% interval 0.76–0.84)". */
export function ratioText(r: Pick<GateResult, 'ratio' | 'low' | 'high'>): string {
  return `${formatRatio(r.ratio)} (95% interval ${r.low.toFixed(2)}–${r.high.toFixed(2)})`;
}

/**
 * `now` against `base`, failing only when `now` is reliably slower by more than the slowdown
 * allowed (see GateOptions). Different machines, a busy machine, a run that got fewer cores than
 * the other used, or a different unit make the runs incomparable whatever they measured;
 * otherwise a run reliably slower than allowed fails, and one whose interval is wider than the
 * slowdown allowed is incomparable (it could not have seen such a slowdown), since a pass must
 * mean the change was measured and not found.
 */
export function compareToBaseline(base: Baseline, now: Baseline, o: GateOptions = {}): GateResult {
  const maxSlowdown = o.maxSlowdown ?? DEFAULT_MAX_SLOWDOWN;
  const baseRate = pooledRate(base.run.slices).rate;
  const rate = pooledRate(now.run.slices).rate;
  const j = compareSides(sideOfRun(now.run, 1), sideOfRun(base.run, 0));
  const ratio = j.speedup;
  const low = Math.max(0, ratio - j.halfWidth);
  const high = ratio + j.halfWidth;
  const reasons = [...machineReasons(base.machine, now.machine, o.maxLoad), ...shareReasons(base.machine, now.machine, maxSlowdown)];
  if (base.run.unit !== now.run.unit) reasons.push(`the baseline counted ${base.run.unit} and this run ${now.run.unit} (the pipeline's last operator changed)`);
  if (now.run.slices.length === 0 || base.run.slices.length === 0 || !(baseRate > 0)) reasons.push('a run measured no elements');
  const floor = 1 - maxSlowdown;
  let outcome: GateOutcome;
  if (reasons.length > 0) outcome = 'incomparable';
  else if (high < floor) outcome = 'fail';
  else if (j.halfWidth > maxSlowdown) {
    outcome = 'incomparable';
    reasons.push(`the runs' own noise (± ${j.halfWidth.toFixed(2)}) is wider than the ${formatPercent(maxSlowdown)} slowdown allowed; measure longer (--seconds) or on a quieter machine`);
  } else outcome = 'pass';
  const result = { outcome, ratio, low, high, paired: j.paired, maxSlowdown, baseRate, rate, unit: now.run.unit, reasons, notes: notesOf(base, now), message: '' };
  return { ...result, message: gateMessage(result) };
}

/** The verdict as a sentence. */
function gateMessage(r: GateResult): string {
  const rates = `${terminalRate(r.rate, r.unit)} against the baseline's ${terminalRate(r.baseRate, r.unit)}: ${ratioText(r)}`;
  const allowed = `${formatPercent(r.maxSlowdown)} slowdown allowed`;
  switch (r.outcome) {
    case 'fail':
      return `${rates}, reliably slower than the ${allowed}.`;
    case 'pass':
      return `${rates}, not reliably slower than the ${allowed}.`;
    default:
      return `${rates}; cannot compare the runs: ${r.reasons.join('; ')}.`;
  }
}
