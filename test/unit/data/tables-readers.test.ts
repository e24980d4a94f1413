import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { arrow, FormatError, parquet, PipelineError, type TableBatch } from 'plumber-data';
import { traced } from './helpers';
import { arrowStreamBytes, expectedRows, makeColumns, parquetBytes } from './tables-data';
import { TestServer } from './http-server';

describe('parquet() and arrow(): readers over local files and HTTP', () => {
  let dir: string;
  const parts = [makeColumns(300, 1), makeColumns(200, 2), makeColumns(100, 3)];
  let server: TestServer;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plumber-tables-'));
    server = await new TestServer().start();
    for (const [k, cols] of parts.entries()) {
      const pq = await parquetBytes(cols, 'SNAPPY', 120);
      writeFileSync(join(dir, `part-${k}.parquet`), pq);
      server.files.set(`part-${k}.parquet`, pq);
      const ipc = await arrowStreamBytes(cols, 50);
      writeFileSync(join(dir, `part-${k}.arrows`), ipc);
      server.files.set(`part-${k}.arrows`, ipc);
    }
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await server.stop();
  });

  /** The readers' documented order: a cycle of p shards, one element from each in turn; a shard found ended ends its turn, and the next shard takes its place from the place's next turn. */
  function interleaved(rows: unknown[][], parallelism: number): unknown[] {
    const out: unknown[] = [];
    const queue = rows.map((r) => [...r]);
    let open = queue.splice(0, parallelism);
    let turn = 0;
    while (open.length > 0) {
      const i = turn % open.length;
      if (open[i].length > 0) out.push(open[i].shift());
      else if (queue.length > 0) open[i] = queue.shift() as unknown[];
      else {
        open = open.filter((_, j) => j !== i);
        continue;
      }
      turn = i + 1;
    }
    return out;
  }

  it('reads Parquet shards in order, counting bytes, parsing and shards', async () => {
    const { tracer, value } = traced(() => parquet(join(dir, 'part-*.parquet'), { columns: ['id', 'name'] }));
    assert.deepEqual(
      await value.toArray(),
      parts.flatMap((c) => expectedRows(c, ['id', 'name'])),
    );
    const { info, counters } = tracer.only('parquet');
    assert.deepEqual(info.knobs, { parallelism: undefined, resolvedParallelism: 1, numShards: 3 });
    assert.equal(counters.produced, 600);
    assert.equal(counters.shardsOpened, 3);
    assert.equal(counters.filesRead, 3);
    assert.ok((counters.parseSeconds ?? 0) > 0);
    // Each file is smaller than the footer read, so that one read served all of it: no byte read twice.
    const bytes = [0, 1, 2].reduce((a, k) => a + statSync(join(dir, `part-${k}.parquet`)).size, 0);
    assert.equal(counters.diskBytesRead, bytes);
  });

  it('reads Parquet and Arrow shards from a list of URLs with brace ranges, in parallel, on the main thread or in workers', async () => {
    const urls = [server.url('part-{0..1}.parquet'), server.url('part-2.parquet')];
    const want = interleaved(
      parts.map((c) => expectedRows(c)),
      2,
    );
    const { tracer, value } = traced(() => parquet(urls, { parallelism: 2 }));
    assert.deepEqual(await value.toArray(), want);
    const c = tracer.only('parquet').counters;
    assert.ok((c.netBytesRead ?? 0) > 0);
    assert.equal(c.diskBytesRead, 0);
    assert.deepEqual(await parquet(urls, { parallelism: 2, placement: 'worker' }).toArray(), want);
    assert.deepEqual(await arrow(server.url('part-{0..2}.arrows'), { parallelism: 2, placement: 'worker' }).toArray(), want);
  });

  it('gives the same batches from worker threads, typed arrays moved across, and builds rows from them on this thread', async () => {
    const local = join(dir, 'part-*.parquet');
    const main: TableBatch[] = await parquet(local, { as: 'batches', parallelism: 2 }).toArray();
    const moved: TableBatch[] = await parquet(local, { as: 'batches', parallelism: 2, placement: 'worker' }).toArray();
    assert.deepEqual(moved, main);
    assert.ok(moved[0].columns.x instanceof Float64Array);
    assert.deepEqual(
      await arrow(join(dir, 'part-*.arrows'), { columns: ['name', 'id'], placement: 'worker' }).toArray(),
      parts.flatMap((c) => expectedRows(c, ['name', 'id'])),
    );
  });

  it('leaves no connection open when a pass stops early', async () => {
    const take = async (d: AsyncIterable<unknown>, n: number): Promise<number> => {
      let k = 0;
      for await (const _ of d) if (++k === n) break;
      return k;
    };
    assert.equal(await take(arrow(server.url('part-{0..2}.arrows'), { parallelism: 2 }), 10), 10);
    assert.equal(await take(parquet(server.url('part-{0..2}.parquet'), { parallelism: 3 }), 10), 10);
    assert.equal(await server.openSockets(), 0);
  });

  it('counts the time it sat idle waiting for a slow server as I/O wait', async () => {
    const body = server.files.get('part-0.arrows')!;
    server.files.set('slow.arrows', body);
    server.faults.set('slow.arrows', { firstByteDelayMs: 300 });
    const { tracer, value } = traced(() => arrow(server.url('slow.arrows')));
    assert.deepEqual(await value.toArray(), expectedRows(parts[0]));
    const c = tracer.only('arrow').counters;
    assert.ok((c.ioWaitSeconds ?? 0) > 0, JSON.stringify(c));
    assert.ok((c.netBytesRead ?? 0) >= body.length, JSON.stringify(c));
  });

  it('reads a gzip-compressed Arrow stream (gzip from the command line) as batches', async () => {
    execFileSync('gzip', ['-k', '-f', join(dir, 'part-1.arrows')]);
    const batches: TableBatch[] = await arrow(join(dir, 'part-1.arrows.gz'), { as: 'batches', columns: ['x'] }).toArray();
    assert.deepEqual(
      batches.map((b) => b.numRows),
      [50, 50, 50, 50],
    );
    assert.deepEqual(
      batches.flatMap((b) => Array.from(b.columns.x)),
      Array.from(parts[1].x),
    );
  });

  it('fails the pass with an error naming the shard, never with fewer rows', async () => {
    const bad = join(dir, 'bad.parquet');
    writeFileSync(bad, 'not parquet at all, just text');
    await assert.rejects(parquet([join(dir, 'part-0.parquet'), bad]).toArray(), (e: unknown) => {
      assert.ok(e instanceof PipelineError);
      assert.ok(e.cause instanceof FormatError);
      assert.equal(e.cause.location, bad);
      return true;
    });
    await assert.rejects(parquet(server.url('missing.parquet')).toArray(), /missing\.parquet: 404 Not Found: check the URL\./);
    assert.throws(() => arrow(join(dir, '*.arrows'), { as: 'table' as 'rows' }), /arrow\(\) as must be 'rows' or 'batches'/);
    assert.throws(() => parquet(server.url('a.parquet'), { http: { retries: -1 } }), { name: 'RangeError', message: 'parquet() http.retries must be a whole number ≥ 0, not -1.' });
    assert.throws(() => arrow(server.url('a.arrows'), { http: { timeout: 5 } as never }), /arrow\(\) http has no option 'timeout'; it takes headers, retries, timeoutMs, retryDelayMs\./);
  });
});
