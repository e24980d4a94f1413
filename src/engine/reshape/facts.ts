/**
 * What the source says of each operator for the model's reshapes (`ModelOptions.fields`): the
 * element fields its fn reads and writes (graph/fields.ts) and whether the user pinned it with
 * `keepPosition: true`. Read from every chain the pipeline's file and its imports hold, like the
 * static randomness, in the runner's ids.
 */
import * as path from 'node:path';
import type { OpFields } from '../../shared/analysis';
import { locateOps, type GraphSource } from '../locate';

/** The fields and pins of `file`'s operators, by op id; empty when the source cannot be read. */
export function sourceFields(file: string, graphs: GraphSource | undefined): Record<string, OpFields> {
  if (graphs === undefined) return {};
  let ops;
  try {
    ops = locateOps(path.resolve(file), graphs).ops;
  } catch {
    return {};
  }
  const out: Record<string, OpFields> = {};
  for (const op of ops) {
    const pin = op.knobs['keepPosition'];
    const pinned = pin !== undefined && pin.state !== 'absent' && !(pin.state === 'literal' && pin.value === false);
    const f = op.fn?.fields;
    if (!f && !pinned) continue;
    const facts: OpFields = { ...(f?.reads ? { reads: f.reads } : {}), ...(f?.writes ? { writes: f.writes } : {}), ...(f?.usesContext ? { usesContext: true } : {}), ...(pinned ? { pinned: true } : {}) };
    // Nothing known is said by no entry (the model reads a missing entry as unknown).
    if (Object.keys(facts).length > 0) out[op.id] = facts;
  }
  return out;
}
