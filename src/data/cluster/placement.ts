/**
 * `connect()`: a handle on a cluster of worker processes reached through BullMQ on Redis. The
 * handle only names the cluster; no connection is opened until a pass of a map placed on it
 * starts, so building a pipeline needs neither Redis nor bullmq loaded.
 */

/** Options of `connect()`. */
export interface ClusterOptions {
  /** The Redis server the workers listen on: `redis://host:6379` (also `rediss://`, with user and password). */
  redis: string;
  /** The cluster's name: workers started with `--name <name>` serve it. Letters, digits, `_`, `-` and `.`. */
  name: string;
  /**
   * How long a pass waits while no worker serves the cluster before it fails (default 30 s): the
   * jobs stay queued meanwhile, so workers started late still pick them up.
   */
  noWorkerTimeoutMs?: number;
  /** How long to try to reach Redis before a pass fails (default 3 s). */
  connectTimeoutMs?: number;
  /**
   * How long a pass waits while workers serve the cluster, elements are outstanding and no result
   * arrives, before it fails naming them (default 5 min; a map's `timeoutMs` replaces it by that plus 15 s).
   */
  noProgressTimeoutMs?: number;
}

/** A cluster placement: pass it as `map(fn, { placement: cluster, module })`. */
export class Cluster {
  readonly redis: string;
  readonly name: string;
  readonly noWorkerTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly noProgressTimeoutMs: number;

  constructor(o: ClusterOptions) {
    if (o === null || typeof o !== 'object') throw new TypeError("connect() needs options: connect({ redis: 'redis://host:6379', name: 'images' }).");
    if (typeof o.redis !== 'string' || !/^rediss?:\/\//.test(o.redis)) {
      throw new TypeError(`connect() needs \`redis\` as a URL like 'redis://host:6379', not ${JSON.stringify(o.redis)}.`);
    }
    if (typeof o.name !== 'string' || !/^[A-Za-z0-9_.-]+$/.test(o.name)) {
      throw new TypeError(`connect() needs a \`name\` of letters, digits, '_', '-' or '.', not ${JSON.stringify(o.name)}: workers started with --name <name> serve it.`);
    }
    this.redis = o.redis;
    this.name = o.name;
    this.noWorkerTimeoutMs = o.noWorkerTimeoutMs ?? 30_000;
    this.connectTimeoutMs = o.connectTimeoutMs ?? 3_000;
    this.noProgressTimeoutMs = o.noProgressTimeoutMs ?? 300_000;
  }

  toString(): string {
    return `cluster '${this.name}' at ${redactUrl(this.redis)}`;
  }
}

/** A map's `timeoutMs`: a positive number of milliseconds, with a cluster placement only (a local fn cannot be given up on). */
export function checkTimeout(kind: string, t: unknown, onCluster: boolean): number | undefined {
  if (t === undefined) return undefined;
  if (!onCluster) throw new TypeError(`${kind}(fn, { timeoutMs }) applies to a map placed on a cluster (placement: connect(...)), where a worker can give up on an element; a local fn cannot be stopped.`);
  if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0) throw new TypeError(`${kind}(fn, { timeoutMs }) needs a number of milliseconds above 0, not ${JSON.stringify(t)}.`);
  return t;
}

/** A Redis URL without its password, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

/**
 * A cluster of worker processes for `map`, `filter` and `flatMap`:
 * `const images = connect({ redis: 'redis://host:6379', name: 'images' })`, then
 * `.map(decode, { placement: images, module: import.meta.url, parallelism: 64 })`, with workers
 * started on any host by `npx plumber-data worker --redis redis://host:6379 --name images --module ./transforms.ts`.
 */
export function connect(options: ClusterOptions): Cluster {
  return new Cluster(options);
}
