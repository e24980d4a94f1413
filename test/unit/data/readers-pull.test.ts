/**
 * A reader pulled the ways a pipeline pulls it — one element at a time (a `for await`), a few at a
 * time (a batch) and in bulk (`toArray`) — hands on every element once, in the order its docs give
 * (a cycle of `parallelism` shards, one element from each in turn), on the main thread and on worker
 * threads, whatever the shards' chunks: shards here are long enough for several chunks each, of
 * different lengths, so their buffers run out at different turns.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { jsonLines, type Dataset } from 'plumber-data';
import { cycleOrder, tempDir } from './readers-files';

type Row = { s: number; i: number; pad: string };

/** Where this process's open descriptor on `file` stands, or -1 when it is not open. */
function position(file: string): number {
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === file) return Number(/^pos:\s*(\d+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1] ?? -1);
    } catch {
      // Closed while listing.
    }
  }
  return -1;
}

/** Worker threads alive in this process, as the library counts them. */
const alive = (): number => (globalThis as Record<symbol, { alive: number } | undefined>)[Symbol.for('plumber-data.readerThreads')]?.alive ?? 0;

async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(check(), what);
}
const key = (r: Row): string => `${r.s}:${r.i}`;

describe('plumber-data readers: pulled one, a few or many elements at a time', () => {
  let t: ReturnType<typeof tempDir>;
  /** Several 64 KB chunks in the long shards, none in the short one. */
  const sizes = [2600, 900, 3100, 7, 1500];
  let pattern: string;
  before(() => {
    t = tempDir();
    sizes.forEach((n, k) => {
      const text = Array.from({ length: n }, (_, i) => `${JSON.stringify({ s: k, i, pad: 'x'.repeat((i * 7 + k) % 61) })}\n`).join('');
      writeFileSync(join(t.dir, `part-${k}.jsonl.gz`), gzipSync(text));
    });
    pattern = join(t.dir, 'part-*.jsonl.gz');
  });
  after(() => t.remove());

  const ways: Array<[string, (d: Dataset<Row>) => Promise<string[]>]> = [
    [
      'for await (one at a time)',
      async (d) => {
        const out: string[] = [];
        for await (const r of d) out.push(key(r));
        return out;
      },
    ],
    ['batch(5)', async (d) => (await d.batch(5).toArray()).flatMap((b) => (b as unknown as Row[]).map(key))],
    ['toArray (in bulk)', async (d) => (await d.toArray()).map(key)],
  ];

  for (const placement of ['main', 'worker'] as const)
    for (const [how, read] of ways)
      it(`hands on every element once, in cycle order: ${how}, ${placement}`, async () => {
        for (const p of [2, 3, 5]) {
          const got = await read(jsonLines<Row>(pattern, { parallelism: p, placement }));
          const want = cycleOrder(sizes, p);
          assert.equal(got.length, want.length, `parallelism ${p}: element count`);
          const first = got.findIndex((g, i) => g !== want[i]);
          assert.equal(first, -1, `parallelism ${p}: first difference at element ${first}: got ${got[first]}, want ${want[first]}`);
        }
      });

  it('stops early without losing its place: the elements before a return are the order’s first ones', async () => {
    for (const placement of ['main', 'worker'] as const) {
      const got: string[] = [];
      for await (const r of jsonLines<Row>(pattern, { parallelism: 3, placement })) {
        got.push(key(r));
        if (got.length === 4000) break;
      }
      assert.deepEqual(got, cycleOrder(sizes, 3).slice(0, 4000), placement);
    }
  });

  it('reads ahead only a few chunks of a shard on a worker while the consumer takes nothing, and goes on when it takes again', async () => {
    // 16 MB, uncompressed, so the file's read position is the worker's progress through it.
    const big = join(t.dir, 'big.jsonl');
    const row = `${JSON.stringify({ s: 0, i: 0, pad: 'x'.repeat(200) })}\n`;
    const rows = 75_000;
    writeFileSync(big, row.repeat(rows));
    const it = jsonLines<Row>(big, { placement: 'worker' })[Symbol.asyncIterator]();
    try {
      assert.equal((await it.next()).done, false);
      await new Promise((r) => setTimeout(r, 500));
      const at = position(big);
      assert.ok(at > 0 && at < 4 * 2 ** 20, `read to byte ${at} of ${row.length * rows} while the consumer took one row`);
      let n = 1;
      while (!(await it.next()).done) n++;
      assert.equal(n, rows);
    } finally {
      await it.return?.();
    }
  });

  it('starts the next shard on a worker that has read its own to the end, before the reader gets there, in the same order', async () => {
    // Two small shards, then two of 16 MB: the workers read the small ones whole at once.
    const dir = join(t.dir, 'ahead');
    mkdirSync(dir);
    const row = (s: number, i: number): string => `${JSON.stringify({ s, i, pad: 'x'.repeat(200) })}\n`;
    const sizes = [3, 4, 75_000, 75_000];
    sizes.forEach((n, k) => writeFileSync(join(dir, `part-${k}.jsonl`), Array.from({ length: n }, (_, i) => row(k, i)).join('')));
    const it = jsonLines<Row>(join(dir, 'part-*.jsonl'), { parallelism: 2, placement: 'worker' })[Symbol.asyncIterator]();
    try {
      const first = await it.next();
      assert.equal(first.done, false);
      await eventually(() => position(join(dir, 'part-2.jsonl')) > 0 && position(join(dir, 'part-3.jsonl')) > 0, 'the big shards open while the reader holds the first row of the small ones');
      const got = [key(first.value as Row)];
      for (let r = await it.next(); r.done !== true; r = await it.next()) got.push(key(r.value));
      assert.deepEqual(got, cycleOrder(sizes, 2));
    } finally {
      await it.return?.();
    }
    // Returned early with shards opened ahead: every file closed, and the pass's two threads (kept
    // warm by the pass before, taken again) ended.
    const before = alive();
    const early = jsonLines<Row>(join(dir, 'part-*.jsonl'), { parallelism: 2, placement: 'worker' })[Symbol.asyncIterator]();
    assert.equal((await early.next()).done, false);
    await eventually(() => position(join(dir, 'part-2.jsonl')) > 0, 'shard 2 opened ahead');
    await early.return?.();
    await eventually(() => [2, 3].every((k) => position(join(dir, `part-${k}.jsonl`)) === -1) && alive() <= before - 2, `files or threads left: threads ${alive()}, ${before} before the pass`);
  });

  it('fails at a bad line in a shard opened ahead as the main thread does: the same rows first, then the error naming the file and line', async () => {
    const dir = join(t.dir, 'bad');
    mkdirSync(dir);
    const row = (s: number, i: number): string => `${JSON.stringify({ s, i, pad: 'y' })}\n`;
    const lines = (k: number, n: number): string => Array.from({ length: n }, (_, i) => row(k, i)).join('');
    writeFileSync(join(dir, 'part-0.jsonl'), lines(0, 3));
    writeFileSync(join(dir, 'part-1.jsonl'), lines(1, 40));
    writeFileSync(join(dir, 'part-2.jsonl'), `${lines(2, 5)}not json\n${lines(2, 5)}`);
    writeFileSync(join(dir, 'part-3.jsonl'), lines(3, 50));
    const run = async (placement: 'main' | 'worker'): Promise<{ got: string[]; error: string }> => {
      const got: string[] = [];
      try {
        for await (const r of jsonLines<Row>(join(dir, 'part-*.jsonl'), { parallelism: 2, placement })) got.push(key(r));
      } catch (e) {
        return { got, error: (e as Error).message };
      }
      return { got, error: 'no error' };
    };
    const main = await run('main');
    assert.match(main.error, /part-2\.jsonl: line 6: not JSON/);
    assert.deepEqual(await run('worker'), main);
  });
});
