import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { MIN_ELEMENTS } from '../../../src/runner/measure';
import { runProfile } from '../../../src/runner/spawn';

const FILL = path.resolve(__dirname, '../../fixtures/pipelines/probe-cache-fill.ts');
const RAMP = path.resolve(__dirname, '../../fixtures/pipelines/probe-ramp.ts');
const SLOW_SYNC = path.resolve(__dirname, '../../fixtures/pipelines/slow-sync.ts');

describe('runner warm-up', () => {
  it('goes on until a cache has finished its first pass, so the window measures the cached steady state', async () => {
    // A warm-up far shorter than the fill: without waiting for the cache, the window would start
    // while most elements still run the expensive map.
    const p = await runProfile({ file: FILL, seconds: 0.5, warmupSeconds: 0.01 });
    assert.equal(p.error, undefined, p.error?.message);
    const cache = p.ops.find((o) => o.kind === 'cache');
    const map = p.ops.find((o) => o.kind === 'map');
    assert.ok(cache && map, JSON.stringify(p.ops.map((o) => o.kind)));
    assert.ok(p.run.warmupElements >= 60, `warm-up ended after ${p.run.warmupElements} elements, before the fill of 60`);
    assert.ok(cache.counters.produced > 0);
    // Every element of the window came from the cache; the map ran no call in it.
    assert.equal(cache.counters.cacheHits, cache.counters.produced);
    assert.equal(map.counters.calls, 0);
  });

  it('goes on while the rate is still rising, so the window measures the pipeline after its start-up', async () => {
    // The warm-up's own time ends long before the 80 slow elements are through.
    const p = await runProfile({ file: RAMP, seconds: 0.5, warmupSeconds: 0.01, probes: false });
    assert.equal(p.error, undefined, p.error?.message);
    assert.ok(p.run.warmupElements >= 80, `warm-up ended after ${p.run.warmupElements} elements, inside the slow start`);
    const map = p.ops.find((o) => o.kind === 'map');
    // No slow element was measured: every call in the window was a fast one.
    assert.ok(map && map.counters.calls > 0 && map.counters.selfSeconds / map.counters.calls < 2e-3, JSON.stringify(map?.counters));
  });

  it('warms up on at least the elements asked for, after its own time is up', async () => {
    // ≈ 40 ms an element: the warm-up's own time (and the ramp check's two slices) end after about
    // a dozen elements; the minimum holds it to 40.
    const p = await runProfile({ file: SLOW_SYNC, seconds: 3, warmupSeconds: 0.05, warmupMinElements: 40, probes: false });
    assert.equal(p.error, undefined, p.error?.message);
    assert.ok(p.run.warmupElements >= 40, `warm-up ended after ${p.run.warmupElements} elements`);
    assert.ok(p.run.elements > 0, JSON.stringify(p.run));
    const without = await runProfile({ file: SLOW_SYNC, seconds: 0.3, warmupSeconds: 0.05, probes: false });
    assert.ok(without.run.warmupElements < 40, `warm-up without a minimum ended after ${without.run.warmupElements} elements`);
  });

  it('measures a window anyway when the minimum of warm-up elements is more than the pipeline yields in a window', async () => {
    // ≈ 40 ms an element: 1,000 elements would take 40 s; the warm-up gives up after one window's
    // budget beyond its own time and the run measures as usual.
    // (A warm-up that waited for the minimum would run into the 10 s limit and fail here.)
    const p = await runProfile({ file: SLOW_SYNC, seconds: 0.3, warmupSeconds: 0.05, warmupMinElements: 1000, probes: false, timeoutSeconds: 10 });
    assert.equal(p.error, undefined, p.error?.message);
    assert.ok(p.run.warmupElements < 1000, JSON.stringify(p.run));
    // A window of its own after the warm-up, not the whole run measured from its first element.
    assert.ok(p.run.warmupElements > 1, JSON.stringify(p.run));
    assert.ok(p.run.elements > 0, `the window measured nothing: ${JSON.stringify(p.run)}`);
  });

  it('ends the window at its budget when the pipeline never yields to the event loop', async () => {
    // Each element takes ≈ 40 ms of synchronous work and the stop timer cannot fire in between:
    // the window must still end by its budget, not run on until enough elements converge.
    const p = await runProfile({ file: SLOW_SYNC, seconds: 0.3, warmupSeconds: 0.05, probes: false });
    assert.equal(p.error, undefined, p.error?.message);
    assert.equal(p.run.endReason, 'budget', JSON.stringify(p.run));
    assert.ok(p.run.elements > 0 && p.run.elements < MIN_ELEMENTS, `the window measured ${p.run.elements} elements: it ran past its budget to converge`);
  });

  it('records the share of a core the busy main thread got while runnable', async () => {
    const p = await runProfile({ file: FILL, seconds: 0.5, warmupSeconds: 0.01, probes: false });
    const share = p.run.mainThreadShare;
    assert.ok(share !== undefined && share > 0 && share <= 1, `mainThreadShare ${share}`);
  });
});
