/** Option types of the public API. */
import type { Cluster } from './cluster/placement';

/** A number of calls in flight, or `'auto'`: async fn 16, worker placement the machine's cores, sync main-thread fn 1. */
export type Parallelism = number | 'auto';

/** Options of `map`, `filter` and `flatMap`. */
export interface MapOptions {
  /** Calls in flight (default 1). */
  parallelism?: Parallelism;
  /** `'main'` (default) or `'worker'`: run fn in a pool of `parallelism` worker threads; a `Cluster` (`connect()`): run it on worker processes through Redis. */
  placement?: 'main' | 'worker' | Cluster;
  /** With `placement: 'worker'`: absolute path or `file:` URL of the module that exports fn. */
  module?: string;
  /** With `placement: 'worker'`: the export's name when it differs from `fn.name`. */
  exportName?: string;
  /** Keep input order (default true); false lets the fastest call finish first. */
  deterministic?: boolean;
  /** Declare that fn is random (tools never cache after it). */
  random?: boolean;
  /** Seed of `ctx.rng` (default: the global seed, `setSeed`). */
  seed?: number;
}

export interface InterleaveOptions {
  /** Inner datasets open at once (default 2). */
  cycleLength?: number;
  /** Inner datasets pulled concurrently (default 1; `'auto'` = cycleLength). */
  parallelism?: Parallelism;
  /** Strict round-robin order (default true); false takes from whichever inner dataset is ready. */
  deterministic?: boolean;
}

export interface BatchOptions {
  /** Drop a last batch smaller than n (default false). */
  dropRemainder?: boolean;
}

export interface ShuffleOptions {
  /** With a seed the order is reproducible; without one it derives from the global seed (`setSeed`) or is random. */
  seed?: number;
  /** Epoch e uses seed + e (default true); false repeats the same order each epoch. */
  reshuffleEachIteration?: boolean;
}

export interface FilesOptions {
  /** `'bytes'` (default): `{ path, bytes }`; `'text'`: `{ path, text }`; `'path'`: path strings, nothing read. */
  read?: 'bytes' | 'text' | 'path';
  /** Directory the pattern is relative to (default `process.cwd()`). */
  cwd?: string;
  /** Reads in flight (default 16; `'auto'` = 16). */
  parallelism?: Parallelism;
}

export interface LinesOptions {
  encoding?: BufferEncoding;
  cwd?: string;
}
