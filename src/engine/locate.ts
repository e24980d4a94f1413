/**
 * Finding the source of every operator a run reported, the way the runner found the pipeline: by
 * operator id (src/shared/opId.ts) across every chain the graph extracts from the pipeline's file
 * and the files it imports, exported or not. A pipeline built inside a class method behind an
 * exported factory has no exported chain in the static graph, yet each of its operators is in
 * some extracted chain at the position the runner recorded.
 */
import type { FileGraph, GraphOp, PipelineGraph } from './graph/types';
import { opIdOfSite, siteOfOpId } from '../shared/opId';

/** What `locateOps` reads: a workspace's graphs and imports. */
export interface GraphSource {
  graphOf(file: string): FileGraph;
  importedFiles(file: string): string[];
}

/** An op id written relative to `fromFile`, rewritten relative to `toFile`. */
function rekey(id: string, fromFile: string, toFile: string): string {
  const site = siteOfOpId(id, fromFile);
  return site ? opIdOfSite(site, toFile) : id;
}

/**
 * Every chain of `pipelineFile` and of the files it imports (one level deep, then their imports,
 * up to `depth`), as one graph whose op ids and inputs are the runner's ids for a pipeline in
 * `pipelineFile`. An operator in several chains (two exports sharing a base) appears once.
 */
export function locateOps(pipelineFile: string, source: GraphSource, name = 'default', depth = 3): PipelineGraph {
  const files: string[] = [pipelineFile];
  const seen = new Set(files);
  for (let i = 0, level = 0; i < files.length && level <= depth; level++) {
    const end = files.length;
    for (; i < end; i++) {
      for (const f of source.importedFiles(files[i]!)) {
        if (seen.has(f)) continue;
        seen.add(f);
        files.push(f);
      }
    }
  }
  const ops: GraphOp[] = [];
  const byId = new Set<string>();
  let partial = false;
  const own = source.graphOf(pipelineFile);
  for (const file of files) {
    const graph = source.graphOf(file);
    for (const p of graph.pipelines) {
      partial ||= p.partial;
      for (const op of p.ops) {
        const id = rekey(op.id, graph.file, pipelineFile);
        if (byId.has(id)) continue;
        byId.add(id);
        const located: GraphOp = { ...op, id, inputs: op.inputs.map((x) => rekey(x, graph.file, pipelineFile)), index: ops.length };
        if (op.parent !== undefined) located.parent = rekey(op.parent, graph.file, pipelineFile);
        ops.push(located);
      }
    }
  }
  const head = own.pipelines[0]?.head ?? { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, start: 0, end: 0 };
  return { name, exported: false, factory: false, file: pipelineFile, head, ops, rootId: ops[ops.length - 1]?.id ?? '', partial };
}
