/**
 * Where a memory cache pays: below (downstream of) expensive deterministic work, never at or after
 * a random op, only where the data is read more than once, and only if it fits the memory budget.
 */
import { MODEL_CONSTANTS as C } from './constants';
import { describeOp, formatBytes, formatSeconds } from './describe';
import { diskCachePath, diskReadPerRoot } from './diskCache';
import { downstream, upstreamClosure } from './graph';
import { passSize } from './passSize';
import { can } from './knobs';
import type { Measured, OpMeasure } from './measured';

export interface CacheCandidate {
  /** Insert `.cache()` right after this op. */
  opId: string;
  /** Elements one pass produces at this op. */
  cardinality: number;
  bytesPerElement: number;
  estimatedBytes: number;
  /** Measured seconds per root element (CPU plus waits) at and above this op, which the cache removes after the first pass. */
  savedPerRoot: number;
  /** Why the data is read more than once, for the reason sentence. */
  reread: string;
  /** Where the cardinality came from. */
  cardinalitySource: string;
  /** Where the bytes per element came from, when measured rather than estimated ("measured on the heap"). */
  bytesSource?: string;
  /** A disk cache (`cache(path)`) at this path relative to the pipeline file's directory; absent: in memory. */
  path?: string;
  /** For a disk cache: seconds per root element a later pass spends reading it (./diskCache.ts). */
  diskReadPerRoot?: number;
}

export interface CacheChoice {
  /**
   * The caches to insert, the one that saves the most first: after it, each further one caches
   * work none of the others holds (the inputs of a random mixture, each cached above the draw),
   * and together they fit the memory budget.
   */
  candidates: CacheCandidate[];
  /** Sentences about caches considered and refused. */
  notes: string[];
  /**
   * The cache that would save the most, refused because an op at or above it is random: the
   * sentence without its end, which says what the plan did instead (`planMeasured` knows).
   */
  randomRefusal?: string;
}

/**
 * Never a cache point: buffers and repeats, a shuffle, and operators whose elements are inner
 * datasets (window, groupByWindow): their bytes are not measured, so the cache's size is unknown.
 */
const notCacheable = new Set(['repeat', 'prefetch', 'cache', 'shuffle', 'window', 'groupByWindow']);

/** Operators that draw randomness by what they do: a shuffle reorders, a sampling mixture draws each element's input. */
const RANDOM_KINDS = new Set(['shuffle', 'sampleFromDatasets']);

/**
 * True when `om` draws randomness by any source: the library's own flag (`op.random`: a shuffle,
 * `ctx.rng`), the runner seeing the fn give two results for one element (`op.randomObserved`), or
 * the static graph (`randomOps`: `Math.random`, crypto, calls into fns that do).
 */
export function isRandom(om: OpMeasure, randomOps: ReadonlySet<string>): boolean {
  return om.op.random || om.op.randomObserved === true || RANDOM_KINDS.has(om.op.kind) || randomOps.has(om.op.id);
}

/** Why an op counts as random, for a note. */
function randomWhy(om: OpMeasure, randomOps: ReadonlySet<string>): string {
  if (om.op.kind === 'shuffle') return 'it shuffles';
  if (om.op.kind === 'sampleFromDatasets') return 'it draws the input of each element at random';
  if (randomOps.has(om.op.id)) return 'its source draws random numbers';
  if (om.op.randomObserved === true) return 'it gave two different results for the same element';
  return 'the library marks it random';
}

/**
 * Operators that hand on their input's elements (or groups of them) as they are: what an element
 * holds in memory per estimated byte carries through them from the op that measured it.
 */
const KEEPS_ELEMENTS = new Set(['filter', 'shuffle', 'prefetch', 'take', 'skip', 'shard', 'ignoreErrors', 'batch', 'unbatch', 'rebatch', 'paddedBatch', 'enumerate']);

/**
 * Bytes one element at `om` holds in memory: the library's estimate, or more where the runner
 * measured more on the heap — at `om`, or at the nearest op above it whose elements pass through
 * unchanged (a batch of them). The heap measured on a few sampled elements is carried to the
 * window's by the ratio of heap to estimate on the same sample, as the clones of a move are: a
 * sample of eight parsed records of 20 to 220 words each is a poor mean on its own. The estimate
 * sees nothing inside a Map; a cache sized by it could take many times the memory said.
 */
function heldBytes(m: Measured, om: OpMeasure): { bytes: number; source?: string } {
  const estimate = om.bytesPerElement;
  let at: OpMeasure | undefined = om;
  for (let hops = 0; at && hops < 32; hops++) {
    const held = at.op.held;
    if (held !== undefined && Number.isFinite(held.heapBytes)) {
      // An element the estimate counts as nothing (a bare Map) carries its measured heap as it is.
      const bytes = held.sizeBytes > 0 ? (estimate * held.heapBytes) / held.sizeBytes : at === om ? held.heapBytes : 0;
      if (bytes <= estimate) return { bytes: estimate };
      return { bytes, source: at === om ? 'measured on the heap' : `as measured on the heap after ${describeOp(at.op)}` };
    }
    if (!KEEPS_ELEMENTS.has(at.op.kind)) break;
    if (at.op.inputs.length !== 1) break;
    at = m.ops.get(at.op.inputs[0]!);
  }
  return { bytes: estimate };
}

/**
 * Find the cache points that fit in `cacheMemoryFraction × budgetBytes`, never at or after a random
 * op: the one that saves the most, then any that cache work disjoint from it (see CacheChoice).
 */
export function chooseCache(m: Measured, budgetBytes: number, randomOps: ReadonlySet<string> = new Set(), cacheDir?: string): CacheChoice {
  const notes: string[] = [];
  const all: CacheCandidate[] = [];
  const closures = new Map<string, Set<string>>();
  // Caches refused only because of randomness upstream: the one that would save the most is named in a note.
  let refused: { opId: string; randomId: string; saved: number } | undefined;
  for (const id of m.order) {
    const om = m.ops.get(id);
    if (!om || notCacheable.has(om.op.kind) || om.op.counters.produced <= 0 || !can(om.op, 'cache')) continue;
    if ((m.consumers.get(id) ?? []).some((c) => m.ops.get(c)?.op.kind === 'cache')) continue;
    const closureIds = upstreamClosure(m, id);
    const closure = [...closureIds].map((u) => m.ops.get(u)).filter((u) => u !== undefined);
    // A cache at or after randomness (from any source) would replay one draw forever; one after a
    // cache is pointless; one below a repeat would never see a pass end. The closure includes the
    // inner datasets of an interleave or flatMap.
    if (closure.some((u) => u.op.kind === 'cache' || u.op.kind === 'repeat')) continue;
    const random = closure.find((u) => u.op.kind !== 'shuffle' && isRandom(u, randomOps)) ?? closure.find((u) => isRandom(u, randomOps));

    const repeat = downstream(m, id)
      .map((d) => m.ops.get(d)?.op)
      .find((d) => d?.kind === 'repeat' && (d.knobs.count === undefined || d.knobs.count < 0 || d.knobs.count > 1));
    const sources = closure.filter((u) => u.op.inputs.length === 0);
    const rereadSource = sources.find((s) => s.op.cardinality !== undefined && Number.isFinite(s.op.cardinality) && s.op.counters.produced > s.op.cardinality);
    let reread: string;
    if (repeat) reread = `the pipeline reads it again on every pass of ${describeOp(repeat)}`;
    else if (rereadSource) reread = `the run read ${describeOp(rereadSource.op)} more than once`;
    else continue;

    const pass = passSize(om, closure, repeat);
    if (pass === undefined) continue;
    const { cardinality, source: cardinalitySource } = pass;

    let saved = 0;
    for (const u of closure) saved += u.selfPerRoot + u.dispatchPerRoot + u.overheadPerRoot + u.workerPerRoot + u.otherCpuPerRoot + u.asyncPerRoot * u.latency;
    if (random) {
      if (!refused || saved > refused.saved) refused = { opId: id, randomId: random.op.id, saved };
      continue;
    }
    closures.set(id, closureIds);
    const held = heldBytes(m, om);
    all.push({
      opId: id,
      cardinality,
      bytesPerElement: held.bytes,
      estimatedBytes: cardinality * held.bytes,
      savedPerRoot: saved,
      reread,
      cardinalitySource,
      ...(held.source ? { bytesSource: held.source } : {}),
    });
  }
  // The most work saved wins; among equals, the op further down the pipeline (the "highest point").
  const order = new Map(m.order.map((id, i) => [id, i]));
  all.sort((a, b) => b.savedPerRoot - a.savedPerRoot || (order.get(b.opId) ?? 0) - (order.get(a.opId) ?? 0));
  const limit = C.cacheMemoryFraction * budgetBytes;
  const inMemory = all.find((c) => c.estimatedBytes <= limit);
  const onDisk = diskCandidate(m, all, limit, inMemory, cacheDir);
  const candidate = onDisk?.candidate ?? inMemory;
  if (onDisk) notes.push(onDisk.note);
  const candidates: CacheCandidate[] = [];
  if (candidate) {
    // Further caches hold work the chosen ones do not: two costly branches that a random mixture
    // merges (the cache after the mixture would replay its draws) are each cached above it.
    const held = new Set(closures.get(candidate.opId));
    let bytes = candidate.estimatedBytes;
    candidates.push(candidate);
    for (const c of all) {
      const closure = closures.get(c.opId);
      if (c === candidate || c === onDisk?.source || !closure || bytes + c.estimatedBytes > limit || c.savedPerRoot <= 0) continue;
      if ([...closure].some((u) => held.has(u))) continue;
      candidates.push(c);
      bytes += c.estimatedBytes;
      for (const u of closure) held.add(u);
    }
  }
  const better = all.find((c) => c.estimatedBytes > limit && c !== onDisk?.source && (!candidate || c.savedPerRoot > candidate.savedPerRoot * 1.05));
  if (better) {
    const om = m.ops.get(better.opId);
    notes.push(
      `A cache after ${om ? describeOp(om.op) : better.opId} would hold ≈ ${formatBytes(better.estimatedBytes)} (${better.cardinality.toLocaleString('en-US')} elements × ${formatBytes(better.bytesPerElement)}), more than ${Math.round(C.cacheMemoryFraction * 100)}% of the ${formatBytes(budgetBytes)} memory budget, so the plan does not propose it.`,
    );
  }
  let randomRefusal: string | undefined;
  if (refused && (!candidate || refused.saved > candidate.savedPerRoot * 1.05)) {
    const at = m.ops.get(refused.opId);
    const r = m.ops.get(refused.randomId);
    if (at && r) {
      randomRefusal = `A cache after ${describeOp(at.op)} would save the most work, but ${describeOp(r.op)} is random (${randomWhy(r, randomOps)}): a cache at or after it would replay the first pass's draws on every later pass`;
    }
  }
  return { candidates, notes, randomRefusal };
}

/**
 * The cache on disk, when the one that would save the most does not fit the memory budget and a
 * later pass reads it from disk faster than it recomputes (by `minGain`): the candidate with its
 * path, and a note with its size and its predicted read cost. Needs the runner's measurement of
 * the elements' serialise cost and the disk's bandwidth; without them no disk cache is proposed.
 */
function diskCandidate(
  m: Measured,
  all: CacheCandidate[],
  limit: number,
  inMemory: CacheCandidate | undefined,
  cacheDir: string | undefined,
): { candidate: CacheCandidate; source: CacheCandidate; note: string } | undefined {
  const big = all.find((c) => c.estimatedBytes > limit && (!inMemory || c.savedPerRoot > inMemory.savedPerRoot * (1 + C.minGain)));
  const om = big ? m.ops.get(big.opId) : undefined;
  if (!big || !om) return undefined;
  const read = diskReadPerRoot(m, om);
  if (read === undefined || !(read * (1 + C.minGain) < big.savedPerRoot)) return undefined;
  const path = diskCachePath(m, big.opId, cacheDir);
  const candidate: CacheCandidate = { ...big, path, diskReadPerRoot: read };
  const note = `A cache after ${describeOp(om.op)} would hold ≈ ${formatBytes(big.estimatedBytes)}, more than ${Math.round(C.cacheMemoryFraction * 100)}% of the memory budget: on disk at ${path}, after the first pass it would read ${formatSeconds(read)} per ${m.unit.one} (predicted) instead of recomputing ${formatSeconds(big.savedPerRoot)}.`;
  return { candidate, source: big, note };
}
