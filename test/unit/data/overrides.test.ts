import assert from 'node:assert/strict';
import { join } from 'node:path';
import { range, siteKey, type KnobOverride, type OpInfo } from 'plumber-data';
import { hashElement, spin } from '../../fixtures/data/cpu-work';
import { traced, type RecordingTracer } from './helpers';

const MODULE = join(__dirname, '../../fixtures/data/cpu-work.ts');

let mapCalls = 0;
/** One pipeline, always built at the same call sites, so overrides keyed by site apply to it. */
function pipeline() {
  return range(20)
    .map(
      async (x) => {
        mapCalls++;
        return x;
      },
      { parallelism: 2 },
    )
    .batch(4)
    .prefetch(2);
}

function keyOf(t: RecordingTracer, kind: string): string {
  const site = t.only(kind).info.site;
  assert.ok(site !== undefined);
  return siteKey(site);
}

function info(t: RecordingTracer, key: string): OpInfo {
  const i = t.infos.find((x) => x.key === key);
  assert.ok(i !== undefined, `no op ${key}; have ${t.infos.map((x) => x.key).join(', ')}`);
  return i;
}

describe('plumber-data overrides', () => {
  it('changes parallelism, inserts a prefetch and a cache, and removes a prefetch, by call site', async () => {
    const plain = traced(pipeline).tracer;
    const overrides = new Map<string, KnobOverride>([
      [keyOf(plain, 'map'), { parallelism: 7, prefetch: 3 }],
      [keyOf(plain, 'batch'), { cache: 'memory' }],
      [keyOf(plain, 'prefetch'), { prefetch: 0 }],
    ]);
    const { tracer, value } = traced(pipeline, overrides);
    const map = tracer.only('map').info;
    assert.equal(map.knobs.resolvedParallelism, 7);
    assert.equal(map.overridden, true);
    const inserted = info(tracer, `${map.key}+prefetch`);
    assert.equal(inserted.kind, 'prefetch');
    assert.equal(inserted.knobs.bufferSize, 3);
    assert.equal(inserted.overridden, true);
    assert.equal(inserted.site, undefined);
    const batch = tracer.only('batch').info;
    assert.deepEqual(batch.inputs, [inserted.key]);
    const cache = info(tracer, `${batch.key}+cache`);
    assert.deepEqual(cache.inputs, [batch.key]);
    const top = tracer.infos.find((i) => i.kind === 'prefetch' && i.site !== undefined);
    assert.equal(top?.knobs.bufferSize, 0);
    assert.deepEqual(top?.inputs, [cache.key]);
    assert.equal(tracer.only('batch').info.overridden, undefined);

    mapCalls = 0;
    const expected = [
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9, 10, 11],
      [12, 13, 14, 15],
      [16, 17, 18, 19],
    ];
    assert.deepEqual(await value.toArray(), expected);
    assert.deepEqual(await value.toArray(), expected);
    assert.equal(mapCalls, 20, 'the inserted cache serves the second epoch');
    assert.ok(tracer.counters.get(map.key)!.inFlightHighWater > 2);
  });

  it('moves a map to worker threads when the override names its module', async () => {
    const build = () => range(20).map(hashElement);
    const plain = traced(build).tracer;
    const overrides = new Map<string, KnobOverride>([[keyOf(plain, 'map'), { placement: 'worker', module: MODULE, parallelism: 2 }]]);
    const { tracer, value } = traced(build, overrides);
    const { info: map, counters } = tracer.only('map');
    assert.equal(map.placement, 'worker');
    assert.deepEqual(map.fnModule, { file: MODULE, exportName: 'hashElement' });
    assert.deepEqual(
      await value.toArray(),
      [...Array(20).keys()].map((x) => spin(x, 200_000)),
    );
    assert.ok(counters.workerCpuSeconds > 0);
  }).timeout(60_000);

  it('disables an existing cache and changes an interleave’s cycle length', async () => {
    let calls = 0;
    const build = () =>
      range(4)
        .interleave((i) => range(i * 10, i * 10 + 2), { cycleLength: 1 })
        .map((x) => {
          calls++;
          return x;
        })
        .cache();
    const plain = traced(build).tracer;
    const overrides = new Map<string, KnobOverride>([
      [keyOf(plain, 'cache'), { cache: false }],
      [keyOf(plain, 'interleave'), { cycleLength: 2 }],
    ]);
    const { tracer, value } = traced(build, overrides);
    assert.equal(tracer.only('interleave').info.knobs.cycleLength, 2);
    assert.equal(tracer.only('cache').info.overridden, true);
    const once = await value.toArray();
    assert.deepEqual(once, [0, 10, 1, 11, 20, 30, 21, 31]);
    assert.deepEqual(await value.toArray(), once);
    assert.equal(calls, 16, 'a disabled cache recomputes every epoch');
  });
});
