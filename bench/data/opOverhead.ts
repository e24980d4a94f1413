/**
 * Issue 11's cost goal: what each new operator adds per element over a plain map, untraced.
 *
 * Each case is `from(numbers).map(x => x + 1)` followed by the operator, against the same pipeline
 * without it (or, for rebatch and the mixtures, the nearest pipeline without it), both drained by
 * one bulk consumer (`reduce`). Runs alternate so load hits both alike; the fastest of several runs
 * is compared (other load only slows a run down). `usPerElement` is the extra time per input
 * element; `opUs` and `baseUs` are the two pipelines' own per-element times. Padding and the
 * mixtures' choices are part of what their operators do, so their figure includes that work.
 */
import { chooseFromDatasets, from, range, sampleFromDatasets, type Dataset } from 'plumber-data';
import { emit } from './report';

const N = 200_000;
const data = Array.from({ length: N }, (_, i) => i);
const half = data.slice(0, N / 2);
/** Short sequences (1–8 numbers) for the padding operators. */
const seqs = data.map((i) => new Array<number>(1 + (i & 7)).fill(i));

const plain = (): Dataset<number> => from(data).map((x) => x + 1);
const plainSeqs = (): Dataset<number[]> => from(seqs).map((x) => x);

interface Case {
  op: string;
  /** The pipeline with the operator, and the one it is compared with. */
  with: () => Dataset<unknown>;
  without: () => Dataset<unknown>;
}

const CASES: Case[] = [
  { op: 'shard', with: () => plain().shard(2, 1), without: plain },
  { op: 'enumerate', with: () => plain().enumerate(), without: plain },
  { op: 'scan', with: () => plain().scan(0, (s, x) => [s + x, x] as const), without: plain },
  { op: 'ignoreErrors', with: () => plain().ignoreErrors(), without: plain },
  { op: 'window', with: () => plain().window(32), without: plain },
  { op: 'rebatch', with: () => plain().batch(64).rebatch(32), without: () => plain().batch(64) },
  {
    op: 'groupByWindow',
    with: () =>
      plain().groupByWindow(
        (x) => x & 3,
        (_k, w) => w,
        { windowSize: 32 },
      ),
    without: plain,
  },
  { op: 'paddedBatch', with: () => plainSeqs().paddedBatch(32), without: plainSeqs },
  { op: 'bucketBySequenceLength', with: () => plainSeqs().bucketBySequenceLength((s) => s.length, [4], [32, 32]), without: plainSeqs },
  { op: 'sampleFromDatasets', with: () => sampleFromDatasets([from(half).map((x) => x + 1), from(half).map((x) => x + 1)], { seed: 1 }), without: plain },
  {
    op: 'chooseFromDatasets',
    with: () =>
      chooseFromDatasets(
        [from(half).map((x) => x + 1), from(half).map((x) => x + 1)],
        range(N).map((i) => i & 1),
      ),
    without: plain,
  },
];

/** Milliseconds one pass takes, drained in bulk. */
async function time(ds: Dataset<unknown>): Promise<number> {
  const t0 = performance.now();
  const n = await ds.reduce(0, (k) => k + 1);
  const ms = performance.now() - t0;
  if (!(n > 0)) throw new Error('the pipeline produced nothing');
  return ms;
}

export async function opOverhead(json: boolean, quick: boolean): Promise<void> {
  const runs = quick ? 5 : 15;
  for (const c of CASES) {
    const a = c.with();
    const b = c.without();
    // Warm both up so the JIT has compiled them before anything is timed.
    await time(a);
    await time(b);
    let withMs = Infinity;
    let withoutMs = Infinity;
    for (let i = 0; i < runs; i++) {
      withMs = Math.min(withMs, await time(a));
      withoutMs = Math.min(withoutMs, await time(b));
    }
    const toUs = 1000 / N;
    emit({ bench: 'op-overhead', op: c.op, usPerElement: (withMs - withoutMs) * toUs, opUs: withMs * toUs, baseUs: withoutMs * toUs }, json);
  }
}
