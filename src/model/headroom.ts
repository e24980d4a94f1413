/**
 * The plan's free levers with twice the headroom: calls in flight of an awaiting op whose latency
 * does not grow with them, and the inner datasets an interleave pulls at once. Neither costs CPU
 * or threads, so the plan sizes them just above the next bound (`hedge`); but a bound computed
 * from mean waits is a ceiling a pipeline only nears with slack to spare — calls that resume
 * behind a busy main thread, or inner datasets taken in turn, wait longer than their mean when
 * the cores are nearly full — and with more in flight the CPU an element costs falls (more records
 * per event-loop wake-up, more elements per worker task). The engine measures this variant of the
 * configuration verification keeps and takes it only when reliably faster (src/engine/diagnose.ts).
 */
import type { ModelOptions, PlanChange } from '../shared/analysis';
import type { Profile } from '../shared/profile';
import { MODEL_CONSTANTS } from './constants';
import { measure } from './measure';
import type { Measured } from './measured';

/** How many times the plan's own value a widened free lever gets (before its cap). */
const WIDEN = 2;

/**
 * The most a free lever of op `id` may take: the plan's limit on calls in flight and, for an
 * interleave, the number of its inputs when known (it cannot pull more inner datasets than
 * there are).
 */
function capOf(m: Measured, id: string, maxConcurrency: number): number {
  const om = m.ops.get(id);
  if (om?.op.kind !== 'interleave') return maxConcurrency;
  const inputs = m.ops.get(om.op.inputs[0] ?? '')?.op.cardinality;
  return inputs !== undefined && Number.isFinite(inputs) && inputs >= 1 ? Math.min(maxConcurrency, inputs) : maxConcurrency;
}

/** True when raising this change's value costs no CPU or threads: see the module comment. */
function isFree(m: Measured, c: PlanChange): boolean {
  const om = m.ops.get(c.opId);
  if (!om) return false;
  if (om.op.kind === 'interleave') return c.kind === 'cycleLength' || c.kind === 'parallelism';
  // Calls in flight of an awaiting op on the main thread; not one whose latency grows with them
  // (a throttled disk or service: more calls only queue).
  return c.kind === 'parallelism' && om.isAsync && om.op.placement !== 'worker' && om.tunable && om.latencySlope <= 0;
}

/**
 * `changes` with each free lever raised to `WIDEN` × its planned value (an interleave's
 * cycleLength and parallelism together), within its cap; undefined when none can grow. Other
 * changes are returned as they are (the same objects).
 */
export function widenFreeLevers(profile: Profile, changes: PlanChange[], options?: ModelOptions): PlanChange[] | undefined {
  const m = measure(profile, options?.history);
  const maxConcurrency = Math.max(1, options?.maxConcurrency ?? MODEL_CONSTANTS.defaultMaxConcurrency);
  // An interleave's two knobs move together: the smaller of them is what it pulls at once.
  const planned = new Map<string, number>();
  for (const c of changes) {
    if ((c.kind === 'parallelism' || c.kind === 'cycleLength') && isFree(m, c)) planned.set(c.opId, Math.max(planned.get(c.opId) ?? 0, c.to));
  }
  let grew = false;
  const out = changes.map((c): PlanChange => {
    if (c.kind !== 'parallelism' && c.kind !== 'cycleLength') return c;
    const n = planned.get(c.opId);
    if (n === undefined) return c;
    const to = Math.max(c.to, Math.min(capOf(m, c.opId, maxConcurrency), Math.ceil(WIDEN * n)));
    if (to === c.to) return c;
    grew = true;
    return { ...c, to };
  });
  return grew ? out : undefined;
}
