import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { from, range } from 'plumber-data';

describe('plumber-data properties', () => {
  it('keeps input order under a parallel async map with random per-element delays', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer(), { maxLength: 60 }), fc.integer({ min: 1, max: 12 }), fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1 }), async (xs, p, delays) => {
        const out = await from(xs)
          .map(
            async (x, ctx) => {
              await sleep(delays[ctx.index % delays.length]);
              return [x, ctx.index];
            },
            { parallelism: p },
          )
          .toArray();
        assert.deepEqual(
          out,
          xs.map((x, i) => [x, i]),
        );
      }),
      { numRuns: 25 },
    );
  });

  it('loses and duplicates nothing when deterministic is false', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 60 }), fc.integer({ min: 1, max: 8 }), async (delays, p) => {
        const out = await from(delays)
          .map(
            async (d, ctx) => {
              await sleep(d);
              return ctx.index;
            },
            { parallelism: p, deterministic: false },
          )
          .toArray();
        assert.deepEqual(
          [...out].sort((a, b) => a - b),
          delays.map((_, i) => i),
        );
      }),
      { numRuns: 20 },
    );
  });

  it('loses and duplicates nothing through filter, batch, prefetch, unbatch and a promise-returning map', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer(), { maxLength: 300 }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 10 }), async (xs, n, pf) => {
        const out = await from(xs)
          .filter((x) => x % 2 === 0)
          // A sync fn that returns promises for some elements: the operator switches to the async path mid-chunk.
          .map((x) => (x % 3 === 0 ? Promise.resolve(x) : x), { parallelism: 3 })
          .batch(n)
          .prefetch(pf)
          .unbatch()
          .toArray();
        assert.deepEqual(
          out,
          xs.filter((x) => x % 2 === 0),
        );
      }),
      { numRuns: 60 },
    );
  });

  it('filters with an async predicate in parallel, even when whole runs of elements are dropped', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { maxLength: 80 }), fc.integer({ min: 1, max: 6 }), fc.boolean(), async (keep, p, deterministic) => {
        const out = await range(keep.length)
          .filter(
            async (i) => {
              await sleep(i % 2);
              return keep[i];
            },
            { parallelism: p, deterministic },
          )
          .toArray();
        const expected = keep.flatMap((k, i) => (k ? [i] : []));
        assert.deepEqual(deterministic ? out : [...out].sort((a, b) => a - b), expected);
      }),
      { numRuns: 30 },
    );
  });

  it('batches into ceil(n/k) groups (floor with dropRemainder) that concatenate back to the input', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 1, max: 50 }), fc.boolean(), async (n, k, drop) => {
        const bs = await range(n).batch(k, { dropRemainder: drop }).toArray();
        assert.equal(bs.length, drop ? Math.floor(n / k) : Math.ceil(n / k));
        assert.ok(bs.every((b, i) => b.length === k || (!drop && i === bs.length - 1)));
        assert.deepEqual(bs.flat(), [...Array(drop ? Math.floor(n / k) * k : n).keys()]);
      }),
    );
  });

  it('take and skip split a dataset exactly', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 120 }), async (n, k) => {
        const head = await range(n).take(k).toArray();
        const tail = await range(n).skip(k).toArray();
        assert.deepEqual([...head, ...tail], [...Array(n).keys()]);
      }),
    );
  });

  it('shuffles into a permutation, reproducible for a seed, different each epoch', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 64 }), fc.integer(), async (n, buf, seed) => {
        const ds = range(n).shuffle(buf, { seed });
        const e0 = await ds.toArray();
        assert.deepEqual(
          [...e0].sort((a, b) => a - b),
          [...Array(n).keys()],
        );
        // The same seed in a fresh pipeline gives the same order; chunk sizes downstream do not matter.
        const again = await range(n).shuffle(buf, { seed }).batch(7).prefetch(3).unbatch().toArray();
        assert.deepEqual(again, e0);
        const e1 = await ds.toArray();
        if (n >= 20 && buf >= 8) assert.notDeepEqual(e1, e0);
        const fixed = range(n).shuffle(buf, { seed, reshuffleEachIteration: false });
        assert.deepEqual(await fixed.toArray(), await fixed.toArray());
      }),
      { numRuns: 40 },
    );
  });

  it('interleaves deterministically for a fixed cycle length, whatever the parallelism', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 12 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 4 }), async (lens, cycle, p) => {
        const inner = (i: number) =>
          range(lens[i]).map(async (j) => {
            await sleep((i * 7 + j) % 3);
            return `${i}.${j}`;
          });
        const a = await range(lens.length).interleave(inner, { cycleLength: cycle, parallelism: p }).toArray();
        const b = await range(lens.length).interleave(inner, { cycleLength: cycle, parallelism: 1 }).toArray();
        assert.deepEqual(a, b);
        assert.equal(
          a.length,
          lens.reduce((s, l) => s + l, 0),
        );
        assert.equal(new Set(a).size, a.length);
      }),
      { numRuns: 30 },
    );
  });

  // tf.data's order: a finished inner dataset ends its turn; its place is refilled with the next
  // input's dataset, which takes that place's next turn (tf.data's blockLength example shows it).
  it('interleaves round-robin over the cycle, refilling a finished slot in place for its next turn', async () => {
    const out = await from([['a1', 'a2', 'a3'], ['b1'], ['c1', 'c2']])
      .interleave((xs) => from(xs), { cycleLength: 2 })
      .toArray();
    assert.deepEqual(out, ['a1', 'b1', 'a2', 'a3', 'c1', 'c2']);
  });
});
