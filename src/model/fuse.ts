/**
 * Fusing adjacent worker maps (`fuse: true`, issue 54): a map or filter in worker threads that reads
 * from a map in worker threads runs in that map's tasks, so each element crosses to a thread and
 * back once instead of twice.
 *
 * What the fusion removes, per call of the later op (B) reading the earlier one's (A) results:
 * - the intermediate element's two clones: A's result coming back (serialised in the worker,
 *   deserialised on the main thread) and B's input going out (the other way round) — per side,
 *   twice the clone of one such element;
 * - B's tasks: their dispatch on the main thread and their fixed cost in the worker.
 * The clone of the intermediate element is measured where the runner priced a move of either op
 * (`moveCost`: B's input round, else A's output round, half each side); else its bytes at the clone
 * rate. B's tasks are those it posted (`workerTasks`), or those plumber-data's sizer would post once
 * it is moved (tasks.ts). When both ran in workers, B's main-thread handling beyond what A's costs
 * per call is the crossing as measured, and the saving is at least that. A fused chain keeps its
 * fns' own work: each op's demands stay its own.
 */
import type { PlanChange } from '../shared/analysis';
import type { Config } from './config';
import { MODEL_CONSTANTS as C } from './constants';
import { describeOp, formatSeconds } from './describe';
import type { Effective } from './evaluation';
import type { Measured, OpMeasure } from './measured';
import { taskCosts, taskGroup } from './tasks';

/** Seconds per root element the fusion takes off the main thread and off the workers. */
export interface FuseSaving {
  main: number;
  worker: number;
  /** Per call of B: seconds of one side of the intermediate element's clone, and B's tasks per call. */
  clonePerSide: number;
  tasksPerCall: number;
  /** The main-thread saving is the crossing as measured (both ran in workers), not priced from bytes. */
  measured: boolean;
}

/** The worker map `id` could fuse with under `cfg`: its input, when that is a map in worker threads read by nothing else. */
export function fusePartner(m: Measured, cfg: Config, id: string): OpMeasure | undefined {
  const om = m.ops.get(id);
  if (!om || (om.op.kind !== 'map' && om.op.kind !== 'filter') || (om.op.dialect !== undefined && om.op.dialect !== 'plumber-data')) return undefined;
  if (cfg[id]?.placement !== 'worker' || om.op.fnAsync === true) return undefined;
  const inputId = om.op.inputs[0];
  const a = inputId === undefined ? undefined : m.ops.get(inputId);
  if (!a || a.op.kind !== 'map' || cfg[a.op.id]?.placement !== 'worker' || (a.op.dialect !== undefined && a.op.dialect !== 'plumber-data')) return undefined;
  // The earlier map's results must go to this op alone: another consumer still needs them crossed.
  if ((m.consumers.get(a.op.id) ?? []).length !== 1) return undefined;
  return a;
}

/** What fusing `id` with the map before it saves under `cfg`, per root element; undefined when it cannot fuse or already ran fused. */
export function fuseSaving(m: Measured, cfg: Config, id: string): FuseSaving | undefined {
  const b = m.ops.get(id);
  const a = fusePartner(m, cfg, id);
  if (!b || !a || b.op.knobs.fuse === true || !(b.callsPerRoot > 0)) return undefined;
  const clonePerSide = b.move ? b.move.cloneIn / 2 : a.move ? a.move.cloneOut / 2 : b.inputBytesPerElement / C.cloneBytesPerSecond;
  const c = b.op.counters;
  const tasksPerCall = b.op.placement === 'worker' && c.workerTasks > 0 && c.calls > 0 ? c.workerTasks / c.calls : 1 / taskGroup(b, m.profile.machine);
  const task = taskCosts(m.profile.machine);
  const calls = b.callsPerRoot;
  // Both ran in workers: B's main-thread handling was measured, and it is mostly the crossing (its
  // input's serialisation as it posts). What stays once fused is a task handled as A's are: A's
  // handling per call, which its own dispatch measured. Clones priced by bytes miss the cost of
  // objects (a record of small objects clones far slower than its bytes).
  const measured = measuredCrossing(a, b);
  const priced = calls * (2 * clonePerSide + tasksPerCall * task.dispatch);
  return {
    measured: measured > priced,
    main: Math.max(measured, priced),
    worker: calls * (2 * clonePerSide + tasksPerCall * task.overhead),
    clonePerSide,
    tasksPerCall,
  };
}

/**
 * Main-thread seconds per root element a worker map's results cost to receive when they cross back
 * to the main thread for the worker map after it, as measured: that map's handling beyond this one's
 * (its serialisation of the same elements as it posts them; deserialising them costs the same and
 * runs before the task settles, outside any operator's timing). 0 unless both ran in workers.
 */
function measuredCrossing(a: OpMeasure, b: OpMeasure): number {
  if (a.op.placement !== 'worker' || b.op.placement !== 'worker' || !(a.callsPerRoot > 0)) return 0;
  return Math.max(0, b.dispatchPerRoot - (a.dispatchPerRoot * b.callsPerRoot) / a.callsPerRoot);
}

/**
 * What worker map `id`'s results cost the main thread to receive under `cfg`, beyond what its
 * counters show (see `measuredCrossing`): charged while they cross back, that is unless the map
 * after it is fused into it. 0 when not measured.
 */
export function receiveCost(m: Measured, cfg: Config, id: string): number {
  const a = m.ops.get(id);
  const next = m.consumers.get(id) ?? [];
  if (!a || next.length !== 1 || cfg[id]?.placement !== 'worker') return 0;
  const b = m.ops.get(next[0]);
  if (!b || (b.op.kind !== 'map' && b.op.kind !== 'filter')) return 0;
  // Fused, they stay in the worker; anywhere else (B in workers unfused, or moved to the main thread) they come back.
  if (cfg[b.op.id]?.fused === true && fusePartner(m, cfg, b.op.id) === a) return 0;
  return measuredCrossing(a, b);
}

/** The op's main-thread and worker demands with the fusion's saving taken off, never below its own bookkeeping. */
export function afterFusion(m: Measured, cfg: Config, id: string, main: number, worker: number, floor: number): { main: number; worker: number } {
  if (cfg[id]?.fused !== true) return { main, worker };
  const s = fuseSaving(m, cfg, id);
  if (s === undefined) return { main, worker };
  return { main: Math.max(floor, main - s.main), worker: Math.max(0, worker - s.worker) };
}

/**
 * A fused map's worker work runs in the pool of the map it is fused with: its demands on worker
 * threads move there (that pool's threads carry both fns), so the pool is bounded by both.
 */
export function poolFused(m: Measured, cfg: Config, demands: Map<string, Effective>): void {
  for (const [id, e] of demands) {
    if (cfg[id]?.fused !== true) continue;
    const a = fusePartner(m, cfg, id);
    const into = a === undefined ? undefined : demands.get(a.op.id);
    if (into === undefined) continue;
    into.worker += e.worker;
    into.workerWait += e.workerWait;
    e.worker = 0;
    e.workerWait = 0;
  }
}

/** The sentence of a fuse change, with the figures its saving came from. */
function fuseReason(m: Measured, a: OpMeasure, b: OpMeasure, s: FuseSaving): string {
  // Measured, the results received (receiveCost) go too: as much again.
  const perElement = formatSeconds(((s.measured ? 2 : 1) * s.main) / b.callsPerRoot);
  const from = s.measured
    ? `what this run measured ${describeOp(b.op)} cost the main thread beyond ${describeOp(a.op)}'s tasks, and as much again to receive ${describeOp(a.op)}'s results`
    : `the clone of ${describeOp(a.op)}'s result each way, ${formatSeconds(s.clonePerSide)} a side, and ${formatSeconds(taskCosts(m.profile.machine).dispatch)} per task of its own`;
  return `${describeOp(b.op)} can run in ${describeOp(a.op)}'s worker tasks: each element then crosses to a thread and back once instead of twice, saving the main thread ${perElement} per element (${from})`;
}

/**
 * Fuse changes for the worker maps the plan leaves adjacent in worker threads (`cfg`, after
 * `kept`), each kept when the model predicts it gains `minGain` over the plan without it.
 * `rateOf` prices a set of changes exactly as the plan prices its own.
 */
export function fuseChanges(m: Measured, cfg: Config, kept: PlanChange[], rateOf: (changes: PlanChange[]) => number): PlanChange[] {
  const out: PlanChange[] = [];
  for (const id of m.order) {
    if (cfg[id]?.fused) continue;
    const a = fusePartner(m, cfg, id);
    const s = fuseSaving(m, { ...cfg, [id]: { ...cfg[id], fused: true } }, id);
    if (!a || !s) continue;
    const b = m.ops.get(id) as OpMeasure;
    const without = rateOf([...kept, ...out]);
    const change: PlanChange = { kind: 'fuse', opId: id, with: a.op.id, reason: '' };
    const withIt = rateOf([...kept, ...out, change]);
    if (!(withIt > without * (1 + C.minGain))) continue;
    change.reason = fuseReason(m, a, b, s);
    out.push(change);
  }
  return out;
}

/**
 * Fusions of the worker maps that ran adjacent in `m`'s run, in place of the `changes` that move
 * either of them (a cheap map moved back to the main thread): what verification tries when the
 * plan did not fuse them. The model sees the crossing's serialisation in the later map's dispatch,
 * but not the deserialisation of the earlier map's results on the main thread (it runs before
 * their task settles, outside any operator's timing), which a fusion also removes and a move back
 * to the main thread does not: a run decides. Undefined when no pair is left unfused.
 */
export function fuseInsteadOf(m: Measured, cfg: Config, changes: PlanChange[]): PlanChange[] | undefined {
  const fused: PlanChange[] = [];
  for (const id of m.order) {
    if (changes.some((c) => c.kind === 'fuse' && c.opId === id)) continue;
    const a = fusePartner(m, cfg, id);
    const s = fuseSaving(m, { ...cfg, [id]: { ...cfg[id], fused: true } }, id);
    const b = m.ops.get(id);
    if (!a || !s || !b || a.op.placement !== 'worker' || b.op.placement !== 'worker') continue;
    fused.push({
      kind: 'fuse',
      opId: id,
      with: a.op.id,
      reason: `${describeOp(b.op)} can run in ${describeOp(a.op)}'s worker tasks: each element then crosses to a thread and back once instead of twice (the main thread spent ${formatSeconds(s.main / b.callsPerRoot)} per element on the crossing it removes, and deserialises ${describeOp(a.op)}'s results besides)`,
    });
  }
  if (fused.length === 0) return undefined;
  const touched = new Set(fused.flatMap((f) => (f.kind === 'fuse' ? [f.opId, f.with] : [])));
  return [...changes.filter((c) => !(c.kind === 'placement' && touched.has(c.opId))), ...fused];
}
