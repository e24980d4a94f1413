/**
 * The equivalence check for the flow levers (issue 54), run before verification measures any
 * speed, like a reorder's (./sibling.ts):
 * - `fuse`: the pipeline with the later map fused (a runner override, no rewritten file) must yield
 *   the same elements in the same order as written on the seeded sample; fusion is equal by
 *   construction, and the check holds the library to it.
 * - `deterministic: false` is not sampled: it hands on every result once, in the order the calls
 *   finish (the same elements by construction), and a sample of the first elements cannot compare
 *   multisets across a change of order (a slow element the ordered run yields early comes late).
 */
import type { PlanChange } from '../../shared/analysis';
import { checkEquivalence, type SampleOptions } from '../../runner/equivalence';

/** Why `change` is not offered (its fused pipeline yielded other elements on the sample), or undefined. */
export async function flowUnoffered(change: PlanChange, file: string, exportName: string | undefined, opts: SampleOptions = {}): Promise<string | undefined> {
  if (change.kind !== 'fuse') return undefined;
  const v = await checkEquivalence({ file, exportName }, { file, exportName, overrides: { [change.opId]: { fuse: true } } }, { ...opts, ordered: true });
  return v.equivalent ? undefined : `Fused, the pipeline did not yield the same elements: ${v.reason}`;
}
