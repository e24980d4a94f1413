/**
 * The honest baselines Plumber's advice is measured against, each a set of runner overrides
 * computed from the as-written profile (so no pipeline source is ever edited):
 * - heuristic: what a count-the-cores rule does (tf.data's HEURISTIC baseline): every map, filter
 *   and interleave gets parallelism = cores, and a prefetch of 2 goes at the end;
 * - nodeHeuristic: what a careful Node engineer does without a tool: every sync map/filter whose
 *   function is exported moves to worker threads with one worker per core, every awaiting
 *   map/filter/flatMap keeps 16 calls in flight, and a prefetch of 2 goes at the end;
 * - auto: every map, filter, flatMap and interleave gets parallelism 'auto' (the library picks, as
 *   for a written 'auto').
 */
import type { KnobOverride, OpProfile, Overrides, Profile } from '../src/shared/profile';

/** Where an op's function can be imported from, for worker placement; undefined when nowhere. */
export type ModuleOf = (op: OpProfile) => { file: string; exportName: string } | undefined;

/** The profile's own record of where each function is exported. */
export const fnModuleOf: ModuleOf = (op) => op.fnModule;

/** Whether the op's function awaits (an async fn, or one that returned promises while it ran). */
export function isAwaiting(op: OpProfile): boolean {
  return op.fnAsync === true || op.counters.asyncCalls > 0;
}

export function merge(into: Overrides, id: string, o: KnobOverride): void {
  into[id] = { ...into[id], ...o };
}

/** Every parallelism = cores on map/filter/interleave, prefetch(2) after the root. */
export function heuristicOverrides(profile: Profile): Overrides {
  const out: Overrides = {};
  for (const op of profile.ops) {
    if (op.kind === 'map' || op.kind === 'filter' || op.kind === 'interleave') merge(out, op.id, { parallelism: profile.machine.cores });
  }
  merge(out, profile.pipeline.rootId, { prefetch: 2 });
  return out;
}

/**
 * Exported sync map/filter → worker threads at parallelism = cores; awaiting map/filter/flatMap →
 * 16 in flight; prefetch(2) after the root. `moduleOf` says where a function is exported (what
 * the engineer, who wrote the code, knows).
 */
export function nodeHeuristicOverrides(profile: Profile, moduleOf: ModuleOf = fnModuleOf): Overrides {
  const cores = profile.machine.cores;
  const out: Overrides = {};
  for (const op of profile.ops) {
    if (isAwaiting(op)) {
      if (op.kind === 'map' || op.kind === 'filter' || op.kind === 'flatMap') merge(out, op.id, { parallelism: 16 });
      continue;
    }
    if (op.kind !== 'map' && op.kind !== 'filter') continue;
    if (op.placement === 'worker') {
      merge(out, op.id, { parallelism: cores });
      continue;
    }
    const where = moduleOf(op);
    if (where) merge(out, op.id, { placement: 'worker', parallelism: cores, module: where.file, exportName: where.exportName });
  }
  merge(out, profile.pipeline.rootId, { prefetch: 2 });
  return out;
}

/** Every map/filter/flatMap/interleave at parallelism 'auto'. */
export function autoOverrides(profile: Profile): Overrides {
  const out: Overrides = {};
  for (const op of profile.ops) {
    if (op.kind === 'map' || op.kind === 'filter' || op.kind === 'flatMap' || op.kind === 'interleave') merge(out, op.id, { parallelism: 'auto' });
  }
  return out;
}

/**
 * The same key for the same configuration however its overrides were built (key order aside), so
 * a configuration two names share (Plumber keeping no change is the pipeline as written) is
 * measured once and both names get the same figure.
 */
export function configKey(overrides: Overrides): string {
  const sorted = (o: object): object => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
  return JSON.stringify(
    Object.entries(overrides)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([id, o]) => [id, sorted(o)]),
  );
}
