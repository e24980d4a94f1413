/** Move pricing, after the window, recorded on the profile's operators (see moves/). */
import type { Profile } from '../shared/profile';
import { measureMoves, type MoveTarget } from './moves';
import { rereadByRepeat } from './reread';
import type { RunnerTracer } from './tracer';

/**
 * After the window: measures, on the elements the tracer kept, what moving each main-thread
 * map/filter/flatMap to worker threads would cost, and whether its fn is
 * deterministic (see moves.ts), and records both on its operator.
 */
export async function priceMoves(tracer: RunnerTracer, profile: Profile, file: string): Promise<void> {
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const targets: MoveTarget[] = [];
  const reread = rereadByRepeat(profile.ops);
  for (const [key, samples] of tracer.samples()) {
    const info = tracer.info(key);
    const op = byId.get(tracer.idOf(key, file));
    if (!info?.fn || !op || info.placement !== 'main') continue;
    if (op.kind !== 'map' && op.kind !== 'filter' && op.kind !== 'flatMap') continue;
    const async = info.fnAsync === true || op.counters.asyncCalls > 0;
    // Every op's results are sized on the heap: a cache after one (where a repeat reads it again)
    // and the buffers after any (src/model/memory.ts) hold them.
    targets.push({ id: op.id, kind: op.kind, fn: info.fn, samples, ...(op.fnModule ? { fnModule: op.fnModule } : {}), ...(async ? { async } : {}), heap: true, ...(reread.has(op.id) ? { diskCost: true } : {}) });
  }
  let findings: Awaited<ReturnType<typeof measureMoves>>;
  try {
    findings = await measureMoves(targets);
  } catch {
    // Pricing moves is extra: a failure here must not cost the user the profile itself.
    return;
  }
  for (const [id, f] of findings) {
    const op = byId.get(id);
    if (op === undefined) continue;
    if (f.randomObserved !== undefined) op.randomObserved = f.randomObserved;
    if (f.moveCost !== undefined) op.moveCost = f.moveCost;
    if (f.held !== undefined) op.held = f.held;
    if (f.diskCacheCost !== undefined) op.diskCacheCost = f.diskCacheCost;
    if (f.moveBlocked !== undefined) op.moveBlocked = f.moveBlocked;
  }
}
