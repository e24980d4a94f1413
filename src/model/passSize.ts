/**
 * Elements one pass of an operator's output holds, where the library could not count them in
 * advance: estimated from a source that knows its count and the visit ratio, from a pass of a
 * repeat the run saw end, or from the bytes of the files a `lines` source reads. What a cache
 * after the operator holds (cache.ts sizes it, memory.ts projects it): one estimate for both.
 */
import { describeOp, formatBytes } from './describe';
import type { OpMeasure } from './measured';
import type { OpProfile } from '../shared/profile';

/** The block a `lines` source reads ahead of the lines it hands on (plumber-data's `Lines`). */
const LINES_BLOCK_BYTES = 64 * 1024;

/**
 * The lines a pass of a `lines` source holds, estimated from the bytes of the files it reads and
 * the bytes each line it produced took: for a source no pass of which the run saw end. The window
 * may count up to a block read ahead of its lines; the bytes per line are taken without it, so
 * the count errs high (a cache sized larger than it is, never smaller), by at most 2× at the
 * least it needs, two blocks read.
 */
function linesByBytes(om: OpMeasure): { om: OpMeasure; lines: number } | undefined {
  const c = om.op.counters;
  if (om.op.kind !== 'lines' || c.sourceBytes === undefined || c.sourceBytes <= 0 || c.diskBytesRead < 2 * LINES_BLOCK_BYTES || c.produced <= 0) return undefined;
  return { om, lines: Math.max(1, Math.round((c.produced * c.sourceBytes) / (c.diskBytesRead - LINES_BLOCK_BYTES))) };
}

/**
 * The elements of one pass of `om`'s output and where the count came from, or undefined where
 * nothing tells. `closure`: the ops at and above `om`; `repeat`: a repeat below it that reads it
 * again, if any.
 */
export function passSize(om: OpMeasure, closure: readonly OpMeasure[], repeat: OpProfile | undefined): { cardinality: number; source: string } | undefined {
  const sources = closure.filter((u) => u.op.inputs.length === 0);
  let cardinality: number | undefined;
  let cardinalitySource = 'as the library reported it';
  const pass = repeat?.counters.passElements;
  if (om.op.cardinality !== undefined && om.op.cardinality !== null && Number.isFinite(om.op.cardinality) && om.op.cardinality >= 0) {
    cardinality = om.op.cardinality;
  } else {
    const known = sources.find((s) => s.op.cardinality !== undefined && Number.isFinite(s.op.cardinality) && s.op.counters.produced > 0);
    const byBytes = sources.map(linesByBytes).find((b) => b !== undefined);
    if (known && known.op.cardinality !== undefined) {
      cardinality = Math.round((known.op.cardinality * om.op.counters.produced) / known.op.counters.produced);
      cardinalitySource = `estimated from ${describeOp(known.op)}'s ${known.op.cardinality.toLocaleString('en-US')} elements and the visit ratio`;
    } else if (repeat && pass !== undefined && pass > 0 && repeat.counters.pulled > 0) {
      // No operator could count a pass in advance (lines of files), but the run saw one end.
      cardinality = Math.round((pass * om.op.counters.produced) / repeat.counters.pulled);
      cardinalitySource =
        repeat.counters.pulled === om.op.counters.produced
          ? `counted in a pass of ${describeOp(repeat)} the run completed`
          : `from the ${pass.toLocaleString('en-US')} elements of a pass of ${describeOp(repeat)} the run completed, and the visit ratio`;
    } else if (byBytes) {
      // No pass ended in the run: the lines still to come, by the bytes each line took so far.
      cardinality = Math.round((byBytes.lines * om.op.counters.produced) / byBytes.om.op.counters.produced);
      cardinalitySource = `estimated from the ${formatBytes(byBytes.om.op.counters.sourceBytes ?? 0)} of files that ${describeOp(byBytes.om.op)} reads and the bytes per line the run read`;
    }
  }
  // A take above caps what a pass holds, whatever the source has (take(5000) of 12,500 windows).
  for (const u of closure) {
    const count = u.op.kind === 'take' ? u.op.knobs.count : undefined;
    if (cardinality === undefined || count === undefined || count === null || count < 0 || u.op.counters.produced <= 0) continue;
    const cap = Math.round((count * om.op.counters.produced) / u.op.counters.produced);
    if (cap < cardinality) {
      cardinality = cap;
      cardinalitySource = u === om ? `the count of ${describeOp(u.op)}` : `estimated from ${describeOp(u.op)} and the visit ratio`;
    }
  }
  return cardinality === undefined ? undefined : { cardinality, source: cardinalitySource };
}
