/**
 * The runner's dialect adapters (tfjs-data, Node streams, async-generator chains): installed before
 * the user's module loads, they make the stages the user's code builds report to the runner's
 * tracer as operators of plumber-data's kinds, so one `Profile` describes a pipeline in any dialect.
 * And the root: an exported pipeline of any dialect seen as the `DatasetLike` the runner pulls.
 */
import * as path from 'node:path';
import type { CallSite, KnobOverride, OpCounters, OpInfo, Tracer } from '../../data/tracing';
import { DATASET_KEY, SOURCE_KEY, siteKey } from '../../data/tracing';
import { siteOfOpId, type ArgSites } from '../../shared/opId';
import { installAsyncGenerators } from './asyncgen';
import { installPipelines, type ArgSiteMap } from './pipelines';
import { type DialectHost, PULLS_UNTIMED, Stage, inputsFromFirstPull, noteRegistered, stageOf } from './stage';
import { installStreams } from './streams';
import { installTfjs } from './tfjs';

let host: DialectHost | undefined;

/**
 * Instruments every dialect for this run (once per process): call before the user's module loads.
 * `argSites`: where the engine saw the arguments of the pipeline's `pipeline(…)`/`compose(…)` calls
 * (op ids relative to `pipelineFile`).
 */
export function installDialects(tracer: Tracer, overrides: ReadonlyMap<string, KnobOverride>, argSites: readonly ArgSites[] = [], pipelineFile = ''): void {
  if (host !== undefined) return;
  host = { tracer, overrides };
  // What a foreign iterable builds in its first pull (plumber-data's operators too: they register with this tracer).
  const register = tracer.register.bind(tracer);
  tracer.register = (info: OpInfo): OpCounters => {
    noteRegistered(info);
    return register(info);
  };
  installPipelines(host, argSiteMap(argSites, pipelineFile));
  installStreams(host);
  installTfjs(host);
  installAsyncGenerators(host);
}

/** The engine's `ArgSites` by the site key of their call, each argument's op id made a call site. */
function argSiteMap(list: readonly ArgSites[], pipelineFile: string): ArgSiteMap {
  const map = new Map<string, Array<CallSite | undefined>>();
  for (const { site, args } of list) {
    map.set(
      siteKey({ ...site, file: path.resolve(site.file) }),
      args.map((id) => (id === null ? undefined : siteOfOpId(id, pipelineFile))),
    );
  }
  return map;
}

/** A pipeline as the runner pulls it: async iterable, tagged with its root operator's key. */
export interface DialectRoot extends AsyncIterable<unknown> {
  [DATASET_KEY]: string;
}

interface TfDatasetLike {
  iterator(): Promise<{ next(): Promise<IteratorResult<unknown>> }>;
}

/** True for a tfjs-data `Dataset` (any copy): it has `iterator()` and tfjs's operator methods. */
function isTfDataset(v: unknown): v is TfDatasetLike {
  const d = v as Record<string, unknown> | null;
  return typeof v === 'object' && d !== null && typeof d.iterator === 'function' && typeof d.mapAsync === 'function' && typeof d.batch === 'function';
}

function isAsyncIterable(v: unknown): v is AsyncIterable<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}

/** True for a Node stream (it has `pipe`): its elements are counted as it pushes them, not as it is pulled. */
function isStream(v: unknown): boolean {
  return typeof (v as { pipe?: unknown }).pipe === 'function' && typeof (v as { push?: unknown }).push === 'function';
}

/** Names the operator at the tfjs end of a plumber-data pipeline (`map(toTfDataset)`): elements become tfjs values there. */
const toTfDatasetFn = { toTfDataset(): void {} }.toTfDataset;

/**
 * The exported value as a pipeline root, when it is one of a dialect: a tfjs-data `Dataset`, a
 * Node `Readable`, or any other async iterable (an async generator's output). The root's pulls
 * are timed as waits on its stage. A stream or a generator object can be read once: a second pass
 * over it says so instead of yielding nothing.
 */
export function dialectRoot(value: unknown, name: string): DialectRoot | undefined {
  if (host === undefined) return undefined;
  const h = host;
  if (isTfDataset(value)) {
    // plumber-data's toTfDataset: the tfjs end of a plumber-data pipeline, whose operators are its input.
    const source = (value as { [SOURCE_KEY]?: unknown })[SOURCE_KEY];
    const stage =
      stageOf(value) ??
      (typeof source === 'string'
        ? new Stage(h, { kind: 'map', dialect: 'tfjs-data', levers: ['prefetch'], site: undefined, inputs: [], inputKeys: [source], fn: toTfDatasetFn })
        : new Stage(h, { kind: 'from', dialect: 'tfjs-data', levers: ['prefetch'], site: undefined, inputs: [] }));
    const tagged = stageOf(value) !== undefined;
    return {
      [DATASET_KEY]: stage.key,
      [Symbol.asyncIterator](): AsyncIterator<unknown> {
        let it: Promise<{ next(): Promise<IteratorResult<unknown>> }> | undefined;
        const pull = async (): Promise<IteratorResult<unknown>> => (await (it ??= value.iterator())).next();
        // A tagged dataset's iterator is counted by the adapter; a foreign one is counted here.
        return { next: tagged ? pull : stage.timePull(pull, true), return: async () => ({ done: true, value: undefined }) };
      },
    };
  }
  if (!isAsyncIterable(value)) return undefined;
  const known = stageOf(value);
  const stream = isStream(value);
  const stage = known ?? new Stage(h, { kind: 'from', dialect: stream ? 'node-streams' : 'async-generator', levers: [], site: undefined, inputs: [] });
  const singleUse = stream || (value as { [Symbol.asyncIterator](): unknown })[Symbol.asyncIterator]() === value;
  let passes = 0;
  return {
    [DATASET_KEY]: stage.key,
    [Symbol.asyncIterator](): AsyncIterator<unknown> {
      if (singleUse && passes++ > 0) {
        throw new Error(
          `The exported ${name} is a ${stream ? 'stream' : 'generator'}: it can be read once, and this run needs another pass. Export a function with no parameters that builds it (\`export const ${name} = () => …\`), so each pass gets a fresh one.`,
        );
      }
      const it = value[Symbol.asyncIterator]();
      if (known === undefined) inputsFromFirstPull(it, stage);
      // A generator stage's pulls are timed already; a stream's (counted as it pushes) and a foreign iterable's are timed here.
      if (known === undefined || PULLS_UNTIMED.has(value)) it.next = stage.timePull(it.next.bind(it) as () => Promise<IteratorResult<unknown>>, known === undefined);
      return it;
    },
  };
}
