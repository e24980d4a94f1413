/**
 * The oracle's grid for the end-to-end benchmark (the baselines are in bench/baselines.ts), as
 * runner overrides computed from the as-written profile (so no pipeline source is ever edited): a
 * few settings of each knob family that can matter for this pipeline (which CPU-heavy functions
 * run in worker threads, how many calls an awaiting function keeps in flight, whether a cache goes
 * below the first random step), each one measured.
 */
import type { OpProfile, Overrides, Profile } from '../../src/shared/profile';
import { isAwaiting, merge, type ModuleOf } from '../baselines';

const PARALLEL_KINDS = new Set(['map', 'filter', 'interleave']);

/** Main-thread (or worker) CPU seconds per element the op itself spent. */
export function secondsPerElement(op: OpProfile): number {
  const c = op.counters;
  const n = Math.max(1, c.calls || c.pulled || c.produced);
  return (c.selfSeconds + c.workerCpuSeconds) / n;
}

/** The ops in the chain from the root down to the source, following each op's first input. */
export function chain(profile: Profile): OpProfile[] {
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const out: OpProfile[] = [];
  for (let op = byId.get(profile.pipeline.rootId); op; op = byId.get(op.inputs[0] ?? '')) out.push(op);
  return out;
}

/**
 * Where a cache can pay: the highest op whose output is the same every epoch (nothing random at
 * or below it) and that sits below a repeat, so its elements are read again. Undefined when the
 * pipeline reads its data only once, or when nothing costly happens below that point.
 */
export function cacheSite(profile: Profile): string | undefined {
  const ops = chain(profile).reverse(); // source first
  let site: OpProfile | undefined;
  let work = 0;
  for (const op of ops) {
    if (op.random || op.kind === 'repeat' || op.kind === 'shuffle' || op.kind === 'take' || op.kind === 'skip') {
      const repeated = ops.slice(ops.indexOf(op)).some((o) => o.kind === 'repeat');
      return repeated && site && work > 0 ? site.id : undefined;
    }
    work += secondsPerElement(op);
    site = op;
  }
  return undefined;
}

/** A named set of overrides. */
export interface NamedConfig {
  name: string;
  overrides: Overrides;
}

/**
 * The oracle's grid: the product of the knob settings that can matter here, at most `limit`
 * configurations. `moduleOf` says where a function is exported (the profile's `fnModule` by
 * default). Worker placement is tried for sync functions that cost ≥ 1 ms and ≥ 0.1 ms per
 * element; awaiting functions get 8, 32 or 128 calls in flight; a cache is tried where one pays.
 * Every configuration has a prefetch of 4 at the root.
 */
export function oracleGrid(profile: Profile, limit = 6, moduleOf: ModuleOf = (op) => op.fnModule): NamedConfig[] {
  const cores = profile.machine.cores;
  const fnOps = profile.ops.filter((o) => PARALLEL_KINDS.has(o.kind) || o.kind === 'flatMap');
  const cpuOps = fnOps.filter((o) => !isAwaiting(o) && moduleOf(o) && o.placement !== 'worker');
  const asyncOps = fnOps.filter(isAwaiting);

  const workerLevels: { name: string; ids: string[] }[] = [{ name: 'main', ids: [] }];
  for (const threshold of [1e-3, 1e-4]) {
    const ids = cpuOps.filter((o) => secondsPerElement(o) >= threshold).map((o) => o.id);
    if (ids.length > 0 && !workerLevels.some((l) => l.ids.length === ids.length)) {
      workerLevels.push({ name: `workers(${ids.length})`, ids });
    }
  }
  const concurrency = asyncOps.length > 0 ? [8, 32, 128] : [0];
  const site = cacheSite(profile);
  const caches = site ? [false, true] : [false];

  const grid: NamedConfig[] = [];
  for (const cache of caches) {
    for (const level of workerLevels) {
      for (const k of concurrency) {
        const overrides: Overrides = {};
        for (const id of level.ids) {
          const op = profile.ops.find((o) => o.id === id);
          const where = op && moduleOf(op);
          merge(overrides, id, { placement: 'worker', parallelism: cores, ...(where ? { module: where.file, exportName: where.exportName } : {}) });
        }
        for (const op of asyncOps) merge(overrides, op.id, { parallelism: k });
        if (cache && site) merge(overrides, site, { cache: 'memory' });
        merge(overrides, profile.pipeline.rootId, { prefetch: 4 });
        const parts = [level.name, k > 0 ? `inflight ${k}` : '', cache ? 'cache' : ''].filter(Boolean);
        grid.push({ name: parts.join(', '), overrides });
      }
    }
  }
  // When the product is too large, keep the configurations that turn the most knobs on: the
  // all-off corner is what the heuristic already measures.
  return grid.slice(-limit);
}
