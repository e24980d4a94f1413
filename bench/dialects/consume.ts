/**
 * How bench:dialects (and its test) take elements from a dialect pipeline without Plumber: the
 * export is a tfjs-data `Dataset` (anything with `iterator()`), an async iterable (a Readable, an
 * async generator, a plumber-data Dataset), or a zero-argument factory of one. A factory is called
 * once per pass (streams and generators are single-use); a tfjs Dataset opens a new iterator.
 * Tensors in an element are the consumer's to dispose, as `model.fitDataset` does with a batch.
 */
interface TfjsDataset {
  iterator(): Promise<{ next(): Promise<IteratorResult<unknown>> }>;
}

const isTfjsDataset = (x: unknown): x is TfjsDataset => typeof x === 'object' && x !== null && typeof (x as { iterator?: unknown }).iterator === 'function' && !(Symbol.asyncIterator in x);
const isAsyncIterable = (x: unknown): x is AsyncIterable<unknown> => typeof x === 'object' && x !== null && Symbol.asyncIterator in x;

/** The exported pipeline `exportName` of `file` (a module path). */
export async function exportedPipeline(file: string, exportName: string): Promise<unknown> {
  const mod = (await import(file)) as Record<string, unknown>;
  if (!(exportName in mod)) throw new Error(`${file} exports no ${exportName} (it exports ${Object.keys(mod).join(', ')})`);
  return mod[exportName];
}

/** One pass over the pipeline: its elements in order. */
export async function* onePass(pipeline: unknown): AsyncGenerator<unknown> {
  const it = typeof pipeline === 'function' ? (pipeline as () => unknown)() : pipeline;
  if (isTfjsDataset(it)) {
    const iterator = await it.iterator();
    for (;;) {
      const r = await iterator.next();
      if (r.done) return;
      yield r.value;
    }
  }
  if (isAsyncIterable(it)) {
    yield* it;
    return;
  }
  throw new Error('bench:dialects: the export is neither a tfjs Dataset, an async iterable, nor a zero-argument factory of one');
}

/**
 * A tfjs tensor, recognised by its shape rather than by `instanceof`: the benchmark's loop must not
 * load tfjs itself (loading it slows down pipelines that do not use it by 15–20%), and the
 * example's own copy is the one its tensors come from.
 */
const isTensor = (x: unknown): x is { dispose(): void } => typeof x === 'object' && x !== null && typeof (x as { dispose?: unknown }).dispose === 'function' && 'dataId' in x && 'shape' in x;

/**
 * Disposes the tensors an element holds, in it or in its arrays and plain objects. Not
 * `tf.dispose(element)`: that walks every index of every typed array it meets (0.4 ms for an
 * element holding 1,800 numbers), which would charge the untraced loop for work the pipeline does
 * not do.
 */
export function release(element: unknown): void {
  if (isTensor(element)) element.dispose();
  else if (Array.isArray(element)) for (const x of element) release(x);
  else if (typeof element === 'object' && element !== null && !ArrayBuffer.isView(element) && Object.getPrototypeOf(element) === Object.prototype) for (const x of Object.values(element)) release(x);
}
