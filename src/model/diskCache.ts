/**
 * A cache on disk (`cache(path)`): what it costs per element, where it goes, and whether it pays.
 *
 * plumber-data's cache(path) writes each element of the first pass as `v8.serialize(element)` in a
 * record of its own (9 bytes of head), and each later pass reads the file back and deserialises
 * every record on the main thread (src/data/internal/ops/cache.ts). The runner measures the
 * serialise and deserialise time per element on the sampled elements (`op.diskCacheCost`) and the
 * disk's read bandwidth (`machine.diskReadBytesPerSec`). A later pass then costs, per element,
 * its deserialise time on the main thread and its bytes from the disk, each a bound of its own.
 *
 * Assumptions: the file is read at the bandwidth the runner measured (a file just written is often
 * served from the page cache, faster: the prediction errs slow); the elements the run sampled are
 * like the rest.
 */
import type { Measured, OpMeasure } from './measured';

/** The bytes a cache file adds to each element's serialised body (CRC, length, kind). */
export const DISK_RECORD_HEAD_BYTES = 9;

/** The default directory of disk caches, relative to the pipeline file's directory (`ModelOptions.cacheDir`). */
export const DEFAULT_CACHE_DIR = '.cache/plumber';

/** What a disk cache after an op costs per element it serves: main-thread seconds and bytes read. */
export interface DiskRead {
  readSeconds: number;
  bytes: number;
  /** Main-thread seconds per element written in the first pass (serialising). */
  writeSeconds: number;
}

/** The per-element cost of a disk cache after `om`, or undefined when the runner did not measure it. */
export function diskReadOf(om: OpMeasure): DiskRead | undefined {
  const c = om.op.diskCacheCost;
  if (c === undefined || !(c.samples > 0)) return undefined;
  return { readSeconds: c.readSeconds, bytes: c.serializedBytes + DISK_RECORD_HEAD_BYTES, writeSeconds: c.writeSeconds };
}

/**
 * Seconds per root element a later pass spends reading a disk cache after `om`: its deserialising
 * and its bytes at the disk's measured bandwidth, whichever binds (they overlap: the library reads
 * ahead in blocks of 1 MB while the main thread deserialises). Undefined when either is unmeasured.
 */
export function diskReadPerRoot(m: Measured, om: OpMeasure): number | undefined {
  const d = diskReadOf(om);
  const bw = m.profile.machine.diskReadBytesPerSec;
  if (d === undefined || bw === undefined || !(bw > 0)) return undefined;
  return om.visitRatio * Math.max(d.readSeconds, d.bytes / bw);
}

/** A file name for the cache after `opId`: the pipeline's export and the op's position, safe in any file system. */
export function diskCacheName(m: Measured, opId: string): string {
  const exportName = m.profile.pipeline.exportName || 'default';
  const raw = `${exportName}-${opId}`.replace(/[^A-Za-z0-9._-]+/g, '_');
  return `${raw}.plumbercache`;
}

/** The cache's path relative to the pipeline file's directory, POSIX separators: `<cacheDir>/<name>`. */
export function diskCachePath(m: Measured, opId: string, cacheDir: string | undefined): string {
  const dir = (cacheDir ?? DEFAULT_CACHE_DIR).replace(/\\/g, '/').replace(/\/+$/, '');
  return `${dir === '' ? '.' : dir}/${diskCacheName(m, opId)}`;
}

/**
 * A path relative to the pipeline file's directory made absolute (POSIX or Windows separators as
 * the pipeline file has them); an absolute path is kept. Pure string work: the model does no I/O.
 */
export function absoluteCachePath(pipelineFile: string, path: string): string {
  if (path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)) return path;
  const sep = pipelineFile.includes('\\') && !pipelineFile.includes('/') ? '\\' : '/';
  const cut = Math.max(pipelineFile.lastIndexOf('/'), pipelineFile.lastIndexOf('\\'));
  const dir = cut >= 0 ? pipelineFile.slice(0, cut) : '.';
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  return [dir, ...parts].join(sep);
}
