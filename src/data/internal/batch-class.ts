/** The value batch() makes of typed arrays: a leaf, so the crossing rules and the tracing contract can name it. */

/** Any typed array. */
export type TypedArray = Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array | BigInt64Array | BigUint64Array;

/**
 * Elements stacked into one contiguous buffer: row i is `data[i*rowSize … (i+1)*rowSize)`, where
 * rowSize is the product of `shape` after its first entry. `length` is the number of rows.
 */
export class Batch<A extends TypedArray = TypedArray> {
  readonly length: number;
  constructor(
    readonly data: A,
    readonly shape: number[],
  ) {
    this.length = shape[0];
  }
  /** Row i: a number for 1-D batches, a typed-array view for 2-D, a Batch view beyond. Views share `data`. */
  row(i: number): number | bigint | TypedArray | Batch {
    const rest = this.shape.slice(1);
    if (rest.length === 0) return this.data[i];
    const size = rest.reduce((a, b) => a * b, 1);
    const view = this.data.subarray(i * size, (i + 1) * size);
    // Made through this.constructor, not the class's own name: a bundler renames a class that
    // refers to itself (`class _Batch`), and tools know a Batch from another copy of the library by its name.
    return rest.length === 1 ? view : new (this.constructor as new (data: TypedArray, shape: number[]) => Batch)(view, rest);
  }
}
