/**
 * Time to the first batch and per epoch, projected from the profile for a configuration.
 *
 * First batch = start + what must fill before the root's first element:
 * - start: what the run measured from iterating the pipeline to its first element, less the fill
 *   the model accounts for in the configuration it ran (modules loading, worker threads starting,
 *   cold code); the same in any configuration (a plan that starts worker threads the run did not
 *   have starts them too, which this does not count);
 * - a shuffle fills its buffer (or the whole pass, if smaller) at the rate the sub-pipeline above
 *   it allows: the lowest of its operators' bounds, the main thread's and the cores' over the work
 *   above it, times the run's measured efficiency;
 * - the first element: one root element at the pipeline's rate, or the waits of one element's
 *   awaited calls along the way, whichever is longer. A prefetch does not delay it; a batch is the
 *   root's own element.
 * A cache fills in the first pass: the first batch and the first epoch run as if it were not there
 * (a disk cache also serialises each element it writes, and before its first one looks for its
 * file and creates it: measured cold by the runner, as each later pass's opening of it is).
 *
 * Epochs, for a finite pipeline (the root's cardinality, a run that exhausted its source, or a pass
 * of a repeat the run completed): the first = start + n ÷ the rate without caches; each later one
 * = n ÷ the rate with them (memory: near free; disk: deserialising and the disk's bandwidth). A
 * shuffle refills every epoch, but its fill overlaps the epoch's work: it delays an epoch's first
 * batch, not its end.
 */
import type { TimeProjection } from '../shared/analysis';
import type { OpProfile } from '../shared/profile';
import { cloneConfig, type Config } from './config';
import { coresGot, type CoreBudget } from './cores';
import { describeOp, formatSeconds } from './describe';
import { diskReadOf } from './diskCache';
import { evaluate } from './evaluate';
import type { Evaluation } from './evaluation';
import { passesOver, upstreamClosure } from './graph';
import type { Measured, OpMeasure } from './measured';

type Part = TimeProjection['firstBatchParts'][number];

/**
 * What the projection needs besides the profile: cores, and the run's efficiency for an evaluation
 * (measured ÷ bound where the same work binds as in the run, else 1: `efficiencyFor` in ./plan.ts).
 */
export interface TimeOptions {
  cores: CoreBudget;
  efficiencyOf(ev: Evaluation): number;
}

/** Per-root demands of an operator, scaled together when its visit ratio is corrected. */
const PER_ROOT = [
  'visitRatio',
  'callsPerRoot',
  'selfPerRoot',
  'dispatchPerRoot',
  'overheadPerRoot',
  'overheadWorkPerRoot',
  'workerPerRoot',
  'workerUnseenPerRoot',
  'otherCpuPerRoot',
  'asyncPerRoot',
  'diskPerRoot',
] as const;

/**
 * The demands of a whole pass of a finite pipeline. A window of a finite run can end in a buffer
 * draining (a shuffle handing on what it holds once its source has ended, with no work above it),
 * so its ratio of each operator's elements to the root's is not the pass's. Where both the root's
 * and an operator's elements per pass are known (their cardinalities, times the passes of the
 * repeats below the operator), the operator's per-root demands are scaled to the pass's ratio;
 * its per-element costs stay as measured. Operators inside inner datasets, and any whose count is
 * unknown, keep the window's.
 */
export function perPass(m: Measured): Measured {
  const rootCard = m.ops.get(m.rootId)?.op.cardinality;
  if (rootCard === undefined || rootCard === null || !Number.isFinite(rootCard) || !(rootCard > 0)) return m;
  const ops = new Map(m.ops);
  let changed = false;
  for (const [id, om] of m.ops) {
    const card = om.op.cardinality;
    if (om.op.parentId !== undefined || card === undefined || card === null || !Number.isFinite(card) || !(om.visitRatio > 0)) continue;
    const passes = passesOver(m, id);
    if (!Number.isFinite(passes)) continue;
    const k = (card * passes) / rootCard / om.visitRatio;
    if (!(Math.abs(k - 1) > 0.05) || !Number.isFinite(k)) continue;
    const scaled: OpMeasure = { ...om };
    for (const f of PER_ROOT) scaled[f] = om[f] * k;
    ops.set(id, scaled);
    changed = true;
  }
  return changed ? { ...m, ops } : m;
}

/**
 * The configuration's first pass: caches not yet filled, a disk cache's serialising charged to the
 * main thread; and by disk cache, what its pass waits before its first element, measured cold
 * (`diskCacheCost.startSeconds` in a first pass, `openSeconds` in a later one).
 */
function fillConfig(m: Measured, cfg: Config): { cfg: Config; writePerRoot: number; starts: { opId: string; start: number; open: number }[] } {
  const out = cloneConfig(cfg);
  let writePerRoot = 0;
  const starts: { opId: string; start: number; open: number }[] = [];
  for (const [id, c] of Object.entries(out)) {
    if (!c.cacheAfter) continue;
    const om = m.ops.get(id);
    if (c.cacheDisk && om) {
      writePerRoot += (diskReadOf(om)?.writeSeconds ?? 0) * om.visitRatio;
      const cost = om.op.diskCacheCost;
      if (cost?.startSeconds !== undefined || cost?.openSeconds !== undefined) starts.push({ opId: id, start: cost.startSeconds ?? 0, open: cost.openSeconds ?? 0 });
    }
    c.cacheAfter = false;
    delete c.cacheDisk;
  }
  return { cfg: out, writePerRoot, starts };
}

/**
 * Root elements per second the operators in `ids` allow on their own: the lowest of their own
 * bounds, the main thread's over their main-thread work and the cores' over all their work.
 */
function subRate(ev: Evaluation, ids: Set<string>, o: TimeOptions): number {
  let main = 0;
  let cpu = 0;
  let rate = Infinity;
  for (const id of ids) {
    const e = ev.eff.get(id);
    if (e) {
      main += e.main;
      cpu += e.main + e.worker + e.other;
    }
    rate = Math.min(rate, ev.opBound.get(id) ?? Infinity);
  }
  if (main > 0) rate = Math.min(rate, 1 / main);
  if (cpu > 0) rate = Math.min(rate, coresGot(o.cores, 64) / cpu);
  return rate * o.efficiencyOf(ev);
}

/** The chain from the root up through first inputs (the path the root's first element takes). */
function chain(m: Measured): OpProfile[] {
  const out: OpProfile[] = [];
  const seen = new Set<string>();
  let id: string | undefined = m.rootId;
  while (id !== undefined && !seen.has(id)) {
    seen.add(id);
    const om = m.ops.get(id);
    if (!om) break;
    out.push(om.op);
    id = om.op.inputs[0];
  }
  return out;
}

/** Elements one pass holds at `op`, when known: its cardinality, else its input's. */
function passCount(m: Measured, op: OpProfile): number | undefined {
  for (const id of [op.id, ...op.inputs]) {
    const c = m.ops.get(id)?.op.cardinality;
    if (c !== undefined && c !== null && Number.isFinite(c) && c >= 0) return c;
  }
  return undefined;
}

/** The costliest op in `ids` (own work per root element), for "fills behind map(decode)". */
function costliest(m: Measured, ev: Evaluation, ids: Set<string>): OpProfile | undefined {
  let best: { op: OpProfile; cost: number } | undefined;
  for (const id of ids) {
    const e = ev.eff.get(id);
    const om = m.ops.get(id);
    if (!e || !om) continue;
    const cost = e.main + e.worker + om.asyncPerRoot * om.latency;
    if (!best || cost > best.cost) best = { op: om.op, cost };
  }
  return best && best.cost > 0 ? best.op : undefined;
}

/** The fill and first element of `cfg` (no start), by part, largest first. */
function fillParts(m: Measured, cfg: Config, o: TimeOptions): { parts: Part[]; behind: Map<string, OpProfile | undefined>; buffer: Map<string, number> } {
  const { cfg: first, writePerRoot, starts } = fillConfig(m, cfg);
  const ev = evaluate(m, first, o.cores);
  const parts: Part[] = [];
  // A disk cache's file is looked for before its first element passes; its creation and first
  // write run beside the first elements' work (the runner's `startSeconds` counts them whole: the
  // safe side).
  for (const s of starts) if (s.start > 0) parts.push({ what: 'cache fill', opId: s.opId, seconds: s.start });
  const behind = new Map<string, OpProfile | undefined>();
  const buffer = new Map<string, number>();
  for (const op of chain(m)) {
    if (op.kind !== 'shuffle' || op.inputs.length === 0) continue;
    const input = m.ops.get(op.inputs[0]!);
    if (!input || !(input.visitRatio > 0)) continue;
    const size = op.knobs.bufferSize ?? 0;
    const pass = passCount(m, op);
    const n = pass === undefined ? size : Math.min(size, pass);
    const ids = upstreamClosure(m, input.op.id);
    const rate = subRate(ev, ids, o) * input.visitRatio;
    if (!(n > 0) || !(rate > 0) || !Number.isFinite(rate)) continue;
    parts.push({ what: 'shuffle fill', opId: op.id, seconds: n / rate });
    behind.set(op.id, costliest(m, ev, ids));
    buffer.set(op.id, n);
  }
  const all = upstreamClosure(m, m.rootId);
  const rootRate = subRate(ev, all, o);
  let waits = 0;
  for (const id of all) {
    const om = m.ops.get(id);
    // One element's calls run `concurrency` at a time: its waits are that many rounds of the latency.
    if (om && om.isAsync && om.asyncPerRoot > 0) waits += om.latency * Math.max(1, om.asyncPerRoot / Math.max(1, cfg[id]?.concurrency ?? 1));
  }
  const one = Math.max(rootRate > 0 && Number.isFinite(rootRate) ? 1 / rootRate : 0, waits) + writePerRoot;
  parts.push({ what: 'first element', opId: m.rootId, seconds: one });
  return { parts, behind, buffer };
}

/**
 * Root elements one epoch holds, and where the count came from; undefined for an endless pipeline.
 * With a repeat on the chain an epoch is one of its passes (its input's cardinality, or a pass the
 * run completed), whatever its count; else the root's cardinality, or all the run read when it
 * read every element.
 */
export function epochElements(m: Measured): { n: number; source: string } | undefined {
  const root = m.ops.get(m.rootId);
  for (const op of chain(m)) {
    if (op.kind !== 'repeat') continue;
    const om = m.ops.get(op.id);
    const inputCard = m.ops.get(op.inputs[0] ?? '')?.op.cardinality;
    const known = inputCard !== undefined && inputCard !== null && Number.isFinite(inputCard) && inputCard > 0 ? inputCard : undefined;
    const pass = known ?? op.counters.passElements;
    if (pass === undefined || !(pass > 0) || !om || !root || !(om.visitRatio > 0)) return undefined;
    const source = known !== undefined ? `a pass of ${describeOp(op)}` : `a pass of ${describeOp(op)} the run completed`;
    return { n: Math.max(1, Math.round((pass * root.visitRatio) / om.visitRatio)), source };
  }
  const card = root?.op.cardinality;
  if (card !== undefined && card !== null && Number.isFinite(card) && card > 0) return { n: card, source: 'the root’s cardinality' };
  if (m.profile.run.endReason === 'exhausted') {
    const n = Math.round(m.profile.run.warmupElements + m.profile.run.elements);
    if (n > 0) return { n, source: 'the run, which read every element' };
  }
  return undefined;
}

/** Per-root costs an operator stops paying once a cache above it serves (its visits stay). */
const COSTS = ['selfPerRoot', 'dispatchPerRoot', 'overheadPerRoot', 'overheadWorkPerRoot', 'workerPerRoot', 'workerUnseenPerRoot', 'otherCpuPerRoot', 'asyncPerRoot', 'diskPerRoot'] as const;

/**
 * The demands of a later epoch: every cache `cfg` inserts serves its pass, so nothing at or above
 * it runs. (The evaluation's own share for a cache under repeat(n) is an average over the n passes,
 * the first of which fills it: right for a rate over the whole run, not for one later epoch.)
 */
function served(m: Measured, cfg: Config): Measured {
  const ops = new Map(m.ops);
  for (const [id, c] of Object.entries(cfg)) {
    if (!c.cacheAfter) continue;
    for (const u of upstreamClosure(m, id)) {
      const om = ops.get(u);
      if (!om) continue;
      const zeroed: OpMeasure = { ...om };
      for (const f of COSTS) zeroed[f] = 0;
      ops.set(u, zeroed);
    }
  }
  return { ...m, ops };
}

/** The per-root seconds of the configuration: the inverse of its bound, times the run's efficiency. */
function perRoot(m: Measured, cfg: Config, o: TimeOptions): number {
  const ev = evaluate(m, cfg, o.cores);
  const rate = ev.bound * o.efficiencyOf(ev);
  return rate > 0 && Number.isFinite(rate) ? 1 / rate : 0;
}

/**
 * The pipeline's start, measured: the run's first element less the fill the model accounts for in
 * the configuration it ran. 0 when the run did not time its first element.
 */
export function startSeconds(m: Measured, ran: Config, o: TimeOptions): number {
  const first = m.profile.run.firstElementSeconds;
  if (first === undefined || !(first > 0)) return 0;
  const fill = fillParts(m, ran, o).parts.reduce((s, p) => s + p.seconds, 0);
  return Math.max(0, first - fill);
}

/** Time to the first batch and per epoch for `cfg`; `ran` is the configuration the profile ran with (for the start). */
export function projectTime(measured: Measured, cfg: Config, ran: Config, o: TimeOptions): TimeProjection {
  const m = perPass(measured);
  const start = startSeconds(m, ran, o);
  const { parts: fill, behind, buffer } = fillParts(m, cfg, o);
  const parts: Part[] = [...fill];
  if (start > 0) parts.push({ what: 'start', seconds: start });
  parts.sort((a, b) => b.seconds - a.seconds);
  const firstBatchSeconds = parts.reduce((s, p) => s + p.seconds, 0);
  const out: TimeProjection = { firstBatchSeconds, firstBatchParts: parts, firstBatchSummary: firstBatchWords(m, parts, firstBatchSeconds, behind, buffer) };
  const epoch = epochElements(m);
  if (epoch) {
    const { cfg: first, writePerRoot, starts } = fillConfig(m, cfg);
    const firstEpoch = start + starts.reduce((t, s) => t + s.start, 0) + epoch.n * (perRoot(m, first, o) + writePerRoot);
    const cached = Object.values(cfg).some((c) => c.cacheAfter);
    const later = starts.reduce((t, s) => t + s.open, 0) + epoch.n * perRoot(cached ? served(m, cfg) : m, cfg, o);
    out.epochSeconds = [firstEpoch, later];
    const shuffles = parts.filter((p) => p.what === 'shuffle fill').length;
    const why = cached ? ' (the cache fills)' : start > later * 0.05 ? ' (the start)' : '';
    const refill = shuffles > 0 ? '; each starts after its shuffle buffer refills' : '';
    out.epochSummary = `${epoch.n.toLocaleString('en-US')} ${m.unit.many} an epoch (${epoch.source}): the first ≈ ${formatSeconds(firstEpoch)}${why}, each later one ≈ ${formatSeconds(later)}${refill}`;
  }
  return out;
}

/** "the shuffle buffer of 10,000 fills behind map(decode): ≈ 41 s; move the shuffle before the decode or shrink it". */
function firstBatchWords(m: Measured, parts: Part[], total: number, behind: Map<string, OpProfile | undefined>, buffer: Map<string, number>): string {
  const top = parts[0];
  if (!top) return 'nothing to fill';
  const share = total > 0 ? top.seconds / total : 1;
  const tail = share < 0.999 ? ` of ≈ ${formatSeconds(total)}` : '';
  if (top.what === 'shuffle fill' && top.opId !== undefined) {
    const op = m.ops.get(top.opId)?.op;
    const b = behind.get(top.opId);
    const n = (buffer.get(top.opId) ?? 0).toLocaleString('en-US');
    const where = b ? ` behind ${describeOp(b)}` : '';
    // Nothing moves ahead of a source: only the buffer can shrink.
    const fix = b && b.inputs.length > 0 ? `move ${op ? describeOp(op) : 'the shuffle'} before ${describeOp(b)} or shrink its buffer` : 'shrink its buffer';
    return `the shuffle buffer of ${n} fills${where}: ≈ ${formatSeconds(top.seconds)}${tail}; ${fix}`;
  }
  if (top.what === 'start') return `the pipeline's start (modules, worker threads, cold code), measured: ≈ ${formatSeconds(top.seconds)}${tail}`;
  return `the first ${m.unit.one}'s own work: ≈ ${formatSeconds(top.seconds)}${tail}`;
}
