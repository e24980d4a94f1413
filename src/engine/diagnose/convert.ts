/**
 * A configuration that converts a chain to plumber-data runs another program: the pipeline's file
 * rewritten (a hidden sibling, see ../convert/sibling.ts), whose knobs are written in its text.
 * The overrides a run of it gets are only those of the configuration's other changes on operators
 * outside the converted chain; the chain's own operators have other ids in the rewritten file.
 * No pass runs a conversion, so a pass's run never stands for such a configuration.
 */
import type { PlanChange } from '../../shared/analysis';
import type { Overrides } from '../../shared/profile';
import type { ConvertChange } from '../convert/types';

/** The convert change among `changes`, if any (a plan converts one chain at a time). */
export function convertIn(changes: readonly PlanChange[]): ConvertChange | undefined {
  return changes.find((c): c is ConvertChange => c.kind === 'convert');
}

/** The overrides a run of a configuration with `convert` gets: `overrides` less the converted operators'. */
export function overridesBeside(convert: ConvertChange, overrides: Overrides): Overrides {
  const converted = new Set([...convert.opIds, convert.opId, ...convert.then.map((c) => c.opId)]);
  const out: Overrides = {};
  for (const [id, o] of Object.entries(overrides)) if (!converted.has(id)) out[id] = o;
  return out;
}
