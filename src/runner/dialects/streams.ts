/**
 * The Node-streams adapter: instruments Node's own `stream` module (every user module resolves the
 * same built-in) so each operator the user's code builds registers a stage.
 *
 * - `Readable.from(src)`, `fs.createReadStream(path)` → `from`; `.map/.filter/.flatMap` → the same
 *   kinds, `.take/.drop` → `take/skip`; zlib's `create*` factories → `map` on libuv.
 * - An element is produced when the stage's stream `push`es it (which also sees streams consumed
 *   with `pipe`); a stage pulls what its input's async iterator hands it, and that pull's time is
 *   the input's `waitSeconds`. A fn's calls, sync time, latency and calls in flight come from
 *   wrapping the fn.
 * - Levers: an operator with an async fn can change `concurrency` and `highWaterMark` (parallelism,
 *   prefetch); one with a sync fn and `Readable.from` only `highWaterMark`; `take/drop` nothing. Byte streams
 *   (a file read, zlib) count their `highWaterMark` in bytes, not elements: no lever.
 * - Overrides: `parallelism` → `concurrency`, `prefetch` → `highWaterMark`, at build time.
 */
import type * as FS from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { Readable } from 'node:stream';
import type { KnobOverride, Lever, OpKind, OpKnobs } from '../../data/tracing';
import { type DialectHost, PULLS_UNTIMED, Stage, callerSite, inputsFromFirstPull, isAsyncFn, overrideAt, stageOf, tag } from './stage';

type AnyFn = (...args: unknown[]) => unknown;

// The built-in modules themselves (an import would give a bundler's read-only copy of their exports).
const builtin = createRequire(__filename);
const fs = builtin('node:fs') as typeof FS;
const zlib = builtin('node:zlib') as Record<string, AnyFn>;

/** Stream operators the user chains on a Readable, by method name. */
const OPERATORS: ReadonlyArray<[method: string, kind: OpKind, takesFn: boolean]> = [
  ['map', 'map', true],
  ['filter', 'filter', true],
  ['flatMap', 'flatMap', true],
  ['take', 'take', false],
  ['drop', 'skip', false],
];

/** zlib's stream factories: each makes a byte-stream stage whose work runs on the libuv pool. */
const ZLIB_FACTORIES = ['createGzip', 'createGunzip', 'createDeflate', 'createInflate', 'createDeflateRaw', 'createInflateRaw', 'createUnzip', 'createBrotliCompress', 'createBrotliDecompress'] as const;

/** Counts what a stream pushes as the stage's produced elements (bytes too, for byte streams). */
function countPushes(stream: Readable, stage: Stage, disk: boolean): void {
  PULLS_UNTIMED.add(stream);
  const push = stream.push;
  stream.push = function (this: Readable, chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk !== null && chunk !== undefined) {
      stage.produced(chunk);
      if (disk && Buffer.isBuffer(chunk)) stage.c.diskBytesRead += chunk.length;
    }
    return push.call(this, chunk, encoding);
  };
}

/** Makes a stage's stream, iterated by the pipeline's own consumer (a training loop), tell the tracer (see `Stage.watchConsumer`). */
function watchIteration(stream: Readable, stage: Stage): void {
  const iterate = stream[Symbol.asyncIterator];
  Object.defineProperty(stream, Symbol.asyncIterator, {
    configurable: true,
    writable: true,
    value: function (this: Readable): AsyncIterator<unknown> {
      const it = iterate.call(this);
      it.next = stage.watchConsumer(it.next.bind(it) as () => Promise<IteratorResult<unknown>>);
      return it;
    },
  });
}

/**
 * Makes the pulls a consumer stage takes from `upstream` (through its async iterator, as Node's
 * operators do) count for both: the consumer's `pulled`, the upstream's `waitSeconds`.
 */
export function pullThrough(upstream: Readable, consumer: Stage): void {
  const up = stageOf(upstream);
  const iterate = upstream[Symbol.asyncIterator];
  Object.defineProperty(upstream, Symbol.asyncIterator, {
    configurable: true,
    writable: true,
    value: function (this: Readable): AsyncIterator<unknown> {
      const it = iterate.call(this);
      const next = it.next.bind(it);
      if (up !== undefined) it.next = up.timePull(next, false);
      else
        it.next = () =>
          next().then((r) => {
            if (!r.done) consumer.c.pulled++;
            return r;
          });
      return it;
    },
  });
}

/** The options object an operator was called with, with the overrides applied (a copy: the user's object is left alone). */
function withOverrides(options: unknown, o: KnobOverride | undefined, levers: Lever[]): { options: Record<string, unknown> | undefined; overridden: boolean } {
  const given = typeof options === 'object' && options !== null ? (options as Record<string, unknown>) : undefined;
  if (o === undefined) return { options: given, overridden: false };
  const out: Record<string, unknown> = { ...given };
  let overridden = false;
  if (levers.includes('parallelism') && typeof o.parallelism === 'number') {
    out.concurrency = o.parallelism;
    overridden = true;
  }
  if (levers.includes('prefetch') && o.prefetch !== undefined) {
    out.highWaterMark = o.prefetch;
    overridden = true;
  }
  return { options: out, overridden };
}

/** The knobs of a stream operator as Node resolves them (concurrency 1 and its default highWaterMark when not given). */
function knobsOf(kind: OpKind, options: Record<string, unknown> | undefined, count: unknown): OpKnobs {
  const knobs: OpKnobs = {};
  if (kind === 'map' || kind === 'filter' || kind === 'flatMap') {
    const concurrency = typeof options?.concurrency === 'number' ? options.concurrency : undefined;
    if (concurrency !== undefined) knobs.parallelism = concurrency;
    knobs.resolvedParallelism = concurrency ?? 1;
  }
  if (typeof options?.highWaterMark === 'number') knobs.bufferSize = options.highWaterMark;
  if ((kind === 'take' || kind === 'skip') && typeof count === 'number') knobs.count = count;
  return knobs;
}

function patchOperator(host: DialectHost, method: string, kind: OpKind, takesFn: boolean): void {
  const proto = Readable.prototype as unknown as Record<string, AnyFn>;
  const original = proto[method];
  if (typeof original !== 'function') return;
  proto[method] = function (this: Readable, ...args: unknown[]): unknown {
    const site = callerSite(method);
    if (site === null) return original.apply(this, args);
    const fn = takesFn && typeof args[0] === 'function' ? (args[0] as AnyFn) : undefined;
    // take/drop take no highWaterMark (only a signal): nothing of theirs can change.
    const levers: Lever[] = !takesFn ? [] : fn !== undefined && isAsyncFn(fn) ? ['parallelism', 'prefetch'] : ['prefetch'];
    const { options, overridden } = withOverrides(args[1], overrideAt(host, site), levers);
    const stage = new Stage(host, { kind, dialect: 'node-streams', levers, site, inputs: [stageOf(this)], fn, knobs: knobsOf(kind, options, args[0]), overridden });
    pullThrough(this, stage);
    const call = [fn !== undefined ? stage.wrapFn(fn) : args[0], options, ...args.slice(2)];
    if (options === undefined && args.length < 2) call.length = 1;
    const out = original.apply(this, call) as Readable;
    countPushes(out, stage, false);
    watchIteration(out, stage);
    return tag(out, stage);
  };
}

function patchFrom(host: DialectHost): void {
  const original = Readable.from;
  Readable.from = function (this: typeof Readable, src: unknown, options?: Record<string, unknown>): Readable {
    const site = callerSite('from');
    if (site === null) return original.call(this, src as Iterable<unknown>, options);
    const { options: opts, overridden } = withOverrides(options, overrideAt(host, site), ['prefetch']);
    const stage = new Stage(host, { kind: 'from', dialect: 'node-streams', levers: ['prefetch'], site, inputs: [stageOf(src)], knobs: knobsOf('from', opts, undefined), overridden });
    // An async generator no stage made (a plumber-data dataset handed on lazily): what its first pull builds is this stage's input.
    if (stageOf(src) === undefined && isAsyncGeneratorObject(src)) inputsFromFirstPull(src, stage);
    const out = original.call(this, src as Iterable<unknown>, opts);
    countPushes(out, stage, false);
    watchIteration(out, stage);
    return tag(out, stage);
  } as typeof Readable.from;
}

/** An async generator object (its own async iterator). */
function isAsyncGeneratorObject(v: unknown): v is AsyncGenerator<unknown> {
  const it = typeof v === 'object' && v !== null ? (v as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] : undefined;
  return typeof it === 'function' && it.call(v) === v && typeof (v as { next?: unknown }).next === 'function';
}

function patchReadStream(host: DialectHost): void {
  const original = fs.createReadStream;
  fs.createReadStream = function (this: unknown, ...args: Parameters<typeof FS.createReadStream>): FS.ReadStream {
    const site = callerSite('createReadStream');
    const out = Reflect.apply(original, this, args) as FS.ReadStream;
    if (site === null) return out;
    const stage = new Stage(host, { kind: 'from', dialect: 'node-streams', levers: [], site, inputs: [], placement: 'libuv' });
    countPushes(out, stage, true);
    return tag(out, stage);
  } as typeof fs.createReadStream;
}

function patchZlib(host: DialectHost): void {
  const z = zlib;
  for (const name of ZLIB_FACTORIES) {
    const original = z[name];
    if (typeof original !== 'function') continue;
    const wrapped = function (this: unknown, ...args: unknown[]): unknown {
      const site = callerSite(name);
      const out = Reflect.apply(original, this, args) as Readable & { _transform?: AnyFn };
      if (site === null) return out;
      const stage = new Stage(host, { kind: 'map', dialect: 'node-streams', levers: [], site, inputs: [], placement: 'libuv' });
      countPushes(out, stage, false);
      const transform = out._transform;
      if (typeof transform === 'function') {
        out._transform = function (this: unknown, ...a: unknown[]): unknown {
          stage.c.pulled++;
          return transform.apply(this, a);
        };
      }
      return tag(out, stage);
    };
    // zlib's factories are read-only (but configurable) properties.
    Object.defineProperty(z, name, { value: wrapped, writable: false, enumerable: true, configurable: true });
  }
}

/** Instruments Node's streams for the run (once per process). */
export function installStreams(host: DialectHost): void {
  for (const [method, kind, takesFn] of OPERATORS) patchOperator(host, method, kind, takesFn);
  patchFrom(host);
  patchReadStream(host);
  patchZlib(host);
  // ES modules' named imports (`import { createReadStream } from 'node:fs'`) see the wrappers only after this.
  syncBuiltinESMExports();
}
