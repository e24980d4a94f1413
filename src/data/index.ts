/**
 * plumber-data: fast, traceable ML input pipelines for TypeScript. See README.md for the API and
 * tracing.ts for the contract with tracers (the Plumber runner).
 */
import type { ChooseOptions, FilesOptions, LinesOptions, SampleOptions } from './options';
import { OPTION_KEYS } from './options';
import { Dataset, concatNodes, finish, zipNodes } from './dataset';
import { beginOp, checkOptions, makeNode } from './internal/build';
import { defaultSeed } from './internal/rng';
import { openChoose, openSample } from './internal/ops/mix';
import { openSource, sourceCardinality, openRange, rangeCount, type Source } from './internal/ops/sources';
import { countFiles, openFiles, openLines, resolveCwd, type FileBytes, type FileText } from './internal/ops/files';

export { Dataset } from './dataset';
export { fromTfDataset, toTfDataset, type TfDatasetLike, type TfLike } from './tfjs';
export { connect, Cluster, type ClusterOptions } from './cluster/placement';
export type { Batched, PaddedBatch, Unbatched } from './dataset';
export { PipelineError } from './errors';
export { csv, jsonLines, tfrecord, webdataset, parquet, arrow, FormatError, type CsvRow, type TableBatch, type TableRow } from './readers';
export type { OpRef } from './errors';
export { Batch } from './internal/batch-class';
export type { TypedArray } from './internal/batch-class';
export type { ElementContext } from './internal/context';
export { Rng, setSeed } from './internal/rng';
export { cpuClockKind, threadCpuSeconds } from './internal/cpuclock';
export type { CpuClockKind } from './internal/cpuclock';
export type { FileBytes, FileText } from './internal/ops/files';
export type { Source } from './internal/ops/sources';
export type * from './options';
export * from './records';
// The tracing contract, less the library rules tracing.ts also hands a tracer in the same build.
export type { CallSite, ConsumerEvent, KnobOverride, OpCounters, OpInfo, OpKind, OpKnobs, Placement, Tracer, WorkerChunking } from './tracing';
export { AUTO_ASYNC_IN_FLIGHT, DATASET_KEY, OVERRIDES_KEY, TRACER_KEY, WORKER_CHUNKING, newCounters, siteKey } from './tracing';

/** The library's version (matches package.json). */
export const version = '0.1.0';

/** A dataset over an array, iterable, async iterable, or a function returning one (called once per epoch). */
export function from<T>(source: Source<T>): Dataset<T> {
  const env = beginOp('from');
  const node = makeNode<T>(env, { kind: 'from', inputs: [], placement: 'main', knobs: {}, cardinality: sourceCardinality(source) }, (n, session) => openSource(source, n, session));
  return finish(env, node);
}

/** Numbers: range(end) is 0…end-1; range(start, end, step = 1). `range(Infinity)` is endless. */
export function range(startOrEnd: number, end?: number, step = 1): Dataset<number> {
  const env = beginOp('range');
  const start = end === undefined ? 0 : startOrEnd;
  const stop = end === undefined ? startOrEnd : end;
  const count = rangeCount(start, stop, step);
  const node = makeNode<number>(env, { kind: 'range', inputs: [], placement: 'main', knobs: {}, cardinality: count }, (n) => openRange(start, step, count, n.counters));
  return finish(env, node);
}

/**
 * Files matching a glob (or globs), sorted by path, read with `parallelism` reads in flight.
 * Elements: `{ path, bytes }` (default), `{ path, text }` with `read: 'text'`, or path strings with `read: 'path'`.
 */
export function files(pattern: string | readonly string[], options?: FilesOptions & { read?: 'bytes' }): Dataset<FileBytes>;
export function files(pattern: string | readonly string[], options: FilesOptions & { read: 'text' }): Dataset<FileText>;
export function files(pattern: string | readonly string[], options: FilesOptions & { read: 'path' }): Dataset<string>;
export function files(pattern: string | readonly string[], options: FilesOptions = {}): Dataset<FileBytes | FileText | string> {
  const env = beginOp('files');
  checkOptions('files', env, options, OPTION_KEYS.files);
  const read = options.read ?? 'bytes';
  const written = env.override?.parallelism ?? options.parallelism;
  const parallelism = typeof written === 'number' ? Math.max(1, Math.floor(written)) : 16;
  const cwd = resolveCwd(options.cwd);
  const node = makeNode<FileBytes | FileText | string>(
    env,
    {
      kind: 'files',
      inputs: [],
      placement: read === 'path' ? 'main' : 'libuv',
      knobs: { parallelism: written, resolvedParallelism: parallelism },
      cardinality: env.tracer !== undefined ? countFiles(pattern, cwd) : undefined,
    },
    (n, session) => openFiles(n, session, pattern, cwd, read, parallelism) as ReturnType<typeof n.open>,
  );
  return finish(env, node);
}

/** The lines of text files (a path or glob), streamed without reading any file whole; gzip and brotli files are inflated as they stream. */
export function lines(pathOrGlob: string | readonly string[], options: LinesOptions = {}): Dataset<string> {
  const env = beginOp('lines');
  checkOptions('lines', env, options, OPTION_KEYS.lines);
  const cwd = resolveCwd(options.cwd);
  const node = makeNode<string>(env, { kind: 'lines', inputs: [], placement: 'libuv', knobs: {} }, (n, session) => openLines(n, session, pathOrGlob, cwd, options.encoding ?? 'utf8', options.compression ?? 'auto'));
  return finish(env, node);
}

/** Tuples of the datasets' elements; ends with the shortest. */
export function zip<T extends unknown[]>(...datasets: { [K in keyof T]: Dataset<T[K]> }): Dataset<T> {
  return zipNodes(beginOp('zip'), datasets as Dataset<unknown>[]) as Dataset<T>;
}

/** The datasets' elements one after another. */
export function concatenate<T>(...datasets: Dataset<T>[]): Dataset<T> {
  return concatNodes(beginOp('concatenate'), datasets);
}

function datasetsOf<T>(kind: 'sampleFromDatasets' | 'chooseFromDatasets', datasets: readonly Dataset<T>[]): Dataset<T>[] {
  if (!Array.isArray(datasets) || datasets.length === 0 || !datasets.every((d) => d instanceof Dataset)) {
    throw new TypeError(`${kind}() needs a non-empty array of Datasets.`);
  }
  return [...datasets];
}

/**
 * A random mixture: each element comes from dataset i with probability weights[i] (normalised),
 * in each dataset's own order. The same seed gives the same mixture, every pass. When a dataset
 * ends, the rest go on with their weights renormalised (or all end, with `stopOnEmptyDataset`).
 */
export function sampleFromDatasets<T>(datasets: readonly Dataset<T>[], options?: SampleOptions): Dataset<T> {
  const env = beginOp('sampleFromDatasets');
  checkOptions('sampleFromDatasets', env, options, OPTION_KEYS.sampleFromDatasets);
  const ds = datasetsOf('sampleFromDatasets', datasets);
  const raw = options?.weights ?? ds.map(() => 1);
  if (raw.length !== ds.length) throw new RangeError(`sampleFromDatasets() needs one weight per dataset: ${ds.length}, not ${raw.length}.`);
  if (raw.some((w) => !(w >= 0) || w === Infinity)) throw new RangeError(`sampleFromDatasets() needs finite weights >= 0, not [${raw.join(', ')}].`);
  const sum = raw.reduce((a, b) => a + b, 0);
  if (!(sum > 0)) throw new RangeError('sampleFromDatasets() needs at least one weight above 0.');
  const weights = raw.map((w) => w / sum);
  const seed = options?.seed ?? defaultSeed();
  const stop = options?.stopOnEmptyDataset ?? false;
  const knobs = options?.seed !== undefined ? { weights, seed } : { weights };
  // Every element of every input comes out once, unless the mixture stops early or never picks an input.
  const cards = ds.map((d) => d.node.cardinality);
  const cardinality = !stop && weights.every((w) => w > 0) && cards.every((c) => c !== undefined) ? (cards as number[]).reduce((a, b) => a + b, 0) : undefined;
  const node = makeNode<T>(env, { kind: 'sampleFromDatasets', inputs: ds.map((d) => d.node), placement: 'main', knobs, random: true, cardinality }, (n, session) => openSample(n, session, weights, seed, stop));
  return finish(env, node);
}

/**
 * Element k comes from datasets[choices[k]], in each dataset's own order. When the chosen dataset
 * has ended the output ends (`stopOnEmptyDataset`, the default), or the choice is skipped.
 */
export function chooseFromDatasets<T>(datasets: readonly Dataset<T>[], choiceDataset: Dataset<number>, options?: ChooseOptions): Dataset<T> {
  const env = beginOp('chooseFromDatasets');
  checkOptions('chooseFromDatasets', env, options, OPTION_KEYS.chooseFromDatasets);
  const ds = datasetsOf('chooseFromDatasets', datasets);
  if (!(choiceDataset instanceof Dataset)) throw new TypeError('chooseFromDatasets() needs a Dataset of choices (integers, one per output element).');
  const stop = options?.stopOnEmptyDataset ?? true;
  const node = makeNode<T>(env, { kind: 'chooseFromDatasets', inputs: [...ds.map((d) => d.node), choiceDataset.node], placement: 'main', knobs: {}, cardinality: undefined }, (n, session) => openChoose(n, session, stop));
  return finish(env, node);
}
