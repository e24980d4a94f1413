/**
 * Plans that move an operator (issue 54): a filter ahead of the maps it does not depend on. The
 * model prices a reorder by planning the pipeline as it would run reshaped: the profile with the
 * filter moved (`reshapedProfile`: the maps it crosses see only the elements it keeps, each at the
 * cost per call the run measured) planned like any other profile, so the knobs the reshaped
 * pipeline wants come with it. A reorder is proposed only when that plan beats the plan as written
 * by the model's minimum gain; the engine then proves it equivalent on a sample and verification
 * measures it.
 *
 * What may cross what is decided from the source (`ModelOptions.fields`, the static graph): the
 * filter reads known fields, none of which a crossed map writes; neither is pinned
 * (`keepPosition: true`); no crossed map takes the element context (its `ctx.index` and `ctx.rng`
 * would change) or is random; the maps are one straight chain, each consumed only by the next.
 * Operator ids stay the original's in the reshaped profile, so the plan's other changes name the
 * same operators.
 */
import type { OpFields, Plan, PlanChange } from '../shared/analysis';
import type { ModelOptions } from '../shared/analysis';
import type { OpCounters, OpProfile, Profile } from '../shared/profile';
import { MODEL_CONSTANTS as C } from './constants';
import { describeOp, formatBytes } from './describe';
import { formatPercent, formatSeconds } from '../shared/words';

export type ReorderChange = Extract<PlanChange, { kind: 'reorder' }>;

/** A move the source allows, before it is priced: `opId` goes before `before`, crossing `crossed` (nearest first). */
export interface ReorderCandidate {
  opId: string;
  before: string;
  crossed: string[];
}

/** Counters that count elements or add up per element: they scale with the elements an operator sees. */
const PER_ELEMENT: ReadonlyArray<keyof OpCounters> = [
  'produced',
  'pulled',
  'selfSeconds',
  'workerCpuSeconds',
  'dispatchSeconds',
  'waitSeconds',
  'asyncLatencySeconds',
  'asyncCalls',
  'calls',
  'bytesProduced',
  'workerTasks',
];

function consumersOf(profile: Profile): Map<string, OpProfile[]> {
  const out = new Map<string, OpProfile[]>();
  for (const o of profile.ops) for (const i of o.inputs) out.set(i, [...(out.get(i) ?? []), o]);
  return out;
}

function crossable(map: OpProfile, filterReads: readonly string[], f: OpFields | undefined, consumers: number): boolean {
  if (map.kind !== 'map' || map.dialect !== undefined || map.random || map.randomObserved === true || map.parentId !== undefined) return false;
  if (!f || f.pinned || f.usesContext || f.writes === undefined || consumers !== 1 || map.inputs.length !== 1) return false;
  return !f.writes.some((w) => filterReads.includes(w));
}

/** The filters the source lets move ahead of maps, each with the maps it would cross (the longest run allowed). */
export function reorderCandidates(profile: Profile, options?: ModelOptions): ReorderCandidate[] {
  const fields = options?.fields ?? {};
  const consumers = consumersOf(profile);
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const out: ReorderCandidate[] = [];
  for (const op of profile.ops) {
    const f = fields[op.id];
    if (op.kind !== 'filter' || op.dialect !== undefined || op.parentId !== undefined || op.inputs.length !== 1) continue;
    if (!f || f.pinned || f.usesContext || f.reads === undefined || op.random || op.randomObserved === true) continue;
    const crossed: string[] = [];
    let cur = byId.get(op.inputs[0]!);
    while (cur && crossable(cur, f.reads, fields[cur.id], consumers.get(cur.id)?.length ?? 0)) {
      crossed.push(cur.id);
      cur = byId.get(cur.inputs[0]!);
    }
    if (crossed.length > 0) out.push({ opId: op.id, before: crossed.at(-1)!, crossed });
  }
  out.push(...aboveRandomCandidates(profile, fields, consumers, byId, options?.randomOps ?? []));
  out.push(...commutingCandidates(profile, fields, consumers, byId, options?.randomOps ?? []));
  return out;
}

/**
 * Two adjacent deterministic maps that commute, the lower to move above the upper: a shrinking map
 * earlier, or a growing one later (the same move seen from the other map). They commute when
 * neither reads what the other writes and they write no field in common (both known from the
 * source); neither draws randomness, takes the element context or is pinned. What the move is
 * worth (bytes cloned to worker threads) is the pricing's to say, and the sample check's to prove.
 */
function commutingCandidates(profile: Profile, fields: Record<string, OpFields>, consumers: Map<string, OpProfile[]>, byId: Map<string, OpProfile>, randomOps: readonly string[]): ReorderCandidate[] {
  const out: ReorderCandidate[] = [];
  const plain = (o: OpProfile | undefined, f: OpFields | undefined): f is OpFields & { reads: string[]; writes: string[] } =>
    !!o && !!f && o.kind === 'map' && o.dialect === undefined && o.parentId === undefined && o.inputs.length === 1 && !f.pinned && f.reads !== undefined && f.writes !== undefined && !isRandomOp(o, f, randomOps);
  for (const op of profile.ops) {
    const f = fields[op.id];
    const up = byId.get(op.inputs[0] ?? '');
    const g = up && fields[up.id];
    if (!plain(op, f) || !plain(up, g) || (consumers.get(up!.id)?.length ?? 0) !== 1) continue;
    const clash = f.reads.some((r) => g.writes.includes(r)) || g.reads.some((r) => f.writes.includes(r)) || f.writes.some((w) => g.writes.includes(w));
    if (!clash) out.push({ opId: op.id, before: up!.id, crossed: [up!.id] });
  }
  return out;
}

/**
 * Shuffles the source lets move ahead of the deterministic maps right above them, each with the
 * maps it would cross (the longest straight chain, nearest first). A seeded shuffle's permutation
 * depends only on positions and a map hands on one element for each, so moving the shuffle above
 * maps that draw no randomness and take no element context (whose `ctx.index` would change)
 * yields the same sequence; the engine still checks it on a sample. Neither the shuffle nor a
 * crossed map may be pinned, and each crossed map's fields must be known from the source.
 */
export function shuffleCandidates(profile: Profile, options?: ModelOptions): ReorderCandidate[] {
  const fields = options?.fields ?? {};
  const randomOps = options?.randomOps ?? [];
  const consumers = consumersOf(profile);
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const out: ReorderCandidate[] = [];
  for (const op of profile.ops) {
    if (op.kind !== 'shuffle' || op.dialect !== undefined || op.parentId !== undefined || op.inputs.length !== 1 || fields[op.id]?.pinned) continue;
    const crossed: string[] = [];
    let cur = byId.get(op.inputs[0]!);
    while (cur && cur.kind === 'map' && cur.dialect === undefined && cur.parentId === undefined && cur.inputs.length === 1 && (consumers.get(cur.id)?.length ?? 0) === 1) {
      const f = fields[cur.id];
      if (!f || f.pinned || f.writes === undefined || isRandomOp(cur, f, randomOps)) break;
      crossed.push(cur.id);
      cur = byId.get(cur.inputs[0]!);
    }
    if (crossed.length > 0) out.push({ opId: op.id, before: crossed.at(-1)!, crossed });
  }
  return out;
}

function isRandomOp(op: OpProfile, f: OpFields | undefined, randomOps: readonly string[]): boolean {
  return op.random || op.randomObserved === true || f?.usesContext === true || randomOps.includes(op.id);
}

/**
 * Deterministic maps right below a random map they do not depend on, to move above it so that a
 * cache can keep their output: neither reads what the other writes, nor do both write one field;
 * the random map's draws stay the same (a map keeps each element's index).
 */
function aboveRandomCandidates(profile: Profile, fields: Record<string, OpFields>, consumers: Map<string, OpProfile[]>, byId: Map<string, OpProfile>, randomOps: readonly string[] = []): ReorderCandidate[] {
  const out: ReorderCandidate[] = [];
  for (const op of profile.ops) {
    const f = fields[op.id];
    if (op.kind !== 'map' || op.dialect !== undefined || op.parentId !== undefined || op.inputs.length !== 1 || !f || f.pinned || isRandomOp(op, f, randomOps)) continue;
    if (f.reads === undefined || f.writes === undefined) continue;
    const up = byId.get(op.inputs[0]!);
    const g = up && fields[up.id];
    if (!up || !g || up.kind !== 'map' || up.dialect !== undefined || g.pinned || up.inputs.length !== 1 || (consumers.get(up.id)?.length ?? 0) !== 1) continue;
    if (!isRandomOp(up, g, randomOps) || g.reads === undefined || g.writes === undefined) continue;
    const clash = f.reads.some((r) => g.writes!.includes(r)) || g.reads.some((r) => f.writes!.includes(r)) || f.writes.some((w) => g.writes!.includes(w));
    if (!clash) out.push({ opId: op.id, before: up.id, crossed: [up.id] });
  }
  return out;
}

/** The candidate a reorder change names: the operators between it and `before`, nearest first. */
export function candidateOf(profile: Profile, change: { opId: string; before: string }): ReorderCandidate | undefined {
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const crossed: string[] = [];
  let cur = byId.get(change.opId);
  while (cur && cur.id !== change.before) {
    const up = cur.inputs.length === 1 ? byId.get(cur.inputs[0]!) : undefined;
    if (!up) return undefined;
    crossed.push(up.id);
    cur = up;
  }
  return cur ? { opId: change.opId, before: change.before, crossed } : undefined;
}

/** `counters` for an operator that sees `share` of the elements it saw. */
function scaled(counters: OpCounters, share: number): OpCounters {
  const out = { ...counters };
  for (const k of PER_ELEMENT) {
    const v = out[k];
    if (typeof v === 'number') (out as Record<string, unknown>)[k] = k === 'calls' || k === 'produced' || k === 'pulled' || k === 'asyncCalls' || k === 'workerTasks' ? Math.round(v * share) : v * share;
  }
  return out;
}

/** A filter's selectivity: the share of the elements it pulled that it kept. */
export function keptShare(filter: OpProfile): number | undefined {
  const { pulled, produced } = filter.counters;
  return pulled > 0 ? Math.min(1, produced / pulled) : undefined;
}

/** The bytes per element an operator hands on, as measured (0 when unknown). */
function bytesPerElement(o: OpProfile | undefined): number {
  return o && o.counters.produced > 0 ? o.counters.bytesProduced / o.counters.produced : 0;
}

/**
 * A crossed map whose input and output are `delta` bytes larger per element (smaller, below 0).
 * In worker threads its clones cost what its measured move cost says per byte (`moveCost`: the
 * seconds to clone one input and one output element of the sampled size), half on the main thread
 * (its dispatch) and half in the worker; its fn's own work is kept as measured.
 */
function resized(o: OpProfile, input: OpProfile | undefined, delta: number): OpProfile {
  const k = o.counters;
  const inBytes = bytesPerElement(input);
  const outBytes = bytesPerElement(o);
  const counters = { ...k, bytesProduced: Math.max(0, outBytes + delta) * k.produced };
  const mc = o.moveCost;
  if (o.placement === 'worker' && mc && k.calls > 0) {
    const per = (seconds: number, bytes: number | undefined): number => (bytes !== undefined && bytes > 0 && Number.isFinite(seconds) ? (seconds / bytes) * delta : 0);
    const side = ((per(mc.cloneInSeconds, mc.inSizeBytes ?? (inBytes || undefined)) + per(mc.cloneOutSeconds, mc.outSizeBytes ?? (outBytes || undefined))) / 2) * k.calls;
    counters.dispatchSeconds = Math.max(0, k.dispatchSeconds + side);
    counters.workerCpuSeconds = Math.max(0, k.workerCpuSeconds + side);
  }
  return { ...o, counters };
}

/**
 * The profile as the pipeline would run with `c` applied: the filter pulls from the crossed maps'
 * input, the first crossed map pulls from the filter, the filter's consumers from the last crossed
 * map; each crossed map sees the filter's kept share of its elements at the same cost per call.
 */
export function reshapedProfile(profile: Profile, c: ReorderCandidate): Profile {
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const filter = byId.get(c.opId)!;
  // Only a filter changes how many elements the crossed maps see (a shuffle's pulled and produced
  // differ by what its buffer holds, not by what it drops).
  const share = filter.kind === 'filter' ? (keptShare(filter) ?? 1) : 1;
  const top = byId.get(c.before)!;
  const nearest = c.crossed[0]!;
  const crossed = new Set(c.crossed);
  const above = top.inputs[0]!;
  const aboveOp = byId.get(above);
  // The filter now hands on the smaller elements from above the maps.
  const bytesPer = bytesPerElement(aboveOp);
  // A map moved over maps it commutes with changes each element's size by what it adds (or takes
  // away) as measured; the maps it crosses see their input and output that much larger (or smaller).
  const delta = filter.kind === 'map' ? bytesPerElement(filter) - bytesPerElement(byId.get(nearest)) : 0;
  const ops = profile.ops.map((o): OpProfile => {
    if (o.id === c.opId) {
      // What one of its input elements holds on the heap was measured at the top crossed map's input (the same elements).
      const { inputHeld: _was, ...moved } = o;
      const inputHeld = top.inputHeld !== undefined ? { inputHeld: top.inputHeld } : {};
      if (filter.kind === 'map') return { ...moved, ...inputHeld, inputs: [above], counters: { ...o.counters, bytesProduced: Math.max(0, bytesPer + delta) * o.counters.produced } };
      return { ...moved, ...inputHeld, inputs: [above], counters: filter.kind === 'filter' || filter.kind === 'shuffle' ? { ...o.counters, bytesProduced: bytesPer * o.counters.produced } : o.counters };
    }
    if (o.id === c.before && filter.kind === 'map') {
      // Its input is now the moved map's output, whose heap no run measured: the byte estimate stands.
      const { inputHeld: _was, ...rest } = o;
      return delta !== 0 ? { ...resized(rest, byId.get(o.inputs[0]!), delta), inputs: [c.opId] } : { ...rest, inputs: [c.opId] };
    }
    if (delta !== 0 && crossed.has(o.id)) return resized(o, byId.get(o.inputs[0]!), delta);
    if (o.id === c.before) return { ...o, inputs: [c.opId], counters: scaled(o.counters, share) };
    if (crossed.has(o.id)) return { ...o, counters: scaled(o.counters, share) };
    if (o.inputs.includes(c.opId)) return { ...o, inputs: o.inputs.map((i) => (i === c.opId ? nearest : i)) };
    return o;
  });
  // Operators stay in an order where each comes after its inputs: the filter just before the top map.
  const moved = ops.find((o) => o.id === c.opId)!;
  const rest = ops.filter((o) => o.id !== c.opId);
  rest.splice(
    rest.findIndex((o) => o.id === c.before),
    0,
    moved,
  );
  const rootId = profile.pipeline.rootId === c.opId ? nearest : profile.pipeline.rootId;
  // The run's CPU clocks lose what the crossed maps no longer spend (the model apportions them).
  let main = 0;
  let all = 0;
  for (const id of delta !== 0 ? c.crossed : []) {
    // What the crossed worker maps' clones gain or lose (see `resized`).
    const was = byId.get(id)!.counters;
    const now = ops.find((o) => o.id === id)!.counters;
    main += was.dispatchSeconds - now.dispatchSeconds;
    all += was.dispatchSeconds - now.dispatchSeconds + was.workerCpuSeconds - now.workerCpuSeconds;
  }
  for (const id of c.crossed) {
    const k = byId.get(id)!.counters;
    main += (k.selfSeconds + k.dispatchSeconds) * (1 - share);
    all += (k.selfSeconds + k.dispatchSeconds + k.workerCpuSeconds) * (1 - share);
  }
  const run = { ...profile.run };
  if (run.mainThreadCpuSeconds !== undefined) run.mainThreadCpuSeconds = Math.max(0, run.mainThreadCpuSeconds - main);
  if (run.processCpuSeconds !== undefined) run.processCpuSeconds = Math.max(0, run.processCpuSeconds - all);
  return { ...profile, pipeline: { ...profile.pipeline, rootId }, run, ops: rest };
}

/** A crossed map's cost per element of its input: its CPU and dispatch per call, else its awaited latency per call. */
function costPerCall(op: OpProfile): number {
  const k = op.counters;
  if (k.calls <= 0) return 0;
  const cpu = (k.selfSeconds + k.workerCpuSeconds + k.dispatchSeconds) / k.calls;
  return cpu > 0 ? cpu : k.asyncCalls > 0 ? k.asyncLatencySeconds / k.asyncCalls : 0;
}

/** The sentence of a reorder, with its figures: "filter(isValid) drops 62% of elements; running it before map(decode) saves 0.62 × 21 ms per element". */
export function reorderReason(profile: Profile, c: ReorderCandidate): string {
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const filter = byId.get(c.opId)!;
  if (filter.kind === 'map' && !byId.get(c.before)!.random && byId.get(c.before)!.randomObserved !== true && bytesPerElement(filter) !== bytesPerElement(byId.get(c.before))) {
    const crossedOp = byId.get(c.before)!;
    const inBytes = bytesPerElement(crossedOp);
    const outBytes = bytesPerElement(filter);
    const above = bytesPerElement(byId.get(crossedOp.inputs[0] ?? ''));
    const verb = outBytes < inBytes ? 'shrinks' : 'grows';
    const where = crossedOp.placement === 'worker' ? ', which runs in worker threads,' : '';
    return `${describeOp(filter)} ${verb} its elements from ${formatBytes(inBytes)} to ${formatBytes(outBytes)}; running it before ${describeOp(crossedOp)}${where} hands that map ${formatBytes(Math.max(0, above + outBytes - inBytes))} an element instead of ${formatBytes(above)}`;
  }
  if (filter.kind !== 'filter') {
    const random = byId.get(c.before)!;
    return `${describeOp(filter)} is deterministic and costs ${formatSeconds(costPerCall(filter))} per element; running it before ${describeOp(random)}, which is random, lets a cache keep its output across epochs`;
  }
  const dropped = 1 - (keptShare(filter) ?? 1);
  const maps = [...c.crossed].reverse().map((id) => byId.get(id)!);
  const cost = maps.reduce((s, m) => s + costPerCall(m), 0);
  const names = maps.map((m) => describeOp(m));
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  return `${describeOp(filter)} drops ${formatPercent(dropped)} of elements; running it before ${list} saves ${dropped.toFixed(2)} × ${formatSeconds(cost)} per element`;
}

/**
 * The reshaped profile (`reshapedProfile`) with the run's efficiency kept: its window shortened by
 * the ratio of the bounds as it ran, so a prediction from it carries the same shortfall as the
 * run's. Undefined when a bound cannot be had.
 */
export function reshapedRun(profile: Profile, c: ReorderCandidate, ranOf: (p: Profile) => { bound: number }): Profile | undefined {
  const moved = reshapedProfile(profile, c);
  const ratio = ranOf(profile).bound / ranOf(moved).bound;
  if (!(Number.isFinite(ratio) && ratio > 0)) return undefined;
  return { ...moved, run: { ...moved.run, seconds: moved.run.seconds * ratio } };
}

/**
 * The plan with the best reorder the source allows, when planning the reshaped pipeline beats
 * `planned` (the plan as written) by the minimum gain: the reorder first, then the reshaped
 * pipeline's knob changes; otherwise `planned`. `planOf` plans a profile with the same options,
 * `ranOf` predicts its rate and bound with the knobs it ran with.
 *
 * The reshaped run keeps the run's efficiency (measured rate ÷ the bound as it ran): its window
 * is shortened by the ratio of the two bounds, so the prediction carries the same shortfall.
 */
export function withReorder(profile: Profile, options: ModelOptions | undefined, planned: Plan, planOf: (p: Profile) => Plan, ranOf: (p: Profile) => { rate: number; bound: number }): Plan {
  if (options?.reshape === false || profile.trainer) return planned;
  let best: { plan: Plan; change: ReorderChange } | undefined;
  for (const c of reorderCandidates(profile, options)) {
    const moving = profile.ops.find((o) => o.id === c.opId)!;
    const share = keptShare(moving);
    if (moving.kind === 'filter' && (share === undefined || share >= 1)) continue;
    let reshaped: Plan;
    let alone: number;
    try {
      const p = reshapedRun(profile, c, ranOf);
      if (!p) continue;
      reshaped = planOf(p);
      alone = ranOf(p).rate;
    } catch {
      continue;
    }
    if (!(reshaped.predictedRate > planned.predictedRate * (1 + C.minGain))) continue;
    if (best && best.plan.predictedRate >= reshaped.predictedRate) continue;
    const change: ReorderChange = { kind: 'reorder', opId: c.opId, before: c.before, reason: reorderReason(profile, c), predictedRate: Math.min(alone, reshaped.predictedRate) };
    best = { plan: reshaped, change };
  }
  if (!best) return planned;
  return {
    ...best.plan,
    changes: [best.change, ...best.plan.changes],
    currentRate: planned.currentRate,
    // The plan as written's notes speak of the shape the reorder changes (a cache it ruled out).
    ...(best.plan.notes ? { notes: best.plan.notes } : {}),
  };
}
