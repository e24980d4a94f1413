/**
 * Building operators: reading the tracer and overrides installed on `globalThis`, capturing the
 * call site, registering the operator with the tracer, and naming it.
 */
import type { CallSite, KnobOverride, OpCounters, OpInfo, OpKind, OpKnobs, Placement, Tracer } from '../tracing';
import { OVERRIDES_KEY, TRACER_KEY, siteKey } from '../tracing';
import { ElementSampler, type Chunks, type OpNode, type Session } from './core';
import { captureSite } from './site';
import { PipelineError, type OpRef } from '../errors';

/** What an operator's builder learned from the environment at build time. */
export interface BuildEnv {
  tracer: Tracer | undefined;
  site: CallSite | undefined;
  /** The override for this call site, if any. */
  override: KnobOverride | undefined;
}

const NO_ENV: BuildEnv = { tracer: undefined, site: undefined, override: undefined };

type Globals = { [TRACER_KEY]?: Tracer; [OVERRIDES_KEY]?: Map<string, KnobOverride> };

/**
 * Reads the globals; captures the call site only when someone is watching. `method` is the name
 * written at the call (the site's column), when it is not the kind's (`fromTfDataset` makes a `from`).
 */
export function beginOp(kind: OpKind, method: string = kind): BuildEnv {
  const g = globalThis as Globals;
  const tracer = g[TRACER_KEY];
  const overrides = g[OVERRIDES_KEY];
  if (tracer === undefined && overrides === undefined) return NO_ENV;
  const site = captureSite(method);
  const override = site !== undefined && overrides instanceof Map ? overrides.get(siteKey(site)) : undefined;
  return { tracer, site, override };
}

/** The static part of an operator's description (OpInfo without key, site and inputs). */
export interface OpSpec {
  kind: OpKind;
  inputs: readonly OpNode[];
  placement: Placement;
  knobs: OpKnobs;
  random?: boolean;
  cardinality?: number;
  fn?: Function;
  fnModule?: { file: string; exportName: string };
  overridden?: boolean;
}

let anonymous = 0;

/** The operator whose fn is running now and building datasets (see `withParent`). */
let currentParent: string | undefined;

/**
 * Runs `build` (an interleave's or flatMap's fn) with operators it builds recorded as nested in
 * the operator `parent`. Only called when a tracer watches; only the fn's synchronous part counts.
 */
export function withParent<R>(parent: string, build: () => R): R {
  const outer = currentParent;
  currentParent = parent;
  try {
    return build();
  } finally {
    currentParent = outer;
  }
}

/**
 * The counters of an operator the library makes for something with none of its own (the plain
 * iterables an interleave's fn returns), registered once under `key` as built inside `parent`;
 * null when no tracer watches. It has no call site: the profile names it by kind.
 */
export function nestedCounters(parent: string, key: string, kind: OpKind): OpCounters | null {
  const tracer = (globalThis as Globals)[TRACER_KEY];
  if (tracer === undefined) return null;
  const node = withParent(parent, () =>
    makeNode(
      { tracer, site: undefined, override: undefined },
      { kind, inputs: [], placement: 'main', knobs: {} },
      () => {
        throw new Error(`${key} is counted, never opened`);
      },
      key,
    ),
  );
  return node.counters;
}

/** Declared `async` (or an async generator function): known before the first call. */
export function isAsyncFunction(fn: Function): boolean {
  const name = fn.constructor?.name;
  return name === 'AsyncFunction' || name === 'AsyncGeneratorFunction';
}

/** One element sampler per tracer and operator key, shared by every node built at that call site. */
const samplers = new WeakMap<Tracer, Map<string, ElementSampler>>();

function samplerFor(tracer: Tracer, key: string): ElementSampler {
  let byKey = samplers.get(tracer);
  if (byKey === undefined) samplers.set(tracer, (byKey = new Map()));
  let s = byKey.get(key);
  if (s === undefined) byKey.set(key, (s = new ElementSampler((x, i) => (tracer.sample as NonNullable<Tracer['sample']>).call(tracer, key, x, i))));
  return s;
}

/**
 * Creates an operator node. `open` builds one pass's iterator. `key` may be forced for operators an
 * override inserts (they share the call site of the operator they follow).
 */
export function makeNode<T>(env: BuildEnv, spec: OpSpec, open: (node: OpNode<T>, session: Session) => Chunks<T>, key?: string): OpNode<T> {
  const k = key ?? (env.site !== undefined ? `${spec.kind}@${siteKey(env.site)}` : `${spec.kind}#${++anonymous}`);
  let info: OpInfo | null = null;
  let counters: OpCounters | null = null;
  let sample: ElementSampler | null = null;
  if (env.tracer !== undefined) {
    info = {
      key: k,
      kind: spec.kind,
      site: env.site,
      inputs: spec.inputs.map((n) => n.key),
      placement: spec.placement,
      knobs: spec.knobs,
      random: spec.random ?? false,
    };
    if (spec.fn !== undefined) {
      info.fn = spec.fn;
      info.fnName = spec.fn.name || undefined;
      info.fnAsync = isAsyncFunction(spec.fn);
    }
    if (spec.fnModule !== undefined) info.fnModule = spec.fnModule;
    if (spec.cardinality !== undefined) info.cardinality = spec.cardinality;
    if (spec.overridden) info.overridden = true;
    if (currentParent !== undefined) info.parent = currentParent;
    counters = env.tracer.register(info);
    const tracer = env.tracer;
    if (typeof tracer.sample === 'function') sample = samplerFor(tracer, k);
  }
  const node: OpNode<T> = {
    kind: spec.kind,
    key: k,
    site: env.site,
    info,
    counters,
    sample,
    inputs: spec.inputs,
    cardinality: spec.cardinality,
    open: (session) => open(node, session),
  };
  return node;
}

/** The counters of the node's i-th input (null when untraced). */
export function inputCounters(node: OpNode, i = 0): OpCounters | null {
  return node.inputs[i]?.counters ?? null;
}

/** The operator being built, for errors raised before it has a node (its key as makeNode will name it). */
export function buildRef(kind: OpKind, env: BuildEnv): OpRef {
  return { kind, key: env.site !== undefined ? `${kind}@${siteKey(env.site)}` : kind, site: env.site };
}

/**
 * Rejects an options object with a key the operator does not know, so a typo (`paralellism`) is an
 * error at build time instead of a silent default.
 */
export function checkOptions(kind: OpKind, env: BuildEnv, options: unknown, known: readonly string[]): void {
  if (options === undefined || options === null) return;
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new PipelineError(buildRef(kind, env), undefined, new TypeError('bad options'), `options must be an object with the keys ${known.join(', ')}, not ${Array.isArray(options) ? 'an array' : typeof options}`, true);
  }
  for (const k of Object.keys(options)) {
    if (!known.includes(k)) {
      throw new PipelineError(buildRef(kind, env), undefined, new TypeError(`unknown option '${k}'`), `unknown option '${k}'; known: ${known.join(', ')}`, true);
    }
  }
}

/** True when an override sets any of `keys` (the operator's `overridden`), else undefined. */
export function overridden(o: KnobOverride | undefined, keys: (keyof KnobOverride)[]): boolean | undefined {
  return o !== undefined && keys.some((k) => o[k] !== undefined) ? true : undefined;
}
