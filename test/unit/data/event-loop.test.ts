/**
 * A pipeline whose work all resolves at once — in-memory sources, sync fns on the main thread, a
 * cache replaying — must still let the event loop turn: timers and I/O (the consumer's own, a
 * profiler's window timers) would otherwise wait until it stops. Asserted by order: a timer set
 * before the work fires before the work ends.
 */
import assert from 'node:assert/strict';
import { from, range } from 'plumber-data';

/** JIT-stable int32 work (as the fixtures' `spin`): about 1 ns an iteration. */
function spin(seed: number, iterations: number): number {
  let h = seed | 0;
  for (let i = 0; i < iterations; i++) h = Math.imul(h ^ i, 0x01000193) | 0;
  return h;
}

/** A timer's callback count, read while a pipeline runs; `stop` clears it. */
function ticker(): { fired: () => number; stop: () => void } {
  let n = 0;
  const t = setInterval(() => n++, 1);
  return { fired: () => n, stop: () => clearInterval(t) };
}

describe('plumber-data lets the event loop turn', function () {
  this.timeout(60_000);

  it('while a shuffle fills its buffer from a sync map: a timer fires before the first element', async () => {
    // 2,000 calls of ≈ 0.2 ms before the first element: one chunk of them, once, ran with no turn.
    const t = ticker();
    const it = range(1_000_000)
      .map((x) => spin(x & 1023, 200_000))
      .shuffle(2_000, { seed: 1 })
      [Symbol.asyncIterator]();
    try {
      const first = await it.next();
      assert.equal(first.done, false);
      assert.ok(t.fired() > 0, 'no timer fired while the buffer filled');
    } finally {
      t.stop();
      await it.return?.();
    }
  });

  it('while a sync pipeline runs and while a cache replays from memory', async () => {
    const ds = range(500)
      .map((x) => spin(x, 400_000))
      .cache();
    for (const pass of ['filling', 'replaying']) {
      const t = ticker();
      let seen = 0;
      const firedAt: number[] = [];
      // One pass of ≈ 0.4 ms calls to fill; 400 passes of 500 elements replayed, each at once.
      for (let k = 0; k < (pass === 'filling' ? 1 : 400); k++) {
        for await (const _ of ds) {
          seen++;
          if (t.fired() > 0 && firedAt.length === 0) firedAt.push(seen);
        }
      }
      t.stop();
      assert.ok(firedAt.length > 0 && firedAt[0]! < seen, `${pass}: no timer fired among ${seen} elements`);
    }
  });

  it('while a consumer takes elements from a prefetch buffer filled ahead of it', async () => {
    // The consumer is always handed an element made already; the prefetch's filler waits for the
    // turn its source takes. If the consumer went on without the turn, it never came.
    for (const ds of [
      range(2_000)
        .map((x) => spin(x, 200_000))
        .prefetch(8),
      range(2_000)
        .map((x) => spin(x, 200_000))
        .batch(4)
        .prefetch(2),
    ]) {
      const t = ticker();
      let seen = 0;
      let firedAt = 0;
      for await (const _ of ds) {
        seen++;
        if (firedAt === 0 && t.fired() > 0) firedAt = seen;
      }
      t.stop();
      assert.ok(firedAt > 0 && firedAt < seen, `no timer fired among ${seen} elements`);
    }
  });
});

describe('plumber-data does not hold its work behind a consumer that goes on without a turn', function () {
  this.timeout(60_000);

  it('keeps the source ahead of a consumer that works on microtasks alone, served from results already made', async () => {
    // A consumer whose work per element holds the thread (a training step) and never awaits a
    // macrotask, fed by an async map with 4 calls in flight: it is served from results already
    // made. A turn its source waits for comes only when the consumer stops, so if the source held
    // its pull for it, the consumer would eat the 4 results made and catch up with the source.
    const log: Array<'src' | 'use'> = [];
    function* numbers(): Generator<number> {
      for (let i = 0; i < 300; i++) {
        log.push('src');
        yield i;
      }
    }
    const ds = from(numbers()).map(async (x) => x, { parallelism: 4 });
    let n = 0;
    for await (const x of ds) {
      log.push('use');
      // ≈ 2 ms of the consumer's own work an element: a turn falls due every ten elements or so.
      spin(x, 2_000_000);
      if (++n === 200) break;
    }
    // The consumer caught up with the source (as many used as made) only at its very first element.
    let made = 0;
    let used = 0;
    const caughtUp: number[] = [];
    for (const e of log) {
      if (e === 'src') made++;
      else if (++used === made) caughtUp.push(used);
    }
    assert.equal(n, 200);
    assert.deepEqual(
      caughtUp.filter((k) => k > 1),
      [],
      `the consumer caught up with its source at elements ${caughtUp.join(', ')}`,
    );
  });
});
