/**
 * The pipeline's unit: what one root element is (`el`, or `batches` after a batching operator),
 * and an operator's rate expressed in it, so every surface (lenses, tree, report, CLI) shows
 * numbers a person can compare across operators.
 */
import type { OpAnalysis } from './analysis';
import type { OpKind, Profile } from './profile';

/** Operators whose one output element holds many input elements: the pipeline counts batches after them. */
const BATCHING: ReadonlySet<OpKind> = new Set<OpKind>(['batch', 'paddedBatch', 'bucketBySequenceLength', 'rebatch', 'window']);

/** The pipeline's unit, plural: `batches` when its root (through prefetch/cache/take…) is a batching operator, else `el`. */
export function rootUnit(profile: Profile): string {
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  // Operators that pass elements through one for one do not change what the pipeline counts.
  const passThrough: ReadonlySet<OpKind> = new Set<OpKind>(['prefetch', 'cache', 'take', 'skip', 'repeat', 'shuffle', 'ignoreErrors', 'shard']);
  const seen = new Set<string>();
  for (let op = byId.get(profile.pipeline.rootId); op && !seen.has(op.id); op = op.inputs[0] !== undefined ? byId.get(op.inputs[0]) : undefined) {
    seen.add(op.id);
    if (BATCHING.has(op.kind)) return 'batches';
    if (!passThrough.has(op.kind)) return 'el';
  }
  return 'el';
}

/** An operator's rate in the pipeline's unit (root elements per second): its own rate over its visit ratio. */
export function rootRateOf(an: OpAnalysis): number {
  return an.visitRatio > 0 ? an.measuredRate / an.visitRatio : an.measuredRate;
}
