/**
 * A configuration with a reorder runs another program: the pipeline's file reshaped (a hidden
 * sibling, see ../reshape/sibling.ts), its overrides said in the sibling's ids by the front door.
 * No pass runs a reshape, so a pass's run never stands for such a configuration.
 */
import type { PlanChange } from '../../shared/analysis';
import type { Profile } from '../../shared/profile';
import { cacheAfterRandom } from '../randomness';

/** The reorder among `changes`, if any (the model proposes one per plan). */
export function reorderIn(changes: readonly PlanChange[]): Extract<PlanChange, { kind: 'reorder' }> | undefined {
  return changes.find((c): c is Extract<PlanChange, { kind: 'reorder' }> => c.kind === 'reorder');
}

/** `changes` cache after a random op of the pipeline as written and hold no reorder (which the cache needs to be safe). */
export function frozenWithoutReorder(changes: readonly PlanChange[], first: Profile, randomOps: readonly string[]): boolean {
  if (reorderIn(changes)) return false;
  return changes.some((c) => c.kind === 'cache' && cacheAfterRandom(c.opId, first, randomOps) !== undefined);
}
