/**
 * Worker-placed readers with several shards: the same elements in the same order as the reader on
 * the main thread (shards interleaved one element at a time), for every format; threads kept warm
 * from one pass to the next and ended after their linger; a pass returned early or failed ends its
 * threads at once.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { arrow, csv, encodeExample, jsonLines, parquet, tfrecord, webdataset, writeTfRecord, type Dataset } from 'plumber-data';
import { liveHandles } from './helpers';
import { tempDir } from './readers-files';
import { arrowStreamBytes, makeColumns, parquetBytes } from './tables-data';

/** The process's reader threads, as the library counts them (every copy of it loaded shares the count). */
interface Counts {
  started: number;
  alive: number;
  parked: number;
}
const counts = (): Counts => {
  const c = (globalThis as Record<symbol, Counts | undefined>)[Symbol.for('plumber-data.readerThreads')];
  return { started: c?.started ?? 0, alive: c?.alive ?? 0, parked: c?.parked ?? 0 };
};

const LINGER_MS = 300;

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) assert.fail(`${what}: ${JSON.stringify(counts())}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The reader on the main thread and on worker threads, p shards at once: the same elements in the same order, keys in the same order. */
async function sameAsMain<T>(make: (o: { parallelism: number; placement: 'main' | 'worker' }) => Dataset<T>, shards: number): Promise<T[]> {
  let last: T[] = [];
  for (let p = 2; p <= Math.min(4, shards); p++) {
    const main = await make({ parallelism: p, placement: 'main' }).toArray();
    const worker = await make({ parallelism: p, placement: 'worker' }).toArray();
    assert.equal(worker.length, main.length, `parallelism ${p}: element count`);
    assert.deepStrictEqual(worker, main, `parallelism ${p}`);
    for (let i = 0; i < main.length; i++) {
      const m = main[i];
      if (typeof m === 'object' && m !== null && !ArrayBuffer.isView(m)) assert.deepEqual(Object.keys(worker[i] as object), Object.keys(m), `parallelism ${p}, element ${i}: keys`);
    }
    last = main;
  }
  return last;
}

describe('plumber-data readers on worker threads, several shards at once', () => {
  let t: ReturnType<typeof tempDir>;
  let linger: string | undefined;
  before(() => {
    linger = process.env.PLUMBER_READER_LINGER_MS;
    process.env.PLUMBER_READER_LINGER_MS = String(LINGER_MS);
  });
  after(() => {
    if (linger === undefined) delete process.env.PLUMBER_READER_LINGER_MS;
    else process.env.PLUMBER_READER_LINGER_MS = linger;
  });
  beforeEach(() => (t = tempDir()));
  afterEach(() => t.remove());

  /** Shard k of `n` rows each made by `row`, sizes differing so shards end at different turns. */
  const sizes = [700, 300, 1100, 5];

  it('csv: typed rows by header, and arrays without one, the same as on the main thread', async () => {
    const cats = ['a', 'b "q"', 'c, d', 'é€😀', ''];
    sizes.forEach((n, k) => {
      const lines = ['id,x,cat,ok'];
      for (let i = 0; i < n; i++) lines.push(`${k * 10000 + i},${i % 13 === 0 ? '-0' : (i * 0.37).toFixed(3)},"${cats[i % cats.length].replace(/"/g, '""')}",${i % 3 === 0}`);
      writeFileSync(join(t.dir, `c-${k}.csv.gz`), gzipSync(`${lines.join('\n')}\n`));
    });
    const pattern = join(t.dir, 'c-*.csv.gz');
    const schema = { id: 'int', x: 'number', cat: 'string', ok: 'boolean' } as const;
    const rows = await sameAsMain((o) => csv(pattern, { schema, ...o }), 4);
    assert.equal(rows.length, 2105);
    assert.deepEqual(rows.slice(0, 3), [
      { id: 0, x: -0, cat: 'a', ok: true },
      { id: 10000, x: -0, cat: 'a', ok: true },
      { id: 20000, x: -0, cat: 'a', ok: true },
    ]);
    await sameAsMain((o) => csv(pattern, { header: false, ...o }), 4);
  });

  it('jsonLines: uniform objects, mixed keys, nested values and a __proto__ key, the same as on the main thread', async () => {
    sizes.forEach((n, k) => {
      const lines: string[] = [];
      for (let i = 0; i < n; i++) {
        if (k === 1 && i % 50 === 7) lines.push(JSON.stringify({ b: i, a: 'swapped' }));
        else if (k === 2 && i === 900) lines.push(`{"__proto__": {"polluted": true}, "a": ${i}}`);
        else if (k === 2 && i % 100 === 5) lines.push(JSON.stringify([i, { nested: [i] }]));
        else lines.push(JSON.stringify({ a: i % 11 === 0 ? -0 : i, s: `s${i}-😀`, f: i % 2 === 0, n: i % 9 === 0 ? null : i / 4, o: { k, i } }));
      }
      writeFileSync(join(t.dir, `j-${k}.jsonl`), `${lines.join('\n')}\n`);
    });
    const values = await sameAsMain((o) => jsonLines<Record<string, unknown>>(join(t.dir, 'j-*.jsonl'), o), 4);
    assert.equal(values.length, 2105);
    const proto = values.find((v) => !Array.isArray(v) && Object.hasOwn(v, '__proto__'));
    assert.ok(proto !== undefined && Object.getPrototypeOf(proto) === Object.prototype, 'the __proto__ key is an own key, as JSON.parse makes it');
  });

  it('tfrecord (bytes and Examples) and webdataset, the same as on the main thread', async () => {
    for (let k = 0; k < 3; k++) {
      const records = Array.from({ length: sizes[k] }, (_, i) => new TextEncoder().encode(`shard ${k} record ${i}`));
      await writeTfRecord(join(t.dir, `r-${k}.tfrecord.gz`), records);
      const examples = Array.from({ length: sizes[k] }, (_, i) => encodeExample({ id: BigInt64Array.of(BigInt(k * 10000 + i)), x: Float32Array.of(i / 8, -i), name: [`n${i}`] }));
      await writeTfRecord(join(t.dir, `e-${k}.tfrecord`), examples);
      const dir = join(t.dir, `src-${k}`);
      mkdirSync(dir);
      for (let i = 0; i < 40 + k * 30; i++) {
        writeFileSync(join(dir, `s${k}-${String(i).padStart(3, '0')}.cls`), String(k * 1000 + i));
        writeFileSync(join(dir, `s${k}-${String(i).padStart(3, '0')}.txt`), `sample ${k}.${i}`);
      }
      execFileSync('tar', ['-cf', join(t.dir, `w-${k}.tar`), '--sort=name', '-C', dir, '.']);
    }
    assert.equal((await sameAsMain((o) => tfrecord(join(t.dir, 'r-*'), o), 3)).length, 2100);
    assert.equal((await sameAsMain((o) => tfrecord(join(t.dir, 'e-*'), { decode: 'example', ...o }), 3)).length, 2100);
    assert.equal((await sameAsMain((o) => webdataset(join(t.dir, 'w-*.tar'), o), 3)).length, 40 + 70 + 100);
  });

  it('parquet and arrow: rows (strings with and without nulls, booleans, 64-bit ints) and batches, the same as on the main thread', async () => {
    for (let k = 0; k < 3; k++) {
      const cols = makeColumns(sizes[k], k + 1);
      const noNulls = { ...cols, name: cols.name.map((n) => n ?? 'none') };
      writeFileSync(join(t.dir, `p-${k}.parquet`), await parquetBytes(k === 1 ? noNulls : cols, 'SNAPPY', 500));
      writeFileSync(join(t.dir, `a-${k}.arrows`), await arrowStreamBytes(k === 1 ? cols : noNulls, 400));
    }
    assert.equal((await sameAsMain((o) => parquet(join(t.dir, 'p-*.parquet'), o), 3)).length, 2100);
    await sameAsMain((o) => parquet(join(t.dir, 'p-*.parquet'), { columns: ['name', 'id'], ...o }), 3);
    await sameAsMain((o) => parquet(join(t.dir, 'p-*.parquet'), { as: 'batches', ...o }), 3);
    assert.equal((await sameAsMain((o) => arrow(join(t.dir, 'a-*.arrows'), o), 3)).length, 2100);
    await sameAsMain((o) => arrow(join(t.dir, 'a-*.arrows'), { as: 'batches', ...o }), 3);
  });

  /** Four CSV shards of 2,000 rows. */
  const fourShards = (): string => {
    for (let k = 0; k < 4; k++) writeFileSync(join(t.dir, `s-${k}.csv`), `i\n${Array.from({ length: 2000 }, (_, i) => k * 10000 + i).join('\n')}\n`);
    return join(t.dir, 's-*.csv');
  };

  it('keeps its threads warm from one pass to the next, without holding the process, and ends them after the linger', async () => {
    const pattern = fourShards();
    await until('threads of earlier tests ended', () => counts().parked === 0 && counts().alive === 0);
    const c0 = counts();
    const threadHandles = (): number => liveHandles().filter((h) => h === 'Worker' || h === 'MessagePort').length;
    const handles0 = threadHandles();
    const ds = csv(pattern, { parallelism: 2, placement: 'worker' });
    const first = await ds.toArray();
    assert.equal(first.length, 8000);
    const c1 = counts();
    assert.equal(c1.started - c0.started, 2, 'a first pass starts one thread per shard read at once');
    assert.equal(c1.parked, 2, 'a pass read to its end parks its threads');
    assert.equal(threadHandles(), handles0, `a parked thread holds the process: ${liveHandles().join(', ')}`);
    // A second pass, and another reader of the same kind: no thread started.
    assert.deepEqual(await ds.toArray(), first);
    assert.equal((await csv(pattern, { parallelism: 2, placement: 'worker', schema: { i: 'string' } }).toArray())[0].i, '0');
    const c2 = counts();
    assert.equal(c2.started, c1.started, 'later passes start no thread');
    assert.equal(c2.parked, 2);
    await until('parked threads ended after the linger', () => counts().parked === 0 && counts().alive === c0.alive, LINGER_MS + 5000);
  });

  it('ends its threads at once when a pass is returned early or fails, naming the file and line', async () => {
    const pattern = fourShards();
    await until('threads of earlier tests ended', () => counts().parked === 0 && counts().alive === 0);
    const c0 = counts();
    let n = 0;
    for await (const row of csv(pattern, { parallelism: 3, placement: 'worker' })) {
      assert.ok(row !== undefined);
      if (++n === 5) break;
    }
    assert.deepEqual({ alive: counts().alive, parked: counts().parked }, { alive: c0.alive, parked: 0 }, 'a returned pass left a thread');

    writeFileSync(join(t.dir, 's-2.csv'), `i\n${Array.from({ length: 1500 }, (_, i) => i).join('\n')}\n1,2\n3\n`);
    await assert.rejects(csv(pattern, { parallelism: 2, placement: 'worker', schema: { i: 'int' } }).toArray(), /s-2\.csv.*line 1502/);
    assert.deepEqual({ alive: counts().alive, parked: counts().parked }, { alive: c0.alive, parked: 0 }, 'a failed pass left a thread');
  });
});
