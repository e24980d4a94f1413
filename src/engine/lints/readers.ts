/**
 * Lints of the readers (`csv`, `jsonLines`, `tfrecord`, `webdataset`, `parquet`, `arrow`):
 * - `plumber/reader-one-shard`: one reader reads one compressed or large file. A gzip or brotli
 *   stream decompresses front to back, and a reader splits its work by shards only, so no
 *   `parallelism` or worker placement can spread it: shards can. Static where the path is a literal
 *   with no glob (compressed by its extension); measured where the run read one shard of
 *   `LARGE_SHARD_BYTES` or more, or a compressed one.
 * - `plumber/parse-on-main-thread`: a CSV or JSON Lines reader parsing (or decompressing) on the
 *   main thread binds the pipeline (measured): worker placement moves that work off it.
 */
import type { GraphOp, Knob, PipelineGraph } from '../graph/types';
import type { OpProfile, Profile } from '../../shared/profile';
import { analyze } from '../../model';
import { formatBytes, formatSeconds } from '../../model/describe';
import { READER_KINDS, readerParts } from '../../model/readers';

/** The finding's shape (./rules.ts `LintFinding`, repeated structurally so this file needs nothing of it). */
interface Finding {
  rule: string;
  severity: 'warning' | 'information';
  message: string;
  op: GraphOp;
  related: Array<{ op: GraphOp; message: string }>;
}

export const READER_RULES: Record<string, string> = {
  'plumber/reader-one-shard': 'one reader reads one compressed or large file, which no parallelism can split: shards can',
};

export const READER_MEASURED_RULES: Record<string, string> = {
  'plumber/reader-one-shard': 'one reader reads one compressed or large file (measured: its size and shards as the run read them)',
  'plumber/parse-on-main-thread': 'a CSV or JSON Lines reader that parses on the main thread binds the pipeline (measured)',
};

/**
 * From this size on, one file read by one reader is worth splitting: at the 100–300 MB/s a
 * thread parses text, a pass over it takes a second or more that shards could share. A policy
 * line; the finding reports the size itself.
 */
export const LARGE_SHARD_BYTES = 64 * 1024 * 1024;

const COMPRESSED = /\.(gz|gzip|br)$/i;
const GLOB = /[*?[\]{}]/;

/** The one file a reader's literal path names: a string without glob characters. */
function oneLiteralFile(k: Knob | undefined): string | undefined {
  return k?.state === 'literal' && typeof k.value === 'string' && !GLOB.test(k.value) ? k.value : undefined;
}

function splitAdvice(label: string): string {
  return `Split it into shards (several files a glob matches, say 4–16 per core) and read them with ${label.replace(/\(.*$/, '')}('…*.gz', { parallelism }): shards decompress and parse at once, and with placement: 'worker' on other cores.`;
}

/** A compressed file named by a literal path: a reader can only read it front to back on one thread. */
export function readerLints(p: PipelineGraph): Finding[] {
  const out: Finding[] = [];
  for (const op of p.ops) {
    if (!READER_KINDS.has(op.kind)) continue;
    const file = oneLiteralFile(op.knobs['path']);
    if (!file || !COMPRESSED.test(file)) continue;
    out.push({
      rule: 'plumber/reader-one-shard',
      severity: 'information',
      message: `${op.label} reads one compressed file, which decompresses front to back on one thread: no parallelism can split it. ${splitAdvice(op.label)}`,
      op,
      related: [],
    });
  }
  return out;
}

/** One pipeline as the measured rules read it (./measured.ts `MeasuredPipeline`). */
export interface ReaderView {
  graph: PipelineGraph;
  profile: Profile | undefined;
  byProfileId: Map<string, GraphOp>;
}

/** The run read one shard: the reader said it has one, or the path names one file. */
function readOneShard(p: OpProfile, op: GraphOp): boolean {
  return p.knobs.numShards === 1 || oneLiteralFile(op.knobs['path']) !== undefined;
}

/** The measured reader findings of one profiled pipeline. */
export function readerMeasuredLints(v: ReaderView): Finding[] {
  const profile = v.profile;
  if (!profile || profile.error) return [];
  const out: Finding[] = [];
  let bottleneck: string | undefined;
  for (const p of profile.ops) {
    if (!READER_KINDS.has(p.kind)) continue;
    const op = v.byProfileId.get(p.id);
    if (!op) continue;
    const c = p.counters;
    const size = c.sourceBytes ?? 0;
    const compressed = (c.bytesDecompressed ?? 0) > 0;
    if (readOneShard(p, op) && (size >= LARGE_SHARD_BYTES || compressed) && !(oneLiteralFile(op.knobs['path']) && COMPRESSED.test(oneLiteralFile(op.knobs['path'])!))) {
      const what = compressed ? `one compressed file${size > 0 ? ` of ${formatBytes(size)}` : ''}` : `one file of ${formatBytes(size)}`;
      out.push({ rule: 'plumber/reader-one-shard', severity: 'information', message: `${op.label} read ${what} (measured): no parallelism can split one file. ${splitAdvice(op.label)}`, op, related: [] });
    }
    if ((p.kind !== 'csv' && p.kind !== 'jsonLines') || p.placement !== 'main') continue;
    bottleneck ??= analyze(profile).bottleneck.opId ?? '';
    const parts = readerParts(p, 1);
    if (bottleneck !== p.id || !parts || parts.binds === 'read') continue;
    const part = parts.binds === 'parse' ? 'parsing' : 'decompressing';
    out.push({
      rule: 'plumber/parse-on-main-thread',
      severity: 'information',
      message: `${op.label} binds the pipeline ${part} on the main thread (measured: ${formatSeconds(parts[parts.binds])} per element). placement: 'worker' moves decompression and parsing to worker threads, one per shard read at once (parallelism), so other cores share it.`,
      op,
      related: [],
    });
  }
  return out;
}
