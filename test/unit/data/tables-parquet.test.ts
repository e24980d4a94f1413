import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OpCounters } from '../../../src/data/tracing';
import { FormatError, type Shard } from '../../../src/data/internal/readers/format';
import { parquetFormat } from '../../../src/data/internal/readers/parquet';
import type { TableBatch, TableFormatOptions, TableRow } from '../../../src/data/internal/readers/table';
import { openRandomAccess } from '../../../src/data/internal/readers/source';
import type { HttpOptions } from '../../../src/data/options';
import { expectedRows, makeColumns, parquetBytes } from './tables-data';
import { TestServer } from './http-server';

/** Reads a shard through the Parquet format as the reader op does: opened for ranges, read, closed. */
async function readParquet(location: string, options: TableFormatOptions = {}, c: OpCounters | null = null, http?: HttpOptions): Promise<{ chunks: unknown[][]; parseSeconds: number }> {
  const shard: Shard = { location, index: 0 };
  const file = await openRandomAccess(shard, { counters: c, http });
  let parseSeconds = 0;
  const chunks: unknown[][] = [];
  try {
    for await (const chunk of parquetFormat(options).read(file, shard, { parsed: (s) => (parseSeconds += s) })) chunks.push(chunk);
  } finally {
    await file.close();
  }
  return { chunks, parseSeconds };
}

describe('Parquet format (hyparquet), on files written by arrow-rs', () => {
  let dir: string;
  const cols = makeColumns(1000, 7);
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'plumber-parquet-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads every row with its values, one chunk per row group', async () => {
    const path = join(dir, 'snappy.parquet');
    writeFileSync(path, await parquetBytes(cols, 'SNAPPY', 300));
    const { chunks, parseSeconds } = await readParquet(path);
    assert.deepEqual(
      chunks.map((c) => c.length),
      [300, 300, 300, 100],
    );
    assert.deepEqual(chunks.flat(), expectedRows(cols));
    assert.ok(parseSeconds > 0);
  });

  for (const codec of ['UNCOMPRESSED', 'GZIP', 'BROTLI', 'ZSTD', 'LZ4_RAW'] as const) {
    it(`decodes ${codec} column chunks`, async () => {
      const path = join(dir, `${codec}.parquet`);
      writeFileSync(path, await parquetBytes(cols, codec, 400));
      assert.deepEqual((await readParquet(path)).chunks.flat(), expectedRows(cols));
    });
  }

  it('projects columns in the order asked for, and names the columns a file has when one is missing', async () => {
    const path = join(dir, 'project.parquet');
    writeFileSync(path, await parquetBytes(cols, 'SNAPPY', 500));
    const rows = (await readParquet(path, { columns: ['name', 'id'] })).chunks.flat() as TableRow[];
    assert.deepEqual(rows, expectedRows(cols, ['name', 'id']));
    assert.deepEqual(Object.keys(rows[0]), ['name', 'id']);
    await assert.rejects(readParquet(path, { columns: ['id', 'label'] }), {
      name: 'FormatError',
      message: `${path}: schema: no column 'label': the file has 'id', 'x', 'name', 'big', 'flag'.`,
    });
  });

  it('rejects bad table options when the format is made', () => {
    assert.throws(() => parquetFormat({ columns: 'id' as unknown as string[] }), { name: 'TypeError', message: 'parquet() columns must be a list of column names.' });
    assert.throws(() => parquetFormat({ as: 'columns' as 'rows' }), { name: 'RangeError', message: `parquet() as must be 'rows' or 'batches', not "columns".` });
  });

  it('gives a row group as one batch of columns: typed arrays for numbers without nulls, arrays with nulls', async () => {
    const path = join(dir, 'batches.parquet');
    writeFileSync(path, await parquetBytes(cols, 'SNAPPY', 600));
    const { chunks } = await readParquet(path, { as: 'batches' });
    assert.deepEqual(
      chunks.map((c) => c.length),
      [1, 1],
    );
    const [a, b] = chunks.flat() as TableBatch[];
    assert.deepEqual([a.numRows, b.numRows], [600, 400]);
    assert.ok(a.columns.x instanceof Float64Array);
    assert.ok(a.columns.id instanceof Int32Array);
    assert.ok(a.columns.big instanceof BigInt64Array);
    assert.deepEqual([...Array.from(a.columns.x), ...Array.from(b.columns.x)], [...cols.x]);
    assert.deepEqual([...Array.from(a.columns.id), ...Array.from(b.columns.id)], [...cols.id]);
    assert.deepEqual([...Array.from(a.columns.big), ...Array.from(b.columns.big)], cols.big);
    assert.deepEqual([...Array.from(a.columns.name), ...Array.from(b.columns.name)], cols.name);
    assert.deepEqual([...Array.from(a.columns.flag), ...Array.from(b.columns.flag)], cols.flag);
  });

  it('names the file when it is not Parquet or is cut short, and the row group when a page is corrupt', async () => {
    const good = await parquetBytes(cols, 'SNAPPY', 500);
    const cut = join(dir, 'cut.parquet');
    writeFileSync(cut, good.subarray(0, good.length - 100));
    await assert.rejects(readParquet(cut), (e: unknown) => e instanceof FormatError && e.message.startsWith(`${cut}: footer: not a readable Parquet file`));
    const csv = join(dir, 'data.parquet');
    writeFileSync(csv, 'id,x\n1,2\n');
    await assert.rejects(readParquet(csv), (e: unknown) => e instanceof FormatError && e.location === csv && e.position === 'byte 0');
    // Garbage over the second row group's first page header.
    const bad = Buffer.from(good);
    const { parquetMetadata } = await import('hyparquet');
    const meta = parquetMetadata(bad.buffer.slice(bad.byteOffset, bad.byteOffset + bad.length) as ArrayBuffer);
    const offset = Number(meta.row_groups[1].columns[0].meta_data?.data_page_offset);
    bad.fill(0xff, offset, offset + 16);
    const corrupt = join(dir, 'corrupt.parquet');
    writeFileSync(corrupt, bad);
    const seen: number[] = [];
    await assert.rejects(
      (async () => {
        const shard: Shard = { location: corrupt, index: 0 };
        const file = await openRandomAccess(shard, { counters: null });
        try {
          for await (const chunk of parquetFormat({}).read(file, shard, { parsed: () => {} })) seen.push(chunk.length);
        } finally {
          await file.close();
        }
      })(),
      (e: unknown) => e instanceof FormatError && e.message.startsWith(`${corrupt}: row group 1 (rows 500–999): `),
    );
    // The first row group was whole; nothing after the bad one was handed on.
    assert.deepEqual(seen, [500]);
  });
});

describe('Parquet over HTTP: range reads', () => {
  let server: TestServer;
  // Long strings make the `name` column most of the file, so reading `id` alone should cost little.
  const cols = makeColumns(40_000, 11, 40);
  let file: Buffer;
  before(async () => {
    file = await parquetBytes(cols, 'SNAPPY', 10_000);
  });
  beforeEach(async () => {
    server = await new TestServer().start();
    server.files.set('t.parquet', file);
  });
  afterEach(async () => {
    assert.equal(await server.openSockets(), 0, 'a connection outlived the read');
    await server.stop();
  });

  it('reads one projected column for a small part of the file', async () => {
    const c = { netBytesRead: 0, diskBytesRead: 0 } as OpCounters;
    const rows = (await readParquet(server.url('t.parquet'), { columns: ['id'] }, c)).chunks.flat();
    assert.deepEqual(rows, expectedRows(cols, ['id']));
    assert.ok(c.netBytesRead! < file.length / 5, `read ${c.netBytesRead} of ${file.length} bytes`);
    assert.equal(c.diskBytesRead, 0);
    // The footer came with the size in the first request; then the id chunks, by ranges.
    assert.ok(server.hits('t.parquet').every((r) => r.status === 206));
  });

  it('reads every value from a server without ranges, and retries a failed range', async () => {
    server.faults.set('t.parquet', { statuses: [undefined, 503] });
    const rows = (await readParquet(server.url('t.parquet'), {}, null, { retryDelayMs: 1 })).chunks.flat();
    assert.deepEqual(rows, expectedRows(cols));
    assert.equal(server.hits('t.parquet')[1].status, 503);
    server.faults.set('t.parquet', { noRanges: true });
    const c = { netBytesRead: 0 } as OpCounters;
    assert.deepEqual((await readParquet(server.url('t.parquet'), { columns: ['big'] }, c)).chunks.flat(), expectedRows(cols, ['big']));
    assert.equal(c.netBytesRead, file.length);
  });
});
