/**
 * Randomness from every source (DESIGN.md): what the source shows (the static graph marks
 * `Math.random`, crypto, `ctx.rng`, a `random: true` option, shuffle, and calls into fns that do)
 * and what the runner saw (`op.random`, `op.randomObserved`). Nothing is cached at or after a
 * random op: a cache replays the first epoch's draws forever.
 */
import type { OpProfile, Profile } from '../shared/profile';
import { describeOp, listWords } from '../model';
import type { FileGraph, PipelineGraph } from './graph/types';

/**
 * Static randomness: the ids of the operators the source shows are random, over every pipeline
 * of the graphs given (a file's graph holds every chain, exported or not, so the pipeline the
 * runner picks is among them). Ids are the runner's (src/shared/opId.ts), relative to each
 * graph's file: pass the graph of the pipeline's own file.
 */
export function staticRandomOps(...graphs: Array<FileGraph | PipelineGraph>): string[] {
  const ids = new Set<string>();
  for (const g of graphs) {
    const pipelines = 'pipelines' in g ? g.pipelines : [g];
    for (const p of pipelines) for (const op of p.ops) if (op.random) ids.add(op.id);
  }
  return [...ids].sort();
}

function isRandom(op: OpProfile, staticRandom: ReadonlySet<string>): boolean {
  return op.random || op.randomObserved === true || op.kind === 'shuffle' || staticRandom.has(op.id);
}

/**
 * The random operators a cache right after `opId` would freeze: `opId` itself and anything
 * upstream of it (inputs, and the inner datasets of an interleave or flatMap, which name it as
 * their parent), nearest first. Empty when the cache is safe.
 */
export function randomOpsAbove(opId: string, profile: Profile, staticRandom: readonly string[]): OpProfile[] {
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const children = new Map<string, OpProfile[]>();
  for (const o of profile.ops) if (o.parentId) children.set(o.parentId, [...(children.get(o.parentId) ?? []), o]);
  const known = new Set(staticRandom);
  const seen = new Set<string>();
  const found: OpProfile[] = [];
  const queue = [opId];
  while (queue.length > 0) {
    const id = queue.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const op = byId.get(id);
    if (!op) continue;
    if (isRandom(op, known)) found.push(op);
    queue.push(...op.inputs, ...(children.get(id) ?? []).map((c) => c.id));
  }
  return found;
}

/** The random operator nearest above a cache right after `opId`, if any (see `randomOpsAbove`). */
export function cacheAfterRandom(opId: string, profile: Profile, staticRandom: readonly string[]): OpProfile | undefined {
  return randomOpsAbove(opId, profile, staticRandom)[0];
}

/**
 * Caches the pipeline already has (in its source, not a plan's) after a random operator: each
 * stores the first epoch's draws and replays them every epoch. The editor's
 * `plumber/cache-after-random` lint says so on the line; the plan says it too, so a terminal or a
 * CI log shows it. One sentence per cache, naming the random operator.
 */
export function userCachesAfterRandom(profile: Profile, staticRandom: readonly string[]): string[] {
  const out: string[] = [];
  for (const op of profile.ops) {
    if (op.kind !== 'cache' || op.overridden || op.inputs.length !== 1) continue;
    const random = randomOpsAbove(op.inputs[0]!, profile, staticRandom);
    if (random.length === 0) continue;
    // Above all of them: the one farthest up (a shuffle before an augmentation: a cache between
    // the two would still replay the first epoch's order).
    const names = random.map(describeOp);
    const which = random.length === 1 ? `${names[0]}, which is random` : `${listWords([...names].reverse())}, which are random`;
    out.push(`cache() at ${op.id} comes after ${which}: it stores the first epoch's draws and replays them every epoch. Move cache() above ${describeOp(random.at(-1)!)}.`);
  }
  return out;
}
