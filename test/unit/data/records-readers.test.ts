import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeExample, FormatError, PipelineError, tfrecord, webdataset, type Example, type WebDatasetSample } from 'plumber-data';
import { traced } from './helpers';
import { TestServer } from './http-server';
import { hex, python } from './records-helpers';

/** The failure of a pass: a PipelineError whose cause is the format's FormatError. */
async function failure(run: Promise<unknown>): Promise<{ error: PipelineError; cause: FormatError }> {
  try {
    await run;
  } catch (e) {
    assert.ok(e instanceof PipelineError, `expected a PipelineError, got ${String(e)}`);
    assert.ok(e.cause instanceof FormatError, `expected a FormatError cause, got ${String(e.cause)}`);
    return { error: e, cause: e.cause };
  }
  assert.fail('the pass did not fail');
}

describe('records: tfrecord() and webdataset() readers', () => {
  let dir: string;
  /** Each TFRecord shard's records (hex), as Python wrote them. */
  const records: string[][] = [];
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'plumber-records-readers-'));
    for (let s = 0; s < 3; s++) records.push(python<string[]>('write', join(dir, `part-${s}.tfrecord`), String(s + 10)));
    // gzip's command line compresses one shard (the reader inflates it by its extension).
    execFileSync('gzip', ['-f', join(dir, 'part-2.tfrecord')]);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const placement of ['main', 'worker'] as const) {
    it(`reads TFRecord shards written by Python, plain and gzip'd, one after another (${placement})`, async () => {
      const got = await tfrecord('part-*', { cwd: dir, placement }).toArray();
      assert.deepEqual(got.map(hex), records.flat());
      assert.ok(got.every((r) => Object.getPrototypeOf(r) === Uint8Array.prototype));
    });

    it(`interleaves shards one record at a time with parallelism 2, losing none (${placement})`, async () => {
      const got = (await tfrecord('part-*', { cwd: dir, parallelism: 2, placement }).toArray()).map(hex);
      assert.deepEqual(got.slice(0, 6), [records[0][0], records[1][0], records[0][1], records[1][1], records[0][2], records[1][2]]);
      assert.deepEqual([...got].sort(), records.flat().sort());
    });
  }

  it('decodes tf.train.Examples through the reader, in worker threads too', async () => {
    const reference = python<{ hex: string }[]>('example');
    const path = join(dir, 'examples.tfrecord');
    const { writeTfRecord } = await import('plumber-data');
    await writeTfRecord(
      path,
      reference.map((r) => Buffer.from(r.hex, 'hex')),
    );
    const expected = reference.map((r) => decodeExample(Uint8Array.from(Buffer.from(r.hex, 'hex'))));
    for (const placement of ['main', 'worker'] as const) {
      const got: Example[] = await tfrecord(path, { decode: 'example', placement }).toArray();
      assert.deepEqual(got, expected);
      assert.ok(got[1].big instanceof BigInt64Array);
      // Plain Uint8Arrays on either side of a worker crossing, never Buffers on one side only.
      assert.equal(Object.getPrototypeOf((got[0].image as Uint8Array[])[0]), Uint8Array.prototype);
    }
  });

  it('fails a pass on a corrupt record, naming the file, record and offset, after delivering the records before it', async () => {
    const bytes = readFileSync(join(dir, 'part-0.tfrecord'));
    const at = records[0].slice(0, 2).reduce((n, r) => n + 16 + r.length / 2, 0);
    bytes[at + 12 + 1] ^= 0xff; // record 3's data (it holds 11 bytes)
    const path = join(dir, 'corrupt.tfrecord');
    writeFileSync(path, bytes);
    const seen: string[] = [];
    const { cause } = await failure(tfrecord(path).forEach((r) => void seen.push(hex(r))));
    assert.equal(cause.location, path);
    assert.equal(cause.position, `record 3 at byte ${at}`);
    assert.deepEqual(seen, records[0].slice(0, 2));
    assert.equal((await tfrecord(path, { verify: false }).toArray()).length, records[0].length);
  });

  it('reads TFRecord and WebDataset shards over HTTP, resuming a dropped connection, in shard order', async () => {
    const server = await new TestServer().start();
    try {
      const tar = join(dir, 'http.tar.gz');
      mkdirSync(join(dir, 'http-src', 'train'), { recursive: true });
      for (let i = 0; i < 40; i++) writeFileSync(join(dir, 'http-src', 'train', `${String(i).padStart(3, '0')}.bin`), Buffer.alloc(5000, i));
      execFileSync('tar', ['-czf', tar, '--sort=name', '-C', join(dir, 'http-src'), 'train']);
      server.files.set('s/part-0.tfrecord', readFileSync(join(dir, 'part-0.tfrecord')));
      server.files.set('s/part-2.tfrecord.gz', readFileSync(join(dir, 'part-2.tfrecord.gz')));
      server.files.set('s/train.tar.gz', readFileSync(tar));
      server.faults.set('s/part-0.tfrecord', { dropAfter: [100_000] });
      const http = { retryDelayMs: 1 };
      const got = await tfrecord([server.url('s/part-0.tfrecord'), server.url('s/part-2.tfrecord.gz')], { http }).toArray();
      assert.deepEqual(got.map(hex), [...records[0], ...records[2]]);
      assert.equal(server.hits('s/part-0.tfrecord').length, 2, 'the dropped connection was resumed by a second request');
      const samples = await webdataset(server.url('s/train.tar.gz'), { http }).toArray();
      assert.deepEqual(
        samples.map((s) => [s.__key__, (s.bin as Uint8Array).length, (s.bin as Uint8Array)[0]]),
        Array.from({ length: 40 }, (_, i) => [`train/${String(i).padStart(3, '0')}`, 5000, i]),
      );
      assert.equal(samples[0].__url__, server.url('s/train.tar.gz'));
    } finally {
      await server.stop();
    }
  });

  describe('webdataset()', () => {
    let shardDir: string;
    before(() => {
      shardDir = join(dir, 'wds');
      for (let s = 0; s < 6; s++) {
        const src = join(dir, `src-${s}`, 'train');
        mkdirSync(src, { recursive: true });
        for (let i = 0; i < 5; i++) {
          writeFileSync(join(src, `${s}${i}.txt`), `shard ${s} sample ${i}`);
          writeFileSync(join(src, `${s}${i}.cls`), String(i));
        }
        mkdirSync(shardDir, { recursive: true });
        // Three shards as plain tar, three made with tar czf.
        const name = s < 3 ? `shard-${s}.tar` : `shard-${s}.tar.gz`;
        execFileSync('tar', [s < 3 ? '-cf' : '-czf', join(shardDir, name), '-C', join(dir, `src-${s}`), '--sort=name', 'train']);
      }
    });

    const text = (s: WebDatasetSample): string => new TextDecoder().decode(s.txt as Uint8Array);

    it('reads tar and tar.gz shards made by GNU tar into keyed samples, in worker threads too', async () => {
      for (const placement of ['main', 'worker'] as const) {
        const got = await webdataset('shard-*', { cwd: shardDir, placement }).toArray();
        assert.equal(got.length, 30);
        assert.deepEqual(
          got.slice(0, 2).map((s) => [s.__key__, text(s), new TextDecoder().decode(s.cls as Uint8Array)]),
          [
            ['train/00', 'shard 0 sample 0', '0'],
            ['train/01', 'shard 0 sample 1', '1'],
          ],
        );
        assert.ok(got[29].__url__.endsWith('shard-5.tar.gz'));
      }
    });

    it('reads the shards in a new seeded order each pass with shuffleShards, every sample once a pass', async () => {
      const shardsOf = (samples: WebDatasetSample[]): string[] => [...new Set(samples.map((s) => s.__url__.replace(/^.*shard-(\d).*$/, '$1')))];
      const twoPasses = await webdataset('shard-*', { cwd: shardDir, shuffleShards: 7 }).repeat(2).toArray();
      const [first, second] = [twoPasses.slice(0, 30), twoPasses.slice(30)];
      assert.deepEqual(first.map(text).sort(), second.map(text).sort());
      assert.notDeepEqual(shardsOf(first), shardsOf(second));
      assert.notDeepEqual(shardsOf(first), ['0', '1', '2', '3', '4', '5']);
      const again = await webdataset('shard-*', { cwd: shardDir, shuffleShards: 7 }).take(30).toArray();
      assert.deepEqual(shardsOf(again), shardsOf(first));
      assert.deepEqual(shardsOf(await webdataset('shard-*', { cwd: shardDir }).toArray()), ['0', '1', '2', '3', '4', '5']);
      // shard(n, i) after the reader: with one seed, the workers split one sequence between them.
      const halves = await Promise.all([0, 1].map((i) => webdataset('shard-*', { cwd: shardDir, shuffleShards: 7 }).shard(2, i).toArray()));
      assert.deepEqual([...halves[0], ...halves[1]].map(text).sort(), first.map(text).sort());
      assert.deepEqual(halves[0].map(text), first.filter((_, k) => k % 2 === 0).map(text));
    });

    it('is an operator of kind webdataset the tracer sees, random when shuffled, with bytes read and parse time', async () => {
      const { tracer, value } = traced(() => webdataset('shard-*', { cwd: shardDir, parallelism: 2, shuffleShards: 3 }));
      assert.equal((await value.toArray()).length, 30);
      const { info, counters } = tracer.only('webdataset');
      assert.equal(info.random, true);
      assert.deepEqual(info.knobs, { parallelism: 2, resolvedParallelism: 2, numShards: 6 });
      assert.equal(counters.shardsOpened, 6);
      assert.ok(counters.diskBytesRead > 0);
      assert.ok((counters.bytesDecompressed ?? 0) > 0);
      assert.ok((counters.parseSeconds ?? 0) > 0);
    });

    it('refuses a shuffleShards that is not a seed', () => {
      assert.throws(() => webdataset('x.tar', { shuffleShards: 1.5 }), /shuffleShards must be a seed/);
      assert.throws(() => tfrecord('x.tfrecord', { decode: 'json' as 'bytes' }), /decode must be 'bytes' or 'example'/);
    });
  });
});
