import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { runProfile } from '../../../src/runner/spawn';

const FILL = path.resolve(__dirname, '../../fixtures/pipelines/probe-cache-fill.ts');

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

  it('records the share of a core the busy main thread got while runnable', async () => {
    const p = await runProfile({ file: FILL, seconds: 0.5, warmupSeconds: 0.01, probes: false });
    const share = p.run.mainThreadShare;
    assert.ok(share !== undefined && share > 0 && share <= 1, `mainThreadShare ${share}`);
  });
});
