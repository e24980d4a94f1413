import { types } from 'node:util';
import type { CallSite, OpKind } from './tracing';

/** The operator an error came from. */
export interface OpRef {
  kind: OpKind;
  /** `OpInfo.key`: `${kind}@file:line:column` when traced, else `${kind}#n`. */
  key: string;
  /** Where the operator was written, when the call site was captured (a tracer or overrides were installed). */
  site?: CallSite;
}

/**
 * An exception raised inside a pipeline, as the consumer sees it: which operator failed, on which
 * element of that operator's input, and the original error as `cause`.
 */
export class PipelineError extends Error {
  readonly op: OpRef;
  /** The element's index in the failing operator's input; undefined when the failure was not tied to one element. */
  readonly index: number | undefined;
  declare readonly cause: unknown;

  /** `atBuild`: the pipeline was written wrong (an unknown option), so nothing "failed" on an element yet. */
  constructor(op: OpRef, index: number | undefined, cause: unknown, what?: string, atBuild = false) {
    const where = op.site ? ` at ${op.site.file}:${op.site.line}:${op.site.column}` : '';
    const which = index === undefined ? '' : ` on element ${index}`;
    const reason = what ?? (cause instanceof Error ? cause.message : String(cause));
    super(atBuild ? `${op.kind}${where}: ${reason}` : `${op.kind}${where} failed${which}: ${reason}`, { cause });
    this.name = 'PipelineError';
    this.op = op;
    this.index = index;
  }
}

/** Wraps `e` as coming from `op` unless it already is a PipelineError from further upstream. */
export function asPipelineError(op: OpRef, index: number | undefined, e: unknown): PipelineError {
  return e instanceof PipelineError ? e : new PipelineError(op, index, e);
}

/** What a thrown value says about itself: its message for an Error or an error-like object, else its text. */
export function describeThrown(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (e !== null && typeof e === 'object') {
    // Errors that crossed a thread boundary arrive as plain (sometimes empty) objects.
    const { name, message } = e as { name?: unknown; message?: unknown };
    if (typeof message === 'string' && message !== '') return typeof name === 'string' && name !== '' && name !== 'Error' ? `${name}: ${message}` : message;
    return 'an error without a message';
  }
  return String(e);
}

/** A value that structured clone and v8.serialize refuse, and where it sits inside an element. */
export interface Uncloneable {
  /** Like 'a function (decode)' or 'a symbol'. */
  what: string;
  /** A property path from the element, like `.image.onload` or `[3]`; '' for the element itself. */
  path: string;
}

/** Objects that v8's serializer refuses although they are ordinary JS objects. */
const REFUSED: [abstract new (...args: never[]) => object, string][] = [
  [Promise, 'a Promise'],
  [WeakMap, 'a WeakMap'],
  [WeakSet, 'a WeakSet'],
  [WeakRef, 'a WeakRef'],
];

/**
 * The first value inside `x` that cannot be structured-cloned (what worker threads and
 * `cache(path)` do to elements), or null. It finds functions, symbols, promises, proxies,
 * generators and weak collections at any depth; host objects that refuse cloning (ports, handles,
 * Intl objects) look like empty objects here, so callers keep the serializer's own error too.
 */
export function findUncloneable(x: unknown): Uncloneable | null {
  // Most elements are numbers, strings or typed arrays: answer those without allocating.
  if (x === null || (typeof x !== 'object' && typeof x !== 'function' && typeof x !== 'symbol')) return null;
  if (ArrayBuffer.isView(x) || x instanceof ArrayBuffer) return null;
  const seen = new Set<object>();
  const walk = (v: unknown, path: string): Uncloneable | null => {
    if (typeof v === 'function') return { what: `a function${v.name ? ` (${v.name})` : ''}`, path };
    if (typeof v === 'symbol') return { what: `a symbol (${v.toString()})`, path };
    if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return null;
    if (seen.has(v)) return null;
    seen.add(v);
    if (types.isProxy(v)) return { what: 'a Proxy', path };
    if (types.isGeneratorObject(v)) return { what: 'a generator object', path };
    for (const [ctor, what] of REFUSED) if (v instanceof ctor) return { what, path };
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        // Most arrays in ML data are numbers: skip them without building a path.
        if (item === null || (typeof item !== 'object' && typeof item !== 'function' && typeof item !== 'symbol')) continue;
        const found = walk(item, `${path}[${i}]`);
        if (found !== null) return found;
      }
      return null;
    }
    if (v instanceof Map) {
      for (const [k, val] of v) {
        const found = walk(k, `${path}<map key>`) ?? walk(val, `${path}.get(${typeof k === 'string' ? JSON.stringify(k) : '…'})`);
        if (found !== null) return found;
      }
      return null;
    }
    if (v instanceof Set) {
      for (const val of v) {
        const found = walk(val, `${path}<set member>`);
        if (found !== null) return found;
      }
      return null;
    }
    for (const k of Object.keys(v)) {
      const found = walk((v as Record<string, unknown>)[k], `${path}.${k}`);
      if (found !== null) return found;
    }
    return null;
  };
  return walk(x, '');
}

/** ` at .a.b`, or '' when the element itself is the value. */
export function atPath(u: Uncloneable): string {
  return u.path === '' ? '' : ` at ${u.path}`;
}
