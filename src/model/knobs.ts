/**
 * What an operator's profile says about how it runs, read the same way everywhere in the model.
 */
import type { PlanChange } from '../shared/analysis';
import type { Lever, OpProfile } from '../shared/profile';
import { MODEL_CONSTANTS as C } from './constants';

/** A map, filter or flatMap: an operator that calls a user fn on each element, which a worker pool can run. */
export function isFnOp(op: OpProfile): boolean {
  return op.kind === 'map' || op.kind === 'filter' || op.kind === 'flatMap';
}

/** The calls in flight, worker threads or reads in flight an operator ran with, with `'auto'` resolved as plumber-data resolves it. */
export function currentConcurrency(op: OpProfile, isAsync: boolean): number {
  const k = op.knobs;
  // plumber-data resolves 'auto' to 1 for a main-thread fn not declared async, but runs
  // `autoAsyncInFlight` calls in flight once it turns out to return promises.
  if (isAsync && k.parallelism === 'auto' && op.placement === 'main' && (k.resolvedParallelism ?? 1) <= 1) return C.autoAsyncInFlight;
  if (k.resolvedParallelism !== undefined && k.resolvedParallelism > 0) return k.resolvedParallelism;
  if (typeof k.parallelism === 'number' && k.parallelism > 0) return k.parallelism;
  return 1;
}

/**
 * Whether the operator's own library can make a change of this kind (`OpProfile.levers`; absent:
 * plumber-data, which has every lever). Every candidate the planner makes asks this first, so a
 * tfjs-data or Node-streams operator is only given what its library can do; what more plumber-data
 * would do is the conversion's to propose (./convert.ts).
 */
export function can(op: { levers?: Lever[] }, lever: Lever): boolean {
  return op.levers === undefined || op.levers.includes(lever);
}

/** The lever a plan change needs on its operator (a conversion needs none: it replaces the library). */
export function leverOf(change: PlanChange): Lever | undefined {
  switch (change.kind) {
    case 'placement':
      return 'placement';
    case 'parallelism':
    case 'prefetch':
    case 'cache':
    case 'cycleLength':
      return change.kind;
    case 'convert':
    case 'reorder':
    case 'fuse':
    case 'deterministic':
      return undefined;
  }
}
