/**
 * Each pipeline of a document as the features see it: the graph (what the source says now) joined
 * with its last profile (what ran) through the engine's operator-id join, marked stale when the
 * document changed since.
 */
import type { FileGraph, GraphOp, PipelineGraph } from '../engine/graph/types';
import { joinOps, type JoinedOp } from '../engine/join';
import { isStale, type DocumentRecord, type PipelineRecord } from './state';

/** One pipeline as the features see it. */
export interface PipelineView {
  uri: string;
  graph: PipelineGraph;
  record?: PipelineRecord;
  /** The document changed since the profile. */
  stale: boolean;
  byGraphId: Map<string, JoinedOp>;
  byProfileId: Map<string, GraphOp>;
}

/** The views of every pipeline in a document. */
export function buildViews(doc: DocumentRecord, graph: FileGraph): PipelineView[] {
  return graph.pipelines.map((p) => {
    const record = doc.profiles.get(p.name);
    if (!record || record.profile.error) {
      return { uri: doc.uri, graph: p, record, stale: record ? isStale(doc, record) : false, byGraphId: new Map(), byProfileId: new Map() };
    }
    const joined = joinOps(p, record.profile, record.analysis);
    return { uri: doc.uri, graph: p, record, stale: isStale(doc, record), ...joined };
  });
}
