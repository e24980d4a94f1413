/**
 * The equivalence check for the flow levers (issue 54), run before verification measures any
 * speed, like a reorder's (./sibling.ts):
 * - `fuse`: the pipeline with the later map fused (a runner override, no rewritten file) must yield
 *   the same elements in the same order as written on the seeded sample; fusion is equal by
 *   construction, and the check holds the library to it.
 * - `deterministic: false` hands on every result once, in the order the calls finish: the same
 *   elements, which a sample of the first ones cannot show (a slow element the ordered run yields
 *   early comes late, and a batch after the map groups other elements). Both configurations — the
 *   plan with and without it, so the pass runs at the plan's calls in flight — are run over a whole
 *   pass and their rows (a batch's, canonical.ts `rowsOf`) compared as multisets. A pipeline whose
 *   pass does not end within the sample's time (an endless one) cannot be checked: not offered.
 */
import type { PlanChange } from '../../shared/analysis';
import type { Overrides } from '../../shared/profile';
import { checkEquivalence, type SampleOptions } from '../../runner/equivalence';

/** Root elements a whole-pass check reads at most, and the seconds each of its two runs may take. */
const PASS_ELEMENTS = 1_000_000;
const PASS_SECONDS = 20;

/** Why `change` is not offered (its fused or unordered pipeline yielded other elements on the sample, or could not be compared), or undefined. `planOverrides`: the plan it belongs to. */
export async function flowUnoffered(change: PlanChange, file: string, exportName: string | undefined, opts: SampleOptions = {}, planOverrides: Overrides = {}): Promise<string | undefined> {
  if (change.kind === 'deterministic') {
    const { deterministic: _d, ...rest } = planOverrides[change.opId] ?? {};
    const ordered = { ...planOverrides, [change.opId]: rest };
    const unordered = { ...planOverrides, [change.opId]: { ...rest, deterministic: false } };
    const v = await checkEquivalence({ file, exportName, overrides: ordered }, { file, exportName, overrides: unordered }, { elements: PASS_ELEMENTS, seconds: PASS_SECONDS, ...opts, wholePassRows: true });
    return v.equivalent ? undefined : `With deterministic: false the pipeline could not be shown to yield the same elements: ${v.reason}`;
  }
  if (change.kind !== 'fuse') return undefined;
  const v = await checkEquivalence({ file, exportName }, { file, exportName, overrides: { [change.opId]: { fuse: true } } }, { ...opts, ordered: true });
  return v.equivalent ? undefined : `Fused, the pipeline did not yield the same elements: ${v.reason}`;
}
