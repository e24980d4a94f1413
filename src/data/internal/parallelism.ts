/**
 * What `parallelism: 'auto'` (or none) resolves to. One rule for every operator that takes the
 * knob, and for a tracer that needs to know what the library ran.
 */
import { availableParallelism } from 'node:os';

/** A number of calls in flight, or `'auto'`: the library picks (see `resolveParallelism`). */
export type Parallelism = number | 'auto';

/**
 * Calls an `'auto'` map on the main thread keeps in flight: its fn may return promises (an async
 * fn, or a sync one that returns them at run time), and waits overlap where work does not.
 */
export const AUTO_ASYNC_IN_FLIGHT = 16;

/**
 * The parallelism an operator reports as resolved: a number as written (rounded down, at least 1),
 * or for `'auto'` the machine's cores in worker threads, AUTO_ASYNC_IN_FLIGHT for a declared
 * `async` fn on the main thread and 1 for any other main-thread fn. Absent: 1.
 */
export function resolveParallelism(p: Parallelism | undefined, placement: 'main' | 'worker', fnAsync: boolean): number {
  if (typeof p === 'number') {
    if (!(p >= 1)) throw new RangeError(`parallelism must be a number >= 1 or 'auto', not ${p}.`);
    return Math.floor(p);
  }
  if (p === 'auto') return placement === 'worker' ? availableParallelism() : fnAsync ? AUTO_ASYNC_IN_FLIGHT : 1;
  return 1;
}

/**
 * The calls a map keeps in flight as it runs: what `resolveParallelism` said, except that an
 * `'auto'` main-thread fn gets AUTO_ASYNC_IN_FLIGHT whether or not it is declared `async`, since a
 * sync fn's promises are found only when it returns them.
 */
export function inFlightParallelism(p: Parallelism | undefined, placement: 'main' | 'worker', resolved: number): number {
  return p === 'auto' && placement === 'main' ? AUTO_ASYNC_IN_FLIGHT : resolved;
}
