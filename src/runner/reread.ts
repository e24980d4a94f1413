/** Which operators' output a repeat reads again: where a cache could pay. */
import type { OpProfile } from '../shared/profile';

/**
 * The operators whose output a repeat (more than one pass) reads again, and everything upstream of
 * them (the inner datasets an interleave's or flatMap's fn builds included): where a cache could
 * pay, so what a cache on disk would cost there is worth measuring.
 */
export function rereadByRepeat(ops: readonly OpProfile[]): Set<string> {
  const byId = new Map(ops.map((o) => [o.id, o]));
  const out = new Set<string>();
  const visit = (id: string): void => {
    const op = byId.get(id);
    if (!op || out.has(id)) return;
    out.add(id);
    for (const i of op.inputs) visit(i);
    for (const inner of ops) if (inner.parentId === id) visit(inner.id);
  };
  for (const op of ops) {
    const count = op.knobs.count;
    if (op.kind === 'repeat' && (count === undefined || count < 0 || count > 1)) for (const i of op.inputs) visit(i);
  }
  return out;
}
