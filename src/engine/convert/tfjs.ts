/**
 * tfjs-data → plumber-data. The converted part is handed back to consumers as a tfjs `Dataset`
 * through plumber-data's `toTfDataset(dataset, tf)`, so `model.fitDataset` and `iterator()` keep
 * working. Rules:
 * - `tf.data.array(xs)` is `from(xs)`; `tf.data.generator(g)` is `from(g)` (g is called afresh
 *   for each pass, as tfjs calls it for each iteration);
 * - `map` and `filter` keep their fn; `mapAsync(f)` is `map(f)` (one call in flight, as tfjs
 *   awaits one at a time, until the plan says more);
 * - `prefetch`, `repeat`, `take`, `skip` are the same; an unseeded `shuffle` is random in both (a
 *   different generator, which no consumer can rely on); a seeded one fixes an order only tfjs's
 *   generator reproduces, so the conversion stops before it;
 * - `batch` stacks elements into tensors, which only tfjs does: the conversion stops before it,
 *   and it and what follows stay tfjs operators on the adapter's output (so consumers still get
 *   tensors). Any operator not listed here stops the conversion the same way.
 */
import type { GraphOp, PipelineGraph } from '../graph/types';
import { linearChain } from './chain';
import { secondArgRefusal } from './fns';
import { tfjsCsvSource } from './tfjsCsv';
import { calledName, opArgs } from './text';
import { stagesUntilRefused, type Reading, type Stage } from './types';

/** tfjs methods plumber-data has under the same name and arguments. */
const SAME: Record<string, string> = { map: 'map', mapAsync: 'map', filter: 'filter', prefetch: 'prefetch', repeat: 'repeat', take: 'take', skip: 'skip' };

/** Why each tfjs method that is not converted stays as written. */
const STAYS: Record<string, string> = {
  batch: "tfjs's batch stacks elements into tensors, so it and what follows stay tfjs operators on the converted part",
};

function stage(op: GraphOp, text: string): Stage | string {
  const name = calledName(op, text);
  const args = opArgs(op, text).map((a) => a.text);
  if (name === 'shuffle') {
    if (args.length >= 2 && args[1] !== 'undefined') return `${op.label} is seeded: tfjs's generator fixes an order plumber-data's would not reproduce, so it and what follows stay in tfjs`;
    const options: Stage['options'] = args[2] !== undefined ? [['reshuffleEachIteration', args[2]]] : [];
    return { op, method: 'shuffle', args: args.slice(0, 1), options };
  }
  const method = SAME[name];
  if (!method) return STAYS[name] ?? `plumber-data has no faithful counterpart of tfjs's ${name}, so it and what follows stay in tfjs`;
  if (method === 'map' || method === 'filter') {
    const refusal = secondArgRefusal(op, text, args[0], 'none in tfjs');
    if (refusal) return refusal;
  }
  return { op, method, args, options: [] };
}

/** The tf namespace expression a source call is written on (`tf` in `tf.data.array(`), if any. */
function namespaceOf(source: GraphOp, text: string): string | undefined {
  const callee = text.slice(source.call.start, source.name.start);
  return /^([\s\S]+)\.\s*data\s*\.\s*$/.exec(callee)?.[1]?.trim();
}

export function readTfjs(pipeline: PipelineGraph, text: string): Reading {
  const chain = linearChain(pipeline);
  if (!Array.isArray(chain)) return { ok: false, reason: chain.reason };
  const [sourceOp, ...rest] = chain;
  if (!sourceOp) return { ok: false, reason: 'The pipeline has no operators.' };
  const sourceName = calledName(sourceOp, text);
  if (sourceName !== 'array' && sourceName !== 'generator' && sourceName !== 'csv') {
    return { ok: false, reason: `tf.data.${sourceName} reads its input its own way; only tf.data.array, tf.data.generator and tf.data.csv sources are converted.` };
  }
  const ns = namespaceOf(sourceOp, text);
  if (!ns) return { ok: false, reason: `${sourceOp.label} is not called on the tf namespace (\`tf.data.${sourceName}\`), which the adapter back to a tfjs Dataset needs.` };
  const csvSource = sourceName === 'csv' ? tfjsCsvSource(sourceOp, text) : undefined;
  if (typeof csvSource === 'string') return { ok: false, reason: csvSource };
  const args = opArgs(sourceOp, text);
  if (!csvSource && args.length !== 1) return { ok: false, reason: `${sourceOp.label} takes one argument to be converted.` };
  const { stages, stoppedAt } = stagesUntilRefused(rest, (op) => stage(op, text));
  if (stages.length === 0 && stoppedAt) return { ok: false, reason: `Nothing after the source can be converted: ${stoppedAt.why}.` };
  const notes = stages.some((s) => s.method === 'map' || s.method === 'filter')
    ? ['tfjs runs map and filter fns inside tf.tidy; plumber-data does not, so tensors a fn creates and does not return are not disposed for it.']
    : [];
  const wrap = (c: string) => `toTfDataset(${c}, ${ns})`;
  if (csvSource) {
    return {
      ok: true,
      reading: { source: csvSource.source([]), sourceWith: csvSource.source, sourceOp, stages, wrap, imports: ['csv', 'toTfDataset'], ...(stoppedAt ? { stoppedAt } : {}), notes: [...csvSource.notes, ...notes] },
    };
  }
  return {
    ok: true,
    reading: { source: `from(${args[0]!.text})`, sourceOp, stages, wrap, imports: ['from', 'toTfDataset'], ...(stoppedAt ? { stoppedAt } : {}), notes },
  };
}
