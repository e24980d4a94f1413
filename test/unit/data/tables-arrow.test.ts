import assert from 'node:assert/strict';
import { tableFromIPC, tableToIPC } from 'apache-arrow';
import { arrowFormat } from '../../../src/data/internal/readers/arrow';
import { FormatError } from '../../../src/data/internal/readers/format';
import { openStream } from '../../../src/data/internal/readers/source';
import type { TableBatch, TableFormatOptions } from '../../../src/data/internal/readers/table';
import { arrowStreamBytes, arrowTable, expectedRows, makeColumns } from './tables-data';
import { TestServer } from './http-server';

async function* chunksOf(bytes: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** Parses `bytes` through the Arrow format, returning its chunks of elements and the parse time it reported. */
async function parse(bytes: AsyncIterable<Uint8Array>, options: TableFormatOptions = {}, location = '/data/t.arrow'): Promise<{ chunks: unknown[][]; parseSeconds: number }> {
  let parseSeconds = 0;
  const chunks: unknown[][] = [];
  for await (const c of arrowFormat(options).parse(bytes, { location, index: 0 }, { parsed: (s) => (parseSeconds += s) })) chunks.push(c);
  return { chunks, parseSeconds };
}

describe('Arrow IPC format (apache-arrow), streamed', () => {
  const cols = makeColumns(1000, 3);
  let stream: Buffer;
  before(async () => {
    stream = await arrowStreamBytes(cols, 250);
  });

  it('reads an IPC stream written by arrow-rs, one chunk of rows per record batch, from small byte chunks', async () => {
    const { chunks, parseSeconds } = await parse(chunksOf(stream, 1000));
    assert.deepEqual(
      chunks.map((c) => c.length),
      [250, 250, 250, 250],
    );
    assert.deepEqual(chunks.flat(), expectedRows(cols));
    assert.ok(parseSeconds > 0);
  });

  it("reads an IPC file from apache-arrow's JS writer, which keeps the schema in the footer only, through its footer", async () => {
    const file = Buffer.from(tableToIPC(arrowTable(cols), 'file'));
    assert.equal(file.subarray(0, 6).toString(), 'ARROW1');
    for (const size of [3, 4096, file.length]) assert.deepEqual((await parse(chunksOf(file, size))).chunks.flat(), expectedRows(cols), `in chunks of ${size}`);
  });

  it('streams an IPC file whose stream part starts with its schema (as C++, Python and Rust write it), batch by batch', async () => {
    // apache-arrow's JS writer keeps a file's schema in the footer only; the other writers also
    // open the stream part with it. Such a file is the JS one with the schema message put back.
    const js = Buffer.from(tableToIPC(tableFromIPC(stream), 'file'));
    const schema = stream.subarray(0, 8 + stream.readInt32LE(4));
    const file = Buffer.concat([js.subarray(0, 8), schema, js.subarray(8)]);
    let pulled = 0;
    async function* counted(): AsyncGenerator<Uint8Array> {
      for await (const c of chunksOf(file, 1024)) {
        pulled++;
        yield c;
      }
    }
    const firstBatchAt: number[] = [];
    const rows: unknown[] = [];
    for await (const chunk of arrowFormat({}).parse(counted(), { location: 'f.arrow', index: 0 }, { parsed: () => {} })) {
      firstBatchAt.push(pulled);
      rows.push(...chunk);
    }
    assert.deepEqual(rows, expectedRows(cols));
    assert.ok(firstBatchAt[0] < Math.ceil(file.length / 1024) / 2, `the first rows came after ${firstBatchAt[0]} of ${Math.ceil(file.length / 1024)} chunks`);
  });

  it('projects columns and gives record batches as columns', async () => {
    assert.deepEqual((await parse(chunksOf(stream, 1 << 16), { columns: ['flag', 'x'] })).chunks.flat(), expectedRows(cols, ['flag', 'x']));
    const batches = (await parse(chunksOf(stream, 1 << 16), { as: 'batches' })).chunks.flat() as TableBatch[];
    assert.deepEqual(
      batches.map((b) => b.numRows),
      [250, 250, 250, 250],
    );
    assert.ok(batches[0].columns.x instanceof Float64Array);
    assert.ok(batches[0].columns.big instanceof BigInt64Array);
    assert.deepEqual(
      batches.flatMap((b) => Array.from(b.columns.name)),
      cols.name,
    );
    await assert.rejects(parse(chunksOf(stream, 1 << 16), { columns: ['nope'] }), /t\.arrow: schema: no column 'nope': the file has 'id', 'x', 'name', 'big', 'flag'\./);
  });

  it('names the file when a stream is cut short, at a message boundary or inside one', async () => {
    // Without its end-of-stream marker: every message whole, the end missing.
    const noEos = stream.subarray(0, stream.length - 8);
    await assert.rejects(parse(chunksOf(noEos, 4096)), (e: unknown) => e instanceof FormatError && e.location === '/data/t.arrow' && /ends without its end-of-stream marker/.test(e.message));
    const cut = stream.subarray(0, Math.floor(stream.length / 2));
    await assert.rejects(parse(chunksOf(cut, 4096)), (e: unknown) => e instanceof FormatError && e.message.startsWith('/data/t.arrow: record batch'));
    await assert.rejects(parse(chunksOf(Buffer.alloc(0), 1)), FormatError);
    await assert.rejects(parse(chunksOf(Buffer.from('id,x\n1,2\n'), 4)), FormatError);
  });

  it('streams an Arrow file over HTTP through a dropped connection', async () => {
    const server = await new TestServer().start();
    try {
      server.files.set('t.arrows', stream);
      server.faults.set('t.arrows', { dropAfter: [5000] });
      const url = server.url('t.arrows');
      const { chunks } = await parse(openStream({ location: url, index: 0 }, { counters: null, http: { retryDelayMs: 1 } }), {}, url);
      assert.deepEqual(chunks.flat(), expectedRows(cols));
      assert.equal(server.hits('t.arrows').length, 2);
      assert.equal(await server.openSockets(), 0);
    } finally {
      await server.stop();
    }
  });
});
