/**
 * Tabular training input from gzip'd CSV exports: read the shards epoch after epoch, turn each row
 * into a feature vector and its label, batch. Written the way a first version usually is: one shard after
 * another, decompressed and parsed on the main thread. `npx plumber plan examples/gzip-csv/pipeline.ts`
 * profiles it and plans the reader's shards at once and where its parsing runs.
 */
import { csv } from 'plumber-data';
import { ensureShards, FEATURES } from './prepare';
import { toExample } from './transforms';

export const rows = csv('part-*.csv.gz', {
  cwd: ensureShards(),
  schema: { id: 'int', label: 'int', ...Object.fromEntries(FEATURES.map((f) => [f, 'number' as const])) },
})
  .repeat()
  .map(toExample)
  .batch(256);
