/**
 * An operator's label and a rate in the words every reason sentence uses: the model's sentences,
 * the runner's message for a run that saw no element, the CLI and the editor say them alike.
 */
import { parseOpId } from './opId';
import { isPlainInner, type OpProfile } from './profile';

/**
 * A short label for an operator as a user wrote it: `map(decode)`, `batch(32)`, `prefetch(4)`,
 * `files`. An inline fn has no name, and two `map(fn)` in one sentence would not say which is
 * which: its label says where it is written (`map(fn) on line 13`, `map(fn) at lib/x.ts:3`).
 */
export function describeOp(op: OpProfile): string {
  const k = op.knobs;
  switch (op.kind) {
    case 'map':
    case 'filter':
    case 'flatMap':
      return op.fnName ? `${op.kind}(${op.fnName})` : `${op.kind}(fn)${writtenAt(op.id)}`;
    case 'interleave':
      return op.fnName ? `interleave(${op.fnName})` : `interleave${writtenAt(op.id)}`;
    case 'batch':
    case 'paddedBatch':
    case 'rebatch':
    case 'window':
      return k.batchSize !== undefined ? `${op.kind}(${k.batchSize})` : op.kind;
    case 'shard':
      return k.numShards !== undefined ? `shard(${k.numShards}, ${k.shardIndex ?? 0})` : 'shard';
    case 'scan':
    case 'groupByWindow':
    case 'bucketBySequenceLength':
      return op.fnName ? `${op.kind}(${op.fnName})` : `${op.kind}${writtenAt(op.id)}`;
    case 'prefetch':
    case 'shuffle':
      return k.bufferSize !== undefined ? `${op.kind}(${k.bufferSize})` : op.kind;
    case 'repeat':
      return k.count === undefined || k.count < 0 ? 'repeat()' : `repeat(${k.count})`;
    case 'take':
    case 'skip':
      return k.count !== undefined ? `${op.kind}(${k.count})` : op.kind;
    case 'cache':
      return k.cachePath ? `cache(${JSON.stringify(k.cachePath)})` : 'cache()';
    case 'from':
      // The plain iterables an interleave's fn returns (plumber-data counts them on a `from` it makes).
      return isPlainInner(op) ? `inner iterable of interleave${writtenAt(op.parentId!)}` : 'from';
    default:
      return op.kind;
  }
}

/** " on line 13" (" at lib/x.ts:3" in another file) for an operator's id; empty when the id names no place. */
function writtenAt(id: string): string {
  const site = parseOpId(id);
  if (!site) return '';
  return site.rel === undefined ? ` on line ${site.line}` : ` at ${site.rel}:${site.line}`;
}

/** Three significant figures, four below 10,000, thousands grouped: 12.1, 0.48, 1,234, 1,150,000. */
export function formatNumber(x: number): string {
  const a = Math.abs(x);
  if (a >= 10_000) return Number(x.toPrecision(3)).toLocaleString('en-US');
  if (a >= 100) return Math.round(x).toLocaleString('en-US');
  if (a >= 10) return String(Math.round(x * 10) / 10);
  if (a >= 1) return String(Math.round(x * 100) / 100);
  return String(Number(x.toPrecision(2)));
}

/** A rate in elements (or `unit`s) per second: 83 el/s, 9.5 el/s, 12,400 batches/s. */
export function formatRate(r: number, unit = 'el'): string {
  if (!Number.isFinite(r)) return 'unbounded';
  return `${formatNumber(r)} ${unit}/s`;
}
