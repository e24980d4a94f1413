import assert from 'node:assert/strict';
import { readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { csv, from, jsonLines, siteKey, type KnobOverride } from 'plumber-data';
import { traced } from './helpers';
import { cycleOrder, gzipFile, tempDir } from './readers-files';

/** Files under `dir` this process holds open. */
function openUnder(dir: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir)) out.push(target);
    } catch {
      // Closed while listing.
    }
  }
  return out;
}

/** Worker threads alive in this process (each one is a thread of the process). */
function threads(): number {
  return readdirSync('/proc/self/task').length;
}

/** Waits until `check` holds (threads end asynchronously after terminate()), up to 5 s. */
async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(check(), what);
}

describe('plumber-data readers: the reader op', () => {
  let t: ReturnType<typeof tempDir>;
  /** Shard k holds rows {s: k, i: 0…sizes[k]-1}. */
  const sizes = [5, 2, 4, 3];
  let pattern: string;
  beforeEach(() => {
    t = tempDir();
    sizes.forEach((n, k) => writeFileSync(join(t.dir, `part-${k}.jsonl`), Array.from({ length: n }, (_, i) => JSON.stringify({ s: k, i }) + '\n').join('')));
    gzipFile(join(t.dir, 'part-3.jsonl'));
    pattern = join(t.dir, 'part-*.jsonl');
  });
  afterEach(() => t.remove());

  const keys = (rows: { s: number; i: number }[]): string[] => rows.map((r) => `${r.s}:${r.i}`);

  for (const placement of ['main', 'worker'] as const) {
    it(`interleaves parallelism shards one element at a time in shard order (${placement})`, async () => {
      for (const p of [1, 2, 3]) {
        const got = keys(await jsonLines<{ s: number; i: number }>(pattern, { parallelism: p, placement }).toArray());
        assert.deepEqual(got, cycleOrder(sizes, p), `parallelism ${p}`);
      }
      // p = 2 with these shards (sizes 5, 2, 4, 3), as interleave(cycleLength 2) orders them.
      assert.deepEqual(cycleOrder(sizes, 2), ['0:0', '1:0', '0:1', '1:1', '0:2', '0:3', '2:0', '0:4', '2:1', '2:2', '3:0', '2:3', '3:1', '3:2']);
    });
  }

  it('splits its elements with shard(n, i) into disjoint parts that hold every element once', async () => {
    const all = keys(await jsonLines<{ s: number; i: number }>(pattern, { parallelism: 2 }).toArray());
    const parts = await Promise.all([0, 1, 2].map((i) => jsonLines<{ s: number; i: number }>(pattern, { parallelism: 2 }).shard(3, i).toArray()));
    parts.forEach((part, i) =>
      assert.deepEqual(
        keys(part),
        all.filter((_, k) => k % 3 === i),
      ),
    );
    assert.deepEqual(parts.flatMap(keys).sort(), [...all].sort());
  });

  it('reads shards inside an interleave, each inner reader one shard, in interleave order', async () => {
    const paths = sizes.map((_, k) => join(t.dir, `part-${k}.jsonl`));
    const got = await from(paths)
      .interleave((p) => jsonLines<{ s: number; i: number }>(p), { cycleLength: 2, parallelism: 2 })
      .toArray();
    assert.deepEqual(keys(got), cycleOrder(sizes, 2));
    // The same order as the reader's own parallelism.
    assert.deepEqual(keys(await jsonLines<{ s: number; i: number }>(pattern, { parallelism: 2 }).toArray()), keys(got));
  });

  it('rejects what it cannot read at build time: an unknown option, a bad compression, placement or delimiter', () => {
    assert.throws(() => csv('a.csv', { paralelism: 2 } as never), /unknown option 'paralelism'/);
    assert.throws(() => jsonLines('a.jsonl', { compression: 'zip' as never }), /compression must be one of auto, gzip, brotli, none/);
    assert.throws(() => jsonLines('a.jsonl', { placement: 'gpu' as never }), /placement must be 'main' or 'worker'/);
    assert.throws(() => csv('a.csv', { delimiter: '||' }), /one-character delimiter/);
    assert.throws(() => csv('a.csv', { parallelism: 0 }), /parallelism must be a number >= 1/);
  });

  it('fails the pass naming the pattern when no file matches, rather than reading nothing', async () => {
    await assert.rejects(csv(join(t.dir, 'none-*.csv'), { placement: 'worker' }).toArray(), /none-\*\.csv: no such file matches this pattern/);
  });

  it('counts what it read, parsed and produced, and reports its knobs', async () => {
    const files = sizes.map((_, k) => join(t.dir, `part-${k}.jsonl`));
    const { tracer, value } = traced(() => jsonLines(pattern, { parallelism: 2 }));
    assert.equal((await value.toArray()).length, 14);
    const { info, counters } = tracer.only('jsonLines');
    assert.equal(info.placement, 'main');
    assert.deepEqual(info.knobs, { parallelism: 2, resolvedParallelism: 2, numShards: 4 });
    assert.equal(info.site?.line !== undefined, true);
    assert.equal(counters.produced, 14);
    assert.equal(counters.shardsOpened, 4);
    assert.equal(counters.filesRead, 4);
    const bytes = files.reduce((a, f) => a + statSync(f).size, 0);
    assert.equal(counters.diskBytesRead, bytes);
    assert.equal(counters.sourceBytes, bytes);
    assert.ok((counters.parseSeconds ?? 0) > 0);
    // Waiting is counted only while the thread sits idle with a read outstanding: cached local
    // reads may never leave it idle (a read from a slow server does: tables-readers.test.ts).
    assert.ok((counters.ioWaitSeconds ?? 0) >= 0);
    assert.equal(counters.bytesDecompressed, undefined);
  });

  it("counts a worker placement's reads and parsing, with the workers' CPU", async () => {
    const { tracer, value } = traced(() => jsonLines(pattern, { parallelism: 2, placement: 'worker' }));
    assert.equal((await value.toArray()).length, 14);
    const { info, counters } = tracer.only('jsonLines');
    assert.equal(info.placement, 'worker');
    assert.equal(counters.shardsOpened, 4);
    assert.equal(counters.filesRead, 4);
    assert.ok((counters.parseSeconds ?? 0) > 0);
    assert.ok(counters.workerCpuSeconds > 0);
    // The main thread's share is rebuilding the rows the workers packed by column: part of the parsing.
    assert.ok(counters.selfSeconds <= (counters.parseSeconds ?? 0));
  });

  it('takes parallelism and placement from an override at its call site', async () => {
    // The call site is found by a first traced build; the override then applies at the same site.
    const build = (): ReturnType<typeof csv> => csv(join(t.dir, 'none-*.csv'));
    const site = traced(build).tracer.only('csv').info.site;
    assert.ok(site !== undefined);
    const overrides = new Map<string, KnobOverride>([[siteKey(site), { parallelism: 3, placement: 'worker' }]]);
    const { info } = traced(build, overrides).tracer.only('csv');
    assert.equal(info.placement, 'worker');
    assert.deepEqual(info.knobs, { parallelism: 3, resolvedParallelism: 3 });
    assert.equal(info.overridden, true);
  });

  for (const placement of ['main', 'worker'] as const) {
    it(`closes every file and ends every worker thread when the consumer stops early or the pass fails (${placement})`, async () => {
      // Shards of 2 MB: each worker is mid-file, its reading held by backpressure, when the consumer stops.
      const row = JSON.stringify({ s: 0, i: 0, pad: 'x'.repeat(200) }) + '\n';
      for (let k = 0; k < 3; k++) writeFileSync(join(t.dir, `big-${k}.jsonl`), row.repeat(10_000));
      const before = threads();
      const it = jsonLines(join(t.dir, 'big-*.jsonl'), { parallelism: 3, placement })[Symbol.asyncIterator]();
      assert.equal((await it.next()).done, false);
      assert.ok(openUnder(t.dir).length > 0 || placement === 'worker', 'the shards are open mid-pass');
      await it.return?.();
      await eventually(() => openUnder(t.dir).length === 0 && threads() <= before, `open: ${openUnder(t.dir).join(', ')}; threads ${threads()} vs ${before}`);
      writeFileSync(join(t.dir, 'part-2.jsonl'), '{"s":2,"i":0}\nnot json\n');
      await assert.rejects(jsonLines(pattern, { parallelism: 3, placement }).toArray(), /part-2\.jsonl: line 2: not JSON/);
      await eventually(() => openUnder(t.dir).length === 0 && threads() <= before, `after a failure: open: ${openUnder(t.dir).join(', ')}; threads ${threads()} vs ${before}`);
    });
  }
});
