/**
 * The plan's flow levers (issue 54 parts 2 and 3), proposed on top of the knob plan: fusing
 * adjacent worker maps (fuse.ts) and letting fast calls pass a slow one (`deterministic: false`,
 * priced by tail.ts). Each is kept only when the model predicts it gains `minGain` over the plan
 * without it; verification then keeps it only when it measures faster.
 *
 * Order is never given up where it is observable: downstream of the map, an operator whose output
 * depends on which element comes when (a zip pairs by position, enumerate numbers them, take/skip/
 * shard pick by position, scan and windows carry state across neighbours), a map inside another
 * operator's inner datasets, or a map whose source writes `deterministic: true` (the user pinned
 * order, `ModelOptions.orderPinned`). Batching is not such an operator: each pass still carries every element
 * once, in batches made of the elements as they come.
 */
import type { PlanChange } from '../shared/analysis';
import type { OpKind } from '../shared/profile';
import type { Config } from './config';
import { MODEL_CONSTANTS as C } from './constants';
import { describeOp, formatRootRate } from './describe';
import { fuseChanges } from './fuse';
import type { Measured } from './measured';
import { keepsOrder, latencySpread, orderedShare, tailWords } from './tail';

/** Operators whose output depends on the order of their input (see the header). */
const ORDER_OBSERVERS: ReadonlySet<OpKind> = new Set<OpKind>(['zip', 'enumerate', 'take', 'skip', 'shard', 'scan', 'window', 'groupByWindow', 'chooseFromDatasets']);

/** The first operator downstream of `id` that observes order, if any. */
export function orderObserver(m: Measured, id: string): string | undefined {
  const seen = new Set<string>();
  const queue = [...(m.consumers.get(id) ?? [])];
  while (queue.length > 0) {
    const next = queue.shift() as string;
    if (seen.has(next)) continue;
    seen.add(next);
    const om = m.ops.get(next);
    if (om && ORDER_OBSERVERS.has(om.op.kind)) return next;
    queue.push(...(m.consumers.get(next) ?? []));
  }
  return undefined;
}

/**
 * `deterministic: false` for each ordered awaiting map whose calls in flight under `cfg` do not
 * cover its latency's tail (tail.ts), where order is not observable or pinned; notes say where it
 * is and order costs rate.
 */
function deterministicChanges(m: Measured, cfg: Config, kept: PlanChange[], rateOf: (changes: PlanChange[]) => number, pinned: ReadonlySet<string>, notes: string[]): PlanChange[] {
  const out: PlanChange[] = [];
  for (const id of m.order) {
    const om = m.ops.get(id);
    const c = cfg[id];
    if (!om || !c || c.placement !== 'main' || !om.isAsync || !keepsOrder(om.op, c)) continue;
    const share = orderedShare(latencySpread(om.op), c.concurrency);
    if (share >= 1 - C.minGain) continue;
    const observer = orderObserver(m, id);
    const held = `${describeOp(om.op)} keeps input order, so a slow call holds back the faster ones behind it (${tailWords(om.op, c.concurrency)})`;
    if (pinned.has(id) || observer !== undefined || om.op.parentId !== undefined) {
      const why = pinned.has(id) ? 'its source pins order (deterministic: true)' : observer !== undefined ? `${describeOp((m.ops.get(observer) ?? om).op)} downstream depends on it` : 'it runs inside inner datasets';
      notes.push(`${held}; the plan keeps the order, since ${why}.`);
      continue;
    }
    const change: PlanChange = { kind: 'deterministic', opId: id, to: false, reason: '' };
    const before = rateOf([...kept, ...out]);
    const after = rateOf([...kept, ...out, change]);
    if (!(after > before * (1 + C.minGain))) continue;
    change.reason = `${held}; with deterministic: false each result passes on as it finishes (${formatRootRate(m, before)} → ${formatRootRate(m, after)} predicted). The order of its output changes: the same elements, in the order they finish.`;
    out.push(change);
  }
  return out;
}

/**
 * The plan's changes with the flow changes (see the header), and notes on order kept where it
 * costs. Fusion is tried two ways: on top of the knob plan (maps it leaves or moves to workers
 * together), and instead of the knob plan's moves of the same maps (a cheap map moved back to the
 * main thread also ends its crossing, but puts its fn there): the better by predicted rate.
 * `added` are the flow changes in `changes`.
 */
export function flowChanges(
  m: Measured,
  kept: PlanChange[],
  toConfig: (changes: PlanChange[]) => Config,
  rateOf: (changes: PlanChange[]) => number,
  pinned: ReadonlySet<string>,
): { changes: PlanChange[]; added: PlanChange[]; notes: string[] } {
  const notes: string[] = [];
  let fused = fuseChanges(m, toConfig(kept), kept, rateOf);
  let base = kept;
  const instead = fuseChanges(m, toConfig([]), [], rateOf);
  if (instead.length > 0) {
    const touched = new Set(instead.flatMap((f) => (f.kind === 'fuse' ? [f.opId, f.with] : [])));
    const others = kept.filter((c) => !(c.kind === 'placement' && touched.has(c.opId)));
    if (rateOf([...others, ...instead]) > rateOf([...kept, ...fused]) * (1 + 1e-9)) {
      base = others;
      fused = instead;
    }
  }
  const withFused = [...base, ...fused];
  const ordered = deterministicChanges(m, toConfig(withFused), withFused, rateOf, pinned, notes);
  return { changes: [...withFused, ...ordered], added: [...fused, ...ordered], notes };
}
