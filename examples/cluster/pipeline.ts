/**
 * Thumbnails made on a cluster: the stage runs in `plumber-data worker` processes, on this host or
 * others, reached through Redis. With `PLUMBER_REDIS` set (e.g. redis://10.0.0.5:6379), the
 * workers you started serve it; without, the pipeline starts a redis-server and
 * `PLUMBER_WORKERS` (default 2) workers on this machine, standing in for hosts (see README.md).
 */
import * as path from 'node:path';
import { connect, from } from 'plumber-data';
import { startLocalCluster } from './localCluster';
import { thumbnail } from './transforms';

const given = process.env.PLUMBER_REDIS;
const local = given === undefined ? startLocalCluster({ workers: Number(process.env.PLUMBER_WORKERS ?? 2), name: 'thumbnails', module: path.join(__dirname, 'transforms.ts') }) : undefined;

const thumbnails = connect({ redis: given ?? (local?.url as string), name: 'thumbnails' });

/** Image ids, once the local stand-in cluster (if any) is up. */
async function* imageIds(): AsyncGenerator<number> {
  await local?.ready;
  for (let id = 0; id < 100_000; id++) yield id;
}

export const features = from(imageIds)
  // Workers load their own copy of transforms.ts; the map sends each id and gets the result back.
  .map(thumbnail, { placement: thumbnails, module: './transforms.ts', parallelism: 32 })
  .batch(32);
