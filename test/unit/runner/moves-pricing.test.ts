/**
 * The move probe prices a crossing by what plumber-data does with it: typed arrays a worker's
 * results move (transfer) cost no copy and count no bytes; what is cloned still does. Ordering and
 * byte counts only: never absolute times.
 */
import assert from 'node:assert/strict';
import { Batch as LibraryBatch } from 'plumber-data';
import { restoreAll } from '../../../src/data/tracing';
import { rebuiltPaths } from '../../../src/runner/fidelity';
import { priceClones } from '../../../src/runner/moves/calls';
import { sentToWorker } from '../../../src/runner/moves/workerTimes';

const N = 4;
/** 4 MB per result: a clone of it costs far more than a plain record's. */
const FLOATS = 1 << 20;

function price(outputs: unknown[]): NonNullable<ReturnType<typeof priceClones>> {
  const originals = outputs.map((_, i) => i);
  const p = priceClones(originals, outputs, performance.now() + 300);
  assert.ok(p !== undefined);
  return p;
}

describe('runner move probe: pricing a crossing by what happens', function () {
  this.timeout(60_000);

  it('a large Float32Array result moves: about no copy seconds and none of its bytes', () => {
    const records = price([...Array(N).keys()].map((i) => ({ id: i, name: `row ${i}`, tags: ['a', 'b', 'c'], values: [...Array(256).keys()].map((k) => ({ k, v: k * i })) })));
    const floats = price([...Array(N).keys()].map(() => new Float32Array(FLOATS).fill(0.5)));
    // Its serialised size is a few bytes of framing, not its 4 MB.
    assert.ok(floats.outBytes < 1000, `outBytes ${floats.outBytes}`);
    // The library's size estimate still sees the data (the memory a move holds).
    assert.ok((floats.outSizeBytes ?? 0) >= FLOATS * 4);
    // A plain-object result is cloned, and costs more than a moved 4 MB array.
    assert.ok(records.outBytes > 10 * floats.outBytes, `records outBytes ${records.outBytes}, floats ${floats.outBytes}`);
    assert.ok(records.cloneOutSeconds > floats.cloneOutSeconds, `records ${records.cloneOutSeconds} s, moved floats ${floats.cloneOutSeconds} s`);
  });

  it('what the result path copies is still charged: a view over part of a buffer, and inputs', () => {
    const whole = price([...Array(N).keys()].map(() => ({ x: new Float32Array(FLOATS) })));
    // A view over half a buffer is cloned with the whole buffer behind it (the worker moves whole buffers only).
    const part = price([...Array(N).keys()].map(() => ({ x: new Float32Array(FLOATS * 2).subarray(0, FLOATS) })));
    assert.ok(whole.outBytes < 1000);
    assert.ok(part.outBytes > FLOATS * 4, `part outBytes ${part.outBytes}`);
    assert.ok(part.cloneOutSeconds > whole.cloneOutSeconds, `part ${part.cloneOutSeconds} s, whole ${whole.cloneOutSeconds} s`);
    // The user's typed arrays going in are cloned (they stay the user's): charged.
    const inputs = [...Array(N).keys()].map(() => new Float32Array(FLOATS));
    const p = priceClones(inputs, [0, 1, 2, 3], performance.now() + 300);
    assert.ok(p !== undefined && p.inBytes > FLOATS * 4, `inBytes ${p?.inBytes}`);
    assert.ok(p.cloneInSeconds > whole.cloneOutSeconds);
  });

  it('a Batch result (stacked rows) moves its data like the library does', () => {
    const batches = price([...Array(N).keys()].map(() => new LibraryBatch(new Float32Array(FLOATS), [1024, 1024])));
    assert.ok(batches.outBytes < 1000, `outBytes ${batches.outBytes}`);
  });

  it("the built library's Batch is known by its name to the probe, which cannot use instanceof across copies", () => {
    const b = new LibraryBatch(new Float32Array(8), [2, 2, 2]);
    assert.equal(b.constructor.name, 'Batch');
    assert.equal(b.row(1).constructor.name, 'Batch');
    assert.deepEqual(rebuiltPaths({ b }), [[['b'], 1]]);
  });

  it('the timer worker is sent inputs as the library sends them: arrays of doubles packed, Batches marked', () => {
    // The pipeline's copy of plumber-data is not the runner's: its Batch is another class of that name.
    class Batch {
      constructor(
        readonly data: Float32Array,
        readonly shape: number[],
      ) {}
      row(i: number): number {
        return this.data[i]!;
      }
    }
    const doubles = [...Array(32).keys()].map((k) => k / 8 - 1);
    const batch = new Batch(new Float32Array([1, 2, 3, 4]), [2, 2]);
    const sent = sentToWorker([{ row: doubles, batch, id: 3 }, 7]);
    assert.ok(sent.numbers instanceof Float64Array && sent.numbers.length === 32);
    assert.deepEqual(
      sent.marks[0]?.map((m) => [m[0], m[1]]),
      [
        [['row'], 3],
        [['batch'], 1],
      ],
    );
    assert.equal(sent.marks[1], null);
    const copy = structuredClone(sent.inputs);
    restoreAll(copy, sent.marks, (data, shape) => new Batch(data as Float32Array, shape), { numbers: sent.numbers });
    const first = copy[0] as { row: number[]; batch: Batch; id: number };
    assert.deepEqual(first.row, doubles);
    assert.ok(first.batch instanceof Batch);
    assert.deepEqual(first.batch.shape, [2, 2]);
    assert.equal(copy[1], 7);
  });
});
