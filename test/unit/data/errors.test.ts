import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { from, range } from 'plumber-data';
import { liveHandles, rejection, traced } from './helpers';

describe('plumber-data errors and cancellation', () => {
  it('reports a sync map error with the operator and the element index', async () => {
    const e = await rejection(
      range(10)
        .map((x) => {
          if (x === 6) throw new Error('bad six');
          return x;
        })
        .batch(4)
        .toArray(),
    );
    assert.equal(e.op.kind, 'map');
    assert.equal(e.index, 6);
    assert.equal((e.cause as Error).message, 'bad six');
    assert.match(e.message, /map failed on element 6: bad six/);
  });

  it('counts the index in the operator’s own input, after a filter', async () => {
    const e = await rejection(
      range(20)
        .filter((x) => x % 2 === 1)
        .filter((x) => {
          if (x === 9) throw new RangeError('nine');
          return true;
        })
        .toArray(),
    );
    assert.equal(e.op.kind, 'filter');
    assert.equal(e.index, 4); // 9 is the fifth odd number
  });

  it('names the call site in the error when traced', async () => {
    const { value } = traced(() =>
      range(3).map(
        async (x) => {
          if (x === 2) throw new Error('async two');
          return x;
        },
        { parallelism: 2 },
      ),
    );
    const e = await rejection(value.toArray());
    assert.equal(e.index, 2);
    assert.equal(e.op.site?.file, __filename);
    assert.ok(e.message.includes(`${__filename}:`));
  });

  it('delivers the elements before a failing async call, then the error, and stops pulling upstream', async () => {
    let pulled = 0;
    const seen: number[] = [];
    const ds = range(1_000_000)
      .map((x) => {
        pulled++;
        return x;
      })
      .map(
        async (x) => {
          await sleep(x % 3);
          if (x === 50) throw new Error('fifty');
          return x;
        },
        { parallelism: 8 },
      );
    const e = await rejection(
      (async () => {
        for await (const x of ds) seen.push(x);
      })(),
    );
    assert.equal(e.index, 50);
    assert.deepEqual(seen, [...Array(50).keys()]);
    const after = pulled;
    await sleep(20);
    assert.equal(pulled, after, 'upstream kept running after the error');
    assert.ok(pulled < 200, `pulled ${pulled} elements for an error at 50`);
  });

  it('propagates a source error to the consumer', async () => {
    function* failing(): Generator<number> {
      yield 1;
      throw new Error('source broke');
    }
    const e = await rejection(
      from(failing)
        .map((x) => x)
        .toArray(),
    );
    assert.equal(e.op.kind, 'from');
    assert.equal((e.cause as Error).message, 'source broke');
  });

  it('aborts in-flight calls and leaves no timer when the consumer breaks', async () => {
    let aborted = 0;
    let started = 0;
    const ds = range(1000).map(
      async (x, ctx) => {
        started++;
        try {
          await sleep(60_000, undefined, { signal: ctx.signal });
        } catch {
          aborted++;
        }
        return x;
      },
      { parallelism: 4 },
    );
    const it = ds.iterator();
    const first = Promise.race([it.next(), sleep(50).then(() => 'pending')]);
    assert.equal(await first, 'pending');
    assert.equal(started, 4);
    const timers = () => liveHandles().filter((h) => h === 'Timeout').length;
    const during = timers();
    await it.return?.();
    await sleep(0);
    assert.equal(aborted, 4);
    // The four sleeps' timers are gone (the test runner may hold one of its own).
    assert.ok(timers() <= during - 4, `timers during: ${during}, after: ${timers()}`);
  });

  it('stops a prefetching pipeline on break, running nothing afterwards', async () => {
    let produced = 0;
    const ds = range(Infinity)
      .map(
        async (x) => {
          produced++;
          await sleep(1);
          return x;
        },
        { parallelism: 2 },
      )
      .prefetch(16);
    for await (const x of ds) if (x === 5) break;
    await sleep(10);
    const after = produced;
    await sleep(30);
    assert.equal(produced, after);
  });

  it('turns a bad argument into a sentence that says what to do', () => {
    assert.throws(() => range(3).map((x) => x, { placement: 'worker' }), /needs `module`/);
    const double = (x: number): number => x * 2;
    // A relative module would be resolved against the library's worker file, and fail inside it.
    assert.throws(() => range(3).map(double, { placement: 'worker', module: './steps.ts' }), /map\(double, \{ placement: 'worker' \}\): module '\.\/steps\.ts' is a relative path.*require\.resolve\('\.\/steps\.ts'\)/);
    assert.doesNotThrow(() => range(3).map(double, { placement: 'worker', module: '/abs/steps.ts' }));
    assert.doesNotThrow(() => range(3).map(double, { placement: 'worker', module: 'file:///abs/steps.ts' }));
    assert.throws(() => range(3).batch(0), /batch\(\) needs a size >= 1/);
    assert.throws(() => range(3).map((x) => x, { parallelism: 0 }), /parallelism must be/);
  });

  it('reports a worker thread that dies posting a result with the operator, its elements and the rule, never “[object Object]”', async function () {
    // Worker threads that load tsx take a few hundred ms to start on a busy machine.
    this.timeout(60_000);
    const dir = mkdtempSync(join(tmpdir(), 'plumber-errors-'));
    try {
      // An Intl object refuses cloning but looks like an empty object: piscina's postMessage throws
      // in the worker after the fn returned, and the thread dies with an anonymous error.
      const module = join(dir, 'collate.cjs');
      writeFileSync(module, 'exports.collate = (x) => (x === 5 ? new Intl.Collator() : x);\n');
      const e = await rejection(
        range(8)
          .map((x: number) => x, { placement: 'worker', module, exportName: 'collate', parallelism: 1 })
          .toArray(),
      );
      assert.equal(e.op.kind, 'map');
      assert.doesNotMatch(e.message, /\[object Object\]/);
      const m = /map\(collate\): a worker thread failed on elements? (\d+)(?:–(\d+))?: .*results must be structured-cloneable/.exec(e.message);
      assert.ok(m !== null, e.message);
      const [from, to] = [Number(m[1]), Number(m[2] ?? m[1])];
      assert.ok(from <= 5 && 5 <= to, `elements ${from}–${to} should include 5`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
