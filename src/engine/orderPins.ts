/**
 * Order the user pinned (issue 54): a map whose source writes `deterministic: true` keeps its input
 * order, and no plan proposes `deterministic: false` for it (`ModelOptions.orderPinned`). Only a
 * literal counts: the default (absent) and an expression are not a pin.
 */
import * as path from 'node:path';
import { locateOps, type GraphSource } from './locate';
import type { PipelineGraph } from './graph/types';

/** The ids of the operators of `graph` whose source writes `deterministic: true`. */
export function orderPinnedOps(graph: PipelineGraph): string[] {
  return graph.ops
    .filter((op) => {
      const k = op.knobs['deterministic'];
      return k?.state === 'literal' && k.value === true;
    })
    .map((op) => op.id)
    .sort();
}

/** The pins of `file`'s chains (and the files it imports); none when the source cannot be read. */
export function sourceOrderPins(file: string, graphs: GraphSource | undefined): string[] {
  if (graphs === undefined) return [];
  try {
    return orderPinnedOps(locateOps(path.resolve(file), graphs));
  } catch {
    return [];
  }
}
