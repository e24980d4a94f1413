/**
 * Node's `stream.pipeline`, `stream/promises`' `pipeline` and `stream.compose`: their arguments are
 * stages (a source stream, Transform/Duplex objects, generator functions), but nothing on a stack
 * says where each argument was written. The engine reads that from the source and hands it to the
 * runner as `ArgSites` (the op id of each argument, keyed by the call's site); an argument with
 * no id, or one that is already a stage (a `createGunzip()` call, a `Readable.from`), is left as
 * it is.
 *
 * - A generator function → `flatMap` (the iterable it returns is timed as an async-generator
 *   stage's is: pulls, elements, its steps' own time).
 * - A Transform or Duplex object → `flatMap` (its `_transform` calls are counted and their
 *   synchronous part timed; what it pushes is produced).
 * - A source stream (the first argument) → `from`. The sink (a Writable, or a function that
 *   consumes) is no stage.
 * No lever: these stages' buffers are set when they are made, before the call.
 */
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import type { CallSite } from '../../data/tracing';
import { siteKey } from '../../data/tracing';
import { pullThrough } from './streams';
import { type DialectHost, PULLS_UNTIMED, Stage, callerSite, isThenable, stageOf, tag } from './stage';

type AnyFn = (...args: unknown[]) => unknown;

const builtin = createRequire(__filename);
const stream = builtin('node:stream') as Record<string, AnyFn> & { promises: Record<string, AnyFn> };

/** Where each argument of a pipeline()/compose() call was written, by the call's site key (`siteKey`). */
export type ArgSiteMap = ReadonlyMap<string, ReadonlyArray<CallSite | undefined>>;

/** The stage of each generator function made a stage (the function itself is not tagged: it stays callable as written). */
const lastStaged = new WeakMap<object, Stage>();

function isReadable(v: unknown): v is Readable {
  return typeof v === 'object' && v !== null && typeof (v as { pipe?: unknown }).pipe === 'function' && typeof (v as { push?: unknown }).push === 'function';
}

function asyncIterable(v: unknown): AsyncIterator<unknown> & object {
  const it = (v as { [Symbol.asyncIterator]?: () => AsyncIterator<unknown> })[Symbol.asyncIterator];
  return (typeof it === 'function' ? it.call(v) : undefined) as AsyncIterator<unknown> & object;
}

/** A generator-function argument, as a stage: what it returns is timed; a function that returns no iterable (a sink) is left alone. */
function stagedFunction(host: DialectHost, fn: AnyFn, site: CallSite, input: Stage | undefined): { fn: AnyFn; stage: Stage } {
  const stage = new Stage(host, { kind: 'flatMap', dialect: 'node-streams', levers: [], site, inputs: [input], fn, activeClock: true });
  const wrapped = function (this: unknown, ...args: unknown[]): unknown {
    // Its source is the previous stage's stream, or an async iterator over it (Node wraps a stream
    // so): the fn's pulls from it are its input time and the previous stage's wait.
    const src = args[0];
    if (isReadable(src)) pullThrough(src, stage);
    else if (input !== undefined && typeof src === 'object' && src !== null && asyncIterable(src) === src) {
      const it = src as AsyncIterator<unknown>;
      it.next = input.timePull(it.next.bind(it) as () => Promise<IteratorResult<unknown>>, false);
    }
    const out = fn.apply(this, args);
    if (isThenable(out) || typeof out !== 'object' || out === null) return out;
    const it = asyncIterable(out);
    if (it === undefined || it !== out) return out;
    const gen = out as AsyncGenerator<unknown>;
    gen.next = stage.timePull(stage.timeWork(gen.next.bind(gen)), true);
    return tag(gen, stage);
  };
  Object.defineProperty(wrapped, 'name', { value: fn.name });
  lastStaged.set(wrapped, stage);
  return { fn: wrapped, stage };
}

/**
 * What a Transform stage runs per chunk, as the function the profile names it by (its `fnModule`
 * is where the run finds that function exported): the class, for an instance of a class other than
 * Node's stream classes (`new Featurize()`); the `transform` fn a `new Transform({ transform })` was
 * given. Node's own (a PassThrough's) is none. A class of Node's internals (zlib's) is never found
 * exported by a user module, so nothing is planned on it.
 */
function transformFn(s: { _transform?: AnyFn; constructor: Function }): Function | undefined {
  const nodeOwn = new Set<unknown>(Object.values(stream));
  if (!nodeOwn.has(s.constructor)) return s.constructor;
  const base = (stream.Transform as unknown as { prototype: { _transform: unknown } }).prototype._transform;
  const passThrough = (stream.PassThrough as unknown as { prototype: { _transform: unknown } }).prototype._transform;
  return typeof s._transform === 'function' && s._transform !== base && s._transform !== passThrough ? s._transform : undefined;
}

/** A Transform/Duplex or source stream argument, as a stage: its pushes are produced elements, its `_transform` calls pulled ones. */
function stagedStream(host: DialectHost, s: Readable & { _transform?: AnyFn }, site: CallSite, input: Stage | undefined, first: boolean): Stage {
  const transform = s._transform;
  const fn = first ? undefined : transformFn(s);
  const stage = new Stage(host, { kind: first ? 'from' : 'flatMap', dialect: 'node-streams', levers: [], site, inputs: first ? [] : [input], ...(fn ? { fn } : {}) });
  PULLS_UNTIMED.add(s);
  const push = s.push;
  s.push = function (this: Readable, chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk !== null && chunk !== undefined) stage.produced(chunk);
    return push.call(this, chunk, encoding);
  };
  if (typeof transform === 'function') {
    const timed = stage.wrapFn(transform);
    s._transform = function (this: unknown, ...a: unknown[]): unknown {
      stage.c.pulled++;
      return timed.apply(this, a);
    };
  }
  tag(s, stage);
  return stage;
}

/** The arguments with each one the engine located made a stage, chained in argument order. */
function stagedArgs(host: DialectHost, args: unknown[], sites: ReadonlyArray<CallSite | undefined>): unknown[] {
  let prev: Stage | undefined;
  return args.map((arg, i) => {
    const known = stageOf(arg);
    const site = sites[i];
    if (known !== undefined || site === undefined) {
      prev = known ?? prev;
      return arg;
    }
    if (typeof arg === 'function') {
      const staged = stagedFunction(host, arg as AnyFn, site, prev);
      prev = staged.stage;
      return staged.fn;
    }
    if (isReadable(arg)) prev = stagedStream(host, arg, site, prev, i === 0);
    return arg;
  });
}

function patch(host: DialectHost, argSites: ArgSiteMap, owner: Record<string, AnyFn>, name: 'pipeline' | 'compose'): void {
  const original = owner[name];
  if (typeof original !== 'function') return;
  const wrapped = function (this: unknown, ...args: unknown[]): unknown {
    const site = callerSite(name);
    const sites = site ? argSites.get(siteKey(site)) : undefined;
    if (sites === undefined) return original.apply(this, args);
    const staged = stagedArgs(host, args, sites);
    const out = original.apply(this, staged);
    // compose() returns a stream of what its last stage yields: that stage, seen from outside.
    const last = stageOf(staged[staged.length - 1]) ?? (staged.length > 0 ? lastStaged.get(staged[staged.length - 1] as object) : undefined);
    if (name === 'compose' && last !== undefined && isReadable(out)) {
      tag(out, last);
      if (typeof staged[staged.length - 1] !== 'function') PULLS_UNTIMED.add(out);
    }
    return out;
  };
  // `util.promisify(stream.pipeline)` reads a custom symbol: the wrapper keeps the original's properties.
  for (const key of Reflect.ownKeys(original)) {
    if (key === 'length' || key === 'name' || key === 'prototype') continue;
    const d = Object.getOwnPropertyDescriptor(original, key);
    if (d) Object.defineProperty(wrapped, key, d);
  }
  Object.defineProperty(wrapped, 'name', { value: original.name });
  owner[name] = wrapped;
}

/** Instruments `pipeline` and `compose` (once per process), given where the engine saw their arguments. */
export function installPipelines(host: DialectHost, argSites: ArgSiteMap): void {
  patch(host, argSites, stream, 'pipeline');
  patch(host, argSites, stream, 'compose');
  patch(host, argSites, stream.promises, 'pipeline');
}
