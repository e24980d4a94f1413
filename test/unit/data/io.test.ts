import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Batch, files, from, lines, range } from 'plumber-data';
import { traced } from './helpers';

const FIXTURES = join(__dirname, '../../fixtures/data');

describe('plumber-data files, lines and cache', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'plumber-data-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads matching files sorted by path, counting bytes and files read', async () => {
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'b.bin'), Buffer.from([1, 2, 3]));
    writeFileSync(join(dir, 'a.bin'), Buffer.from([9]));
    writeFileSync(join(dir, 'sub', 'c.bin'), Buffer.alloc(100, 7));
    writeFileSync(join(dir, 'skip.txt'), 'not matched');
    const { tracer, value } = traced(() => files('**/*.bin', { cwd: dir, parallelism: 2 }));
    const got = await value.toArray();
    assert.deepEqual(
      got.map((f) => f.path),
      [join(dir, 'a.bin'), join(dir, 'b.bin'), join(dir, 'sub', 'c.bin')],
    );
    assert.deepEqual([...got[1].bytes], [1, 2, 3]);
    const { info, counters } = tracer.only('files');
    assert.equal(info.placement, 'libuv');
    // A traced files() knows how many files it will read, so a cache after it can be sized.
    assert.equal(info.cardinality, 3);
    assert.equal(counters.filesRead, 3);
    assert.equal(counters.diskBytesRead, 104);
    assert.equal(counters.produced, 3);
  });

  it('reads text or only paths when asked', async () => {
    writeFileSync(join(dir, 'x.txt'), 'héllo');
    assert.deepEqual(await files('*.txt', { cwd: dir, read: 'text' }).toArray(), [{ path: join(dir, 'x.txt'), text: 'héllo' }]);
    assert.deepEqual(await files([join(dir, '*.txt')], { read: 'path' }).toArray(), [join(dir, 'x.txt')]);
  });

  it('reads a list of file names as given, with globs, escapes, duplicates and names that match nothing', async () => {
    mkdirSync(join(dir, 'sub'));
    for (const name of ['b.txt', 'a.txt', 'c.txt', 'x[1].txt', join('sub', 'd.txt')]) writeFileSync(join(dir, name), name);
    const list = ['c.txt', join(dir, 'a.txt'), 'sub/*.txt', 'missing.txt', 'sub', 'c.txt', 'x\\[1\\].txt'];
    const { tracer, value } = traced(() => files(list, { cwd: dir, read: 'text' }));
    const got = await value.toArray();
    // Each file once, sorted by path: a directory and a missing name match nothing, as in a glob.
    assert.deepEqual(
      got.map((f) => f.path),
      [join(dir, 'a.txt'), join(dir, 'c.txt'), join(dir, 'sub', 'd.txt'), join(dir, 'x[1].txt')],
    );
    assert.deepEqual(
      got.map((f) => f.text),
      ['a.txt', 'c.txt', join('sub', 'd.txt'), 'x[1].txt'],
    );
    assert.equal(tracer.only('files').info.cardinality, 4);
    assert.deepEqual(await files(['b.txt'], { cwd: dir, read: 'path' }).toArray(), [join(dir, 'b.txt')]);
  });

  it('streams lines of several files, dropping \\r and keeping a last line without newline', async () => {
    const { tracer, value } = traced(() => lines('lines-*.txt', { cwd: FIXTURES }));
    assert.deepEqual(await value.toArray(), ['alpha', 'beta', 'gamma', 'delta', 'epsilon']);
    const { counters } = tracer.only('lines');
    assert.equal(counters.filesRead, 2);
    assert.equal(counters.diskBytesRead, 'alpha\nbeta\n'.length + 'gamma\r\ndelta\r\nepsilon'.length);
  });

  it('streams a file larger than one read block line by line', async () => {
    const text = Array.from({ length: 20_000 }, (_, i) => `line ${i} ${'x'.repeat(i % 13)}`).join('\n');
    writeFileSync(join(dir, 'big.txt'), text);
    const got = await lines(join(dir, 'big.txt')).toArray();
    assert.equal(got.length, 20_000);
    assert.equal(got.join('\n'), text);
  });

  it('keeps a memory cache of the first complete pass and serves later passes from it', async () => {
    let calls = 0;
    const { tracer, value } = traced(() =>
      range(5)
        .map((x) => {
          calls++;
          return x * 2;
        })
        .cache(),
    );
    assert.deepEqual(await value.toArray(), [0, 2, 4, 6, 8]);
    assert.deepEqual(await value.toArray(), [0, 2, 4, 6, 8]);
    assert.equal(calls, 5);
    assert.equal(tracer.only('cache').counters.cacheHits, 5);
  });

  it('does not keep a partial memory cache when a pass stops early', async () => {
    let calls = 0;
    const ds = range(5)
      .map((x) => {
        calls++;
        return x;
      })
      .cache();
    assert.deepEqual(await ds.take(2).toArray(), [0, 1]);
    assert.deepEqual(await ds.toArray(), [0, 1, 2, 3, 4]);
    assert.equal(calls, 2 + 5);
  });

  it('round-trips a disk cache exactly: numbers, strings, typed arrays, objects and batches', async () => {
    const path = join(dir, 'cache', 'train.cache');
    const els = [
      { id: 1, name: 'one', img: new Uint8Array([1, 2, 3]), v: new Float64Array([0.1, -2.5e300]) },
      { id: 2, name: 'twø', img: new Uint8Array([4, 5, 6]), v: new Float64Array([NaN, Infinity]) },
    ];
    let calls = 0;
    const ds = from(els)
      .map((x) => {
        calls++;
        return x;
      })
      .cache(path);
    const first = await ds.toArray();
    assert.ok(existsSync(path));
    const { tracer, value } = traced(() => from(els).cache(path));
    const second = await value.toArray();
    assert.deepEqual(second, first);
    assert.ok(second[0].img instanceof Uint8Array && second[1].v instanceof Float64Array);
    assert.equal(calls, 2);
    const { counters } = tracer.only('cache');
    assert.equal(counters.cacheHits, 2);
    assert.ok(counters.diskBytesRead > 0);

    const bpath = join(dir, 'batches.cache');
    const batches = await range(6)
      .map((i) => new Float32Array([i, -i]))
      .batch(4)
      .cache(bpath)
      .toArray();
    const again = await from([] as unknown[])
      .cache(bpath)
      .toArray();
    assert.ok(again[0] instanceof Batch);
    assert.deepEqual(again, batches);
  });

  it('leaves no partial cache file behind when an epoch is interrupted half-way', async () => {
    const path = join(dir, 'half.cache');
    const ds = range(100).cache(path);
    let n = 0;
    for await (const x of ds) {
      assert.equal(x, n);
      if (++n === 50) break;
    }
    assert.deepEqual(readdirSync(dir), []);
    // The next complete pass writes it.
    assert.equal((await ds.toArray()).length, 100);
    assert.deepEqual(readdirSync(dir), ['half.cache']);
  });

  it('says what to do when a cache file is not one', async () => {
    const path = join(dir, 'junk.cache');
    writeFileSync(path, 'hello');
    await assert.rejects(range(3).cache(path).toArray(), /is not a plumber-data cache file .*Give cache\(\) a path of its own/);
  });
});
