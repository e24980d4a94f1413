/**
 * The edit of a reorder: the moved operator's call (`.filter(isValid, opts)`, with the comments and
 * line break written before it) is cut from where it is and written just before the operator it
 * goes before, in the same chain. Refused unless the operators are one straight chain in one file:
 * each is called on the one before it, with nothing but whitespace and comments between.
 */
import type { PlanChange } from '../../shared/analysis';
import type { GraphOp } from '../graph/types';

/** Where the operators and the text come from (a part of the edit engine's `FixContext`). */
export interface ReorderSource {
  opFor(id: string): GraphOp | undefined;
  textOf(file: string): string;
}

/** One text replacement, as the edit engine's `PlannedEdit`. */
export interface ReorderEdit {
  file: string;
  start: number;
  end: number;
  newText: string;
}

type ReorderChange = Extract<PlanChange, { kind: 'reorder' }>;

/** What may stand between a receiver and its `.name(`: whitespace, comments, the dot (or `?.`). */
const BETWEEN = /^(?:\s|\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)*\??\.(?:\s|\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)*$/;

/** Where the moved call's text starts and ends, and where it goes; or why it cannot move. */
export interface ReorderCut {
  file: string;
  /** The moved operator's segment: from the end of its receiver to the end of its call. */
  from: number;
  to: number;
  /** The end of the receiver of the operator it goes before: the segment is written there. */
  at: number;
}

/** The cut a reorder makes in the chain, or why the operators are not one straight chain in one file. */
export function reorderCut(change: ReorderChange, ctx: ReorderSource): ReorderCut | { reason: string } {
  const moved = ctx.opFor(change.opId);
  const before = ctx.opFor(change.before);
  if (!moved || !before) return { reason: `The operator ${moved ? change.before : change.opId} is no longer in the source; profile again.` };
  const text = ctx.textOf(moved.file);
  const chain: GraphOp[] = [moved];
  // From the moved operator up to the one it goes before, each the receiver of the next.
  let cur: GraphOp = moved;
  while (cur !== before) {
    const up = cur.inputs.length === 1 ? ctx.opFor(cur.inputs[0]!) : undefined;
    if (!up || !calledOn(cur, up, text)) return { reason: `${moved.label} and ${before.label} are not one straight chain in one file, so Plumber cannot move one before the other.` };
    chain.push(up);
    cur = up;
  }
  const receiver = before.inputs.length === 1 ? ctx.opFor(before.inputs[0]!) : undefined;
  if (!receiver || !calledOn(before, receiver, text)) return { reason: `${before.label} is not called on the operator before it in the same chain, so Plumber cannot move ${moved.label} before it.` };
  const movedReceiver = chain[1]!;
  return { file: moved.file, from: movedReceiver.call.end, to: moved.call.end, at: receiver.call.end };
}

/** `op` is written as `.name(…)` called directly on `up`'s call, in the same file. */
function calledOn(op: GraphOp, up: GraphOp, text: string): boolean {
  return op.file === up.file && op.call.start === up.call.start && up.call.end <= op.name.start && BETWEEN.test(text.slice(up.call.end, op.name.start));
}

/** The two edits of a reorder: the segment written before the receiver's end of `before`'s call, and cut from where it was. */
export function reorderEdits(change: ReorderChange, ctx: ReorderSource): ReorderEdit[] | { reason: string } {
  const cut = reorderCut(change, ctx);
  if ('reason' in cut) return cut;
  const segment = ctx.textOf(cut.file).slice(cut.from, cut.to);
  return [
    { file: cut.file, start: cut.at, end: cut.at, newText: segment },
    { file: cut.file, start: cut.from, end: cut.to, newText: '' },
  ];
}

/**
 * Where an offset of the text before the reorder lands after it: the segment moves up to `at`,
 * what lay between `at` and the segment moves down by the segment's length, the rest stays.
 */
export function movedOffset(cut: ReorderCut, offset: number): number {
  const len = cut.to - cut.from;
  if (offset >= cut.from && offset < cut.to) return cut.at + (offset - cut.from);
  if (offset >= cut.at && offset < cut.from) return offset + len;
  return offset;
}

/** The `line:column` id (1-based) of an offset in a text. */
export function idAt(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1) + 1;
  return `${line}:${column}`;
}
