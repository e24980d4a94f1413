/**
 * The async-generator adapter: a stage is a call of an `async function*` declared at the top level
 * of one of the user's own modules (not node_modules). As each such module is compiled, one
 * statement is added at the start of its first line (after a `"use strict"` directive) that
 * replaces each of those functions with a wrapper — function declarations are hoisted, so the
 * wrapper is in place before any of the module's code runs. No line is added, so every position
 * below line 1 (and source maps' lines) stays as it was.
 *
 * Each call of a wrapped function from the user's code registers a stage at the call (the callee's
 * name in `decode(src)`): `flatMap` when an argument is another stage's output or an async
 * iterable, else `from`; no lever (its library is the language). Its generator object keeps its
 * identity; its `next` is timed: waits, elements, and self time (its steps less its inputs').
 */
import Module, { register } from 'node:module';
import * as path from 'node:path';
import { type DialectHost, Stage, callerSite, stageOf, tag } from './stage';

/** The global the added statement calls: `wrap(fn, name)` → the stage-registering wrapper. */
export const WRAP_KEY = 'plumber-runner.asyncStage';

/**
 * The module's code with the wrapping statement added, or the code unchanged when it declares no
 * top-level async generator function. Self-contained (no outer names): the ES-module load hook runs
 * its source text in the hooks thread.
 */
export function wrapAsyncGenerators(code: string): string {
  const declared = /^(?:export\s+(?:default\s+)?)?async\s+function\s*\*\s*([A-Za-z_$][\w$]*)\s*\(/gm;
  const names = new Set<string>();
  for (let m = declared.exec(code); m !== null; m = declared.exec(code)) names.add(m[1]!);
  if (names.size === 0 || code.includes('plumber-runner.asyncStage')) return code;
  const stmt = [...names].map((n) => `${n}=globalThis[Symbol.for("plumber-runner.asyncStage")]?.(${n},${JSON.stringify(n)})??${n};`).join('');
  // After a shebang's line would add a line's worth of shift; a directive prologue must stay first.
  const prologue = /^(?:#![^\n]*\n)?(?:\s*(['"])use strict\1;?)?/.exec(code)![0];
  return code.slice(0, prologue.length) + stmt + code.slice(prologue.length);
}

/** A module file whose code is the user's own (not a package, not Plumber's runner). */
function isUserFile(file: string): boolean {
  return !/[\\/]node_modules[\\/]/.test(file) && !file.startsWith(path.resolve(__dirname, '..') + path.sep);
}

/** True for an async iterable (a stage's input). */
function isAsyncIterable(v: unknown): boolean {
  return typeof v === 'object' && v !== null && typeof (v as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}

/** The wrapper an async generator function is replaced by. */
function stageFunction(host: DialectHost, fn: (...args: unknown[]) => AsyncGenerator<unknown>, name: string): Function {
  const wrapper = function (this: unknown, ...args: unknown[]): AsyncGenerator<unknown> {
    const site = callerSite(name);
    if (site === null) return Reflect.apply(fn, this, args);
    const upstream = args.filter((a) => stageOf(a) !== undefined || isAsyncIterable(a));
    const stage = new Stage(host, { kind: upstream.length > 0 ? 'flatMap' : 'from', dialect: 'async-generator', levers: [], site, inputs: upstream.map(stageOf), fn });
    const gen = Reflect.apply(fn, this, args);
    gen.next = stage.timePull(stage.timeWork(gen.next.bind(gen)), true);
    return tag(gen, stage);
  };
  Object.defineProperty(wrapper, 'name', { value: fn.name });
  Object.defineProperty(wrapper, 'length', { value: fn.length });
  return wrapper;
}

/** The ES-module load hook: the same rewrite, for user modules Node loads as ES modules. */
const HOOKS = `const wrap = ${wrapAsyncGenerators.toString()};
export async function load(url, context, next) {
  const result = await next(url, context);
  if (result.format === 'module' && url.startsWith('file:') && !/[\\\\/]node_modules[\\\\/]/.test(url) && result.source != null) {
    return { ...result, source: wrap(typeof result.source === 'string' ? result.source : Buffer.from(result.source).toString('utf8')) };
  }
  return result;
}`;

/** Wraps the async generator functions of every user module compiled from now on (once per process). */
export function installAsyncGenerators(host: DialectHost): void {
  (globalThis as Record<symbol, unknown>)[Symbol.for(WRAP_KEY)] = (fn: (...args: unknown[]) => AsyncGenerator<unknown>, name: string) => stageFunction(host, fn, name);
  const proto = Module.prototype as unknown as { _compile(code: string, filename: string): unknown };
  const compile = proto._compile;
  proto._compile = function (this: unknown, code: string, filename: string): unknown {
    return compile.call(this, typeof code === 'string' && isUserFile(filename) ? wrapAsyncGenerators(code) : code, filename);
  };
  try {
    register(`data:text/javascript,${encodeURIComponent(HOOKS)}`);
  } catch {
    // Node without module.register: CommonJS modules only.
  }
}
