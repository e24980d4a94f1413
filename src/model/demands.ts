/**
 * Each operator's demands per root element under a configuration: what it measured, changed only
 * where the configuration changes the operator (moved to worker threads or back, cached away).
 *
 * Assumptions (calibrate with real runs):
 * - Demands per root element measured in the profile stay the same under other knobs; only the
 *   operators a change touches get new demands.
 * - An inserted memory cache removes all work at and above it (the steady state after the first
 *   pass); the first pass costs what it costs today.
 */
import type { Machine } from '../shared/profile';
import { MODEL_CONSTANTS as C } from './constants';
import { outerOf, type Config } from './config';
import type { Effective } from './evaluation';
import { afterFusion, poolFused, receiveCost } from './fuse';
import { nesting, passesOver, upstreamClosure } from './graph';
import { can, isFnOp } from './knobs';
import { latencyAt } from './latency';
import type { Measured, OpMeasure } from './measured';
import { movedCall, taskCosts, taskGroup } from './tasks';

/** The thread-bound demands of one op: main-thread seconds (with its share of runtime overhead), worker CPU and worker waits. */
type Threads = Pick<Effective, 'main' | 'overhead' | 'worker' | 'workerWait'>;

/**
 * Elements per second `threads` worker threads give an op, whose CPU gets `cores` cores among
 * them: each call holds its thread for its CPU (slower on a share of a core) and its wait.
 */
export function workerOpRate(e: Pick<Effective, 'worker' | 'workerWait'>, threads: number, cores: number): number {
  if (!(e.worker > 0)) return Infinity;
  if (!(e.workerWait > 0)) return cores / e.worker;
  return threads / ((e.worker * threads) / cores + e.workerWait);
}

/**
 * The share of its work each op still does under the caches `cfg` inserts: its first pass, of all
 * the passes the pipeline reads the cache (a cache under repeat(4) still computes a quarter of the
 * elements it hands out; under repeat(), none in the steady state). Ops no cache covers are absent.
 */
function cachedShares(m: Measured, cfg: Config): Map<string, number> {
  const cached = new Map<string, number>();
  for (const [id, c] of Object.entries(cfg)) {
    if (!c.cacheAfter) continue;
    const fill = 1 / passesOver(m, id);
    for (const up of upstreamClosure(m, id)) cached.set(up, Math.min(cached.get(up) ?? 1, fill));
  }
  return cached;
}

/**
 * A sync fn moved from the main thread to worker threads: its own time becomes worker CPU; the
 * main thread keeps its bookkeeping and pays a dispatch per task (several small elements share
 * one task, as plumber-data groups them: ./tasks.ts) and its side of each clone; the worker pays
 * a task overhead and the other side. The runtime overhead that follows the fn's own time (GC of
 * what it allocates) moves with it.
 */
function movedToWorkers(om: OpMeasure, machine: Machine): Threads {
  const calls = om.callsPerRoot;
  const group = taskGroup(om, machine);
  const { book, clone, ratio } = movedCall(om);
  const task = taskCosts(machine);
  const overhead = om.overheadPerRoot - om.overheadWorkPerRoot;
  return {
    main: calls * (book + task.dispatch / group + clone) + overhead,
    overhead,
    worker: Math.max(0, om.selfPerRoot - calls * book) * ratio + calls * (task.overhead / group + clone) + om.overheadWorkPerRoot * ratio,
    workerWait: calls * (om.move?.awaited?.wait ?? 0),
  };
}

/**
 * A fn the run had in worker threads, back on the main thread: the pool's dispatch and clones go,
 * and with them the process CPU no thread's clock caught that the workers were charged with. An
 * earlier run that had the fn on the main thread measured what it costs there (`mainSeen`): that
 * figure, when there is one; else what its tasks measured on the workers' own clocks (their share
 * of a task's handling included, so this errs towards the pool).
 */
function backOnMain(om: OpMeasure): Threads {
  if (om.mainSeen) {
    const overhead = om.mainSeen.overheadPerCall * om.callsPerRoot;
    return { main: om.mainSeen.selfPerCall * om.callsPerRoot + overhead, overhead, worker: 0, workerWait: 0 };
  }
  return { main: om.selfPerRoot + om.overheadPerRoot + (om.workerPerRoot - om.workerUnseenPerRoot), overhead: om.overheadPerRoot, worker: 0, workerWait: 0 };
}

/** The op's thread-bound demands where it runs under `placement`. */
function threadsOf(om: OpMeasure, placement: Config[string]['placement'], machine: Machine): Threads {
  if (placement === 'worker' && om.op.placement === 'main') return movedToWorkers(om, machine);
  if (placement === 'main' && om.op.placement === 'worker') return backOnMain(om);
  const overhead = om.overheadPerRoot;
  // A cluster op's worker CPU is spent on other hosts: it takes nothing from this machine's cores.
  return { main: om.selfPerRoot + om.dispatchPerRoot + overhead, overhead, worker: om.op.placement === 'remote' ? 0 : om.workerPerRoot, workerWait: 0 };
}

/** Demands of each op under `cfg`. */
export function effectiveDemands(m: Measured, cfg: Config): Map<string, Effective> {
  const cached = cachedShares(m, cfg);
  const out = new Map<string, Effective>();
  for (const [id, om] of m.ops) {
    const c = cfg[id];
    const f = cached.get(id) ?? 1;
    const t = threadsOf(om, c.placement, m.profile.machine);
    // A fused map's crossing goes (fuse.ts); its own bookkeeping stays.
    const fused = afterFusion(m, cfg, id, t.main, t.worker, t.overhead + Math.min(t.main - t.overhead, om.callsPerRoot * C.bookkeepingSecondsPerElement));
    const { worker } = fused;
    const main = fused.main + receiveCost(m, cfg, id);
    const { overhead, workerWait } = t;
    // plumber-data runs async maps, worker maps, file reads and readers' shards on its parallel engine, which starts
    // the next call as soon as a result is handed downstream: even with one call in flight they
    // overlap the work after them. Sources that await without the engine (`from` an async
    // iterable, `lines`) and sync fns do not, nor does an awaiting fn whose library has no calls
    // in flight to give it (tfjs-data's mapAsync, an async generator stage: each call starts
    // when the next element is pulled).
    const onEngine = c.placement === 'worker' || (om.isAsync && (isFnOp(om.op) || om.op.kind === 'files' || om.reader !== undefined) && can(om.op, 'parallelism'));
    const decoupler = onEngine || (om.op.kind === 'interleave' && c.concurrency >= 2);
    let wait = 0;
    if (!decoupler) {
      if (c.placement === 'worker') wait = worker * f;
      else if (om.isAsync) wait = om.asyncPerRoot * latencyAt(om, c.concurrency) * f;
    }
    out.set(id, {
      // A cache after this op serves its elements from memory: a little main-thread time per element.
      // A disk cache deserialises each element on the main thread and reads its bytes from disk.
      main: main * f + (c.cacheAfter ? (c.cacheDisk?.readSeconds ?? C.cacheHitSecondsPerElement) * om.visitRatio : 0),
      overhead: overhead * f,
      worker: worker * f,
      workerWait: workerWait * f,
      other: om.otherCpuPerRoot * f,
      disk: om.diskPerRoot * f + (c.cacheAfter && c.cacheDisk ? c.cacheDisk.bytes * om.visitRatio : 0),
      async: om.asyncPerRoot * f,
      wait,
      factor: f,
      decoupler,
      nested: nesting(m, id, (p) => outerOf(cfg, p)),
    });
  }
  poolFused(m, cfg, out);
  return out;
}
