/**
 * Comparing configurations on the same elements (src/engine/paired.ts): runs simulated over a
 * corpus whose elements differ in cost by stretches, as the text example's emails do.
 */
import * as assert from 'node:assert/strict';
import { formatSpeedup, pooledRate, reliablyFaster, runSlices, wholeLifeWithCache } from '../../../src/engine/stats';
import { compareSides, gainWithoutBest, withoutBestWords, pairedSpeedup, pairRuns, PAIRED_MIN_RANGES, runCurve, sideFaster, sideOf, type Curve, type MeasuredSide, type PairableRun } from '../../../src/engine/paired';
import type { WindowSlice } from '../../../src/shared/profile';
import { ProfileBuilder } from '../model/builder';
import { simulate } from './contentRuns';

function run(from: number, slices: WindowSlice[], seq: number): PairableRun {
  const p = new ProfileBuilder({ cores: 2 }).range().map('f', { self: 1e-3 }).build({ rootElements: 100, rate: 100 });
  p.run.warmupElements = from;
  p.run.windowSlices = slices;
  const curve = runCurve(p);
  assert.ok(curve);
  return { curve, seq };
}

describe('comparing on the same elements', () => {
  it('shows a gain that differences of content between stretches of the data hide from pooled rates', () => {
    // As written and a config 1.5 times as fast, each over elements from 200, sliced every 0.1 s.
    const a = simulate(200, 1, 1.2, 0.1, 0.05, 1);
    const b = simulate(200, 1.5, 1.2, 0.1, 0.05, 2);
    const pooledA = pooledRate(a);
    const pooledB = pooledRate(b);
    assert.equal(reliablyFaster(pooledB, pooledA), false, `the content must hide the gain from pooled rates: ${JSON.stringify({ pooledA, pooledB })}`);
    const p = pairedSpeedup([run(200, b, 1)], [run(200, a, 0)]);
    assert.ok(p, 'the runs share most of their elements');
    assert.ok(p.speedup - p.halfWidth > 1, JSON.stringify(p));
    assert.ok(Math.abs(p.speedup - 1.5) < 0.1, JSON.stringify(p));
  });

  it('finds no gain between two runs of equally fast configurations', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const a = simulate(200, 1, 1.2, 0.1, 0.3, seed);
      const b = simulate(210, 1, 1.2, 0.1, 0.3, seed + 100);
      const p = pairedSpeedup([run(210, b, 1)], [run(200, a, 0)]);
      assert.ok(p);
      assert.ok(!(p.speedup - p.halfWidth > 1 && p.speedup >= 1.03), `seed ${seed}: ${JSON.stringify(p)}`);
      // Nor without the stretch where one of them happened to be fastest.
      assert.ok(p.withoutBest);
      assert.ok(!(p.withoutBest.speedup - p.withoutBest.halfWidth > 1 && p.withoutBest.speedup >= 1.03), `seed ${seed}: ${JSON.stringify(p.withoutBest)}`);
    }
  });

  it('keeps a gain that every stretch shows but one stretch, far faster, widens past 1; and no gain that only that stretch shows', () => {
    // As written: 12 stretches of 100 elements. The config: `typical` of
    // as written's time on each stretch, but 1/100 of it on stretch 5, the costliest (a huge email tokenised in
    // worker threads while the main thread goes on).
    // Its curve at every stretch; its pooled slices three (a short run's window), so pooled rates are wide.
    const side = (seconds: number[], seq: number): MeasuredSide => {
      const n = [0];
      const t = [0];
      for (const x of seconds) {
        n.push(n.at(-1)! + 100);
        t.push(t.at(-1)! + x);
      }
      const slices = [0, 1, 2].map((k) => ({ elements: 400, seconds: t[4 * k + 4]! - t[4 * k]! }));
      return { slices, curves: [{ curve: { n, t }, seq }] };
    };
    // Stretches differ in cost several times over (short emails and long ones), as pooled rates cannot see past.
    const noise = [0.4, 1.9, 0.7, 1.5, 0.3, 5, 1.0, 1.2, 0.5, 1.8, 0.6, 1.4];
    const base = side(noise, 0);
    const config = (typical: number): MeasuredSide =>
      side(
        noise.map((t, k) => (k === 5 ? t / 100 : t * typical * (k % 2 ? 1.03 : 0.97))),
        1,
      );
    const twice = compareSides(config(0.5), base);
    assert.ok(twice.paired);
    assert.ok(twice.speedup - twice.halfWidth < 1, `the far faster stretch must widen the whole interval past 1: ${JSON.stringify(twice)}`);
    assert.ok(twice.withoutBest && Math.abs(twice.withoutBest.speedup - 2) < 0.1, JSON.stringify(twice.withoutBest));
    assert.equal(sideFaster(config(0.5), base), true);
    assert.ok(gainWithoutBest(config(0.5), base));
    // The verdict says what the gain rests on.
    assert.match(withoutBestWords(config(0.5), base), /^ \(1\.9\d× ± 0\.0\d without the stretch of the data where it gained most\)$/);
    // The same stretch far faster, every other one as fast as written: no gain.
    assert.equal(sideFaster(config(1), base), false);
    assert.equal(gainWithoutBest(config(1), base), undefined);
    assert.equal(withoutBestWords(config(1), base), '');
  });

  it('cuts the shared stretch by the sparser run, and times each run over the same elements', () => {
    // A: 100 elements/s from element 0 for 10 s in 1 s slices; B: twice as fast from element 100.
    const a: PairableRun = { curve: { n: [0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000], t: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] }, seq: 0 };
    const b: PairableRun = { curve: { n: [100, 300, 500, 700, 900, 1100], t: [0, 1, 2, 3, 4, 5] }, seq: 1 };
    const p = pairedSpeedup([b], [a]);
    // Shared: elements 100…1000; B has 4 points inside, A 8: five sub-ranges of 180 elements.
    assert.ok(p);
    assert.equal(p.ranges, 5);
    assert.ok(Math.abs(p.speedup - 2) < 1e-12 && p.halfWidth < 1e-12, JSON.stringify(p));
  });

  it('falls back (undefined) when the runs share too little of their elements', () => {
    // A fast plan whose warm-up ran past most of what as written measured.
    const a: PairableRun = { curve: { n: [0, 10, 20, 30, 40, 50], t: [0, 1, 2, 3, 4, 5] }, seq: 0 };
    const b: PairableRun = { curve: { n: [40, 240, 440, 640, 840], t: [0, 0.25, 0.5, 0.75, 1] }, seq: 1 };
    assert.equal(pairedSpeedup([b], [a]), undefined);
    // And when every pair together yields fewer than PAIRED_MIN_RANGES sub-ranges.
    const short: PairableRun = { curve: { n: [0, 20, 50], t: [0, 1, 2] }, seq: 2 };
    const shortB: PairableRun = { curve: { n: [0, 40, 50], t: [0, 1, 1.2] }, seq: 3 };
    assert.ok(PAIRED_MIN_RANGES > 2);
    assert.equal(pairedSpeedup([shortB], [short]), undefined);
  });

  it('pairs each run with the nearest run of the other configuration, each used once (A B B A)', () => {
    const c = (seq: number): PairableRun => ({ curve: { n: [0, 1], t: [0, 1] } as Curve, seq });
    const pairs = pairRuns([c(1), c(2)], [c(0), c(3)]);
    assert.deepEqual(
      pairs.map(([x, y]) => [x.seq, y.seq]),
      [
        [1, 0],
        [2, 3],
      ],
    );
    // More runs of one side than the other: the extra goes unpaired.
    assert.equal(pairRuns([c(1), c(2), c(4)], [c(0)]).length, 1);
  });

  it('of two runs as near (A B A), pairs the one that shared more of its elements, else the earlier', () => {
    // The plan's window covered elements 500…1,600; as written's first run 250…850, its run after
    // the plan's warmed up to 500 and covered 500…900.
    const plan: PairableRun = { curve: { n: [500, 1050, 1600], t: [0, 1, 2] }, seq: 1 };
    const before: PairableRun = { curve: { n: [250, 550, 850], t: [0, 1, 2] }, seq: 0 };
    const after: PairableRun = { curve: { n: [500, 700, 900], t: [0, 0.5, 1] }, seq: 2 };
    assert.equal(pairRuns([plan], [before, after])[0]![1], after);
    assert.equal(pairRuns([plan], [after, before])[0]![1], after, 'whatever the order given');
    // Sharing as much, the earlier.
    const sameAsBefore: PairableRun = { curve: before.curve, seq: 2 };
    assert.equal(pairRuns([plan], [sameAsBefore, before])[0]![1], before);
  });

  it("reads a run's curve from its warm-up and its finest window slices", () => {
    const p = new ProfileBuilder({ cores: 2 }).range().map('f', { self: 1e-3 }).build({ rootElements: 100, rate: 100 });
    p.run.warmupElements = 7;
    p.run.windowSlices = [
      { elements: 3, seconds: 0.5 },
      { elements: 5, seconds: 0.25 },
    ];
    assert.deepEqual(runCurve(p), { n: [7, 10, 15], t: [0, 0.5, 0.75] });
    // The same window cut finer, when the run recorded it.
    p.run.windowCurve = [
      { elements: 1, seconds: 0.25 },
      { elements: 2, seconds: 0.25 },
      { elements: 5, seconds: 0.25 },
    ];
    assert.deepEqual(runCurve(p), { n: [7, 8, 10, 15], t: [0, 0.25, 0.5, 0.75] });
    delete p.run.windowCurve;
    p.run.windowSlices = [{ elements: 3, seconds: 0.5 }];
    assert.equal(runCurve(p), undefined, 'one slice is no curve');
  });
});

describe("a run that measured a cache's fill and replay from start to end", () => {
  // The run of a finite pipeline (repeat(4) after a cache) drained during its warm-up, so its
  // window is its whole life: eleven slices of the fill at ≈ 600/s, then the replay of three
  // epochs in one slice. As written ran at ≈ 600/s throughout and never reached the end.
  const profiles = () => {
    const asWritten = new ProfileBuilder({ cores: 2 }).range(5000).map('f', { self: 1.6e-3 }).op({ kind: 'repeat', count: 4 }).build({ rootElements: 100, rate: 600 });
    asWritten.run.warmupElements = 400;
    asWritten.run.endReason = 'converged';
    asWritten.run.windowSlices = Array.from({ length: 17 }, (_, k) => ({ elements: 44 + (k % 3), seconds: 0.076 }));
    const cached = new ProfileBuilder({ cores: 2 }).range(5000).map('f', { self: 1.6e-3 }).op({ kind: 'cache', overridden: true }).op({ kind: 'repeat', count: 4 }).build({ rootElements: 2499, rate: 2389 });
    cached.run.warmupElements = 1;
    cached.run.endReason = 'exhausted';
    cached.run.windowSlices = [...Array.from({ length: 11 }, (_, k) => ({ elements: 44 + (k % 4), seconds: 0.076 })), { elements: 1949, seconds: 0.135 }];
    cached.run.elements = cached.run.windowSlices.reduce((a, x) => a + x.elements, 0);
    cached.run.seconds = cached.run.windowSlices.reduce((a, x) => a + x.seconds, 0);
    return { asWritten, cached };
  };

  it("counts as one measurement of the whole run's rate, so the two regimes are not read as noise", () => {
    const { asWritten, cached } = profiles();
    assert.equal(wholeLifeWithCache(cached), true);
    assert.equal(wholeLifeWithCache(asWritten), false);
    assert.deepEqual(runSlices(cached), [{ elements: cached.run.elements, seconds: cached.run.seconds }]);
    assert.equal(runCurve(cached), undefined, 'stretch by stretch the fill says 1× and the replay 50×');
    assert.ok(sideFaster(sideOf(cached, 1), sideOf(asWritten, 0)), 'the whole run is ≈ 3.9× as written');
  });

  it('counts the whole life of a run whose warm-up waited for the fill, from its first element, not the replay alone', () => {
    const { cached } = profiles();
    // The warm-up took the fill (624 batches in 1.1 s after the first came at 0.1 s); the window
    // saw only the replay: 1,875 batches in 0.135 s.
    cached.run.warmupElements = 625;
    cached.run.warmupSeconds = 1.2;
    cached.run.firstElementSeconds = 0.1;
    cached.run.windowSlices = [
      { elements: 900, seconds: 0.065 },
      { elements: 975, seconds: 0.07 },
    ];
    cached.run.elements = 1875;
    cached.run.seconds = 0.135;
    assert.equal(wholeLifeWithCache(cached), true);
    const [life] = runSlices(cached);
    assert.equal(life!.elements, 624 + 1875);
    assert.ok(Math.abs(life!.seconds - (1.1 + 0.135)) < 1e-9);
  });

  it('keeps the slices of a window that began after the warm-up in an older profile, or of a run without a cache', () => {
    const { asWritten, cached } = profiles();
    cached.run.warmupElements = 700;
    assert.equal(cached.run.firstElementSeconds, undefined);
    assert.equal(wholeLifeWithCache(cached), false);
    // Read as repeated measurements of one rate, the fill and the replay spread it past any gain.
    assert.equal(sideFaster(sideOf(cached, 1), sideOf(asWritten, 0)), false);
    const noCache = profiles().cached;
    noCache.ops = noCache.ops.filter((o) => o.kind !== 'cache');
    assert.equal(wholeLifeWithCache(noCache), false);
    assert.equal(runSlices(noCache).length, 12);
  });
});

describe('speed-ups in words', () => {
  it('keeps one decimal below 100× and groups whole numbers above (a cache that serves epochs from memory)', () => {
    assert.equal(formatSpeedup(1.74, 0.12), '1.7× ± 0.1');
    assert.equal(formatSpeedup(1.02, 0.03), '1.02× ± 0.03');
    assert.equal(formatSpeedup(14.26), '14.3×');
    assert.equal(formatSpeedup(14053.9, 1373.3), '14,054× ± 1,373');
    assert.equal(formatSpeedup(640.2, 0.2), '640× ± 1');
  });
});
