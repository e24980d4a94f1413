import { strict as assert } from 'node:assert';
import { RunnerTracer, SAMPLES_PER_OP } from '../../../src/runner/tracer';

/** Offers elements 0..n-1 of one operator the way the library does: only at the indices the tracer asks for. */
function stream(tracer: RunnerTracer, key: string, n: number, element: (i: number) => unknown = (i) => i): number {
  let offers = 0;
  for (let i = 0; i < n;) {
    offers++;
    const skip = tracer.sample(key, element(i), i);
    if (skip <= 0) break;
    i += skip;
  }
  return offers;
}

describe('the runner tracer’s element samples', () => {
  it('keeps a few elements from the measured window only, spread over it, with far fewer offers than elements', () => {
    const tracer = new RunnerTracer();
    // Warm-up's elements (negative here) are kept only until the window offers one.
    stream(tracer, 'map@a', 1000, (i) => -1 - i);
    assert.ok((tracer.samples().get('map@a') ?? []).every((s) => (s.element as number) < 0));
    tracer.snapshot();
    const offers = stream(tracer, 'map@a', 100_000);
    tracer.endSampling();
    assert.equal(stream(tracer, 'map@a', 100), 1, 'after the window the first offer is refused');
    const kept = tracer.samples().get('map@a') ?? [];
    assert.equal(kept.length, SAMPLES_PER_OP);
    assert.ok(offers < 1000, `${offers} offers for 100,000 elements`);
    // Uniform over the stream: a sample of 8 all in the first tenth has probability 1e-8.
    assert.ok(kept.some((s) => s.index >= 10_000));
    assert.ok(kept.every((s) => s.element === s.index));
  });

  it("keeps warm-up's elements of an operator the window offers none of (a finite map that passed all its elements while a buffer filled)", () => {
    const tracer = new RunnerTracer();
    const offers = stream(tracer, 'map@warm', 1000);
    tracer.snapshot();
    stream(tracer, 'map@late', 10);
    tracer.endSampling();
    const kept = tracer.samples().get('map@warm') ?? [];
    assert.ok(offers <= 1000 / 16 + 1, `${offers} offers during warm-up`);
    assert.equal(kept.length, SAMPLES_PER_OP);
    assert.ok(kept.every((s) => s.element === s.index));
    assert.equal(tracer.samples().get('map@late')?.length, SAMPLES_PER_OP);
  });

  it("keeps a few of the root's own elements apart from the operators' inputs, fewer bytes of them", () => {
    const tracer = new RunnerTracer();
    tracer.snapshot();
    const batch = new Float64Array(256 * 1024); // 2 MB
    for (let i = 0; i < 1000; i++) tracer.sampleOutput('batch@root', batch);
    tracer.endSampling();
    assert.equal(tracer.samples().size, 0);
    // 4 MB of them at most, whatever an operator's inputs may keep.
    assert.equal(tracer.outputSamples().get('batch@root')?.length, 2);
  });

  it('keeps fewer elements of an operator whose elements are large', () => {
    const tracer = new RunnerTracer();
    tracer.snapshot();
    const big = new Float64Array(1024 * 1024); // 8 MB
    stream(tracer, 'map@big', 50, () => big);
    tracer.endSampling();
    const kept = tracer.samples().get('map@big') ?? [];
    assert.ok(kept.length >= 1 && kept.length < SAMPLES_PER_OP, `kept ${kept.length}`);
  });
});

describe('the runner tracer’s latency histograms', () => {
  it('reports the measured window’s calls by latency, less the warm-up’s, entry by entry', () => {
    const tracer = new RunnerTracer();
    const c = tracer.register({ key: 'map@h', kind: 'map', inputs: [], placement: 'main', knobs: {}, random: false });
    c.latencyHistogram = [0, 5, 1];
    tracer.snapshot();
    // The library adds to the array it holds: the baseline must not move with it.
    c.latencyHistogram[1] += 2;
    c.latencyHistogram[2] += 7;
    const [op] = tracer.ops('/p.ts', new Map());
    assert.deepEqual(op.counters.latencyHistogram, [0, 2, 7]);
    assert.equal(op.counters.taskHistogram, undefined);
  });
});
