/**
 * WebDataset shards: tar files whose members are grouped into samples by key, WebDataset's
 * convention — a member's key is its path up to the first dot of its base name, the rest is the
 * field (`train/0001.seg.png` → key `train/0001`, field `seg.png`), lower-cased as WebDataset does.
 * A sample is `{ __key__, __url__ (the shard), <field>: bytes, … }`.
 *
 * Order: samples leave in the order their members are stored; a sample's members must be adjacent
 * in the tar (WebDataset writers put them so), and a key met again after other keys is a
 * `FormatError` naming the shard and the key rather than a sample silently split in two. A member
 * whose base name has no dot names no field and is passed over, as WebDataset does; a leading `./`
 * is not part of a key. Shards are read in the reader op's order (`shardOrder` when shuffled).
 */
import { Rng, mix } from '../rng';
import { FormatError, type ParseClock, type Shard, type StreamFormat } from './format';
import { TarReader, type TarFile } from './tar';
import { plain } from './tfrecord';

/** One WebDataset sample: its key, its shard, and one byte array per field. */
export interface WebDatasetSample {
  __key__: string;
  __url__: string;
  [field: string]: Uint8Array | string;
}

/** A member's key and field, or null when its base name has no dot. */
export function splitKey(path: string): { key: string; field: string } | null {
  const clean = path.startsWith('./') ? path.slice(2) : path;
  const slash = clean.lastIndexOf('/');
  const dot = clean.indexOf('.', slash + 1);
  if (dot <= slash + 1 || dot === clean.length - 1) return null;
  return { key: clean.slice(0, dot), field: clean.slice(dot + 1).toLowerCase() };
}

/** Groups tar members into samples as they arrive; `end()` returns the last one. */
export class SampleGrouper {
  private current: WebDatasetSample | null = null;
  private readonly seen = new Set<string>();

  constructor(private readonly location: string) {}

  /** Adds a member; appends the sample it completes (the previous key's) to `out`. */
  add(file: TarFile, out: WebDatasetSample[]): void {
    const split = splitKey(file.path);
    if (split === null) return;
    const { key, field } = split;
    if (this.current === null || this.current.__key__ !== key) {
      if (this.seen.has(key))
        throw this.error(file, `the members of sample '${key}' are not adjacent: '${file.path}' comes after other samples' members. WebDataset shards store each sample's files together (tar them sorted by name).`);
      if (this.current !== null) out.push(this.current);
      this.seen.add(key);
      this.current = { __key__: key, __url__: this.location };
    } else if (field in this.current) {
      throw this.error(file, `sample '${key}' has two '${field}' members.`);
    }
    if (field === '__key__' || field === '__url__') throw this.error(file, `'${file.path}' would overwrite the sample's ${field}.`);
    this.current[field] = file.data;
  }

  /** The last sample, if any. */
  end(out: WebDatasetSample[]): void {
    if (this.current !== null) out.push(this.current);
    this.current = null;
  }

  private error(file: TarFile, message: string): FormatError {
    return new FormatError(this.location, `byte ${file.offset.toLocaleString('en-US')}`, message);
  }
}

/** The WebDataset format: one sample per key, in the order the shard stores them. */
export function webDatasetFormat(): StreamFormat<WebDatasetSample> {
  return { kind: 'webdataset', streamed: true, parse: parseSamples };
}

async function* parseSamples(bytes: AsyncIterable<Uint8Array>, shard: Shard, clock: ParseClock): AsyncGenerator<WebDatasetSample[]> {
  const tar = new TarReader(shard.location);
  const grouper = new SampleGrouper(shard.location);
  const files: TarFile[] = [];
  for await (const chunk of bytes) {
    const t0 = performance.now();
    const out: WebDatasetSample[] = [];
    let failed = false;
    let failure: unknown;
    try {
      files.length = 0;
      tar.push(plain(chunk), files);
      for (const f of files) grouper.add(f, out);
    } catch (e) {
      [failed, failure] = [true, e];
    }
    clock.parsed((performance.now() - t0) / 1000);
    // The samples before a bad member are delivered before its error.
    if (out.length > 0) yield out;
    if (failed) throw failure;
  }
  tar.end();
  const last: WebDatasetSample[] = [];
  grouper.end(last);
  if (last.length > 0) yield last;
}

/**
 * The order pass `epoch` reads the shards in with `shuffleShards: seed`: a permutation drawn afresh
 * for each pass from the seed, so passes differ and a run with the same seed repeats. Every
 * process given the same seed sees the same permutation, so `shard(n, i)` after the reader splits
 * one sequence among them.
 */
export function shardOrder<S>(shards: readonly S[], seed: number, epoch: number): S[] {
  const out = shards.slice();
  const rng = new Rng(mix(seed, epoch));
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
