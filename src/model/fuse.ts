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
 * it is moved (tasks.ts). A fused chain keeps its fns' own work: each op's demands stay its own.
 */
import type { PlanChange } from '../shared/analysis';
import type { Config } from './config';
import { MODEL_CONSTANTS as C } from './constants';
import { describeOp, formatSeconds } from './describe';
import type { Measured, OpMeasure } from './measured';
import { taskCosts, taskGroup } from './tasks';

/** Seconds per root element the fusion takes off the main thread and off the workers. */
export interface FuseSaving {
  main: number;
  worker: number;
  /** Per call of B: seconds of one side of the intermediate element's clone, and B's tasks per call. */
  clonePerSide: number;
  tasksPerCall: number;
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
  return {
    main: calls * (2 * clonePerSide + tasksPerCall * task.dispatch),
    worker: calls * (2 * clonePerSide + tasksPerCall * task.overhead),
    clonePerSide,
    tasksPerCall,
  };
}

/** The op's main-thread and worker demands with the fusion's saving taken off, never below its own bookkeeping. */
export function afterFusion(m: Measured, cfg: Config, id: string, main: number, worker: number, floor: number): { main: number; worker: number } {
  if (cfg[id]?.fused !== true) return { main, worker };
  const s = fuseSaving(m, cfg, id);
  if (s === undefined) return { main, worker };
  return { main: Math.max(floor, main - s.main), worker: Math.max(0, worker - s.worker) };
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
    const perElement = s.main / b.callsPerRoot;
    change.reason = `${describeOp(b.op)} can run in ${describeOp(a.op)}'s worker tasks: each element then crosses to a thread and back once instead of twice, saving the main thread ${formatSeconds(perElement)} per element (the clone of ${describeOp(a.op)}'s result each way, ${formatSeconds(s.clonePerSide)} a side, and ${formatSeconds(taskCosts(m.profile.machine).dispatch)} per task of its own)`;
    out.push(change);
  }
  return out;
}
