/**
 * Properties of issue 11's operators over random inputs (fast-check): nothing lost, nothing
 * duplicated, order kept where the operator promises it, and seeded mixtures reproducible.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { from, range, sampleFromDatasets } from 'plumber-data';

const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);

/** tf.data's interleave loop (InterleaveDatasetOp), on arrays: the reference order. */
function tfInterleave(inputs: number[][], cycle: number, block: number): number[] {
  const slots: (number[] | null)[] = new Array<number[] | null>(cycle).fill(null);
  const pos = new Array<number>(cycle).fill(0);
  const out: number[] = [];
  let next = 0;
  let open = 0;
  let i = 0;
  let b = 0;
  const advance = (): void => {
    i = (i + 1) % cycle;
    b = 0;
  };
  while (next < inputs.length || open > 0) {
    const s = slots[i];
    if (s !== null) {
      if (pos[i] < s.length) {
        out.push(s[pos[i]++]);
        if (++b === block) advance();
      } else {
        slots[i] = null;
        open--;
        advance();
      }
    } else if (next < inputs.length) {
      slots[i] = inputs[next++];
      pos[i] = 0;
      open++;
    } else advance();
  }
  return out;
}

describe('issue 11 operator properties', () => {
  it('shard: the numShards shards partition the input exactly, each in input order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer(), { maxLength: 200 }), fc.integer({ min: 1, max: 9 }), async (xs, n) => {
        const shards = await Promise.all([...Array(n).keys()].map((i) => from(xs).enumerate().shard(n, i).toArray()));
        for (let i = 0; i < n; i++)
          assert.deepEqual(
            shards[i],
            xs.map((x, p) => [p, x] as [number, number]).filter(([p]) => p % n === i),
          );
        assert.deepEqual(
          sorted(shards.flat().map(([p]) => p)),
          xs.map((_, p) => p),
        );
      }),
      { numRuns: 60 },
    );
  });

  it('window: every element is in exactly the windows tf.data puts it in, windows in order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 3 }), fc.boolean(), async (len, size, shift, stride, drop) => {
        const ws = await Promise.all((await range(len).window(size, { shift, stride, dropRemainder: drop }).toArray()).map((w) => w.toArray()));
        // The reference: window k holds k·shift + j·stride (j < size) that exist.
        const expected: number[][] = [];
        for (let start = 0; start < len; start += shift) {
          const w: number[] = [];
          for (let j = 0; j < size && start + j * stride < len; j++) w.push(start + j * stride);
          if (drop && w.length < size) break;
          expected.push(w);
        }
        assert.deepEqual(ws, expected);
        // With shift = size and stride 1 the windows partition the input: each element exactly once.
        if (shift === size && stride === 1 && !drop) assert.deepEqual(ws.flat(), [...Array(len).keys()]);
      }),
      { numRuns: 80 },
    );
  });

  it('rebatch: keeps every row once, in order, in batches of the new size', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer(), { maxLength: 150 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 12 }), fc.boolean(), async (xs, inSize, outSize, drop) => {
        const out = await from(xs).batch(inSize).rebatch(outSize, { dropRemainder: drop }).toArray();
        const rows = out.flat();
        const kept = drop ? xs.length - (xs.length % outSize) : xs.length;
        assert.deepEqual(rows, xs.slice(0, kept));
        out.forEach((b, i) => assert.equal(b.length, i < out.length - 1 || drop ? outSize : b.length));
        assert.ok(out.every((b) => b.length >= 1 && b.length <= outSize));
      }),
      { numRuns: 60 },
    );
  });

  it('ignoreErrors: drops exactly the elements whose parallel async map failed, keeping order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 3 })), { maxLength: 60 }), fc.integer({ min: 1, max: 8 }), async (spec, p) => {
        const out = await from(spec.map((s, i) => [i, ...s] as const))
          .map(
            async ([i, fail, delay]) => {
              await sleep(delay);
              if (fail) throw new Error(`element ${i}`);
              return i;
            },
            { parallelism: p },
          )
          .ignoreErrors()
          .toArray();
        assert.deepEqual(
          out,
          spec.flatMap(([fail], i) => (fail ? [] : [i])),
        );
      }),
      { numRuns: 25 },
    );
  });

  it('sampleFromDatasets: the same seed gives the same mixture; every element once, each input in order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 4 }), fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 4, maxLength: 4 }), fc.integer(), async (lens, ws, seed) => {
        const make = () =>
          sampleFromDatasets(
            lens.map((n, k) => range(n).map((j) => k * 1000 + j)),
            { weights: ws.slice(0, lens.length), seed },
          );
        const a = await make().toArray();
        const b = await make().toArray();
        assert.deepEqual(a, b);
        lens.forEach((n, k) =>
          assert.deepEqual(
            a.filter((x) => Math.floor(x / 1000) === k),
            [...Array(n).keys()].map((j) => k * 1000 + j),
          ),
        );
        assert.equal(
          a.length,
          lens.reduce((s, n) => s + n, 0),
        );
      }),
      { numRuns: 50 },
    );
  });

  it('sampleFromDatasets: each input’s share of a long mixture follows its weight', async () => {
    const out = await sampleFromDatasets([from([0]).repeat(), from([1]).repeat()], { weights: [0.8, 0.2], seed: 42 })
      .take(20000)
      .toArray();
    const share = out.filter((x) => x === 0).length / out.length;
    // 20000 draws: the share's standard error is 0.003; 0.02 is over 6 of them.
    assert.ok(Math.abs(share - 0.8) < 0.02, `share ${share}`);
  });

  it('interleave with blockLength: tf.data’s order, every element once, whatever the parallelism', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 10 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 4 }), async (lens, cycle, block, p) => {
        const inner = (i: number) =>
          range(lens[i]).map(async (j) => {
            await sleep((i + j) % 2);
            return i * 100 + j;
          });
        const out = await range(lens.length).interleave(inner, { cycleLength: cycle, blockLength: block, parallelism: p }).toArray();
        assert.equal(
          out.length,
          lens.reduce((s, n) => s + n, 0),
        );
        lens.forEach((n, i) =>
          assert.deepEqual(
            out.filter((x) => Math.floor(x / 100) === i),
            [...Array(n).keys()].map((j) => i * 100 + j),
          ),
        );
        // The order depends on cycleLength and blockLength only, not on how many inner datasets are pulled at once.
        const single = await range(lens.length).interleave(inner, { cycleLength: cycle, blockLength: block, parallelism: 1 }).toArray();
        assert.deepEqual(out, single);
        assert.deepEqual(
          out,
          tfInterleave(
            lens.map((n, i) => [...Array(n).keys()].map((j) => i * 100 + j)),
            cycle,
            block,
          ),
        );
      }),
      { numRuns: 30 },
    );
  });
});
