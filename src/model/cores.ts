/**
 * The cores a plan is for: a target machine the user names (`options.cores`), else the whole
 * cores the pipeline could get while it ran. A plan for every core of a busy machine proposes
 * worker pools that then fight other processes for the same cores and lose.
 */
import type { ModelOptions } from '../shared/analysis';
import type { Profile } from '../shared/profile';
import { MODEL_CONSTANTS as C } from './constants';

export interface Cores {
  /** Whole cores to plan for (≥ 1). */
  cores: number;
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
  const cores = wholeCores(available, machine);
  return { cores, available, note: `${free}: planning for ${cores}` };
}
