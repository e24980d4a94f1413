/**
 * bullmq and the ioredis it ships, loaded on first use (a pipeline without a cluster op never
 * loads them), and the connection options of the consumer side.
 */
import { createRequire } from 'node:module';
import type { Queue, Worker } from 'bullmq';
import type { Redis as IORedis, RedisOptions } from 'ioredis';
import type { Cluster } from './placement';

export type RedisCtor = new (url: string, o: RedisOptions) => IORedis;

/** bullmq and its ioredis, loaded when the first cluster pass starts (a pipeline without one never loads them). */
export function loadBull(): { Queue: typeof Queue; Worker: typeof Worker; Redis: RedisCtor } {
  const bull = require('bullmq') as { Queue: typeof Queue; Worker: typeof Worker };
  const fromBull = createRequire(require.resolve('bullmq'));
  const io = fromBull('ioredis') as { Redis?: RedisCtor; default?: RedisCtor };
  return { Queue: bull.Queue, Worker: bull.Worker, Redis: (io.Redis ?? io.default) as RedisCtor };
}

/** Redis at a loopback address runs on this host. */
export function isLoopback(url: string): boolean {
  try {
    const h = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return h === 'localhost' || h === '::1' || h.startsWith('127.');
  } catch {
    return false;
  }
}

/** Connection options that fail fast: a command never waits in an offline queue for a server that is gone. */
export function failFastOptions(cluster: Cluster): RedisOptions {
  const attempts = Math.max(1, Math.ceil(cluster.connectTimeoutMs / 500));
  return {
    lazyConnect: true,
    connectTimeout: cluster.connectTimeoutMs,
    // BLPOP blocks for 1 s; any command still unanswered well after that means the server is gone.
    commandTimeout: cluster.connectTimeoutMs + 2000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    retryStrategy: (times: number) => (times > attempts ? null : 500),
  };
}
