/**
 * The dialect examples and their hand-tuned siblings (bench/dialects/hand/, what bench:dialects
 * compares them with) yield the same elements, in the same order, for the examples' fixed seed:
 * a faster variant that changed the data would make the benchmark's comparison meaningless. Each
 * example marks its bottleneck with one `// bottleneck` comment, which bench:dialects reads.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs';
import { exportedPipeline, onePass, release } from '../../../bench/dialects/consume';
import { EXAMPLES, markedBottleneck } from '../../../bench/dialects/examples';

/** Elements compared per example: enough for several batches, in well under a second as written (tfjs-remote: ~0.6 s a batch). */
const PREFIX: Record<string, number> = { 'tfjs-digits': 3, 'tfjs-remote': 2, 'streams-lookup': 60, 'streams-transform': 200, generators: 4 };

/** An element as plain data: tensors as dtype, shape and values; typed arrays as their kind and values. */
function plain(x: unknown): unknown {
  if (x instanceof tf.Tensor) return { dtype: x.dtype, shape: x.shape, values: Array.from(x.dataSync()) };
  if (ArrayBuffer.isView(x)) return { type: x.constructor.name, values: Array.from(x as unknown as ArrayLike<number>) };
  if (Array.isArray(x)) return x.map(plain);
  if (typeof x === 'object' && x !== null) return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, plain(v)]));
  return x;
}

/** The first `n` elements of one pass, as plain data. */
async function firstElements(file: string, exportName: string, n: number): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const x of onePass(await exportedPipeline(file, exportName))) {
    out.push(plain(x));
    release(x);
    if (out.length === n) break;
  }
  return out;
}

describe('the dialect examples and their hand-tuned variants', function () {
  // Worker threads that load tsx take a while to start on a busy machine; nothing here is timed.
  this.timeout(180_000);

  before(async () => {
    await tf.setBackend('cpu');
  });

  for (const e of EXAMPLES) {
    it(`${e.name}: the hand-tuned variant yields the same first ${PREFIX[e.name]} elements, in order`, async () => {
      const n = PREFIX[e.name]!;
      const asWritten = await firstElements(e.file, e.exportName, n);
      const hand = await firstElements(e.hand, e.exportName, n);
      assert.equal(asWritten.length, n, `${e.name} as written yielded ${asWritten.length} elements`);
      assert.deepEqual(hand, asWritten);
    });

    it(`${e.name}: marks one line as its bottleneck, an operator of the exported pipeline`, () => {
      const { file, line } = markedBottleneck(e);
      const text = readFileSync(file, 'utf8').split('\n')[line - 1]!;
      assert.match(text, /\.(map|mapAsync|filter)\(|new [A-Z]\w*\(|= \w+\(/, `${file}:${line} is not an operator: ${text}`);
    });
  }

  it('the tfjs-data examples yield batches of tensors that model.fitDataset takes', async () => {
    const [batch] = (await firstElements(EXAMPLES[0]!.file, EXAMPLES[0]!.exportName, 1)) as Array<{ xs: { shape: number[] }; ys: { shape: number[] } }>;
    assert.deepEqual(batch!.xs.shape, [64, 784]);
    assert.deepEqual(batch!.ys.shape, [64, 10]);
  });
});
