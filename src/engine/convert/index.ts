/**
 * "Convert to plumber-data": rewrites a dialect chain (tfjs-data, Node stream operators,
 * async-generator stages) into plumber-data with the plan's knobs, keeping the export and what
 * consumers receive. Only the faithful part of a chain is converted (each dialect's rules are in
 * ./tfjs.ts, ./streams.ts and ./generators.ts), from its source up to the first operator without a
 * faithful counterpart; where nothing can be, the answer is one sentence why. The result is a set of edits to the
 * pipeline's file (the chain, one import, an `export ` a worker needs) and the file's new text;
 * everything else in the file stays byte for byte.
 */
import type { Dialect } from '../../shared/profile';
import { applyEdits, type PlannedEdit } from '../fixes/edits';
import { importEdit, nameClash } from './imports';
import { additionsOf, chainText } from './render';
import { readGenerators } from './generators';
import { readStreams } from './streams';
import { readTfjs } from './tfjs';
import type { FileGraph } from '../graph/types';
import type { ConvertChange, ConvertInput, ConvertOutcome, Reading } from './types';

export type { ConvertChange, ConvertInput, ConvertOutcome } from './types';

const READERS: Partial<Record<Dialect, (input: ConvertInput) => Reading>> = {
  'tfjs-data': (i) => readTfjs(i.pipeline, i.text),
  'node-streams': (i) => readStreams(i.pipeline, i.text),
  'async-generator': (i) => readGenerators(i.pipeline, i.text),
};

/** The converted file, or why the chain is not converted. */
export function convertPipeline(input: ConvertInput): ConvertOutcome {
  const { pipeline, change, text } = input;
  const dialect = pipeline.dialect ?? change.from;
  const read = READERS[dialect];
  if (!read) return { ok: false, reason: `Converting ${dialect} pipelines to plumber-data is not supported yet.` };
  const reading = read(input);
  if (!reading.ok) return reading;
  const r = reading.reading;
  const clash = nameClash(text, r.imports);
  if (clash) return { ok: false, reason: clash };
  const notes = [...r.notes];
  if (r.stoppedAt) notes.push(`Converted up to ${r.stoppedAt.op.label}: ${r.stoppedAt.why}.`);
  const exports: PlannedEdit[] = [];
  const additions = additionsOf(r, input, exports, notes);
  if (typeof additions === 'string') return { ok: false, reason: additions };
  const last = r.stages[r.stages.length - 1]?.op ?? r.sourceOp;
  // A method chain's last call holds its source; nested calls (generator stages) hold it innermost.
  const start = r.span?.start ?? Math.min(r.sourceOp.call.start, last.call.start);
  const end = r.span?.end ?? Math.max(r.sourceOp.call.end, last.call.end);
  const selfImported = [...additions.values()].some((a) => a.options.some(([k, v]) => k === 'module' && (v === '__filename' || v === 'import.meta.url')));
  const chain: PlannedEdit = { file: pipeline.file, start, end, newText: r.wrap(chainText(r, additions), selfImported) };
  const edits = [importEdit(pipeline.file, text, r.imports, input.moduleKind), chain, ...exports, ...(r.extraEdits ?? [])];
  for (const e of [...exports, ...(r.extraEdits ?? [])])
    if (e.start < chain.end && e.end > chain.start) return { ok: false, reason: 'A function the workers need is declared inside the chain; move it out and export it.' };
  const own = edits.filter((e) => e.file === pipeline.file);
  return { ok: true, edits, text: applyEdits(text, own), converted: [...(r.span ? [] : [r.sourceOp.id]), ...r.stages.map((s) => s.op.id)], notes };
}

/** The conversion of the chain `change` names (by its root) in a file's graph, or why not. */
export function convertInGraph(graph: FileGraph, text: string, change: ConvertChange, runtimeModuleOf?: ConvertInput['runtimeModuleOf']): ConvertOutcome {
  const pipeline = graph.pipelines.find((p) => p.rootId === change.opId) ?? graph.pipelines.find((p) => p.ops.some((o) => o.id === change.opId));
  if (!pipeline) return { ok: false, reason: `The chain ending at ${change.opId} is no longer in the source; profile again.` };
  return convertPipeline({ pipeline, change, text, moduleKind: graph.moduleKind, ...(runtimeModuleOf ? { runtimeModuleOf } : {}) });
}
