/**
 * A reader pulled the ways a pipeline pulls it — one element at a time (a `for await`), a few at a
 * time (a batch) and in bulk (`toArray`) — hands on every element once, in the order its docs give
 * (a cycle of `parallelism` shards, one element from each in turn), on the main thread and on worker
 * threads, whatever the shards' chunks: shards here are long enough for several chunks each, of
 * different lengths, so their buffers run out at different turns.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { jsonLines, type Dataset } from 'plumber-data';
import { tempDir } from './readers-files';

/** The documented order over shards of `sizes` elements read `p` at a time: `shard:index` keys. */
function cycleOrder(sizes: number[], p: number): string[] {
  const next = sizes.map(() => 0);
  const out: string[] = [];
  let open = sizes.slice(0, p).map((_, k) => k);
  let nextShard = open.length;
  let turn = 0;
  while (open.length > 0) {
    const i = turn % open.length;
    const k = open[i];
    if (next[k] < sizes[k]) {
      out.push(`${k}:${next[k]++}`);
      turn = i + 1;
    } else if (nextShard < sizes.length) {
      open[i] = nextShard++;
      turn = i + 1;
    } else open = open.filter((_, j) => j !== i);
  }
  return out;
}

type Row = { s: number; i: number; pad: string };
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
    /** Where this process's open descriptor on `big` stands, or -1 when it is not open. */
    const position = (): number => {
      for (const fd of readdirSync('/proc/self/fd')) {
        try {
          if (readlinkSync(`/proc/self/fd/${fd}`) === big) return Number(/^pos:\s*(\d+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1] ?? -1);
        } catch {
          // Closed while listing.
        }
      }
      return -1;
    };
    const it = jsonLines<Row>(big, { placement: 'worker' })[Symbol.asyncIterator]();
    try {
      assert.equal((await it.next()).done, false);
      await new Promise((r) => setTimeout(r, 500));
      const at = position();
      assert.ok(at > 0 && at < 4 * 2 ** 20, `read to byte ${at} of ${row.length * rows} while the consumer took one row`);
      let n = 1;
      while (!(await it.next()).done) n++;
      assert.equal(n, rows);
    } finally {
      await it.return?.();
    }
  });
});
