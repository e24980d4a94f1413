/**
 * TensorFlow.js tensors at a thread crossing. A tensor's values live in its backend, not in the
 * object, so a structured clone of one keeps only its bookkeeping; it crosses as
 * `{ dtype, shape, data }` instead and is rebuilt on the other side with that side's tfjs.
 *
 * plumber-data never depends on tfjs: tensors are known by their shape (duck-typed), and the tfjs
 * that rebuilds them is the one the fn's module resolves (tfjs keeps one engine per process, in a
 * global, so every copy of tfjs-core a thread loads shares its backend and its tensors).
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The dtypes rebuilt: `dataSync()` of a complex64 tensor cannot be handed back to `tf.tensor`, so those cross as the clone makes them. */
export type TensorDtype = 'float32' | 'int32' | 'bool' | 'string';

/** What a tensor crosses as. `data` is a copy of its values (`dataSync()`): a typed array, or strings for a string tensor. */
export interface TensorData {
  dtype: TensorDtype;
  shape: number[];
  data: Float32Array | Int32Array | Uint8Array | string[];
}

/** The part of a tfjs Tensor this file uses. */
export interface TensorLike {
  readonly dataId: object;
  readonly shape: readonly number[];
  readonly dtype: string;
  readonly isDisposed?: boolean;
  dataSync(): ArrayLike<number> | string[];
  dispose(): void;
}

/** Makes a tensor of the receiving side's tfjs from what crossed. */
export type TensorMaker = (data: TensorData['data'], shape: number[], dtype: TensorDtype) => unknown;

const DTYPES: ReadonlySet<string> = new Set(['float32', 'int32', 'bool', 'string']);

/** A tfjs Tensor this crossing can rebuild, known by its shape (the class is the user's copy of tfjs, not ours). */
export function isTensor(v: object): v is TensorLike {
  const t = v as Partial<TensorLike>;
  return typeof t.dataSync === 'function' && typeof t.dtype === 'string' && DTYPES.has(t.dtype) && Array.isArray(t.shape) && t.dataId !== null && typeof t.dataId === 'object';
}

/**
 * The tensor as it crosses, with `data` a fresh copy of its values: never the backend's own
 * array, which a transfer would detach under the tensor, and never a view a clone would copy with
 * the whole buffer behind it. The copy's buffer is added to `transfer`.
 */
export function tensorData(t: TensorLike, transfer: ArrayBuffer[]): TensorData {
  const values = t.dataSync();
  const dtype = t.dtype as TensorDtype;
  const shape = [...t.shape];
  if (dtype === 'string') return { dtype, shape, data: Array.from(values as string[]) };
  const data = dtype === 'float32' ? Float32Array.from(values as ArrayLike<number>) : dtype === 'int32' ? Int32Array.from(values as ArrayLike<number>) : Uint8Array.from(values as ArrayLike<number>);
  transfer.push(data.buffer as ArrayBuffer);
  return { dtype, shape, data };
}

type TensorFn = (values: unknown, shape: number[], dtype: string) => unknown;

/** Where a tensor function can be found, in order: the packages a tfjs program imports tfjs through. */
const PACKAGES = ['@tensorflow/tfjs-core', '@tensorflow/tfjs', '@tensorflow/tfjs-node', '@tensorflow/tfjs-node-gpu'];

const makers = new Map<string, TensorMaker>();

/**
 * Rebuilds tensors with the tfjs that `module` (a path or file URL: the fn's module) resolves,
 * looked up at the first tensor. Never plumber-data's own dependencies: it has none on tfjs.
 */
export function tensorMakerFor(module: string): TensorMaker {
  let m = makers.get(module);
  if (m !== undefined) return m;
  let tensor: TensorFn | undefined;
  m = (data, shape, dtype) => {
    tensor ??= resolveTensor(module);
    return tensor(data, shape, dtype);
  };
  makers.set(module, m);
  return m;
}

function resolveTensor(module: string): TensorFn {
  const path = module.startsWith('file:') ? fileURLToPath(module) : module;
  const req = createRequire(path);
  for (const name of PACKAGES) {
    let mod: { tensor?: unknown } | undefined;
    try {
      mod = req(name) as { tensor?: unknown };
    } catch {
      continue;
    }
    if (typeof mod.tensor === 'function') return mod.tensor as TensorFn;
  }
  throw new Error(`an element holds a TensorFlow.js tensor, but no tfjs package (${PACKAGES.join(', ')}) can be loaded from ${path} to rebuild it`);
}

/** Disposes tensors (each once; a disposed one is left alone). */
export function disposeAll(tensors: Iterable<unknown>): void {
  for (const t of tensors) {
    const x = t as Partial<TensorLike> | null;
    if (x !== null && typeof x === 'object' && typeof x.dispose === 'function' && x.isDisposed !== true) x.dispose();
  }
}

/**
 * Tensors the pipeline owns: made for it by a tfjs dataset's iterator (`fromTfDataset`), each pass
 * afresh, so no one else holds them. Only these are disposed when a worker map has consumed them.
 */
const adopted = new WeakSet<object>();

/** How deep `adoptTensors` looks for tensors: elements of tfjs datasets are tensors, or records and arrays of them. */
const ADOPT_DEPTH = 4;

/** Records the tensors in `x` (at any depth of plain objects and arrays, to ADOPT_DEPTH) as the pipeline's own. */
export function adoptTensors(x: unknown, depth = 0): void {
  if (x === null || typeof x !== 'object' || ArrayBuffer.isView(x)) return;
  if (isTensor(x)) {
    adopted.add(x);
    return;
  }
  if (depth >= ADOPT_DEPTH) return;
  if (Array.isArray(x)) for (const v of x) adoptTensors(v, depth + 1);
  else if (Object.getPrototypeOf(x) === Object.prototype) for (const k in x) adoptTensors((x as Record<string, unknown>)[k], depth + 1);
}

/** Disposes those of `tensors` the pipeline owns (see `adoptTensors`); others stay with their owner. */
export function disposeAdopted(tensors: readonly TensorLike[]): void {
  for (const t of tensors) if (adopted.has(t) && t.isDisposed !== true) t.dispose();
}
