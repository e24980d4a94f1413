/**
 * Each pipeline of a document as the features see it: the graph (what the source says now) joined
 * with its last profile (what ran) through the engine's operator-id join, marked stale when the
 * document changed since.
 */
import type { FileGraph, GraphOp, PipelineGraph } from '../engine/graph/types';
import { joinOps, type JoinedOp } from '../engine/join';
import { isStale, type DocumentRecord, type PipelineRecord } from './state';
import { rootUnit, sourceLabel } from './features/glance';

/** One pipeline as the features see it. */
export interface PipelineView {
  uri: string;
  graph: PipelineGraph;
  record?: PipelineRecord;
  /** The document changed since the profile. */
  stale: boolean;
  byGraphId: Map<string, JoinedOp>;
  byProfileId: Map<string, GraphOp>;
  /** Each operator's label as the source writes it (`range(0, 1_000_000)`), by graph id. */
  labels?: Map<string, string>;
  /** What the pipeline counts, plural (`el`, `batches`): the unit of every rate shown for it. */
  unit?: string;
}

/** The label of a graph operator as its source writes it. */
export function labelOf(view: PipelineView, op: GraphOp): string {
  return view.labels?.get(op.id) ?? op.label;
}

/** The views of every pipeline in a document. */
export function buildViews(doc: DocumentRecord, graph: FileGraph): PipelineView[] {
  return graph.pipelines.map((p) => {
    const record = doc.profiles.get(p.name);
    // Labels come from the document's text as it is now (the graph's offsets are into it); an
    // operator in another file keeps the graph's label.
    const labels = new Map(p.ops.filter((o) => o.file === doc.file).map((o) => [o.id, sourceLabel(o, doc.text)]));
    if (!record || record.profile.error) {
      return { uri: doc.uri, graph: p, record, stale: record ? isStale(doc, record) : false, byGraphId: new Map(), byProfileId: new Map(), labels, unit: 'el' };
    }
    const joined = joinOps(p, record.profile, record.analysis);
    return { uri: doc.uri, graph: p, record, stale: isStale(doc, record), ...joined, labels, unit: rootUnit(record.profile) };
  });
}
