import { strict as assert } from 'node:assert';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { measure, type MeasureOptions, type MeasureResult } from '../../../src/runner/measure';
import { RampDetector } from '../../../src/runner/ramp';
import type { DatasetLike } from '../../../src/runner/discover';
import { DATASET_KEY } from '../../../src/data/tracing';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Elements of 100 kB, each between two turns of the event loop, with a weak reference to each. */
function weaklyWatched(refs: WeakRef<object>[]): DatasetLike {
  return {
    [DATASET_KEY]: 'weakly-watched',
    async *[Symbol.asyncIterator]() {
      for (;;) {
        await new Promise((r) => setImmediate(r));
        const element = { payload: new Uint8Array(100_000) };
        refs.push(new WeakRef(element));
        yield element;
      }
    },
  };
}

/**
 * Measures a source whose first `fill` elements fill a cache (the `steady` hook says false until
 * then), each after `delayMs(i)` ms (0: the next turn of the event loop). Returns the measurement
 * and how many elements had been produced when the window started (-1: it never did).
 */
async function measureAfterFill(fill: number, delayMs: (i: number) => number, o: Partial<MeasureOptions>): Promise<{ startedAt: number; result: MeasureResult }> {
  let produced = 0;
  const source: DatasetLike = {
    [DATASET_KEY]: 'fill-then-replay',
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const ms = delayMs(produced);
        await new Promise((r) => (ms > 0 ? setTimeout(r, ms) : setImmediate(r)));
        yield produced++;
      }
    },
  };
  let startedAt = -1;
  const result = await measure(
    source,
    { seconds: 600, maxElements: 1e9, warmupSeconds: 0, warmupMaxElements: 1e9, startSeconds: 60, progressInterval: 600, ...o },
    {
      onWindowStart: () => (startedAt = produced),
      onFirstElement: () => undefined,
      onWindowEnd: () => undefined,
      progress: () => undefined,
      steady: () => produced >= fill,
    },
  );
  return { startedAt, result };
}

describe('measuring a window', () => {
  it('keeps no element alive once the consumer is done with it', async () => {
    // Racing each pull against one promise that lives for the whole window kept every element
    // the window saw reachable from it: 300 batches of 800 kB held 800 MB, and the allocator's
    // churn ran the pipeline 13× slower than untraced.
    const refs: WeakRef<object>[] = [];
    let alive = -1;
    let seen = 0;
    const result = await measure(
      weaklyWatched(refs),
      { seconds: 600, maxElements: 200, warmupSeconds: 0, warmupMaxElements: 5, startSeconds: 60, progressInterval: 600 },
      {
        onWindowStart: () => undefined,
        onFirstElement: () => undefined,
        progress: () => undefined,
        onWindowEnd() {
          // Still inside the window's loop, before the iterator closes: what it holds is alive.
          gc();
          const old = refs.slice(0, -3);
          seen = old.length;
          alive = old.filter((r) => r.deref() !== undefined).length;
        },
      },
    );
    assert.equal(result.elements, 200, `the window ended after ${result.elements} elements (${result.endReason})`);
    assert.ok(seen >= 190, `only ${seen} elements were watched`);
    // V8 itself keeps one element from about when it optimizes the loop: a plain `for await` over
    // the same source does too.
    assert.ok(alive >= 0 && alive <= 2, `${alive} of the ${seen} elements consumed earlier were still reachable`);
  });

  it('reports when the first element came, inside the warm-up, so a run can be read from it to its end', async () => {
    // The first element comes after a 40 ms start (timers promise at least that much), the rest quickly.
    const { result } = await measureAfterFill(0, (i) => (i === 0 ? 40 : 0), { maxElements: 50, warmupMaxElements: 10 });
    assert.ok(result.firstElementSeconds !== undefined && result.firstElementSeconds >= 0.039, JSON.stringify(result));
    assert.ok(result.firstElementSeconds <= result.warmupSeconds, 'the first element came during the warm-up');
    assert.ok(result.warmupElements >= 1);
  });

  it('measures a pass from its first element when its window would hold only the pass’s end, a buffer handing on what it holds at once', async () => {
    // 200 elements 5 ms apart, then, the source ended, the 200 a buffer held, all at once. The
    // warm-up lasts 200 elements, so its window would start as the slow ones end.
    const source: DatasetLike = {
      [DATASET_KEY]: 'slow-then-drain',
      async *[Symbol.asyncIterator]() {
        for (let i = 0; i < 200; i++) {
          await new Promise((r) => setTimeout(r, 5));
          yield i;
        }
        for (let i = 200; i < 400; i++) yield i;
      },
    };
    let startedAt = -1;
    let produced = 0;
    const result = await measure(
      {
        [DATASET_KEY]: 'counted',
        [Symbol.asyncIterator]: () =>
          (async function* () {
            for await (const x of source) yield (produced++, x);
          })(),
      },
      // A budget far beyond the slow elements' second, so the minimum of 200 holds even when timers fire late.
      { seconds: 10, maxElements: 1e9, warmupSeconds: 0, warmupMaxElements: 1e9, warmupMinElements: 200, startSeconds: 60, progressInterval: 600 },
      { onWindowStart: () => (startedAt = produced), onFirstElement: () => undefined, onWindowEnd: () => undefined, progress: () => undefined },
    );
    assert.equal(result.endReason, 'exhausted');
    assert.ok(startedAt >= 190, `the scenario needs a window that starts as the slow elements end; it started after ${startedAt}`);
    // Measured from the first element: the slow ones are in it, not only the buffer's end.
    assert.equal(result.warmupElements, 1, JSON.stringify(result));
    assert.equal(result.elements, 399);
  });

  it('judges the ramp afresh when a cache has filled, so the window starts after the replay has sped up', async () => {
    // A fill of 120 elements at a steady 5 ms each (the detector judges it flat), then 30 elements
    // still at 5 ms after the fill (the replay's own start-up, shorter than one of the detector's
    // slices), then fast elements. Judged from the fill alone, the window would start on the first
    // slow element after it.
    const FILL = 120;
    const SLOW_AFTER = 30;
    const { startedAt, result } = await measureAfterFill(FILL, (i) => (i < FILL + SLOW_AFTER ? 5 : 0), { maxElements: 300 });
    assert.ok(startedAt >= FILL + SLOW_AFTER, `the window started after element ${startedAt}: ${FILL + SLOW_AFTER - startedAt} of its elements were the replay's slow start`);
    assert.ok(result.elements > 0, JSON.stringify(result));
  });

  it('gives a window its budget when a cache fills just before the warm-up ends and the replay is slow', async () => {
    // A fill of 20 quick elements, then 150 ms an element: the fresh judgement of the ramp takes
    // about a second (no slice of 8 elements fills), longer than the 0.3 s warm-up and 0.5 s window
    // the run was armed with. The warm-up must wait for it rather than give up and measure the run
    // from its first element, fill included.
    const FILL = 20;
    const { startedAt, result } = await measureAfterFill(FILL, (i) => (i < FILL ? 10 : 150), { seconds: 0.5, warmupSeconds: 0.3 });
    assert.ok(startedAt > FILL, `the window ${startedAt < 0 ? 'never started: the run was measured from its first element' : `started after element ${startedAt}, inside the fill`} (${JSON.stringify(result)})`);
    assert.ok(result.elements > 0 && result.warmupElements > FILL, JSON.stringify(result));
  });
});

describe("judging the warm-up's ramp", () => {
  /**
   * Whether the detector says "rising" after each stretch of arrivals at these rates (elements/s),
   * fed one arrival at a time; each stretch is one of its slices (a quarter of a second).
   */
  const judge = (rates: number[]): boolean[] => {
    const ramp = new RampDetector();
    let t = 0;
    ramp.add(t);
    const out: boolean[] = [];
    for (const rate of rates) {
      let rising = true;
      for (let i = 0; i < Math.ceil(0.25 * rate); i++) {
        t += (1 + 1e-9) / rate;
        rising = ramp.add(t);
      }
      out.push(rising);
    }
    return out;
  };

  it('says rising while each slice runs faster than every one before, as a start-up does', () => {
    assert.deepEqual(judge([50, 100, 200, 400, 400]), [true, true, true, true, false]);
  });

  it('does not read elements that differ in cost as a ramp: a cheap stretch after a dear one is no new high', () => {
    // Dear, cheap, dear, cheap again but no faster than the first cheap stretch: the pipeline ran
    // at its steady rate from the second slice on; the slice before alone would say "rising" at
    // the fourth.
    assert.deepEqual(judge([100, 200, 100, 150]), [true, true, false, false]);
  });
});
