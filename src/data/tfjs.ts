/**
 * Adapters between plumber-data and TensorFlow.js datasets: `fromTfDataset` reads a tfjs
 * `Dataset` as a source, `toTfDataset` hands a plumber-data `Dataset` to tfjs (`model.fitDataset`).
 *
 * plumber-data never imports TensorFlow.js: the tfjs dataset is read through its own `iterator()`,
 * and `toTfDataset` builds with the caller's `tf` namespace, so the tensors made belong to the copy
 * of tfjs the user's program loaded (and its backend), and tfjs is no dependency of this package.
 */
import { Dataset, finish } from './dataset';
import { DATASET_KEY, SOURCE_KEY } from './tracing';
import { Batch, type TypedArray } from './internal/batch-class';
import { beginOp, makeNode } from './internal/build';
import { openSource } from './internal/ops/sources';
import { type OpNode, Session } from './internal/core';
import { DatasetIterator } from './internal/iterator';
import { adoptTensors } from './internal/tensors';

/** What plumber-data reads of a tfjs `Dataset`: its `iterator()` (tfjs-data's LazyIterator) and its `size`. */
export interface TfDatasetLike<T> {
  iterator(): Promise<{ next(): Promise<IteratorResult<T>> }>;
  readonly size?: number | null;
}

/** What `toTfDataset` uses of the caller's `tf` namespace (`@tensorflow/tfjs`, `-node`, or `-data` with `-core`). */
export interface TfLike {
  data: { generator(make: () => AsyncIterator<never>): unknown };
  tensor(values: ArrayLike<number> | ArrayLike<boolean>, shape?: number[], dtype?: 'float32' | 'int32' | 'bool'): unknown;
}

/**
 * A source over the elements of a tfjs `Dataset`, in its order: each pass (epoch) asks the tfjs
 * dataset for a new iterator, and an error of the tfjs iterator is the pipeline's error. Elements
 * are handed on as tfjs made them (tensors stay tensors; whoever consumes them disposes them, as
 * with tfjs itself; a worker-thread map disposes them once its fn has run on their copies, as a
 * tfjs map disposes its inputs). A finite, known `size` is the source's cardinality.
 */
export function fromTfDataset<T>(tfDataset: TfDatasetLike<T>): Dataset<T> {
  if (tfDataset === null || typeof tfDataset !== 'object' || typeof tfDataset.iterator !== 'function') {
    throw new TypeError('fromTfDataset() needs a tfjs Dataset (an object with an iterator() method).');
  }
  const env = beginOp('from', 'fromTfDataset');
  const size = tfDataset.size;
  const cardinality = typeof size === 'number' && Number.isFinite(size) && size >= 0 ? size : undefined;
  const source = (): AsyncIterable<T> => ({ [Symbol.asyncIterator]: () => tfElements(tfDataset) });
  const node = makeNode<T>(env, { kind: 'from', inputs: [], placement: 'main', knobs: {}, cardinality }, (n, session) => openSource(source, n, session));
  return finish(env, node);
}

/** One pass over a tfjs dataset: its iterator is made at the first `next()`, so a pass never opened costs nothing. */
function tfElements<T>(tfDataset: TfDatasetLike<T>): AsyncIterator<T> {
  let it: Promise<{ next(): Promise<IteratorResult<T>> }> | undefined;
  return {
    async next(): Promise<IteratorResult<T>> {
      it ??= tfDataset.iterator();
      const r = await (await it).next();
      if (r.done) return { done: true, value: undefined };
      adoptTensors(r.value);
      return { done: false, value: r.value };
    },
  };
}

/**
 * A tfjs `Dataset` over `dataset`'s elements, built with the caller's `tf.data.generator`, so
 * `model.fitDataset(toTfDataset(ds, tf), …)` trains from a plumber-data pipeline. Each tfjs
 * iterator is one pass of `dataset`; the passes share worker pools (see SharedPasses). Elements go to tfjs as they are, except what tfjs cannot
 * read: a `Batch` (from `batch()`) becomes a tensor of its shape, and a typed array a 1-D tensor,
 * made with `tf.tensor` wherever plain objects and arrays lead to them (`{ xs: Batch, ys: Batch }`
 * becomes `{ xs: Tensor, ys: Tensor }`; tfjs has no float64: 64-bit floats become float32). Tensors are handed on, as tfjs datasets do: the consumer
 * (fitDataset) disposes them.
 */
export function toTfDataset<T, Tf extends TfLike>(dataset: Dataset<T>, tf: Tf): ReturnType<Tf['data']['generator']> {
  if (!(dataset instanceof Dataset)) throw new TypeError('toTfDataset() needs a plumber-data Dataset as its first argument.');
  if (tf === null || typeof tf !== 'object' || typeof tf.data?.generator !== 'function' || typeof tf.tensor !== 'function') {
    throw new TypeError('toTfDataset() needs your tf namespace as its second argument (an object with data.generator and tensor, e.g. `import * as tf from "@tensorflow/tfjs"`).');
  }
  const passes = new SharedPasses();
  const make = (): AsyncIterator<never> => {
    const it = passes.open(dataset.node);
    return {
      async next(): Promise<IteratorResult<never>> {
        const r = await it.next();
        return r.done ? { done: true, value: undefined as never } : { done: false, value: forTf(r.value, tf) as never };
      },
      async return(): Promise<IteratorResult<never>> {
        await it.return?.();
        return { done: true, value: undefined as never };
      },
    };
  };
  const out = tf.data.generator(make) as ReturnType<Tf['data']['generator']>;
  // A tracer reads the tfjs dataset as made from this one (see SOURCE_KEY).
  if (typeof out === 'object' && out !== null && Object.isExtensible(out)) Object.defineProperty(out, SOURCE_KEY, { value: dataset[DATASET_KEY] });
  return out;
}

/** How long the worker pools of a `toTfDataset` stay up with no pass running: longer than a training loop spends between epochs. */
const IDLE_MS = 10_000;

/**
 * The passes of one `toTfDataset` share a session, so its worker pools stay warm from one epoch
 * (one tfjs iterator: fitDataset asks for a new one each epoch) to the next, as a `repeat()`'s do,
 * instead of starting threads and loading the fn's module again every epoch. The session ends
 * once no pass has run for IDLE_MS (its timer does not keep the process alive).
 */
class SharedPasses {
  private session: Session | null = null;
  private running = 0;
  private idle: ReturnType<typeof setTimeout> | null = null;

  open<T>(node: OpNode<T>): AsyncIterator<T> {
    if (this.idle !== null) clearTimeout(this.idle);
    this.idle = null;
    this.running++;
    const it = new DatasetIterator(node, (this.session ??= new Session()));
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      if (--this.running > 0) return;
      this.idle = setTimeout(() => {
        const s = this.session;
        this.session = null;
        this.idle = null;
        void s?.dispose();
      }, IDLE_MS);
      this.idle.unref();
    };
    return {
      async next(): Promise<IteratorResult<T>> {
        try {
          const r = await it.next();
          if (r.done) end();
          return r;
        } catch (e) {
          end();
          throw e;
        }
      },
      async return(): Promise<IteratorResult<T>> {
        end();
        return it.return();
      },
    };
  }
}

function isPlain(x: object): boolean {
  const p = Object.getPrototypeOf(x);
  return Array.isArray(x) || p === Object.prototype || p === null;
}

type NumberArray = Exclude<TypedArray, BigInt64Array | BigUint64Array>;

/**
 * The values as a typed array tfjs takes as it is (Float32Array, Int32Array, Uint8Array and
 * Uint8ClampedArray): tfjs has no 64-bit floats, so a Float64Array (or Uint32Array, whose values
 * may pass int32's range) becomes float32, and the small integer arrays int32.
 */
function tfValues(a: NumberArray): Float32Array | Int32Array | Uint8Array | Uint8ClampedArray {
  if (a instanceof Float32Array || a instanceof Int32Array || a instanceof Uint8Array || a instanceof Uint8ClampedArray) return a;
  return a instanceof Float64Array || a instanceof Uint32Array ? Float32Array.from(a) : Int32Array.from(a);
}

/** `x` with its Batches and typed arrays made tensors (containers on the way copied, never changed). */
function forTf(x: unknown, tf: TfLike): unknown {
  if (x === null || typeof x !== 'object') return x;
  if (x instanceof Batch) return x.data instanceof BigInt64Array || x.data instanceof BigUint64Array ? x : tf.tensor(tfValues(x.data), x.shape);
  if (ArrayBuffer.isView(x)) return x instanceof DataView || x instanceof BigInt64Array || x instanceof BigUint64Array ? x : tf.tensor(tfValues(x as NumberArray), [(x as NumberArray).length]);
  if (!isPlain(x)) return x;
  if (Array.isArray(x)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < x.length; i++) {
      const v = forTf(x[i], tf);
      if (v !== x[i]) (out ??= x.slice())[i] = v;
    }
    return out ?? x;
  }
  let out: Record<string, unknown> | undefined;
  for (const k of Object.keys(x)) {
    const old = (x as Record<string, unknown>)[k];
    const v = forTf(old, tf);
    if (v !== old) (out ??= { ...(x as Record<string, unknown>) })[k] = v;
  }
  return out ?? x;
}
