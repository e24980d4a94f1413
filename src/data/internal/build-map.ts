/**
 * map, filter and flatMap as built: their options (and overrides) resolved, the placement chosen
 * (main thread, worker threads, or a cluster's worker processes), and the operator that runs the
 * fn opened per pass.
 */
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MapOptions } from '../options';
import { OPTION_KEYS } from '../options';
import { checkTimeout, Cluster } from '../cluster/placement';
import { type BuildEnv, checkOptions, isAsyncFunction, makeNode, overridden } from './build';
import { FnEnv } from './context';
import type { Chunks, OpNode } from './core';
import { inFlightParallelism, resolveParallelism } from './parallelism';
import { defaultSeed } from './rng';
import { openClusterMap } from './ops/cluster-map';
import { Flatten } from './ops/flatten';
import { MainMap, type UserFn } from './ops/map';
import { declareWorkerPool, type FusedStageRun, openWorkerMap, undeclareWorkerPool } from './ops/worker-map';
import type { OpRef } from '../errors';

export type MapKind = 'map' | 'filter' | 'flatMap';

function toPath(moduleOrUrl: string): string {
  return moduleOrUrl.startsWith('file:') ? fileURLToPath(moduleOrUrl) : moduleOrUrl;
}

/**
 * A worker-placed map that the map after it may fuse with (`fuse: true`): what that map's tasks
 * need to run it first. A map fused into its own predecessor is one too, carrying its chain, so
 * three adjacent worker maps make one task per element.
 */
interface FusableMap {
  /** The maps before this one in its own fused chain (empty when it was not fused). */
  chain: readonly FusableMap[];
  /** The operator the chain reads its elements from. */
  input: OpNode;
  threads: number;
  deterministic: boolean;
  module: string;
  exportName: string;
  seed: number;
  op: OpRef;
  counters: OpNode['counters'];
  /** This map's environment for one more pass (its epoch advances as if it had opened). */
  pass(): FnEnv;
}

const fusable = new WeakMap<OpNode, FusableMap>();

/** The fused chain ahead of a map with `fuse: true` whose input is a worker-placed map, or undefined when it cannot fuse (then it runs as written). */
function fusedChain(input: OpNode, kind: MapKind, placement: string, cluster: boolean): FusableMap | undefined {
  if (kind === 'flatMap' || placement !== 'worker' || cluster) return undefined;
  return fusable.get(input);
}

/** The operator of `input.map(fn)` (or filter, flatMap), before the overrides that insert operators after it. */
export function mapNode<U>(kind: MapKind, env: BuildEnv, input: OpNode, fn: UserFn, options: MapOptions): OpNode<U> {
  if (typeof fn !== 'function') throw new TypeError(`${kind}() needs a function.`);
  checkOptions(kind, env, options, OPTION_KEYS.map);
  const o = env.override;
  // A cluster placement (issue 12) runs the fn's export on worker processes: see cluster-map.ts.
  const cluster = o?.placement === undefined && options.placement instanceof Cluster ? options.placement : undefined;
  const placement = cluster !== undefined ? 'main' : (o?.placement ?? (options.placement as 'main' | 'worker' | undefined) ?? 'main');
  const written = o?.parallelism ?? options.parallelism ?? (cluster !== undefined ? 'auto' : undefined);
  const fnAsync = isAsyncFunction(fn);
  const parallelism = resolveParallelism(written, placement, fnAsync);
  const runtimeParallelism = inFlightParallelism(written, placement, parallelism);
  const deterministic = o?.deterministic ?? options.deterministic ?? true;
  const seed = options.seed ?? defaultSeed();
  const moduleOpt = o?.module ?? options.module;
  const exportName = o?.exportName ?? options.exportName ?? fn.name;
  if (cluster !== undefined && !exportName) throw new TypeError(`${kind}(fn, { placement: ${cluster.toString()} }) needs \`exportName\`: the function has no name for the workers to find it by.`);
  const timeoutMs = checkTimeout(kind, options.timeoutMs, options.placement instanceof Cluster);
  if (placement === 'worker') {
    if (moduleOpt === undefined) {
      throw new TypeError(`${kind}(${fn.name || 'fn'}, { placement: 'worker' }) needs \`module\`: the absolute path or file URL (import.meta.url) of the module that exports the function.`);
    }
    if (!exportName) throw new TypeError(`${kind}(fn, { placement: 'worker' }) needs \`exportName\`: the function has no name to find it by in ${moduleOpt}.`);
    // A worker thread would resolve a relative path against plumber-data's own worker file, and
    // fail with a require stack that names only the library.
    if (!moduleOpt.startsWith('file:') && !isAbsolute(moduleOpt)) {
      throw new TypeError(
        `${kind}(${exportName}, { placement: 'worker' }): module '${moduleOpt}' is a relative path, and worker threads do not know what it is relative to. Pass an absolute one: require.resolve('${moduleOpt}') in CommonJS, new URL('${moduleOpt}', import.meta.url).href in an ES module.`,
      );
    }
  }
  const modulePath = moduleOpt === undefined ? undefined : toPath(moduleOpt);
  const card = input.cardinality;
  let epoch = 0;
  // fuse: true runs this fn in the previous worker map's tasks (one crossing each way, not two).
  // Where there is nothing to fuse with — the input is not a worker map, or this one is not
  // placed in workers (an override moved it) — it runs as written.
  const prev = (o?.fuse ?? options.fuse) === true ? fusedChain(input, kind, placement, cluster !== undefined) : undefined;
  const threads = prev === undefined ? parallelism : prev.threads;
  const node = makeNode<U>(
    env,
    {
      kind,
      inputs: [input],
      placement: cluster !== undefined ? 'remote' : placement,
      fn,
      fnModule: modulePath !== undefined && exportName ? { file: modulePath, exportName } : undefined,
      knobs:
        cluster !== undefined
          ? { parallelism: written, resolvedParallelism: parallelism, deterministic, cluster: cluster.name }
          : prev !== undefined
            ? { parallelism: written, resolvedParallelism: threads, deterministic, fuse: true }
            : { parallelism: written, resolvedParallelism: parallelism, deterministic },
      random: options.random ?? false,
      cardinality: kind === 'map' ? card : undefined,
      overridden: overridden(o, ['parallelism', 'placement', 'module', 'exportName', 'deterministic', 'fuse']),
    },
    (nd, session) => {
      const input = nd.inputs[0];
      const fnEnv = new FnEnv(seed, epoch++, nd.info);
      const op = { kind, key: nd.key, site: nd.site };
      let inner: Chunks<unknown>;
      if (cluster !== undefined) {
        return openClusterMap(nd, input.open(session), { mode: kind, cluster, exportName, module: modulePath, parallelism, deterministic, timeoutMs }) as Chunks<U>;
      } else if (placement === 'worker') {
        const stages =
          prev === undefined
            ? undefined
            : [...prev.chain, prev].map((m): FusedStageRun => {
                const env = m.pass();
                return { module: m.module, exportName: m.exportName, seed: m.seed, epoch: env.epoch, env, counters: m.counters, op: m.op };
              });
        inner = openWorkerMap(
          nd,
          session,
          {
            mode: kind,
            module: modulePath as string,
            exportName,
            threads,
            // Unfused, any map that lets order go lets the chain's output order go: so fused.
            deterministic: deterministic && (prev === undefined || [...prev.chain, prev].every((m) => m.deterministic)),
            seed,
            epoch: fnEnv.epoch,
            env: fnEnv,
            stages,
          },
          prev?.input,
        );
      } else {
        inner = new MainMap(
          input.open(session),
          input.counters,
          nd.counters,
          fn,
          fnEnv,
          op,
          { filter: kind === 'filter', parallelism: runtimeParallelism, deterministic, sample: nd.sample, parent: kind === 'flatMap' && nd.info !== null ? nd.key : undefined, skip: session.skip },
          fnAsync,
        );
      }
      if (kind !== 'flatMap' || placement === 'worker') return inner as Chunks<U>;
      return new Flatten(inner, nd.counters, op, session) as Chunks<U>;
    },
  );
  if (placement === 'worker') {
    const chain = prev === undefined ? [] : [...prev.chain, prev];
    declareWorkerPool(node, threads, [...chain.map((m) => m.module), modulePath as string]);
    if (prev !== undefined) undeclareWorkerPool(input);
    if (kind === 'map' && cluster === undefined) {
      fusable.set(node, {
        chain,
        input: prev === undefined ? input : prev.input,
        threads,
        deterministic,
        module: modulePath as string,
        exportName,
        seed,
        op: { kind, key: node.key, site: node.site },
        counters: node.counters,
        pass: () => new FnEnv(seed, epoch++, node.info),
      });
    }
  }
  return node;
}
