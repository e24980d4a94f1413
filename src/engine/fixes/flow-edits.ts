/**
 * The edits of the flow levers (issue 54): both are options of the map the change names, written
 * as any knob is (edits.ts `optionEdits`: a literal replaced, an absent option added, an
 * expression left alone with a reason).
 * - `fuse`: `fuse: true` on the later of two adjacent worker maps; the library then runs it in the
 *   earlier map's tasks (src/data/options.ts `MapOptions.fuse`).
 * - `deterministic`: `deterministic: false`; the map's output order changes, which the plan's
 *   reason says.
 */
import type { PlanChange } from '../../shared/analysis';
import type { GraphOp } from '../graph/types';

/** Adds the change's option to `patch` (knob, value text, overwrite); returns why it cannot, or undefined. */
export function flowEdit(change: Extract<PlanChange, { kind: 'fuse' | 'deterministic' }>, op: GraphOp, patch: Array<[string, string, boolean]>): string | undefined {
  if (op.kind !== 'map' && op.kind !== 'filter' && (change.kind === 'fuse' || op.kind !== 'flatMap')) return `${op.label} is not a map${change.kind === 'fuse' ? ' or filter' : ''}, so it has no ${change.kind} option.`;
  if (op.dialect !== undefined && op.dialect !== 'plumber-data') return `${op.label} is not plumber-data's, so it has no ${change.kind} option.`;
  if (change.kind === 'fuse') patch.push(['fuse', 'true', true]);
  else patch.push(['deterministic', 'false', true]);
  return undefined;
}
