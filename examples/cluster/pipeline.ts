/**
 * Thumbnails made on a cluster: the stage runs in `plumber-data worker` processes, on this host or
 * others, reached through Redis. `PLUMBER_REDIS` names the server (default: this host's 6379);
 * start the workers first (see README.md, or `run-local.ts`, which does it all on this machine).
 */
import { connect, range } from 'plumber-data';
import { thumbnail } from './transforms';

const thumbnails = connect({ redis: process.env.PLUMBER_REDIS ?? 'redis://127.0.0.1:6379', name: 'thumbnails' });

export const features = range(100_000)
  // Workers load their own copy of transforms.ts; the map sends each id and gets the result back.
  .map(thumbnail, { placement: thumbnails, module: './transforms.ts', parallelism: 32 })
  .batch(32);
