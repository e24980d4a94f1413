/**
 * The graph as a DAG, not a chain: how issue 11's operators change where elements go.
 *
 * - A mixture (`sampleFromDatasets`, `chooseFromDatasets`) takes each element from one of its
 *   inputs, so an input's work is paid only for its share of the mixture's elements. Per-root
 *   demands already carry the share (they are counters ÷ root elements, and a branch that supplies
 *   20% of the elements counted 20% of them), so every per-op bound of a branch op is that branch's
 *   own bound ÷ its share, and the pipeline's bound is the minimum over branches of
 *   branch bound ÷ share. This file names the shares so a reason can say so.
 * - A shard keeps 1 of every numShards elements of its input: all the work upstream of it is done
 *   for every element and (numShards − 1)/numShards of it is thrown away.
 * - paddedBatch / bucketBySequenceLength count padded and total positions: their share of padding.
 *
 * Counters that newer libraries add (`errorsSkipped`, `paddedPositions`, `totalPositions`) are read
 * with `?? 0`: a profile written before they existed lacks them.
 */
import type { OpProfile, Profile } from '../shared/profile';
import { describeOp, formatPercent, formatRate, formatSeconds } from './describe';
import type { Measured } from './measured';

/** Operators that take each element from one of several inputs. */
export const MIXTURE_KINDS: ReadonlySet<string> = new Set(['sampleFromDatasets', 'chooseFromDatasets']);

/** One input of a mixture and the share of the mixture's elements it supplies. */
export interface Branch {
  inputId: string;
  /** 0-based position among the mixture's data inputs. */
  index: number;
  /** Fraction of the mixture's elements taken from this input (the shares sum to 1). */
  share: number;
}

export interface Mixture {
  id: string;
  /** The data inputs, in order (chooseFromDatasets' choice dataset is not one of them). */
  branches: Branch[];
  /** Where the shares come from: the elements each input handed over, the `weights` knob, or equal shares. */
  basis: 'counts' | 'weights' | 'equal';
  /** The shares the counters show (elements each input handed over ÷ all), when it handed over any. */
  counted?: number[];
}

/**
 * The mixtures of a profile and their shares.
 *
 * sampleFromDatasets draws each element's input with probability weight (src/data/internal/ops/
 * mix.ts) and reads each input in chunks (its expected share of a request), so in a short window
 * the counters hold elements read and not yet taken, and the draw's own noise, on top of the
 * share (a rare input's most of all): its `weights` knob is its share, unless an input
 * ended in the window (a finite input read to its cardinality), after which the library
 * renormalises over the others and the counts are what happened. chooseFromDatasets reads one
 * element at a time: the counts are exact. Without counts or weights, shares are equal.
 */
export function mixtures(profile: Profile): Map<string, Mixture> {
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const out = new Map<string, Mixture>();
  for (const op of profile.ops) {
    if (!MIXTURE_KINDS.has(op.kind)) continue;
    // chooseFromDatasets' last input is its choice dataset: it picks, it supplies no elements.
    const data = op.kind === 'chooseFromDatasets' && op.inputs.length > 1 ? op.inputs.slice(0, -1) : op.inputs;
    if (data.length === 0) continue;
    const taken = data.map((id) => byId.get(id)?.counters.produced ?? 0);
    const total = taken.reduce((a, b) => a + b, 0);
    const weights = op.knobs.weights;
    const weightSum = weights && weights.length === data.length ? weights.reduce((a, b) => a + Math.max(0, b), 0) : 0;
    const ended = data.some((id) => {
      const input = byId.get(id);
      const n = input?.cardinality;
      return input !== undefined && n !== undefined && n !== null && Number.isFinite(n) && input.counters.produced >= n;
    });
    const counted = total > 0 ? taken.map((t) => t / total) : undefined;
    let basis: Mixture['basis'];
    let shares: number[];
    if (op.kind === 'sampleFromDatasets' && weights && weightSum > 0 && !(ended && counted)) {
      basis = 'weights';
      shares = weights.map((w) => Math.max(0, w) / weightSum);
    } else if (counted) {
      basis = 'counts';
      shares = counted;
    } else if (weights && weightSum > 0) {
      basis = 'weights';
      shares = weights.map((w) => Math.max(0, w) / weightSum);
    } else {
      basis = 'equal';
      shares = data.map(() => 1 / data.length);
    }
    out.set(op.id, { id: op.id, basis, ...(counted ? { counted } : {}), branches: data.map((inputId, index) => ({ inputId, index, share: shares[index] ?? 0 })) });
  }
  return out;
}

/**
 * Put each branch of a sampling mixture at its share: per-root demands come from counters, which
 * carry the counted share; where the share comes from the weights (see `mixtures`), every op that
 * feeds only that branch is scaled by share ÷ counted share (nested mixtures multiply). Mutates
 * `m.ops`.
 */
export function reweightBranches(m: Measured): void {
  const mix = mixtures(m.profile);
  const factorOf = new Map<string, Map<string, number>>();
  for (const x of mix.values()) {
    if (x.basis !== 'weights' || !x.counted) continue;
    const f = new Map<string, number>();
    x.branches.forEach((b, i) => {
      const c = x.counted![i] ?? 0;
      if (c > 0) f.set(b.inputId, b.share / c);
    });
    factorOf.set(x.id, f);
  }
  if (factorOf.size === 0) return;
  for (const [id, om] of m.ops) {
    let factor = 1;
    let cur = id;
    const seen = new Set<string>();
    for (let guard = 0; guard <= m.order.length && !seen.has(cur); guard++) {
      seen.add(cur);
      const next = m.consumers.get(cur) ?? [];
      // The last op of an inner dataset feeds its parent (an interleave, a window's consumer).
      const parent = next.length === 0 ? m.ops.get(cur)?.op.parentId : undefined;
      if (next.length !== 1 && parent === undefined) break;
      const consumer = next[0] ?? parent!;
      const f = next.length === 1 ? factorOf.get(consumer)?.get(cur) : undefined;
      if (f !== undefined) factor *= f;
      cur = consumer;
    }
    if (factor === 1) continue;
    om.visitRatio *= factor;
    om.callsPerRoot *= factor;
    om.selfPerRoot *= factor;
    om.dispatchPerRoot *= factor;
    om.overheadPerRoot *= factor;
    om.overheadWorkPerRoot *= factor;
    om.workerPerRoot *= factor;
    om.workerUnseenPerRoot *= factor;
    om.otherCpuPerRoot *= factor;
    om.asyncPerRoot *= factor;
    om.diskPerRoot *= factor;
  }
}

/** Where an op sits in a mixture: the nearest mixture downstream of it and the branch it feeds. */
export interface BranchOf {
  mixture: Mixture;
  branch: Branch;
}

/**
 * The branch of the nearest mixture `id` feeds, when it feeds exactly one branch of it (an op
 * shared by two branches, or downstream of the mixture, has none).
 */
export function branchOf(m: Measured, mix: Map<string, Mixture>, id: string): BranchOf | undefined {
  const seen = new Set<string>();
  let cur = id;
  for (let guard = 0; guard <= m.order.length; guard++) {
    if (seen.has(cur)) return undefined;
    seen.add(cur);
    const next = m.consumers.get(cur) ?? [];
    if (next.length !== 1) return undefined;
    const consumer = next[0]!;
    const mixture = mix.get(consumer);
    if (mixture) {
      const matches = mixture.branches.filter((b) => b.inputId === cur);
      return matches.length === 1 ? { mixture, branch: matches[0]! } : undefined;
    }
    cur = consumer;
  }
  return undefined;
}

/** A shard downstream of an op: the op's work is done for every element, the shard keeps `kept` of them. */
export interface ShardAfter {
  shard: OpProfile;
  /** Fraction of its input the shard handed on, measured (produced ÷ pulled), else 1 / numShards. */
  kept: number;
}

/** The nearest shard downstream of `id` that throws work away (keeps less than all), if any. */
export function shardAfter(m: Measured, id: string): ShardAfter | undefined {
  const seen = new Set<string>();
  const stack = [...(m.consumers.get(id) ?? [])];
  while (stack.length > 0) {
    const cur = stack.shift()!;
    if (seen.has(cur)) continue;
    seen.add(cur);
    const om = m.ops.get(cur);
    if (!om) continue;
    if (om.op.kind === 'shard') {
      const c = om.op.counters;
      const n = om.op.knobs.numShards;
      const kept = c.pulled > 0 ? c.produced / c.pulled : n !== undefined && n > 0 ? 1 / n : 1;
      if (kept < 1) return { shard: om.op, kept };
    }
    stack.push(...(m.consumers.get(cur) ?? []));
  }
  return undefined;
}

/**
 * Sentences that say how the DAG shapes the bound `rate` of op `id`: the mixture share its branch
 * supplies (its own bound is the pipeline's ÷ that share), and the work a later shard throws away.
 * Empty when neither applies.
 */
export function dataflowWords(m: Measured, id: string, rate: number): string {
  const words: string[] = [];
  const mix = mixtures(m.profile);
  const at = branchOf(m, mix, id);
  if (at && Number.isFinite(rate)) {
    const mixOp = m.ops.get(at.mixture.id);
    const vMix = mixOp?.visitRatio ?? 1;
    const from = at.mixture.basis === 'counts' ? 'as counted' : at.mixture.basis === 'weights' ? 'its weight' : 'assumed equal';
    const mixName = mixOp ? describeOp(mixOp.op) : at.mixture.id;
    const own = rate * vMix * at.branch.share;
    words.push(
      `It feeds input ${at.branch.index + 1} of ${mixName}, which takes ${formatPercent(at.branch.share)} of its elements from there (${from}): that input keeps up with ${formatRate(own)} of its own, so the mixture gets at most ${formatRate(rate * vMix)} (${formatRate(own)} ÷ ${formatPercent(at.branch.share)}).`,
    );
  }
  const shard = shardAfter(m, id);
  if (shard) {
    words.push(`${describeOp(shard.shard)} after it keeps ${formatPercent(shard.kept)} of the elements, so ${formatPercent(1 - shard.kept)} of this work is thrown away: shard before it, right after the source.`);
  }
  return words.join(' ');
}

/** Plan notes: each shard that throws away measurable upstream work, and how much. */
export function shardNotes(m: Measured): string[] {
  const notes: string[] = [];
  for (const om of m.ops.values()) {
    if (om.op.kind !== 'shard') continue;
    const c = om.op.counters;
    if (!(c.pulled > 0) || c.produced >= c.pulled) continue;
    const kept = c.produced / c.pulled;
    // Work done upstream of the shard, per root element: all of it happened for every element it pulled.
    let upstreamWork = 0;
    const seen = new Set<string>();
    const stack = [...om.op.inputs];
    while (stack.length > 0) {
      const cur = stack.pop()!;
      if (seen.has(cur)) continue;
      seen.add(cur);
      const u = m.ops.get(cur);
      if (!u) continue;
      upstreamWork += u.selfPerRoot + u.dispatchPerRoot + u.workerPerRoot + u.otherCpuPerRoot;
      stack.push(...u.op.inputs, ...(m.children.get(cur) ?? []));
    }
    if (!(upstreamWork > 0)) continue;
    const wasted = upstreamWork * (1 - kept);
    notes.push(
      `${describeOp(om.op)} keeps ${formatPercent(kept)} of what it pulls, after work that costs ${formatSeconds(upstreamWork)} of CPU per ${m.unit.one}: ${formatSeconds(wasted)} of it (${formatPercent(1 - kept)}) is done for elements this worker throws away. Shard right after the source (or shard the file list) so each worker does only its own share.`,
    );
  }
  return notes;
}

/** Padding measured at one paddedBatch / bucketBySequenceLength. */
export interface Padding {
  opId: string;
  kind: string;
  paddedPositions: number;
  totalPositions: number;
  /** paddedPositions ÷ totalPositions. */
  share: number;
  /** Mean real (unpadded) positions per input element: (total − padded) ÷ elements pulled; undefined when it pulled none. */
  meanLength?: number;
  /** Mean positions each input element was padded to: total ÷ elements pulled. */
  meanPaddedLength?: number;
}

/** Padding of every op that counted positions in the profile (absent counters read as 0: no finding). */
export function paddingOf(profile: Profile): Padding[] {
  const out: Padding[] = [];
  for (const op of profile.ops) {
    const total = op.counters.totalPositions ?? 0;
    const padded = op.counters.paddedPositions ?? 0;
    if (!(total > 0)) continue;
    const pulled = op.counters.pulled ?? 0;
    out.push({
      opId: op.id,
      kind: op.kind,
      paddedPositions: padded,
      totalPositions: total,
      share: Math.min(1, Math.max(0, padded / total)),
      ...(pulled > 0 ? { meanLength: (total - padded) / pulled, meanPaddedLength: total / pulled } : {}),
    });
  }
  return out;
}
