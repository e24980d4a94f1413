/**
 * The oracle's search space: for each synthetic pipeline, the knob settings a grid search tries
 * (through runner overrides). Kept small on purpose (each configuration costs a ~1.5 s run):
 * calls in flight for awaiting maps, worker placement and pool size for exported maps, inner
 * datasets an interleave pulls at once, a cache after deterministic maps that run before a repeat,
 * and a prefetch at the end.
 */
import { MODEL_CONSTANTS } from '../../src/model/constants';
import type { KnobOverride, Overrides, Profile } from '../../src/shared/profile';

type Choice = Record<string, KnobOverride> | undefined;

/** Every combination of the per-operator choices (undefined = as written). */
function product(axes: Choice[][]): Overrides[] {
  let out: Overrides[] = [{}];
  for (const axis of axes) {
    const next: Overrides[] = [];
    for (const base of out) {
      for (const choice of axis) {
        const merged: Overrides = { ...base };
        for (const [id, o] of Object.entries(choice ?? {})) merged[id] = { ...merged[id], ...o };
        next.push(merged);
      }
    }
    out = next;
  }
  return out;
}

/** The grid of override sets to try for a pipeline profiled as written. */
export function gridFor(profile: Profile): Overrides[] {
  const cores = profile.machine.cores;
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const downstreamOf = (id: string): string[] => profile.ops.filter((o) => o.inputs.includes(id)).map((o) => o.id);
  const hasRepeatBelow = (id: string): boolean => {
    const seen = new Set<string>();
    const stack = downstreamOf(id);
    while (stack.length > 0) {
      const d = stack.pop()!;
      if (seen.has(d)) continue;
      seen.add(d);
      if (byId.get(d)?.kind === 'repeat') return true;
      stack.push(...downstreamOf(d));
    }
    return false;
  };
  const axes: Choice[][] = [];
  for (const op of profile.ops) {
    if (op.kind === 'interleave') {
      // Inner datasets pulled at once: as written, or cycleLength = parallelism = 4, 16, 64.
      axes.push([undefined, ...[4, 16, 64].map((n) => ({ [op.id]: { cycleLength: n, parallelism: n } }))]);
      continue;
    }
    if (op.kind !== 'map' && op.kind !== 'filter' && op.kind !== 'flatMap') continue;
    const awaits = op.fnAsync === true || op.counters.asyncCalls > 0;
    if (awaits) {
      // An exported async fn that mostly works (a decode after a read: its awaited calls were
      // mostly its own CPU, as the runner measured) can run in worker threads too. One that waits
      // waits on a device or a service, which threads do not multiply: the disk-bound fixture's
      // throttle lives in its module, so each worker thread would get a fresh one, which no real
      // device gives.
      const mc = op.moveCost;
      const works = mc?.awaitedSeconds !== undefined && mc.mainCpuSeconds >= MODEL_CONSTANTS.awaitedWorkShare * mc.awaitedSeconds;
      const pools = op.fnModule && op.placement === 'main' && works ? [...new Set([1, cores])].map((p) => ({ [op.id]: { placement: 'worker' as const, parallelism: p } })) : [];
      axes.push([...[1, 4, 16, 64].map((p) => ({ [op.id]: { parallelism: p } })), ...pools]);
    } else if (op.placement === 'worker') {
      axes.push([...new Set([1, cores])].map((p) => ({ [op.id]: { parallelism: p } })));
    } else if (op.fnModule) {
      axes.push([undefined, ...[...new Set([1, cores])].map((p) => ({ [op.id]: { placement: 'worker' as const, parallelism: p } }))]);
    }
    if (!op.random && hasRepeatBelow(op.id)) axes.push([undefined, { [op.id]: { cache: 'memory' } }]);
  }
  axes.push([undefined, { [profile.pipeline.rootId]: { prefetch: 16 } }]);
  return product(axes);
}
