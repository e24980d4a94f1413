/**
 * The async-generator adapter: a stage is a call of an `async function*` declared in one of the
 * user's own modules (not node_modules). As each such module is compiled (by tsx, or plain
 * JavaScript), a statement is inserted before each declaration that replaces the function with a
 * wrapper; its inline source map is shifted to match, so stack positions still name the user's
 * lines and columns.
 *
 * Each call of a wrapped function from the user's code registers a stage at the call (the callee's
 * name in `decode(src)`): `flatMap` when an argument is another stage's output or an async
 * iterable, else `from`; no lever (its library is the language). Its generator object keeps its
 * identity; its `next` is timed: waits, elements, and self time (its steps less its inputs', by the
 * event loop's active time: what a step awaits besides its input is latency, not its work).
 */
import Module, { register } from 'node:module';
import * as path from 'node:path';
import { type DialectHost, Stage, callerSite, stageOf, tag } from './stage';

/** The global the added statement calls: `wrap(fn, name)` → the stage-registering wrapper. */
export const WRAP_KEY = 'plumber-runner.asyncStage';

/**
 * The module's code with a wrapping statement inserted just before each `async function*`
 * declaration (in statement position: after `;`, `{`, `}` or at a line's start; `export` forms
 * included), and its inline source map shifted to match, so every position still maps to the
 * same place in the user's source. The statement runs when control reaches the declaration's
 * place, which holds the hoisted function already; calls from code that runs before it are not
 * staged. Self-contained (no outer names): the ES-module load hook runs its source text in the
 * hooks thread.
 */
export function wrapAsyncGenerators(code: string): string {
  const MARK = 'plumber-runner.asyncStage';
  const declared = /(^|[;{}])([ \t]*)((?:export\s+(?:default\s+)?)?async\s*function\s*\*\s*([A-Za-z_$][\w$]*)\s*\()/gm;
  const inserts: Array<{ at: number; text: string }> = [];
  for (let m = declared.exec(code); m !== null; m = declared.exec(code)) {
    const name = m[4]!;
    inserts.push({ at: m.index + m[1]!.length + m[2]!.length, text: `${name}=globalThis[Symbol.for("${MARK}")]?.(${name},${JSON.stringify(name)})??${name};` });
  }
  if (inserts.length === 0 || code.includes(MARK)) return code;
  let out = '';
  let from = 0;
  for (const i of inserts) {
    out += code.slice(from, i.at) + i.text;
    from = i.at;
  }
  out += code.slice(from);
  const url = /\/\/# sourceMappingURL=data:application\/json(?:;charset=[\w-]+)?;base64,([A-Za-z0-9+/=]+)\s*$/.exec(out);
  if (url === null) return out;
  // Generated line and column of each insertion, in the original code.
  const shifts = new Map<number, Array<{ col: number; by: number }>>();
  for (const i of inserts) {
    const before = code.slice(0, i.at);
    const line = before.split('\n').length - 1;
    const col = i.at - (before.lastIndexOf('\n') + 1);
    shifts.set(line, [...(shifts.get(line) ?? []), { col, by: i.text.length }]);
  }
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const decode = (seg: string): number[] => {
    const values: number[] = [];
    let value = 0;
    let shift = 0;
    for (const ch of seg) {
      const digit = B64.indexOf(ch);
      value += (digit & 31) << shift;
      if (digit & 32) shift += 5;
      else {
        values.push(value & 1 ? -(value >>> 1) : value >>> 1);
        value = 0;
        shift = 0;
      }
    }
    return values;
  };
  const encode = (values: number[]): string => {
    let text = '';
    for (const v of values) {
      let vlq = v < 0 ? (-v << 1) | 1 : v << 1;
      do {
        let digit = vlq & 31;
        vlq >>>= 5;
        if (vlq > 0) digit |= 32;
        text += B64[digit];
      } while (vlq > 0);
    }
    return text;
  };
  const map = JSON.parse(Buffer.from(url[1]!, 'base64').toString('utf8')) as { mappings: string };
  const lines = map.mappings.split(';');
  for (const [line, moves] of shifts) {
    if (lines[line] === undefined || lines[line] === '') continue;
    let col = 0;
    let prev = 0;
    lines[line] = lines[line]!.split(',')
      .map((seg) => {
        const values = decode(seg);
        col += values[0]!;
        const moved = col + moves.filter((m) => m.col <= col).reduce((a, m) => a + m.by, 0);
        values[0] = moved - prev;
        prev = moved;
        return encode(values);
      })
      .join(',');
  }
  map.mappings = lines.join(';');
  return out.slice(0, url.index) + '//# sourceMappingURL=data:application/json;base64,' + Buffer.from(JSON.stringify(map)).toString('base64');
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
    const stage = new Stage(host, { kind: upstream.length > 0 ? 'flatMap' : 'from', dialect: 'async-generator', levers: [], site, inputs: upstream.map(stageOf), fn, activeClock: true });
    const gen = Reflect.apply(fn, this, args);
    gen.next = stage.watchConsumer(stage.timePull(stage.timeWork(gen.next.bind(gen)), true));
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
  if ((result.format === 'module' || result.format === 'commonjs') && url.startsWith('file:') && !/[\\\\/]node_modules[\\\\/]/.test(url) && result.source != null) {
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
