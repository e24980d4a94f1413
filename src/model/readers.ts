/**
 * Readers of stored formats (`csv`, `jsonLines`, `tfrecord`, `webdataset`, `parquet`, `arrow`):
 * sources whose work has three parts, each measured per element from the reader's counters —
 * read (waiting on the disk or the network: `ioWaitSeconds`), decompress (CPU:
 * `decompressSeconds`) and parse (CPU: `parseSeconds`). The model prices a reader with the same
 * machinery as a map: its waits are calls in flight (`parallelism` shards read at once, at most
 * its shards), its decompression and parsing are the work a worker move takes off the main
 * thread (`placement: 'worker'`), crossing cost included.
 *
 * Assumptions:
 * - A shard's wait for bytes is the latency of the elements it yields: `parallelism` shards
 *   overlap their waits as `parallelism` calls in flight overlap theirs.
 * - On the main thread, a reader's parsing is main-thread time (at least `parseSeconds`); its
 *   decompression runs on libuv's pool (Node's zlib streams): a wait for the shard, like its reads,
 *   whose CPU the process's other-thread CPU holds.
 * - Moved to worker threads, each element crosses back as a structured clone of its bytes (no
 *   measured move cost for a reader: the worker reads the shard itself, so nothing crosses in).
 */
import type { OpKind, OpProfile } from '../shared/profile';
import { MODEL_CONSTANTS as C } from './constants';
import { formatSeconds } from './describe';
import type { OpMeasure, ReaderPart, ReaderParts } from './measured';

/** The reader kinds: src/data/tracing.ts `READER_KINDS` (a test checks they agree; the model imports no values from the library). */
export const READER_KINDS: ReadonlySet<OpKind> = new Set<OpKind>(['csv', 'jsonLines', 'tfrecord', 'webdataset', 'parquet', 'arrow']);

export function isReader(op: Pick<OpProfile, 'kind'>): boolean {
  return READER_KINDS.has(op.kind);
}

/** The parts of a reader's work from its counters; undefined for other ops or a reader that yielded nothing. */
export function readerParts(op: OpProfile, parallelism: number): ReaderParts | undefined {
  if (!isReader(op)) return undefined;
  const c = op.counters;
  if (!(c.produced > 0)) return undefined;
  const read = (c.ioWaitSeconds ?? 0) / c.produced;
  const decompress = (c.decompressSeconds ?? 0) / c.produced;
  // A reader that kept no parse clock still worked on the thread it ran on.
  const parse = (c.parseSeconds ?? (op.placement === 'worker' ? c.workerCpuSeconds : c.selfSeconds)) / c.produced;
  const binds: ReaderPart = read >= decompress && read >= parse ? 'read' : parse >= decompress ? 'parse' : 'decompress';
  const shards = op.knobs.numShards !== undefined && op.knobs.numShards >= 1 ? Math.floor(op.knobs.numShards) : undefined;
  return { read, decompress, parse, binds, cpuBound: decompress + parse > read, ...(shards !== undefined ? { shards } : {}), parallelism };
}

/**
 * A reader's waits as calls in flight: one call per element, its latency the element's share of the
 * waits. On the main thread a shard's decompression runs on libuv's pool (Node's zlib streams)
 * while the main thread does other work: the shard waits for it as it waits for bytes, and more
 * shards at once decompress at once (their CPU is the pool's, which the CPU bound counts).
 */
export function readerWaits(op: OpProfile): { isAsync: boolean; asyncCalls: number; latency: number } | undefined {
  if (!isReader(op)) return undefined;
  const c = op.counters;
  const wait = (c.ioWaitSeconds ?? 0) + (op.placement === 'main' ? (c.decompressSeconds ?? 0) : 0);
  if (!(c.produced > 0) || !(wait / c.produced >= C.minInferredLatencySeconds)) return { isAsync: false, asyncCalls: 0, latency: 0 };
  return { isAsync: true, asyncCalls: c.produced, latency: wait / c.produced };
}

/**
 * Main-thread seconds of a reader on the main thread: what its clock caught, and at least its
 * parsing (which runs there); undefined for other ops.
 */
export function readerMainSeconds(op: OpProfile, own: number): number | undefined {
  if (!isReader(op) || op.placement !== 'main') return undefined;
  return Math.max(own, op.counters.parseSeconds ?? 0);
}

/**
 * A reader's move to worker threads: nothing crosses in (the worker reads the shard), each
 * element crosses back as a clone priced by its bytes, and the work costs in a worker what it cost
 * on the main thread.
 */
export function readerMove(op: OpProfile): OpMeasure['move'] {
  const c = op.counters;
  const bytes = c.produced > 0 ? c.bytesProduced / c.produced : 0;
  // cloneSide halves the round: the whole clone is paid on each side (serialised, deserialised).
  return { cloneIn: 0, cloneOut: (2 * bytes) / C.cloneBytesPerSecond, workerCpuRatio: 1 };
}

/** Most shards a reader can read at once: its shards when it said, else no limit of its own. */
export function shardCap(om: Pick<OpMeasure, 'reader'>): number {
  return om.reader?.shards ?? Infinity;
}

const PART_WORDS: Record<ReaderPart, string> = { read: 'reading (waiting on the disk or the network)', decompress: 'decompressing', parse: 'parsing' };

/** The name of a reader's element, for its per-element words. */
function elementWord(op: OpProfile): string {
  if (op.kind === 'csv' || op.kind === 'parquet' || op.kind === 'arrow') return op.knobs.batchSize !== undefined ? 'batch' : 'row';
  if (op.kind === 'tfrecord') return 'record';
  if (op.kind === 'webdataset') return 'sample';
  return 'line';
}

/** The knobs a reader's words describe: a planned configuration's, else the run's. */
type ReaderKnobs = { placement: string; concurrency: number } | undefined;

/** Where a reader's part binds and how many shards it reads at once: " on the main thread; 1 of its 8 shards read at once". */
function whereWords(om: OpMeasure, measured: ReaderParts, knobs?: ReaderKnobs): { where: string; shards: string } {
  const r = knobs ? { ...measured, parallelism: knobs.concurrency } : measured;
  const placement = knobs?.placement ?? om.op.placement;
  const where = r.binds === 'read' ? '' : placement === 'worker' ? ' in worker threads' : r.binds === 'parse' ? ' on the main thread' : '';
  const shards =
    r.shards === 1 ? 'it has one shard' : r.shards !== undefined ? `${Math.min(r.parallelism, r.shards)} of its ${r.shards} shards read at once` : `${r.parallelism} shard${r.parallelism === 1 ? '' : 's'} read at once`;
  return { where, shards };
}

/** "reading 0.2 µs, decompressing 5.9 µs and parsing 3.2 µs per row: it binds on decompressing; 1 of its 8 shards read at once" (the hover's line). */
export function readerPartsWords(om: OpMeasure): string {
  const r = om.reader;
  if (!r) return '';
  const { where, shards } = whereWords(om, r);
  return `reading ${formatSeconds(r.read)}, decompressing ${formatSeconds(r.decompress)} and parsing ${formatSeconds(r.parse)} per ${elementWord(om.op)}: it binds on ${PART_WORDS[r.binds].replace(/ \(.*\)$/, '')}${where}; ${shards}`;
}

/**
 * "csv('a.csv.gz') binds on parsing: 38 µs per row on the main thread; 2 of its 8 shards read at
 * once." — the part of a reader's work that binds, where it runs, and how many shards it reads
 * (under `knobs`, a planned configuration's, when given).
 */
export function readerWords(om: OpMeasure, label: string, knobs?: ReaderKnobs): string {
  const r = om.reader;
  if (!r) return '';
  const value = r[r.binds];
  const { where, shards } = whereWords(om, r, knobs);
  return `${label} binds on ${PART_WORDS[r.binds]}: ${formatSeconds(value)} per ${elementWord(om.op)}${where}; ${shards}.`;
}
