/**
 * A sampled fn's calls as a worker would make them: on copies of its elements, with a fresh
 * context of the library's kind, its results as they would travel back; what a copy changes, what
 * the op hands on, and what the copies themselves cost.
 */
import * as v8 from 'node:v8';
import { isDeepStrictEqual } from 'node:util';
import { DATASET_KEY, Rng, elementSeed as libraryElementSeed, encodeAll, estimateBytes, movableBuffers, restoreAll, withoutMoved, type Encoded } from '../../data/tracing';
import type { MoveBlocked, MoveCost } from '../../shared/profile';
import { copyChange, crossCopy } from '../fidelity';
import type { SampledElement } from '../tracer';
import { cpuPerElement } from './timing';
import type { MoveTarget } from './types';

/** Sampled elements (and results) checked for what a copy between threads changes: it is a property of their type, not of each value. */
export const FIDELITY_SAMPLES = 4;

/**
 * What a copy between threads would change on either side of a sync fn for one sampled element:
 * its input, else (map, flatMap: a filter hands on its input) its result. An input a copy changes
 * (a class instance, a library Batch arriving as a plain object) matters only if the fn computes
 * something else from the copy: when it ran on a copy (`onCopy`, its normalised result), it is
 * called once more on the element itself and the two results compared. When it threw on copies,
 * whatever the copy changed is named.
 */
export function crossingChange(t: MoveTarget, s: SampledElement, onCopy: { value: unknown } | undefined, result: { value: unknown }): MoveBlocked | undefined {
  let inputChange = copyChange(s.element, 'input');
  if (inputChange !== undefined && onCopy !== undefined) {
    let own: { value: unknown } | undefined;
    try {
      own = normalise(t.kind, t.fn(s.element, freshContext(s.index)));
    } catch {
      own = undefined;
    }
    if (own !== undefined && isDeepStrictEqual(own.value, onCopy.value)) inputChange = undefined;
  } else if (inputChange === undefined && onCopy === undefined) {
    inputChange = { side: 'input', change: 'altered', what: 'properties a copy does not keep (non-enumerable ones, getters)' };
  }
  return inputChange ?? (t.kind === 'filter' ? undefined : copyChange(result.value, 'result'));
}

/** The most elements of one flatMap call's result kept for the heap probe (spread through it). */
const HANDED_PER_CALL = 8;

/**
 * Adds to `handed` what an op hands downstream for one call's result: a filter its input when
 * kept, a map its result, a flatMap up to HANDED_PER_CALL of its elements (one call may yield
 * hundreds of thousands, which neither a spread nor the heap probe's copies should take whole).
 */
export function handOn(handed: unknown[], kind: MoveTarget['kind'], input: unknown, result: { value: unknown }): void {
  if (kind === 'filter') {
    if (result.value === true) handed.push(input);
  } else if (kind === 'flatMap') {
    const xs = result.value as unknown[];
    const step = Math.max(1, xs.length / HANDED_PER_CALL);
    for (let i = 0; i < xs.length; i += step) handed.push(xs[Math.floor(i)]);
  } else handed.push(result.value);
}

/** Seed of the contexts handed to fns here: any fixed value, since both calls of a pair share it. */
const SEED = 0x5eed;

/** What a fn receives as its second argument, equivalent to the library's (index, rng, signal). */
interface FreshContext {
  readonly index: number;
  readonly rng: Rng;
  readonly signal: AbortSignal;
}

/** The seed of the library's per-element generator for (SEED, epoch 0, index). */
export function elementSeed(index: number): number {
  return libraryElementSeed(SEED, 0, index);
}

export function freshContext(index: number): FreshContext {
  const signal = new AbortController().signal;
  const seed = elementSeed(index);
  let rng: Rng | undefined;
  return {
    index,
    // One generator per context, made on first use, as the library's context is: two calls, each
    // with its own context, see the same draws, and two draws in one call differ.
    get rng() {
      return (rng ??= new Rng(seed));
    },
    signal,
  };
}

function isThenable(v: unknown): boolean {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof (v as { then?: unknown }).then === 'function';
}

/** A copy of `x` as a worker thread would get it (see fidelity.ts). */
export function tryClone(x: unknown): { ok: true; value: unknown } | { ok: false } {
  return crossCopy(x);
}

/**
 * A fn result as it would travel back from a worker: filter results as booleans, flatMap results
 * as arrays. Undefined when the result cannot be compared or moved (a promise, a Dataset, an
 * async iterable).
 */
export function normalise(kind: MoveTarget['kind'], r: unknown): { value: unknown } | undefined {
  if (isThenable(r)) return undefined;
  if (kind === 'filter') return { value: Boolean(r) };
  if (kind !== 'flatMap' || Array.isArray(r)) return { value: r };
  if (r !== null && typeof r === 'object') {
    if (DATASET_KEY in r) return undefined;
    if (typeof (r as Iterable<unknown>)[Symbol.iterator] === 'function') return { value: Array.from(r as Iterable<unknown>) };
  }
  return undefined;
}

/**
 * One way across a thread as plumber-data makes it, for `values`: the sender encodes them
 * (crossing.ts: tensors and number arrays go as typed arrays it makes and transfers), the clone
 * copies what is not transferred, the receiver rebuilds. Results (`result`) also move every whole
 * typed array and ArrayBuffer the worker's result path moves (worker.ts), so those cost no copy;
 * inputs move only what the encoding made. Returns what the clone copies, to time and to weigh.
 */
function asSent(value: unknown, result: boolean): { copied: unknown; sent: Encoded } {
  const sent = encodeAll([value]);
  const moved = new Set<ArrayBuffer>(sent.transfer);
  if (result) movableBuffers(sent.items, moved);
  return { copied: withoutMoved(sent.items, moved), sent };
}

/** The tensor maker of the timing loop: the rebuild's own cost is tfjs's, not the crossing's. */
const keepTensorData = (data: unknown): unknown => data;

/** Times one crossing of each value: encode, clone what is copied, rebuild. */
function crossOnce(values: unknown[], result: boolean): void {
  for (const v of values) {
    const { copied, sent } = asSent(v, result);
    const copy = structuredClone(copied) as unknown[];
    restoreAll(copy, sent.marks, undefined, { tensor: keepTensorData, numbers: sent.numbers });
  }
}

/**
 * A move's crossings, both ways, and the sizes they copy, per element of the sample; undefined
 * when a value cannot be cloned. Priced by what happens: bytes a crossing transfers are neither
 * timed as a copy nor counted in `inBytes`/`outBytes` (see `asSent`).
 */
export function priceClones(originals: unknown[], outputs: unknown[], deadline: number): Omit<MoveCost, 'samples' | 'mainCpuSeconds' | 'workerCpuSeconds' | 'workerRssBytes' | 'awaitedSeconds'> | undefined {
  const n = originals.length;
  let inBytes = 0;
  let outBytes = 0;
  let inSize = 0;
  let outSize = 0;
  try {
    for (const x of originals) inBytes += v8.serialize(asSent(x, false).copied).length;
    for (const y of outputs) outBytes += v8.serialize(asSent(y, true).copied).length;
  } catch {
    return undefined;
  }
  for (const x of originals) inSize += estimateBytes(x);
  for (const y of outputs) outSize += estimateBytes(y);
  const cloneIn = cpuPerElement(n, () => crossOnce(originals, false), deadline);
  let cloneOut = 0;
  try {
    cloneOut = cpuPerElement(n, () => crossOnce(outputs, true), deadline);
  } catch {
    // A result that cannot be cloned cannot come back from a worker: no move to price.
    return undefined;
  }
  return {
    cloneInSeconds: cloneIn,
    cloneOutSeconds: cloneOut,
    inBytes: Math.round(inBytes / n),
    outBytes: Math.round(outBytes / n),
    inSizeBytes: Math.round(inSize / n),
    outSizeBytes: Math.round(outSize / n),
  };
}
