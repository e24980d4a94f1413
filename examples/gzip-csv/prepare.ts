/**
 * The gzip-csv example's data: 8 gzip'd CSV shards of a tabular training set (an id, 24
 * numeric features, a category and a label), generated on first use from a fixed seed into
 * `data/` (git-ignored: no data lives in git). Some categories hold a quoted comma, as exports do.
 */
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
// plumber-data's seeded generator (mulberry32): the same seed gives the same data on every machine.
import { Rng } from 'plumber-data';

export const SHARD_DIR = join(__dirname, 'data', 'shards');
export const SHARDS = 8;
export const ROWS_PER_SHARD = 10_000;
/** The numeric feature columns: `f0` … `f23`. */
export const FEATURES: readonly string[] = Array.from({ length: 24 }, (_, i) => `f${i}`);
const CATEGORIES = ['web', 'mobile', 'store, downtown', 'store, airport', 'partner "A"'];

/** The CSV text of shard `s`: a header row, then its rows. */
export function shardText(s: number): string {
  const rng = new Rng(5100 + s);
  const lines = [['id', ...FEATURES, 'category', 'label'].join(',')];
  for (let i = 0; i < ROWS_PER_SHARD; i++) {
    const features = FEATURES.map(() => (rng.float() * 200 - 100).toFixed(4));
    const category = CATEGORIES[Math.floor(rng.float() * CATEGORIES.length)]!;
    const quoted = /[",]/.test(category) ? `"${category.replace(/"/g, '""')}"` : category;
    lines.push([s * ROWS_PER_SHARD + i, ...features, quoted, Math.floor(rng.float() * 2)].join(','));
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Makes sure the shards exist, generating them the first time (a second or two). Synchronous so
 * that a pipeline module can call it while it loads; several processes may call it at once: each
 * writes into its own folder and the first rename wins.
 */
export function ensureShards(): string {
  if (existsSync(SHARD_DIR)) return SHARD_DIR;
  const tmp = `${SHARD_DIR}.tmp-${process.pid}`;
  mkdirSync(tmp, { recursive: true });
  try {
    for (let s = 0; s < SHARDS; s++) writeFileSync(join(tmp, `part-${String(s).padStart(3, '0')}.csv.gz`), gzipSync(shardText(s)));
    try {
      renameSync(tmp, SHARD_DIR);
    } catch (e) {
      if (!existsSync(SHARD_DIR)) throw e;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return SHARD_DIR;
}

if (require.main === module) {
  if (!existsSync(SHARD_DIR)) console.log(`Generating ${SHARDS} gzip'd CSV shards of ${ROWS_PER_SHARD.toLocaleString('en-US')} rows into ${SHARD_DIR} (first run only)…`);
  ensureShards();
}
