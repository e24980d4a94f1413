/**
 * A pipeline whose work all resolves at once — in-memory sources, sync fns on the main thread, a
 * cache replaying — must still let the event loop turn: timers and I/O (the consumer's own, a
 * profiler's window timers) would otherwise wait until it stops. Asserted by order: a timer set
 * before the work fires before the work ends.
 */
import assert from 'node:assert/strict';
import { range } from 'plumber-data';

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
});
