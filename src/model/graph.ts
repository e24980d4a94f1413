/**
 * Walks over the measured operator graph: what is upstream and downstream of an operator, the
 * repeats that read it again, and the interleaves it runs inside.
 */
import type { Measured } from './measured';

/**
 * How many of `id`'s instances run at once because it sits inside inner datasets: the product,
 * over its enclosing interleaves, of the inner datasets each pulls at once — min(cycleLength,
 * parallelism) (src/data/internal/ops/interleave.ts: at most cycleLength are open, and
 * `parallelism` of them are pulled ahead concurrently). A flatMap flattens its inner datasets one
 * after another, so it multiplies by 1. `outer` gives an interleave's (cycleLength, parallelism)
 * under some configuration.
 */
export function nesting(m: Measured, id: string, outer: (interleaveId: string) => { cycle: number; parallelism: number }): number {
  let factor = 1;
  let cur = m.ops.get(id)?.op.parentId;
  for (let guard = 0; cur !== undefined && guard <= m.order.length; guard++) {
    const parent = m.ops.get(cur);
    if (!parent) break;
    if (parent.op.kind === 'interleave') {
      const o = outer(cur);
      factor *= Math.max(1, Math.min(o.cycle, o.parallelism));
    }
    cur = parent.op.parentId;
  }
  return factor;
}

/** The nearest interleave enclosing `id` (through its `parentId` chain), if any. */
export function enclosingInterleave(m: Measured, id: string): string | undefined {
  let cur = m.ops.get(id)?.op.parentId;
  for (let guard = 0; cur !== undefined && guard <= m.order.length; guard++) {
    const parent = m.ops.get(cur);
    if (!parent) return undefined;
    if (parent.op.kind === 'interleave') return cur;
    cur = parent.op.parentId;
  }
  return undefined;
}

/**
 * Ids of `id` and everything upstream of it: its inputs and, for an interleave or flatMap, the
 * operators of its inner datasets (they name it as `parentId`) and everything upstream of those.
 */
export function upstreamClosure(m: Measured, id: string): Set<string> {
  const seen = new Set<string>();
  const stack = [id];
  while (stack.length > 0) {
    const cur = stack.pop() as string;
    if (seen.has(cur)) continue;
    seen.add(cur);
    for (const input of m.ops.get(cur)?.op.inputs ?? []) stack.push(input);
    for (const child of m.children.get(cur) ?? []) stack.push(child);
  }
  return seen;
}

/** Ids strictly downstream of `id`, following consumers to the root. */
export function downstream(m: Measured, id: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>([id]);
  const stack = [...(m.consumers.get(id) ?? [])];
  while (stack.length > 0) {
    const cur = stack.pop() as string;
    if (seen.has(cur)) continue;
    seen.add(cur);
    out.push(cur);
    stack.push(...(m.consumers.get(cur) ?? []));
  }
  return out;
}

/**
 * How many times the pipeline reads what `id` produces in its whole life: the product of the
 * counts of the repeats downstream of it; Infinity when one repeats forever (no count, or a
 * negative one) and 1 when none repeats.
 */
export function passesOver(m: Measured, id: string): number {
  let passes = 1;
  for (const d of downstream(m, id)) {
    const op = m.ops.get(d)?.op;
    if (op?.kind !== 'repeat') continue;
    const count = op.knobs.count;
    if (count === undefined || count === null || count < 0) return Infinity;
    passes *= Math.max(1, count);
  }
  return passes;
}
