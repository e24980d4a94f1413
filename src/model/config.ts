/**
 * A knob configuration the model can evaluate: the profile's knobs as they ran, changed by runner
 * overrides or by the planner.
 */
import type { OpProfile, Overrides, Placement } from '../shared/profile';
import { MODEL_CONSTANTS as C } from './constants';
import { diskReadOf, type DiskRead } from './diskCache';
import { can, isFnOp } from './knobs';
import type { Measured } from './measured';

/** The knobs of one operator in a configuration. */
export interface OpConfig {
  placement: Placement;
  /** Calls in flight, worker threads or reads in flight; 1 for a sync main-thread fn. */
  concurrency: number;
  /** An interleave's cycle length: inner datasets open at once (the library's default is 2). */
  cycleLength?: number;
  /** A prefetch op's buffer size (0 when an override removed it). */
  bufferSize?: number;
  /** Buffer of a prefetch inserted right after this op, when the configuration adds one, or of its own output (`buffersOutput`). */
  prefetchAfter?: number;
  /** A memory cache inserted right after this op. */
  cacheAfter?: boolean;
  /** A map or filter in worker threads that runs in the tasks of the worker map it reads from (`fuse: true`, see fuse.ts). */
  fused?: boolean;
  /** A map that hands results on as they finish (`deterministic: false`), not in input order (see tail.ts). */
  unordered?: boolean;
  /** With `cacheAfter`: the cache is on disk (`cache(path)`), and serves each element at this cost (./diskCache.ts). */
  cacheDisk?: DiskRead;
}

export type Config = Record<string, OpConfig>;

/** plumber-data's interleave cycle length when none is written (src/data/dataset.ts). */
export const INTERLEAVE_DEFAULT_CYCLE = 2;

/** An interleave's (cycleLength, parallelism) under `cfg`: how many inner datasets are open, and pulled at once. */
export function outerOf(cfg: Config, interleaveId: string): { cycle: number; parallelism: number } {
  const c = cfg[interleaveId];
  return { cycle: c?.cycleLength ?? INTERLEAVE_DEFAULT_CYCLE, parallelism: c?.concurrency ?? 1 };
}

/**
 * A dialect's operator that buffers its own output (a Node stream's `highWaterMark`, which the
 * runner reports as `knobs.bufferSize`): it reads ahead into that buffer while the operators after
 * it work, as a prefetch after it would. (A shuffle's buffer is its window, not read-ahead; a
 * plumber-data operator buffers only through a prefetch operator.)
 */
function buffersOutput(op: OpProfile): boolean {
  return op.levers !== undefined && op.kind !== 'shuffle' && (op.knobs.bufferSize ?? 0) > 0;
}

/** The configuration the profile ran with. */
export function configFromProfile(m: Measured): Config {
  const cfg: Config = {};
  for (const [id, om] of m.ops) {
    cfg[id] = { placement: om.op.placement, concurrency: om.concurrency };
    if (om.op.kind === 'prefetch') cfg[id].bufferSize = om.op.knobs.bufferSize ?? 1;
    else if (buffersOutput(om.op)) cfg[id].prefetchAfter = om.op.knobs.bufferSize;
    if (om.op.kind === 'interleave') cfg[id].cycleLength = om.op.knobs.cycleLength ?? INTERLEAVE_DEFAULT_CYCLE;
    if (om.op.knobs.fuse === true) cfg[id].fused = true;
    if (om.op.knobs.deterministic === false) cfg[id].unordered = true;
  }
  return cfg;
}

export function cloneConfig(cfg: Config): Config {
  const out: Config = {};
  for (const [id, c] of Object.entries(cfg)) out[id] = { ...c };
  return out;
}

/**
 * The op a prefetch or cache inserted after `id` would land next to, when the profile already has
 * one there (a run with overrides shows inserted ops as ops of their own).
 */
export function insertedAfter(m: Measured, id: string, kind: 'prefetch' | 'cache'): string | undefined {
  return (m.consumers.get(id) ?? []).find((c) => m.ops.get(c)?.op.kind === kind);
}

/**
 * Apply runner overrides (keyed by op id) on top of the profile's knobs. Overrides the profile
 * already ran with are recognised and not applied twice. Knobs the model cannot predict (disabling
 * a cache whose upstream never ran in the window) are ignored. Unknown ids are ignored.
 */
export function applyOverrides(m: Measured, base: Config, overrides: Overrides): Config {
  const cfg = cloneConfig(base);
  const cores = m.profile.machine.cores;
  for (const [id, o] of Object.entries(overrides)) {
    const om = m.ops.get(id);
    const c = cfg[id];
    if (!om || !c) continue;
    // A sync main-thread fn can move when the profile found its module or the override names one.
    // 'auto' resolves as plumber-data resolves it: the machine's cores in workers,
    // `autoAsyncInFlight` calls in flight for an async fn, an interleave's cycle length, else 1.
    if (o.cycleLength !== undefined && o.cycleLength >= 1 && om.op.kind === 'interleave' && can(om.op, 'cycleLength')) {
      c.cycleLength = Math.floor(o.cycleLength);
      // A written parallelism of 'auto' follows the cycle length.
      if (om.op.knobs.parallelism === 'auto' && o.parallelism === undefined) c.concurrency = c.cycleLength;
    }
    const parallelism =
      o.parallelism === 'auto' ? ((o.placement ?? c.placement) === 'worker' ? cores : om.op.kind === 'interleave' ? (c.cycleLength ?? INTERLEAVE_DEFAULT_CYCLE) : om.isAsync ? C.autoAsyncInFlight : 1) : o.parallelism;
    const canMove = om.movable || (o.module !== undefined && om.op.placement === 'main' && !om.isAsync && om.op.counters.calls > 0 && can(om.op, 'placement'));
    if (o.placement === 'worker' && c.placement === 'main' && canMove) {
      c.placement = 'worker';
      c.concurrency = parallelism ?? cores;
    } else if (o.placement === 'main' && c.placement === 'worker') {
      c.placement = 'main';
      c.concurrency = 1;
    }
    if (parallelism !== undefined && parallelism > 0 && (om.tunable || c.placement === 'worker')) {
      c.concurrency = parallelism;
    }
    if (o.prefetch !== undefined && can(om.op, 'prefetch')) {
      if (om.op.kind === 'prefetch') {
        c.bufferSize = o.prefetch;
      } else {
        const existing = insertedAfter(m, id, 'prefetch');
        if (existing && cfg[existing]) cfg[existing].bufferSize = o.prefetch;
        else c.prefetchAfter = o.prefetch > 0 ? o.prefetch : undefined;
      }
    }
    if (o.fuse !== undefined && (om.op.kind === 'map' || om.op.kind === 'filter')) c.fused = o.fuse;
    if (o.deterministic !== undefined && isFnOp(om.op)) c.unordered = !o.deterministic;
    if (o.cache !== undefined && o.cache !== false && om.op.kind !== 'cache' && !insertedAfter(m, id, 'cache') && can(om.op, 'cache')) {
      c.cacheAfter = true;
      const disk = o.cache !== 'memory' ? diskReadOf(om) : undefined;
      if (disk) c.cacheDisk = disk;
    }
  }
  return cfg;
}
