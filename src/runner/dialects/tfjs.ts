/**
 * The tfjs-data adapter: instruments each copy of `@tensorflow/tfjs-data` the process loads (the
 * user's own, whichever package required it: `@tensorflow/tfjs`, `-node` or tfjs-data itself), as
 * it loads, so a run that never touches tfjs pays nothing.
 *
 * - Sources `generator`, `array`, `csv`, `zip` and the methods `map`, `mapAsync` (→ `map`),
 *   `filter`, `batch`, `shuffle`, `prefetch`, `repeat`, `take`, `skip` register a stage when the
 *   user's code calls them; every dataset they return has its `iterator()` wrapped, so each pass's
 *   iterator counts the elements it hands on and the time its consumer waited.
 * - Self time: a map or filter fn's call (tfjs runs it on the main thread, one element at a time),
 *   the synchronous part of a `mapAsync` fn or of the user's generator's `next()`, and for the other
 *   operators the time of their own steps less their input's.
 * - Lever: `prefetch` only (tfjs-data has no parallel map). An override's `prefetch` resizes a
 *   `.prefetch(n)` or inserts one after the operator.
 */
import Module from 'node:module';
import type { OpKind, OpKnobs } from '../../data/tracing';
import { type DialectHost, Stage, callerSite, overrideAt, stageOf, tag } from './stage';

type AnyFn = (...args: unknown[]) => unknown;
interface LazyIterator {
  next(): Promise<IteratorResult<unknown>>;
  serialNext?(): Promise<IteratorResult<unknown>>;
}
interface TfDataset {
  size: number | null;
  iterator(): Promise<LazyIterator>;
  prefetch(n: number): TfDataset;
}
interface TfData {
  Dataset: { prototype: Record<string, AnyFn> };
  [name: string]: unknown;
}

/** Dataset methods that build an operator: its kind, and whether its first argument is the user's fn. */
const METHODS: ReadonlyArray<[method: string, kind: OpKind, takesFn: boolean]> = [
  ['map', 'map', true],
  ['mapAsync', 'map', true],
  ['filter', 'filter', true],
  ['batch', 'batch', false],
  ['shuffle', 'shuffle', false],
  ['prefetch', 'prefetch', false],
  ['repeat', 'repeat', false],
  ['take', 'take', false],
  ['skip', 'skip', false],
];

/** Source functions: the kind each is reported as. */
const SOURCES: ReadonlyArray<[name: string, kind: OpKind]> = [
  ['generator', 'from'],
  ['array', 'from'],
  ['csv', 'csv'],
  ['zip', 'zip'],
];

function knobsOf(method: string, args: unknown[]): OpKnobs {
  const n = typeof args[0] === 'number' ? args[0] : undefined;
  switch (method) {
    case 'batch':
      return { ...(n !== undefined ? { batchSize: n } : {}), dropRemainder: args[1] === false };
    case 'shuffle':
      return { ...(n !== undefined ? { bufferSize: n } : {}), ...(typeof args[1] === 'string' || typeof args[1] === 'number' ? { seed: Number(args[1]) || 0 } : {}) };
    case 'prefetch':
      return n !== undefined ? { bufferSize: n } : {};
    case 'repeat':
      return { count: n === undefined || n < 0 ? -1 : n };
    case 'take':
    case 'skip':
      return n !== undefined ? { count: n } : {};
    default:
      return {};
  }
}

/** Wraps a dataset's `iterator()` so each pass's iterator is counted and timed for `stage`. */
function instrument(ds: TfDataset, stage: Stage, ownSteps: boolean): TfDataset {
  const iterator = ds.iterator;
  ds.iterator = async function (this: TfDataset): Promise<LazyIterator> {
    const it = await iterator.call(this);
    const next = it.next.bind(it);
    // Steps run one at a time through `serialNext` where tfjs has it: time those, not the queued `next()` calls.
    if (ownSteps && typeof it.serialNext === 'function') it.serialNext = stage.timeWork(it.serialNext.bind(it));
    it.next = stage.watchConsumer(stage.timePull(ownSteps && typeof it.serialNext !== 'function' ? stage.timeWork(next) : next, true));
    return it;
  };
  return tag(ds, stage);
}

/** The user's generator fn, with the iterator it returns timed: its `next()`'s synchronous part is the source's self time. */
function timedGenerator(fn: AnyFn, stage: Stage): AnyFn {
  const wrapIterator = (g: unknown): unknown => {
    if (typeof g === 'object' && g !== null && typeof (g as LazyIterator).next === 'function') {
      const it = g as LazyIterator;
      it.next = stage.wrapFn(it.next.bind(it));
    }
    return g;
  };
  return function (this: unknown, ...args: unknown[]): unknown {
    const g = fn.apply(this, args);
    return g instanceof Promise ? g.then(wrapIterator) : wrapIterator(g);
  };
}

function patchMethods(host: DialectHost, proto: Record<string, AnyFn>): void {
  const prefetch = proto.prefetch!;
  for (const [method, kind, takesFn] of METHODS) {
    const original = proto[method];
    if (typeof original !== 'function') continue;
    proto[method] = function (this: TfDataset, ...args: unknown[]): unknown {
      const site = callerSite(method);
      if (site === null) return original.apply(this, args);
      const o = overrideAt(host, site);
      const call = [...args];
      const resized = method === 'prefetch' && o?.prefetch !== undefined && o.prefetch > 0;
      if (resized) call[0] = o.prefetch;
      const fn = takesFn && typeof args[0] === 'function' ? (args[0] as AnyFn) : undefined;
      const stage = new Stage(host, { kind, dialect: 'tfjs-data', levers: ['prefetch'], site, inputs: [stageOf(this)], fn, knobs: knobsOf(method, call), overridden: resized });
      // A map's or filter's fn is timed whole; a mapAsync fn's synchronous part only (its await is latency).
      if (fn !== undefined) call[0] = stage.wrapFn(fn);
      let ds = instrument(original.apply(this, call) as TfDataset, stage, fn === undefined);
      if (o?.prefetch !== undefined && o.prefetch > 0 && method !== 'prefetch') {
        const inserted = new Stage(host, {
          kind: 'prefetch',
          dialect: 'tfjs-data',
          levers: ['prefetch'],
          site: undefined,
          key: `${stage.key}+prefetch`,
          inputs: [stage],
          knobs: { bufferSize: o.prefetch },
          overridden: true,
        });
        ds = instrument(prefetch.call(ds, o.prefetch) as TfDataset, inserted, true);
      }
      return ds;
    };
  }
}

function patchSources(host: DialectHost, tfd: TfData): void {
  for (const [name, kind] of SOURCES) {
    const original = tfd[name];
    if (typeof original !== 'function') continue;
    tfd[name] = function (this: unknown, ...args: unknown[]): unknown {
      const site = callerSite(name);
      if (site === null) return Reflect.apply(original, this, args);
      const fn = name === 'generator' && typeof args[0] === 'function' ? (args[0] as AnyFn) : undefined;
      const inputs = name === 'zip' ? Object.values((args[0] ?? {}) as object).map(stageOf) : [];
      const cardinality = name === 'array' && Array.isArray(args[0]) ? args[0].length : undefined;
      const stage = new Stage(host, { kind, dialect: 'tfjs-data', levers: ['prefetch'], site, inputs, fn, cardinality });
      const call = fn !== undefined ? [timedGenerator(fn, stage), ...args.slice(1)] : args;
      // Sources' own work is timed in their fn (generator) or in their steps (csv, zip, array).
      return instrument(Reflect.apply(original, this, call) as TfDataset, stage, fn === undefined);
    };
  }
}

/** True for a loaded module that is (a copy of) tfjs-data's API. */
function isTfData(v: unknown): v is TfData {
  const d = (v as { Dataset?: unknown } | null)?.Dataset;
  return typeof d === 'function' && typeof (d.prototype as Record<string, unknown> | undefined)?.mapAsync === 'function' && typeof (v as Record<string, unknown>).generator === 'function';
}

/** Instruments every copy of tfjs-data loaded from now on (once per process). */
export function installTfjs(host: DialectHost): void {
  const seen = new WeakSet<object>();
  const mod = Module as unknown as { _load: (request: string, parent: unknown, isMain: boolean) => unknown };
  const load = mod._load;
  mod._load = function (this: unknown, request: string, ...rest: unknown[]): unknown {
    const exported = Reflect.apply(load, this, [request, ...rest]);
    // ES-module imports of the CommonJS package come through here too (Node 20+).
    if (request.includes('tfjs') && isTfData(exported) && !seen.has(exported.Dataset)) {
      seen.add(exported.Dataset);
      patchMethods(host, exported.Dataset.prototype);
      patchSources(host, exported);
    }
    return exported;
  };
}
