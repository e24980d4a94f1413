/**
 * The edits a surface applies for a plan that may hold a conversion: the conversion's (the chain
 * rewritten, see ./index.ts) and the fix engine's for the other changes, which are on operators
 * outside the converted chain. The plan names operators by profile id; the rewrite reads the
 * source's graph, so the change is re-keyed through the fix context first.
 */
import type { PlanChange } from '../../shared/analysis';
import type { Profile } from '../../shared/profile';
import type { GraphOp } from '../graph/types';
import { joinOps } from '../join';
import { locateOps, type GraphSource } from '../locate';
import { editsForChanges, type FixContext, type FixOutcome, type PlannedEdit } from '../fixes/edits';
import { convertPipeline } from './index';
import type { ConvertChange } from './types';

/** The convert change in graph ids, with the map back to profile ids; or why an operator is missing. */
function rekeyed(change: ConvertChange, ctx: FixContext): { change: ConvertChange; profileIdOf: Map<string, string> } | string {
  const profileIdOf = new Map<string, string>();
  const graphId = (id: string): string | undefined => {
    const op = ctx.opFor(id);
    if (op) profileIdOf.set(op.id, id);
    return op?.id;
  };
  const root = graphId(change.opId);
  if (!root) return `The operator ${change.opId} is no longer in the source; profile again.`;
  const then: PlanChange[] = [];
  for (const c of change.then) {
    const id = graphId(c.opId);
    if (!id) return `The operator ${c.opId} is no longer in the source; profile again.`;
    then.push({ ...c, opId: id });
  }
  const opIds = change.opIds.map((id) => graphId(id) ?? id);
  return { change: { ...change, opId: root, opIds, then }, profileIdOf };
}

/** Edits, and what a conversion among them left as written or changes unseen (one sentence each). */
export type ConversionOutcome = (Extract<FixOutcome, { ok: true }> & { notes?: string[] }) | Extract<FixOutcome, { ok: false }>;

/** The edits of a conversion on its own. */
export function conversionEdits(change: ConvertChange, ctx: FixContext): ConversionOutcome {
  const r = rekeyed(change, ctx);
  if (typeof r === 'string') return { ok: false, reason: r };
  const file = ctx.pipeline.file;
  const runtime = ctx.runtimeModuleOf;
  const out = convertPipeline({
    pipeline: ctx.pipeline,
    change: r.change,
    text: ctx.textOf(file),
    moduleKind: ctx.graphOf(file).moduleKind,
    ...(runtime ? { runtimeModuleOf: (id: string) => runtime(r.profileIdOf.get(id) ?? id) } : {}),
  });
  return out.ok ? { ok: true, edits: out.edits, notes: out.notes } : out;
}

/** The edits for `changes` (one of which may be a conversion), or why they cannot be made together. */
export function editsWithConversion(changes: PlanChange[], ctx: FixContext): ConversionOutcome {
  const convert = changes.find((c): c is ConvertChange => c.kind === 'convert');
  if (!convert) return editsForChanges(changes, ctx);
  const converted = conversionEdits(convert, ctx);
  if (!converted.ok) return converted;
  // The dialect's own changes on the converted operators are superseded by the conversion's `then`.
  const replaced = new Set([convert.opId, ...convert.opIds]);
  const rest = changes.filter((c) => c !== convert && !replaced.has(c.opId));
  if (rest.length === 0) return converted;
  const others = editsForChanges(rest, ctx);
  if (!others.ok) return others;
  const overlaps = (a: PlannedEdit, b: PlannedEdit): boolean => a.file === b.file && a.start < b.end && b.start < a.end;
  if (others.edits.some((e) => converted.edits.some((c) => overlaps(e, c)))) return { ok: false, reason: 'Two of the fixes edit the same code; apply them one at a time.' };
  return { ok: true, edits: [...converted.edits, ...others.edits], ...(converted.notes ? { notes: converted.notes } : {}) };
}

/**
 * The edits that write `offered` (a plan's offered changes) into the source of `file`, profiled as
 * `first` and last run as `last`: knob changes where their operators are written (by op id; by
 * kind and position in the named pipeline when the source moved since), a conversion of the named
 * chain. What `plumber fix` and bench:dialects apply.
 */
export function editsForPlan(file: string, graphs: GraphSource, textOf: (file: string) => string, offered: PlanChange[], first: Profile, last: Profile): ConversionOutcome {
  const located = locateOps(file, graphs);
  const byId = new Map(located.ops.map((o) => [o.id, o]));
  const named = graphs.graphOf(file).pipelines.find((x) => x.name === first.pipeline.exportName);
  const joined = named ? joinOps(named, first).byProfileId : new Map<string, GraphOp>();
  const converting = offered.some((c) => c.kind === 'convert');
  return editsWithConversion(offered, {
    pipeline: converting && named ? named : located,
    graphOf: (f) => graphs.graphOf(f),
    textOf,
    opFor: (id) => byId.get(id) ?? joined.get(id),
    runtimeModuleOf: (id) => (last.ops.find((o) => o.id === id) ?? first.ops.find((o) => o.id === id))?.fnModule,
  });
}
