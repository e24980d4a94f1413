/**
 * The pipelines of a file written in another dialect than plumber-data (tfjs-data, Node streams,
 * async-generator chains), found from the same roots as plumber-data's (exports and zero-argument
 * factories) and, unexported, wherever a chain ends in the file (a training script's dataset, a
 * `pipeline(…)` statement), with the places Plumber saw a chain and could not follow it.
 */
import { Node, SourceFile, SyntaxKind } from 'ts-morph';
import type { Values } from '../ast';
import { lineColumn, nodeSpan } from '../operators';
import type { Root } from '../roots';
import type { GraphStop, PipelineGraph } from '../types';
import { materialiseDialect, type DialectRaw } from './common';
import { generators } from './generators';
import { streams } from './streams';
import { tfjs } from './tfjs';
import { findUnfollowed } from './unfollowed';
import { DialectWalker } from './walker';

/** Text a file must hold for any dialect to be in it: files without it are not walked at all. */
const HINT = /@tensorflow\/tfjs|\bstream\b|\bzlib\b|createReadStream|async\s+function\s*\*|async\s*\*/;

export interface DialectGraphs {
  pipelines: PipelineGraph[];
  stops: GraphStop[];
}

/** Every stage reachable from `raw` (inputs and nested stages), itself included. */
function reachable(raw: DialectRaw, out: Set<DialectRaw> = new Set()): Set<DialectRaw> {
  if (out.has(raw)) return out;
  out.add(raw);
  for (const i of raw.inputs) reachable(i, out);
  for (const n of raw.nested ?? []) reachable(n, out);
  return out;
}

function pipelineOf(root: Root, top: DialectRaw, file: string): PipelineGraph | undefined {
  const chain = materialiseDialect(top, file);
  if (chain.ops.length === 0) return undefined;
  const p: PipelineGraph = { name: root.name, exported: root.exported, factory: root.factory, file, head: nodeSpan(root.head), ops: chain.ops, rootId: chain.rootId, partial: chain.partial, dialect: top.dialect };
  if (chain.argSites.length > 0) p.argSites = chain.argSites;
  return p;
}

/**
 * Dialect pipelines of `sf`. `roots` are the file's exports plumber-data did not claim; `taken`
 * says whether a node belongs to a plumber-data chain (an async generator handed to its `from()` is
 * plumber-data's source, not a chain of its own).
 */
export function extractDialects(sf: SourceFile, values: Values, roots: Root[], taken: (node: Node) => boolean): DialectGraphs {
  if (!HINT.test(sf.getFullText())) return { pipelines: [], stops: [] };
  const file = sf.getFilePath();
  const walker = new DialectWalker([tfjs, streams, generators], values);
  const pipelines: PipelineGraph[] = [];
  const covered = new Set<Node>();
  for (const root of roots) {
    const top = walker.resolve(root.expr);
    const p = top ? pipelineOf(root, top, file) : undefined;
    if (!top || !p) continue;
    pipelines.push(p);
    for (const r of reachable(top)) covered.add(r.node);
  }
  findUnfollowed(sf, walker);
  // Unexported chains: every call that is a stage, kept where no other stage pulls from it.
  const found: Array<{ node: Node; raw: DialectRaw }> = [];
  for (const node of [...sf.getDescendantsOfKind(SyntaxKind.CallExpression), ...sf.getDescendantsOfKind(SyntaxKind.NewExpression)]) {
    if (taken(node)) continue;
    const raw = walker.resolve(node);
    if (raw && (raw.node === node || raw.argSites)) found.push({ node, raw });
  }
  const pulled = new Set<Node>();
  // A `pipeline(…)` ends at a copy of its last stage: that stage's own call is pulled by it.
  for (const { raw } of found) for (const r of reachable(raw)) if (r !== raw || raw.argSites) pulled.add(r.node);
  for (const { node, raw } of found) {
    const self = raw.argSites ? node : raw.node;
    if (covered.has(raw.node) || pulled.has(self) || walker.claimed.has(raw.node)) continue;
    // A lone Transform or zlib stream, or a stage whose only input is a parameter, is not a pipeline.
    if (raw.inputs.length === 0 && (raw.partial || (raw.dialect === 'node-streams' && raw.kind !== 'from' && !raw.argSites))) continue;
    const holder = node.getFirstAncestorByKind(SyntaxKind.VariableDeclaration);
    if (holder && walker.loopBuilt.has(holder)) continue;
    const line = lineColumn(sf, node.getStart()).line;
    const what = raw.argSites ? 'pipeline' : 'chain';
    const p = pipelineOf({ name: `local:${holder ? holder.getName() : what}@${line}`, exported: false, factory: false, head: holder ? holder.getNameNode() : node, expr: node }, raw, file);
    if (p) pipelines.push(p);
    for (const r of reachable(raw)) covered.add(r.node);
  }
  return { pipelines, stops: walker.stops.list };
}
