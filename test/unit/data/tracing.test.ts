import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuClockKind, DATASET_KEY, from, lines, range, threadCpuSeconds, type CallSite } from 'plumber-data';
import { roundsFor, spin, traced, whileTraced } from './helpers';

const SITES = join(__dirname, '../../fixtures/data/sites.ts');

/** The 1-based position of the n-th occurrence of `needle` (a method name) in the fixture's text. */
function positionOf(needle: string, nth = 1): { line: number; column: number } {
  const lines = readFileSync(SITES, 'utf8').split('\n');
  let seen = 0;
  for (let l = 0; l < lines.length; l++) {
    const re = new RegExp(`(?<![\\w$])${needle}(?=\\()`, 'g');
    let m: RegExpExecArray | null;
    while ((m = re.exec(lines[l])) !== null) if (++seen === nth) return { line: l + 1, column: m.index + 1 };
  }
  throw new Error(`${needle} #${nth} not in the fixture`);
}

function site(s: CallSite | undefined): { line: number; column: number } {
  assert.ok(s !== undefined, 'no call site captured');
  assert.equal(s.file, SITES);
  return { line: s.line, column: s.column };
}

describe('plumber-data tracing', () => {
  it('records each operator’s call site at its method name, across a chain split over lines', async () => {
    const fixture = (await import(SITES)) as typeof import('../../fixtures/data/sites');
    const { tracer, value } = traced(() => fixture.chain());
    const byKind = (k: string) => tracer.only(k).info;
    assert.deepEqual(site(byKind('from').site), positionOf('from'));
    assert.deepEqual(site(byKind('map').site), positionOf('map'));
    assert.deepEqual(site(byKind('filter').site), positionOf('filter'));
    assert.deepEqual(site(byKind('batch').site), positionOf('batch'));
    assert.equal(byKind('map').key, `map@${SITES}:${positionOf('map').line}:${positionOf('map').column}`);
    assert.deepEqual(byKind('batch').inputs, [byKind('filter').key]);
    assert.equal(value[DATASET_KEY], byKind('batch').key);
    assert.deepEqual(await value.toArray(), [[4, 6], [8]]);
  });

  it('tells apart operators on one line and sources nested in arguments', async () => {
    const fixture = (await import(SITES)) as typeof import('../../fixtures/data/sites');
    const one = traced(() => fixture.oneLine()).tracer;
    assert.deepEqual(site(one.only('range').info.site), positionOf('range', 1));
    assert.deepEqual(site(one.only('map').info.site), positionOf('map', 2));
    assert.deepEqual(site(one.only('take').info.site), positionOf('take'));
    const nested = traced(() => fixture.nested()).tracer;
    assert.deepEqual(site(nested.only('zip').info.site), positionOf('zip', 1));
    assert.deepEqual(site(nested.only('range').info.site), positionOf('range', 2));
    assert.deepEqual(site(nested.only('from').info.site), positionOf('from', 2));
    assert.deepEqual(site(nested.only('prefetch').info.site), positionOf('prefetch'));
    assert.deepEqual(nested.only('zip').info.inputs, [nested.only('range').info.key, nested.only('from').info.key]);
  });

  it('finds call sites in files whose path has spaces and parentheses', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'plumber-sites-')), 'my data (copy)');
    mkdirSync(dir);
    symlinkSync(join(__dirname, '../../../node_modules'), join(dir, 'node_modules'));
    const file = join(dir, 'pipe line.ts');
    writeFileSync(file, "import { range } from 'plumber-data';\nexport const build = () =>\n  range(4)\n    .map((x) => x);\n");
    try {
      const mod = (await import(file)) as { build: () => unknown };
      const { tracer } = traced(() => mod.build());
      assert.deepEqual(tracer.only('range').info.site, { file, line: 3, column: 3 });
      assert.deepEqual(tracer.only('map').info.site, { file, line: 4, column: 6 });
    } finally {
      rmSync(dirname(dir), { recursive: true, force: true });
    }
  });

  it('describes operators: knobs, cardinality, fn and randomness', async () => {
    async function decode(x: number): Promise<number> {
      return x;
    }
    const { tracer, value } = traced(() =>
      range(10)
        .map(decode, { parallelism: 4 })
        .map((x, ctx) => x + ctx.rng.int(3))
        .shuffle(4, { seed: 1 })
        .batch(3, { dropRemainder: true })
        .repeat()
        .prefetch(2),
    );
    const maps = tracer.infos.filter((i) => i.kind === 'map');
    assert.equal(maps[0].fnName, 'decode');
    assert.equal(maps[0].fnAsync, true);
    assert.equal(maps[0].fn, decode);
    assert.deepEqual(maps[0].knobs, { parallelism: 4, resolvedParallelism: 4, deterministic: true });
    assert.equal(maps[0].cardinality, 10);
    assert.equal(maps[1].random, false, 'random before any element ran');
    assert.equal(tracer.only('shuffle').info.random, true);
    assert.deepEqual(tracer.only('batch').info.knobs, { batchSize: 3, dropRemainder: true });
    assert.equal(tracer.only('batch').info.cardinality, 3);
    assert.equal(tracer.only('repeat').info.knobs.count, -1);
    assert.equal(tracer.only('repeat').info.cardinality, Infinity);
    assert.deepEqual(tracer.only('prefetch').info.knobs, { bufferSize: 2 });
    await value.take(2).toArray();
    assert.equal(maps[1].random, true, 'touching ctx.rng marks the map random');
  });

  it('counts produced, pulled, calls, bytes and async latency per operator', async () => {
    const { tracer, value } = traced(() =>
      range(100)
        .map((x) => new Float32Array(4).fill(x))
        .filter((a) => a[0] % 2 === 0)
        .map(
          async (a) => {
            await sleep(3);
            return a;
          },
          { parallelism: 8 },
        )
        .batch(10)
        .prefetch(2),
    );
    const out = await value.toArray();
    assert.equal(out.length, 5);
    const [m1, m2] = tracer.infos.filter((i) => i.kind === 'map').map((i) => tracer.counters.get(i.key)!);
    const f = tracer.only('filter').counters;
    const b = tracer.only('batch').counters;
    const r = tracer.only('range').counters;
    assert.equal(r.produced, 100);
    assert.deepEqual([m1.pulled, m1.produced, m1.calls], [100, 100, 100]);
    assert.equal(m1.bytesProduced, 100 * 16);
    assert.deepEqual([f.pulled, f.produced, f.calls], [100, 50, 100]);
    assert.deepEqual([m2.pulled, m2.produced, m2.calls, m2.asyncCalls], [50, 50, 50, 50]);
    // A timer of t ms fires at least t − 1 ms later (Node counts whole milliseconds from when it was set).
    assert.ok(m2.asyncLatencySeconds >= 50 * 0.002, `latency ${m2.asyncLatencySeconds}`);
    assert.ok(m2.inFlightHighWater > 1 && m2.inFlightHighWater <= 8);
    assert.deepEqual([b.pulled, b.produced], [50, 5]);
    assert.equal(b.bytesProduced, 5 * 10 * 16);
    assert.ok(tracer.only('prefetch').counters.bufferHighWater >= 1);
  });

  it('tells how many elements a pass of a repeat held, once one ends, however it was filtered', async () => {
    const { tracer, value } = traced(() =>
      range(100)
        .filter((x) => x % 3 !== 0)
        .repeat(3),
    );
    const it = value.iterator();
    // 66 elements a pass: no operator knows that in advance (the filter decides).
    for (let i = 0; i < 60; i++) await it.next();
    assert.equal(tracer.only('repeat').counters.passElements, undefined, 'no pass has ended yet');
    for (let i = 0; i < 70; i++) await it.next();
    assert.equal(tracer.only('repeat').counters.passElements, 66);
    assert.equal(tracer.only('repeat').info.cardinality, undefined);
    await it.return?.(undefined);
  });

  it('tells how many bytes of files a lines source reads in a pass, before it has read them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plumber-lines-bytes-'));
    try {
      writeFileSync(join(dir, 'a.txt'), 'one\ntwo\nthree\n');
      writeFileSync(join(dir, 'b.txt'), 'x'.repeat(1000) + '\n');
      const { tracer, value } = traced(() => lines('*.txt', { cwd: dir }));
      const it = value.iterator();
      assert.equal((await it.next()).value, 'one');
      assert.equal(tracer.only('lines').counters.sourceBytes, 14 + 1001);
      await it.return?.(undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('charges a sync map its own time, not its upstream’s', async () => {
    const rounds = roundsFor(1);
    // Each fn times itself; the operators' selfSeconds must match those sums, not include each other.
    let upMs = 0;
    let ownMs = 0;
    const timed = (rounds: number, add: (ms: number) => void) => (x: number) => {
      const t0 = performance.now();
      const r = spin(x, rounds);
      add(performance.now() - t0);
      return r;
    };
    const { tracer, value } = traced(
      () =>
        range(60)
          .map(timed(rounds * 2, (ms) => (upMs += ms))) // upstream: ~2 ms per element
          .map(timed(rounds, (ms) => (ownMs += ms))), // this one: ~1 ms per element
    );
    await value.toArray();
    const [up, own] = tracer.infos.filter((i) => i.kind === 'map').map((i) => tracer.counters.get(i.key)!);
    assert.equal(own.calls, 60);
    assert.ok(ownMs / 60 > 0.2 && ownMs / 60 < 20, `a ~1 ms spin took ${ownMs / 60} ms`);
    const ownSelfMs = own.selfSeconds * 1000;
    const upSelfMs = up.selfSeconds * 1000;
    assert.ok(ownSelfMs >= ownMs && ownSelfMs < ownMs * 1.2 + 2, `own self ${ownSelfMs} ms, fn time ${ownMs} ms`);
    assert.ok(upSelfMs >= upMs && upSelfMs < upMs * 1.2 + 2, `upstream self ${upSelfMs} ms, fn time ${upMs} ms`);
    // The downstream map waited on its input for about the upstream's time.
    assert.ok(up.waitSeconds * 1000 >= upMs * 0.9, `wait ${up.waitSeconds * 1000} ms vs upstream fn time ${upMs} ms`);
  });

  it('records nothing and captures no call site without a tracer', async () => {
    const ds = range(3).map((x) => x);
    assert.equal(ds.node.info, null);
    assert.equal(ds.node.counters, null);
    assert.equal(ds.node.site, undefined);
    assert.match(ds[DATASET_KEY], /^map#\d+$/);
  });

  it('names the thread CPU clock in use and reads it', () => {
    const kind = cpuClockKind();
    const expected = typeof (process as { threadCpuUsage?: unknown }).threadCpuUsage === 'function' ? 'threadCpuUsage' : process.platform === 'linux' ? 'schedstat' : 'wall';
    assert.equal(kind, expected);
    const t0 = threadCpuSeconds();
    spin(1, 20_000_000);
    assert.ok(threadCpuSeconds() > t0);
  });

  it('sums the counters of operators built at one call site (an interleave’s inner datasets)', async () => {
    const tracer = await whileTraced(async () => {
      const ds = range(3).interleave((i) => range(i * 10, i * 10 + 2).map((x) => x + 1), { cycleLength: 2 });
      assert.deepEqual(await ds.toArray(), [1, 11, 2, 12, 21, 22]);
    });
    const maps = tracer.infos.filter((i) => i.kind === 'map');
    assert.equal(maps.length, 3);
    assert.equal(new Set(maps.map((m) => m.key)).size, 1);
    assert.equal(tracer.counters.get(maps[0].key)!.produced, 6);
  });

  /** Shards read record by record: each of a shard's `records` awaits a timer of WAIT_MS before it is yielded. */
  const WAIT_MS = 4;
  const shards = (records: number) => (k: number) =>
    from(async function* () {
      for (let i = 0; i < records; i++) {
        await sleep(WAIT_MS);
        yield k * 10 + i;
      }
    });

  it('charges the waits on an interleave’s inner datasets to their last operator, as a consumer’s wait counts', async () => {
    const shard = shards(5);
    const tracer = await whileTraced(async () => {
      const ds = range(4).interleave(shard, { cycleLength: 2 });
      assert.equal((await ds.toArray()).length, 20);
    });
    const interleave = tracer.only('interleave').info;
    const inner = tracer.infos.filter((i) => i.kind === 'from');
    assert.equal(new Set(inner.map((i) => i.key)).size, 1);
    assert.equal(inner[0].parent, interleave.key);
    const c = tracer.counters.get(inner[0].key)!;
    assert.equal(c.produced, 20);
    // Every record waited for its timer (each fires at least WAIT_MS − 1 ms after it was set: Node
    // counts whole milliseconds). The interleave pulls one inner dataset at a time for the
    // consumer and starts the next turn's pull as it hands an element out, so at most two timers
    // run at once: the pass, nearly all of it spent waiting, takes at least half the timers' time,
    // and the consumer's waits charged to the inner operator add up to about that much or more
    // (41 ms on a loaded machine, where the prefetched timer had often fired before it was asked for).
    assert.ok(c.waitSeconds * 1000 >= (20 * (WAIT_MS - 1)) / 2, `inner waits ${c.waitSeconds * 1000} ms for 20 records of ${WAIT_MS} ms`);
  });

  it('charges the waits on a flatMap’s datasets to their last operator', async () => {
    const shard = shards(3);
    const tracer = await whileTraced(async () => {
      assert.deepEqual(await range(4).flatMap(shard).toArray(), [0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32]);
    });
    const inner = tracer.infos.filter((i) => i.kind === 'from');
    assert.equal(inner[0].parent, tracer.only('flatMap').info.key);
    const c = tracer.counters.get(inner[0].key)!;
    assert.equal(c.produced, 12);
    assert.ok(c.waitSeconds * 1000 >= 12 * (WAIT_MS - 1), `inner waits ${c.waitSeconds * 1000} ms for 12 records of ${WAIT_MS} ms`);
  });
});
