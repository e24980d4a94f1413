/**
 * The cores a plan is for: a target machine the user names (`options.cores`), else the whole
 * cores the pipeline could get while it ran. A plan for every core of a busy machine proposes
 * worker pools that then fight other processes for the same cores and lose.
 */
import type { ModelOptions } from '../shared/analysis';
import type { Profile } from '../shared/profile';
import { MODEL_CONSTANTS as C } from './constants';

/**
 * Other work competing for the machine's cores, measured while the pipeline ran. Where Linux's
 * scheduler gives every runnable thread a like share, the cores a configuration gets grow with its
 * busy threads: with `others` busy threads elsewhere on `machine` cores, t busy threads of the
 * pipeline get min(t, machine, machine · t / (t + others)) cores. Where it shares them program by
 * program (autogroup), they get min(t, group) whatever t is (see `coresGot`).
 */
export type Contention =
  | {
      machine: number;
      /** Busy threads of other work, estimated from the cores it left free and the share the main thread got. */
      others: number;
    }
  | {
      machine: number;
      /**
       * The kernel schedules the pipeline's threads as one group against other programs
       * (`Machine.groupScheduled`): the cores other programs leave it, which its threads share
       * however many there are.
       */
      group: number;
    };

/** What a configuration's CPU bound is computed with: whole cores, or a share of a contended machine. */
export type CoreBudget = number | Contention;

/** The cores `threads` busy threads of the pipeline get under a core budget. */
export function coresGot(budget: CoreBudget, threads: number): number {
  if (typeof budget === 'number') return budget;
  const t = Math.max(1, threads);
  if ('group' in budget) return Math.min(t, budget.group);
  return Math.min(t, budget.machine, (budget.machine * t) / (t + budget.others));
}

/** The budget planning works with: the contention when it was measured, else the whole cores. */
export function coreBudget(lim: { cores: number; contention?: Contention }): CoreBudget {
  return lim.contention ?? lim.cores;
}

export interface Cores {
  /** Whole cores to plan for (≥ 1): with contention, the machine's cores (the most threads worth running). */
  cores: number;
  /** Other work's busy threads, when the run measured them: CPU bounds then follow the share each thread gets. */
  contention?: Contention;
  /** The measured free cores (fractional), when the profile has them. */
  available?: number;
  /** "1.1 of 2 cores free: planning for 1". */
  note?: string;
}

/** One decimal, no trailing zero: 1.1, 2, 0.4. */
function oneDecimal(x: number): string {
  return String(Math.round(x * 10) / 10);
}

/**
 * Whole cores from a fractional measurement: a core counts when at least 1 − `wholeCoreTolerance`
 * of it is free, at least 1, at most the machine's cores. So 1.1 of 2 free plans for 1, 1.95 of 2
 * plans for 2 (measurement noise), 0.3 plans for 1 (the pipeline always has its own thread).
 */
export function wholeCores(available: number, machineCores: number): number {
  return Math.max(1, Math.min(machineCores, Math.floor(available + C.wholeCoreTolerance)));
}

export function coresFor(profile: Profile, options: ModelOptions = {}): Cores {
  const machine = Math.max(1, profile.machine.cores);
  const measured = profile.run.availableCores ?? profile.machine.availableCores;
  const available = measured !== undefined && Number.isFinite(measured) && measured > 0 ? Math.min(measured, machine) : undefined;
  const free = available !== undefined ? `${oneDecimal(available)} of ${machine} cores free` : undefined;
  if (options.cores !== undefined && options.cores > 0) {
    const cores = Math.max(1, Math.floor(options.cores));
    const here = free ? ` (${free} on the profiled machine)` : '';
    return { cores, available, note: `planning for ${cores} core${cores === 1 ? '' : 's'}, as asked${here}` };
  }
  if (available === undefined) return { cores: machine };
  const measuredShare = profile.run.mainThreadShare;
  if (profile.machine.groupScheduled && profile.run.availableCores !== undefined) {
    // Other programs keep their share whatever the pipeline runs: its threads get what they
    // left. A run that wanted less than its share left the rest to them, so the pipeline can have
    // at least what its main thread got while runnable, and what the probe before the run got
    // when it spun a thread on every core.
    const group = Math.min(machine, Math.max(available, measuredShare ?? 0, profile.machine.availableCores ?? 0));
    if (group >= machine - C.wholeCoreTolerance) return { cores: machine, available, note: `${free}: planning for ${machine}` };
    const cores = Math.max(1, Math.min(machine, Math.ceil(group - C.wholeCoreTolerance)));
    return {
      cores,
      available,
      contention: { machine, group },
      note: `${free}: planning for the ${oneDecimal(group)} core${oneDecimal(group) === '1' ? '' : 's'} other programs leave (the kernel shares the cores program by program, so more threads would not take more)`,
    };
  }
  // A main thread runnable for too little of the window to measure its share (one that mostly
  // waits for worker threads) got a whole core whenever it ran, as far as anything shows: the
  // cores not free are then other work's busy threads, one per core. Whole cores instead would
  // turn a reading of 1.85 free into one core and refuse a second worker thread that measured 1.9×.
  const share = measuredShare ?? (profile.run.availableCores !== undefined ? 1 : undefined);
  if (share !== undefined && Number.isFinite(share) && share > 0) {
    // Other work's CPU (the cores not free) spread over threads that each got what our main
    // thread got while runnable: that many busy threads compete with ours.
    const others = Math.max(0, (machine - available) / Math.min(1, share));
    if (others < 0.05) return { cores: machine, available, note: `${free}: planning for ${machine}` };
    const contention = { machine, others };
    const one = coresGot(contention, 1);
    const all = coresGot(contention, machine + 1);
    return {
      cores: machine,
      available,
      contention,
      note: `${free}, shared with ≈ ${oneDecimal(others)} busy thread${oneDecimal(others) === '1' ? '' : 's'} of other work: planning for a fair share (${oneDecimal(one)} core${oneDecimal(one) === '1' ? '' : 's'} for one thread, ${oneDecimal(all)} for ${machine + 1})`,
    };
  }
  const cores = wholeCores(available, machine);
  return { cores, available, note: `${free}: planning for ${cores}` };
}
