/**
 * The operator-id join: matches a profile's operators (what ran) to the graph's (what the source
 * says now) — by operator id (src/shared/opId.ts) when the source still matches, else by kind and
 * position in the chain (the 2nd `map` is the 2nd `map`), so numbers stay on the right lines after
 * an edit. The server's views, the CLI's `fix` and the diagnose routine all join through here.
 */
import type { Analysis, OpAnalysis } from '../shared/analysis';
import { isPlainInner, type OpProfile, type Profile } from '../shared/profile';
import type { GraphOp, PipelineGraph } from './graph/types';

export interface JoinedOp {
  prof: OpProfile;
  an?: OpAnalysis;
}

/** Profile operators in chain order: inputs before the operators that pull from them. */
function profileChain(profile: Profile): OpProfile[] {
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const out: OpProfile[] = [];
  const seen = new Set<string>();
  const visit = (id: string): void => {
    if (seen.has(id)) return;
    seen.add(id);
    const op = byId.get(id);
    if (!op) return;
    for (const i of op.inputs) visit(i);
    out.push(op);
  };
  visit(profile.pipeline.rootId);
  for (const o of profile.ops) visit(o.id);
  return out;
}

function occurrenceKeys<T extends { kind: string }>(list: T[]): Map<T, string> {
  const counts = new Map<string, number>();
  const keys = new Map<T, string>();
  for (const item of list) {
    const n = counts.get(item.kind) ?? 0;
    counts.set(item.kind, n + 1);
    keys.set(item, `${item.kind}#${n}`);
  }
  return keys;
}

/** Match a profile's operators to the graph's. */
export function joinOps(graph: PipelineGraph, profile: Profile, analysis?: Analysis): { byGraphId: Map<string, JoinedOp>; byProfileId: Map<string, GraphOp> } {
  const byGraphId = new Map<string, JoinedOp>();
  const byProfileId = new Map<string, GraphOp>();
  const graphById = new Map(graph.ops.map((o) => [o.id, o]));
  const an = new Map((analysis?.ops ?? []).map((a) => [a.opId, a]));
  const unmatched: OpProfile[] = [];
  for (const prof of profile.ops) {
    const g = graphById.get(prof.id);
    if (g && g.kind === prof.kind) {
      byGraphId.set(g.id, { prof, an: an.get(prof.id) });
      byProfileId.set(prof.id, g);
    } else if (!isPlainInner(prof)) {
      // The plain iterables an interleave opens have no place in the source to join to.
      unmatched.push(prof);
    }
  }
  if (unmatched.length > 0) {
    const graphKeys = occurrenceKeys(graph.ops);
    const graphByKey = new Map([...graphKeys].map(([op, key]) => [key, op]));
    const profKeys = occurrenceKeys(profileChain(profile).filter((o) => !o.overridden && !isPlainInner(o)));
    for (const prof of unmatched) {
      const key = profKeys.get(prof);
      const g = key ? graphByKey.get(key) : undefined;
      if (!g || byGraphId.has(g.id)) continue;
      byGraphId.set(g.id, { prof, an: an.get(prof.id) });
      byProfileId.set(prof.id, g);
    }
  }
  return { byGraphId, byProfileId };
}

/**
 * The operator whose place in the source shows `opId`: itself, or for the plain iterables an
 * interleave opens (which have no place of their own), that interleave — where the bottleneck
 * they are gets its lens, its hover and its mark in the tree.
 */
export function shownAt(profile: Profile, opId: string | undefined): string | undefined {
  if (opId === undefined) return undefined;
  const op = profile.ops.find((o) => o.id === opId);
  return op && isPlainInner(op) ? op.parentId : opId;
}
