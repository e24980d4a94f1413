/**
 * The public readers over the records' and tables' formats: tfrecord, webdataset, parquet and
 * arrow as reader ops — shards, parallelism, worker placement, per-pass shard order.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { arrow, encodeExample, parquet, tfrecord, webdataset, writeTfRecord } from 'plumber-data';
import { traced } from './helpers';
import { tempDir } from './readers-files';
import { arrowStreamBytes, expectedRows, makeColumns, parquetBytes } from './tables-data';

describe('plumber-data readers over the record and table formats', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => (t = tempDir()));
  afterEach(() => t.remove());

  it("tfrecord reads records written by writeTfRecord, gzip'd or not, decoded as Examples, the same in worker threads", async () => {
    const text = (k: number, i: number): Uint8Array => new TextEncoder().encode(`shard ${k} record ${i}`);
    await writeTfRecord(
      join(t.dir, 'a-0.tfrecord'),
      [0, 1, 2].map((i) => text(0, i)),
    );
    await writeTfRecord(
      join(t.dir, 'a-1.tfrecord.gz'),
      [0, 1].map((i) => text(1, i)),
    );
    const pattern = join(t.dir, 'a-*');
    const decoded = (rs: Uint8Array[]): string[] => rs.map((r) => new TextDecoder().decode(r));
    const { tracer, value } = traced(() => tfrecord(pattern, { parallelism: 2 }));
    assert.deepEqual(decoded(await value.toArray()), ['shard 0 record 0', 'shard 1 record 0', 'shard 0 record 1', 'shard 1 record 1', 'shard 0 record 2']);
    assert.equal(tracer.only('tfrecord').counters.shardsOpened, 2);
    assert.deepEqual(decoded(await tfrecord(pattern, { parallelism: 2, placement: 'worker' }).toArray()), decoded(await value.toArray()));

    await writeTfRecord(join(t.dir, 'ex.tfrecord'), [encodeExample({ label: BigInt64Array.of(3n), score: Float32Array.of(0.5) })]);
    const [ex] = await tfrecord(join(t.dir, 'ex.tfrecord'), { decode: 'example', placement: 'worker' }).toArray();
    assert.deepEqual([...(ex.label as BigInt64Array)], [3n]);
    assert.deepEqual([...(ex.score as Float32Array)], [0.5]);
  });

  it('webdataset reads tar shards made by tar, each sample once per pass, in a new shard order each pass with shuffleShards', async () => {
    for (let k = 0; k < 4; k++) {
      const dir = join(t.dir, `src-${k}`);
      mkdirSync(dir);
      for (let i = 0; i < 2; i++) {
        writeFileSync(join(dir, `s${k}${i}.cls`), String(k * 10 + i));
        writeFileSync(join(dir, `s${k}${i}.txt`), `sample ${k}.${i}`);
      }
      execFileSync('tar', ['-cf', join(t.dir, `shard-${k}.tar`), '--sort=name', '-C', dir, '.']);
    }
    const pattern = join(t.dir, 'shard-*.tar');
    const labels = async (ds: ReturnType<typeof webdataset>): Promise<number[]> => (await ds.toArray()).map((s) => Number(new TextDecoder().decode(s.cls as Uint8Array)));
    assert.deepEqual(await labels(webdataset(pattern)), [0, 1, 10, 11, 20, 21, 30, 31]);
    assert.deepEqual(await labels(webdataset(pattern, { parallelism: 2, placement: 'worker' })), [0, 10, 1, 11, 20, 30, 21, 31]);
    const ds = webdataset(pattern, { shuffleShards: 7 });
    const passes = [await labels(ds), await labels(ds), await labels(ds)];
    for (const p of passes)
      assert.deepEqual(
        [...p].sort((a, b) => a - b),
        [0, 1, 10, 11, 20, 21, 30, 31],
      );
    assert.ok(
      passes.some((p) => p.join() !== passes[0].join()),
      'every pass read the shards in the same order',
    );
    // The same seed gives the same orders on a new dataset.
    const again = webdataset(pattern, { shuffleShards: 7 });
    assert.deepEqual([await labels(again), await labels(again), await labels(again)], passes);
  });

  it('parquet and arrow read their shards as rows or batches, projected, the same in worker threads', async () => {
    const a = makeColumns(1500, 1);
    const b = makeColumns(700, 2);
    writeFileSync(join(t.dir, 't-0.parquet'), await parquetBytes(a, 'SNAPPY', 500));
    writeFileSync(join(t.dir, 't-1.parquet'), await parquetBytes(b, 'GZIP', 500));
    const want = [...expectedRows(a, ['id', 'name']), ...expectedRows(b, ['id', 'name'])];
    assert.deepEqual(await parquet(join(t.dir, 't-*.parquet'), { columns: ['id', 'name'] }).toArray(), want);
    assert.deepEqual(await parquet(join(t.dir, 't-*.parquet'), { columns: ['id', 'name'], placement: 'worker' }).toArray(), want);
    const batches = await parquet(join(t.dir, 't-*.parquet'), { as: 'batches' }).toArray();
    assert.deepEqual(
      batches.map((x) => x.numRows),
      [500, 500, 500, 500, 200],
    );

    writeFileSync(join(t.dir, 'u-0.arrows'), await arrowStreamBytes(a, 400));
    writeFileSync(join(t.dir, 'u-1.arrows'), await arrowStreamBytes(b, 400));
    const rows = [...expectedRows(a), ...expectedRows(b)];
    assert.deepEqual(await arrow(join(t.dir, 'u-*.arrows')).toArray(), rows);
    assert.deepEqual(await arrow(join(t.dir, 'u-*.arrows'), { placement: 'worker' }).toArray(), rows);
  });
});
