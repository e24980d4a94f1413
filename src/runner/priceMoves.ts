/** Move pricing, after the window, recorded on the profile's operators (see moves/). */
import type { OpProfile, Profile } from '../shared/profile';
import { measureMoves, type MoveTarget } from './moves';
import type { RunnerTracer } from './tracer';

/**
 * After the window: measures, on the elements the tracer kept, what moving each main-thread
 * map/filter/flatMap to worker threads would cost, and whether its fn is
 * deterministic (see moves.ts), and records both on its operator.
 */
export async function priceMoves(tracer: RunnerTracer, profile: Profile, file: string): Promise<void> {
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const reread = rereadByRepeat(profile.ops);
  const targets: MoveTarget[] = [];
  for (const [key, samples] of tracer.samples()) {
    const info = tracer.info(key);
    const op = byId.get(tracer.idOf(key, file));
    if (!info?.fn || !op || info.placement !== 'main') continue;
    if (op.kind !== 'map' && op.kind !== 'filter' && op.kind !== 'flatMap') continue;
    const async = info.fnAsync === true || op.counters.asyncCalls > 0;
    const heap = reread.has(op.id);
    targets.push({ id: op.id, kind: op.kind, fn: info.fn, samples, ...(op.fnModule ? { fnModule: op.fnModule } : {}), ...(async ? { async } : {}), ...(heap ? { heap } : {}) });
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

/**
 * The operators whose output a repeat (more than one pass) reads again: where a cache could pay,
 * so what their elements hold in memory is worth measuring.
 */
function rereadByRepeat(ops: readonly OpProfile[]): Set<string> {
  const byId = new Map(ops.map((o) => [o.id, o]));
  const out = new Set<string>();
  const visit = (id: string): void => {
    const op = byId.get(id);
    if (!op || out.has(id)) return;
    out.add(id);
    for (const i of op.inputs) visit(i);
    // The datasets an interleave's or flatMap's fn builds feed it too.
    for (const inner of ops) if (inner.parentId === id) visit(inner.id);
  };
  for (const op of ops) {
    const count = op.knobs.count;
    if (op.kind === 'repeat' && (count === undefined || count < 0 || count > 1)) for (const i of op.inputs) visit(i);
  }
  return out;
}
