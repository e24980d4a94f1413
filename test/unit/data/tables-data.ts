/**
 * Table test data made at run time from a seed: columns built with apache-arrow, written as
 * Parquet and Arrow IPC by parquet-wasm (the Rust arrow-rs implementation compiled to wasm), so
 * the files the readers meet were written by another implementation than the one reading them.
 */
import { Bool, Float64, Int32, Int64, Table, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import type { TableRow } from '../../../src/data/internal/readers/table';

export interface Columns {
  id: Int32Array;
  x: Float64Array;
  name: (string | null)[];
  big: bigint[];
  flag: boolean[];
}

/** `n` rows from a seed: ids in order, seeded floats, seeded strings of `nameWidth` characters with a null every 7th row, 64-bit ints, booleans. */
export function makeColumns(n: number, seed: number, nameWidth = 8): Columns {
  let s = seed >>> 0 || 1;
  const next = (): number => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
  const cols: Columns = { id: new Int32Array(n), x: new Float64Array(n), name: [], big: [], flag: [] };
  for (let i = 0; i < n; i++) {
    cols.id[i] = i;
    cols.x[i] = next() * 1000 - 500;
    let name = `r${i}-`;
    while (name.length < nameWidth) name += Math.floor(next() * 36).toString(36);
    cols.name.push(i % 7 === 3 ? null : name);
    cols.big.push(BigInt(i) * 3_000_000_000n - 7n);
    cols.flag.push(next() < 0.5);
  }
  return cols;
}

/** The rows a reader should give for `cols`, in order. */
export function expectedRows(cols: Columns, only?: readonly (keyof Columns)[]): TableRow[] {
  const keys = only ?? (['id', 'x', 'name', 'big', 'flag'] as const);
  return Array.from(cols.id, (_, i) => Object.fromEntries(keys.map((k) => [k, cols[k][i]])));
}

export function arrowTable(cols: Columns): Table {
  return new Table({
    id: vectorFromArray([...cols.id], new Int32()),
    x: vectorFromArray([...cols.x], new Float64()),
    name: vectorFromArray(cols.name, new Utf8()),
    big: vectorFromArray(cols.big, new Int64()),
    flag: vectorFromArray(cols.flag, new Bool()),
  });
}

type Codec = 'UNCOMPRESSED' | 'SNAPPY' | 'GZIP' | 'BROTLI' | 'ZSTD' | 'LZ4_RAW';

/** `cols` as a Parquet file written by arrow-rs, with this codec and row groups of at most `rowGroupSize` rows. */
export async function parquetBytes(cols: Columns, codec: Codec = 'SNAPPY', rowGroupSize = 1000): Promise<Buffer> {
  const pw = await import('parquet-wasm');
  const table = pw.Table.fromIPCStream(tableToIPC(arrowTable(cols), 'stream'));
  const props = new pw.WriterPropertiesBuilder().setCompression(pw.Compression[codec]).setMaxRowGroupSize(rowGroupSize).build();
  return Buffer.from(pw.writeParquet(table, props));
}

/** `cols` as an Arrow IPC stream written by arrow-rs, in record batches of `batchRows` rows. */
export async function arrowStreamBytes(cols: Columns, batchRows: number): Promise<Buffer> {
  const pw = await import('parquet-wasm');
  // arrow-rs reads the Parquet back in batches of `batchSize` rows, then writes them as an IPC stream.
  const parquet = await parquetBytes(cols, 'UNCOMPRESSED', cols.id.length);
  return Buffer.from(pw.readParquet(parquet, { batchSize: batchRows }).intoIPCStream());
}
