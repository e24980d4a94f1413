/**
 * How issue 11's operators behave beyond tf.data's examples: what a tracer sees of them (kind,
 * call site, knobs, counters), what ignoreErrors skips, that options are checked, and that stopping
 * a loop early stops their inputs.
 */
import assert from 'node:assert/strict';
import { chooseFromDatasets, files, from, PipelineError, range, sampleFromDatasets, type Dataset } from 'plumber-data';
import { liveHandles, rejection, traced, whileTraced } from './helpers';

/** An async source that records whether it was stopped (its generator's finally ran). */
function watched(n: number): { ds: Dataset<number>; stopped: () => boolean; produced: () => number } {
  let stopped = false;
  let produced = 0;
  const ds = from(async function* () {
    try {
      for (let i = 0; i < n; i++) {
        produced++;
        yield i;
      }
    } finally {
      stopped = true;
    }
  });
  return { ds, stopped: () => stopped, produced: () => produced };
}

/** The first element of `ds`, then a break out of the loop. */
async function firstThenBreak<T>(ds: Dataset<T>): Promise<T | undefined> {
  for await (const x of ds) return x;
  return undefined;
}

describe('issue 11 operators', () => {
  describe('options', () => {
    it('rejects an unknown option at build time, naming it and the known ones', () => {
      assert.throws(
        () => range(4).interleave((x) => [x], { paralellism: 2 } as never),
        (e: unknown) => e instanceof PipelineError && e.message === "interleave: unknown option 'paralellism'; known: cycleLength, blockLength, parallelism, deterministic",
      );
    });
    it('checks the options of every operator that takes them', () => {
      const bad = { typo: true } as never;
      const builds: [string, () => unknown][] = [
        ['map', () => range(2).map((x) => x, bad)],
        ['filter', () => range(2).filter(() => true, bad)],
        ['flatMap', () => range(2).flatMap((x) => [x], bad)],
        ['batch', () => range(2).batch(2, bad)],
        ['shuffle', () => range(2).shuffle(2, bad)],
        ['files', () => files('*.none', bad)],
        ['window', () => range(2).window(2, bad)],
        ['paddedBatch', () => range(2).paddedBatch(2, bad)],
        ['bucketBySequenceLength', () => range(2).bucketBySequenceLength(() => 1, [2], [1, 1], bad)],
        [
          'groupByWindow',
          () =>
            range(2).groupByWindow(
              () => 0,
              (_k, d) => d,
              { windowSize: 2, typo: true } as never,
            ),
        ],
        ['rebatch', () => range(2).rebatch(2, bad)],
        ['sampleFromDatasets', () => sampleFromDatasets([range(2)], bad)],
        ['chooseFromDatasets', () => chooseFromDatasets([range(2)], range(1), bad)],
        ['ignoreErrors', () => range(2).ignoreErrors(bad)],
      ];
      for (const [kind, build] of builds) {
        assert.throws(build, (e: unknown) => e instanceof PipelineError && e.op.kind === kind && e.message.startsWith(`${kind}: unknown option 'typo'; known: `), kind);
      }
    });
    it('rejects an unknown option in an object literal at compile time', () => {
      // Type-checked by `tsc`: an unknown key in a literal is an error, which this directive expects.
      // @ts-expect-error paralellism is not an interleave option
      const build = (): unknown => range(4).interleave((x) => [x], { paralellism: 2 });
      assert.throws(build, PipelineError);
    });
    it('names the call site of an operator built with a bad option under a tracer', () => {
      const { value } = traced(() => {
        try {
          range(2).batch(2, { dropRemaindr: true } as never);
        } catch (e) {
          return e;
        }
        return undefined;
      });
      assert.ok(value instanceof PipelineError);
      assert.match(value.message, /^batch at .*operators-behaviour\.test\.ts:\d+:\d+: unknown option 'dropRemaindr'; known: dropRemainder$/);
    });
  });

  describe('tracing', () => {
    it('registers each operator with its kind, call site and knobs', () => {
      const { tracer } = traced(() => {
        const a = range(100).shard(4, 1).enumerate().window(3, { shift: 2, stride: 1 });
        const b = range(10)
          .map((x) => [x])
          .paddedBatch(2, { dropRemainder: true });
        const c = range(10)
          .map((x) => [x])
          .bucketBySequenceLength((x) => x.length, [2, 4], [3, 2, 1]);
        const d = range(10)
          .groupByWindow(
            (x) => x % 2,
            (_k, w) => w,
            { windowSize: 5 },
          )
          .batch(2)
          .rebatch(3)
          .scan(0, (s, x) => [s, x] as const);
        const e = sampleFromDatasets([range(3), range(3)], { weights: [3, 1], seed: 9 });
        const f = chooseFromDatasets([range(3)], range(1).ignoreErrors());
        return [a, b, c, d, e, f];
      });
      const knobs = (kind: string): unknown => tracer.only(kind).info.knobs;
      assert.deepEqual(knobs('shard'), { numShards: 4, shardIndex: 1 });
      assert.deepEqual(knobs('window'), { batchSize: 3, shift: 2, stride: 1, dropRemainder: false });
      assert.deepEqual(knobs('paddedBatch'), { batchSize: 2, dropRemainder: true });
      assert.deepEqual(knobs('bucketBySequenceLength'), { bucketBoundaries: [2, 4], bucketBatchSizes: [3, 2, 1], dropRemainder: false });
      assert.deepEqual(knobs('groupByWindow'), { batchSize: 5 });
      assert.deepEqual(knobs('rebatch'), { batchSize: 3, dropRemainder: false });
      assert.deepEqual(knobs('sampleFromDatasets'), { weights: [0.75, 0.25], seed: 9 });
      assert.equal(tracer.only('sampleFromDatasets').info.inputs.length, 2);
      assert.equal(tracer.only('chooseFromDatasets').info.inputs.length, 2, 'the inputs, then the choice dataset');
      for (const kind of ['shard', 'enumerate', 'window', 'paddedBatch', 'bucketBySequenceLength', 'groupByWindow', 'rebatch', 'scan', 'sampleFromDatasets', 'chooseFromDatasets', 'ignoreErrors']) {
        const { info } = tracer.only(kind);
        assert.ok(info.site?.file.endsWith('operators-behaviour.test.ts'), `${kind} has no call site in this file`);
        assert.ok(info.key.startsWith(`${kind}@`), info.key);
      }
      assert.equal(tracer.only('shard').info.cardinality, 25);
    });
    it('counts what ignoreErrors skipped, and the padded and total positions of padded batches', async () => {
      const tracer = await whileTraced(async () => {
        await from([[1], [2, 2, 2], [3, 3], 'bad', [4]])
          .map((x) => {
            if (typeof x === 'string') throw new TypeError('not a sequence');
            return x;
          })
          .ignoreErrors()
          .paddedBatch(2)
          .toArray();
      });
      assert.equal(tracer.only('ignoreErrors').counters.errorsSkipped, 1);
      const pb = tracer.only('paddedBatch').counters;
      // Batches [[1], [2,2,2]] (6 positions, 2 padded) and [[3,3], [4]] (4 positions, 1 padded).
      assert.equal(pb.totalPositions, 10);
      assert.equal(pb.paddedPositions, 3);
      assert.equal(pb.produced, 2);
      assert.equal(pb.pulled, 4);
    });
    it('counts the padding of bucketed batches', async () => {
      const tracer = await whileTraced(async () => {
        await from([[1], [1, 2, 3], [1, 2], [1, 2, 3, 4]])
          .bucketBySequenceLength((x) => x.length, [3], [2, 2])
          .toArray();
      });
      const c = tracer.only('bucketBySequenceLength').counters;
      // [[1], [1,2]] padded to 2 (1 padded of 4), [[1,2,3], [1,2,3,4]] padded to 4 (1 of 8).
      assert.equal(c.totalPositions, 12);
      assert.equal(c.paddedPositions, 2);
    });
  });

  describe('paddedBatch on records and strings', () => {
    it('pads the sequence fields of records and stacks their number fields as batch() does', async () => {
      const [b] = await from([
        { tokens: Int32Array.of(5, 6, 7), label: 1 },
        { tokens: Int32Array.of(8), label: 0 },
      ])
        .paddedBatch(2, { paddingValues: { tokens: -1, label: 0 } })
        .toArray();
      assert.deepEqual(b.tokens.shape, [2, 3]);
      assert.deepEqual(Array.from(b.tokens.data), [5, 6, 7, 8, -1, -1]);
      assert.deepEqual(Array.from(b.label.data), [1, 0]);
    });
    it('pads arrays of strings with the empty string', async () => {
      assert.deepEqual(
        await from([['a', 'b'], ['c']])
          .paddedBatch(2)
          .toArray(),
        [
          [
            ['a', 'b'],
            ['c', ''],
          ],
        ],
      );
    });
    it('leaves the input sequences as they were', async () => {
      const short = [1];
      const long = [2, 2, 2];
      const [batch] = await from([short, long]).paddedBatch(2, { paddingValues: 9 }).toArray();
      assert.deepEqual(batch, [
        [1, 9, 9],
        [2, 2, 2],
      ]);
      assert.deepEqual(short, [1], 'the padded row is a new array');
      assert.deepEqual(long, [2, 2, 2]);
    });
    it('fails naming the element whose fields differ from the first', async () => {
      const e = await rejection(
        from<Record<string, number[]>>([{ a: [1] }, { b: [2] }])
          .paddedBatch(2)
          .toArray(),
      );
      assert.equal(e.op.kind, 'paddedBatch');
      assert.match(e.message, /element 1 of the batch does not have the fields of the first/);
    });
  });

  describe('grouping operators and errors', () => {
    // The failing element comes after two full buckets in the same input chunk: those batches are
    // handed out first, then the error, as when each batch is handed out as soon as it is made.
    it('hands out the batches made before a failing element, then fails naming it', async () => {
      const got: unknown[] = [];
      const lengthOf = (s: number[]): number => {
        if (s.length === 0) throw new RangeError('an empty sequence');
        return s.length;
      };
      // A map downstream records what reaches it; toArray() pulls in bulk, so the whole input is one chunk.
      const ds = from([[1], [2], [3, 3], [4, 4], [], [5]])
        .bucketBySequenceLength(lengthOf, [2], [2, 2])
        .map((b) => {
          got.push(b);
          return b;
        });
      const e = await rejection(ds.toArray());
      assert.deepEqual(got, [
        [[1], [2]],
        [
          [3, 3],
          [4, 4],
        ],
      ]);
      assert.equal(e.op.kind, 'bucketBySequenceLength');
      assert.equal(e.index, 4);
      assert.match(e.message, /an empty sequence/);
    });
    it('hands out the batches made before a batch that cannot be padded, then fails', async () => {
      const got: unknown[] = [];
      const ds = from<number[] | string>([[1], [2], [3, 3], 'xy'])
        .bucketBySequenceLength((s) => s.length, [2], [2, 2])
        .map((b) => {
          got.push(b);
          return b;
        });
      const e = await rejection(ds.toArray());
      assert.deepEqual(got, [[[1], [2]]]);
      assert.equal(e.op.kind, 'bucketBySequenceLength');
      assert.match(e.message, /element 1 of the batch is not a sequence/);
    });
  });

  describe('ignoreErrors', () => {
    it('drops exactly the failing elements of an async map, a filter, a flatMap and a scan', async () => {
      const bad = (x: number): boolean => x % 5 === 3;
      const asyncOut = await range(20)
        .map(
          async (x) => {
            if (bad(x)) throw new Error(`bad ${x}`);
            return x;
          },
          { parallelism: 4 },
        )
        .ignoreErrors()
        .toArray();
      const keep = [...Array(20).keys()].filter((x) => !bad(x));
      assert.deepEqual(asyncOut, keep);
      const filtered = await range(20)
        .filter((x) => {
          if (bad(x)) throw new Error('bad');
          return true;
        })
        .ignoreErrors()
        .toArray();
      assert.deepEqual(filtered, keep);
      const flat = await range(6)
        .flatMap((x) => (x === 2 ? (null as unknown as number[]) : [x, x]))
        .ignoreErrors()
        .toArray();
      assert.deepEqual(flat, [0, 0, 1, 1, 3, 3, 4, 4, 5, 5]);
      const scanned = await range(6)
        .scan(0, (s, x) => {
          if (x === 2) throw new Error('bad');
          return [s + x, s + x] as const;
        })
        .ignoreErrors()
        .toArray();
      assert.deepEqual(scanned, [0, 1, 4, 8, 13]);
    });
    it('skips an interleave input whose fn threw', async () => {
      const out = await range(4)
        .interleave((x) => {
          if (x === 1) throw new Error('bad');
          return [x, x];
        })
        .ignoreErrors()
        .toArray();
      // Cycle 2 over the inputs 0, 2, 3 (1 skipped).
      assert.deepEqual(out, [0, 2, 0, 2, 3, 3]);
    });
    it('counts an error its input cannot go on after (a source that threw), and ends the pass there', async () => {
      const tracer = await whileTraced(async () => {
        const out = await from(function* () {
          yield 1;
          yield 2;
          throw new Error('disk gone');
        })
          .ignoreErrors()
          .toArray();
        assert.deepEqual(out, [1, 2]);
      });
      assert.equal(tracer.only('ignoreErrors').counters.errorsSkipped, 1);
    });
    it('lets errors downstream of it through', async () => {
      const e = await rejection(
        range(3)
          .ignoreErrors()
          .map((x) => {
            if (x === 1) throw new Error('after');
            return x;
          })
          .toArray(),
      );
      assert.equal(e.op.kind, 'map');
      assert.equal(e.index, 1);
    });
    it('warns for each skipped element with logWarning', async () => {
      const warned: string[] = [];
      const saved = console.warn;
      console.warn = (m: string) => void warned.push(m);
      try {
        await range(3)
          .map((x) => {
            if (x === 1) throw new Error('one is bad');
            return x;
          })
          .ignoreErrors({ logWarning: true })
          .toArray();
      } finally {
        console.warn = saved;
      }
      assert.equal(warned.length, 1);
      assert.match(warned[0], /ignoreErrors: skipped an element: map failed on element 1: one is bad/);
    });
  });

  describe('cancellation', () => {
    const cases: [string, (ds: Dataset<number>) => Dataset<unknown>][] = [
      ['shard', (ds) => ds.shard(2, 1)],
      ['enumerate', (ds) => ds.enumerate()],
      ['window', (ds) => ds.window(3, { shift: 1 })],
      ['paddedBatch', (ds) => ds.map((x) => [x]).paddedBatch(2)],
      ['bucketBySequenceLength', (ds) => ds.map((x) => [x]).bucketBySequenceLength((x) => x.length, [2], [2, 2])],
      [
        'groupByWindow',
        (ds) =>
          ds.groupByWindow(
            (x) => x % 2,
            (_k, w) => w,
            { windowSize: 2 },
          ),
      ],
      ['rebatch', (ds) => ds.batch(3).rebatch(2)],
      ['scan', (ds) => ds.scan(0, (s, x) => [s + x, s] as const)],
      ['ignoreErrors', (ds) => ds.ignoreErrors()],
    ];
    for (const [kind, make] of cases) {
      it(`breaking out of a loop over ${kind} stops its input`, async () => {
        const src = watched(1_000_000);
        // Counted after a turn of the event loop: mocha arms the test's own timer once the test has started.
        await new Promise((r) => setImmediate(r));
        const before = liveHandles().length;
        assert.notEqual(await firstThenBreak(make(src.ds)), undefined);
        assert.ok(src.stopped(), 'the source was not stopped');
        assert.ok(src.produced() < 100, `the source produced ${src.produced()} elements`);
        assert.equal(liveHandles().length, before, 'a timer, port or file handle outlived the loop');
      });
    }
    it('breaking out of a loop over a mixture stops every input it started', async () => {
      // An input never pulled has nothing to stop (its generator never ran); one that ran must be stopped.
      const stoppedOrUnstarted = (w: ReturnType<typeof watched>): boolean => w.produced() === 0 || w.stopped();
      const a = watched(1_000_000);
      const b = watched(1_000_000);
      assert.notEqual(await firstThenBreak(sampleFromDatasets([a.ds, b.ds], { seed: 1 })), undefined);
      assert.ok(a.produced() + b.produced() > 0);
      assert.ok(stoppedOrUnstarted(a) && stoppedOrUnstarted(b), 'an input of sampleFromDatasets was not stopped');
      const c = watched(1_000_000);
      const d = watched(1_000_000);
      const choice = watched(1_000_000);
      assert.notEqual(
        await firstThenBreak(
          chooseFromDatasets(
            [c.ds, d.ds],
            choice.ds.map((i) => i % 2),
          ),
        ),
        undefined,
      );
      assert.ok(choice.stopped() && c.stopped() && stoppedOrUnstarted(d), 'an input of chooseFromDatasets was not stopped');
    });
    it('take() after a window stops the input once the windows are out', async () => {
      const src = watched(1_000_000);
      const ws = await src.ds.window(2).take(2).toArray();
      assert.equal(ws.length, 2);
      assert.ok(src.stopped());
    });
  });
});
