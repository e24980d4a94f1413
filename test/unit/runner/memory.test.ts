/**
 * What the runner measures for the peak-memory projection, on a real run: the process's base and
 * largest resident set, V8's heap limit, a worker thread's resident cost, and what the elements
 * of each sampled operator hold on the heap (a map's results: 1,024 doubles each); and that the
 * resident set those differences start from is read after a collection's pages are returned.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { runProfile } from '../../../src/runner/spawn';
import { probesLeftBytes } from '../../../src/runner/memory';
import { analyze } from '../../../src/model';
import type { Profile } from '../../../src/shared/profile';

const FILE = path.resolve(__dirname, '../../fixtures/pipelines/memory-shuffle.ts');
/**
 * The least share of its true size a measured element may read: the heap's growth under a few MB
 * of copies also moves by what else the process frees or keeps meanwhile, a few hundred kB (CI
 * read 7,887 bytes for an array of 8,192).
 */
const LOW = 0.95;

describe('runner: memory measurements', function () {
  this.timeout(90_000);
  let profile: Profile;

  before(async () => {
    profile = await runProfile({ file: FILE, seconds: 1, warmupSeconds: 0.3 });
    assert.equal(profile.error, undefined, profile.error?.message);
  });

  it("records the process's base, its largest resident set while the pipeline ran, and the heap limit", () => {
    const { baseRssBytes, windowPeakRssBytes, peakRssBytes } = profile.run;
    assert.ok(baseRssBytes !== undefined && baseRssBytes > 10e6, `base ${baseRssBytes}`);
    assert.ok(windowPeakRssBytes !== undefined && windowPeakRssBytes <= peakRssBytes, `${windowPeakRssBytes} vs ${peakRssBytes}`);
    // The shuffle buffer's 2,000 arrays of 8 kB were alive at once while it ran.
    assert.ok(windowPeakRssBytes - baseRssBytes >= 8e6, `grew ${windowPeakRssBytes - baseRssBytes} bytes`);
    assert.ok((profile.machine.heapLimitBytes ?? 0) > 64 * 2 ** 20);
    // A worker thread holds its own V8 isolate and Node environment: megabytes, never a few pages.
    assert.ok((profile.machine.workerThreadRssBytes ?? 0) > 2 * 2 ** 20, `a worker thread cost ${profile.machine.workerThreadRssBytes} resident bytes`);
  });

  it('records what its own probes before the window left resident, within the base', () => {
    const { probesRssBytes, baseRssBytes } = profile.run;
    assert.ok(probesRssBytes !== undefined && baseRssBytes !== undefined && probesRssBytes >= 0 && probesRssBytes < baseRssBytes, `${probesRssBytes} of ${baseRssBytes}`);
  });

  it("measures a map's results and its sampled inputs on the heap", () => {
    const map = profile.ops.find((o) => o.kind === 'map');
    assert.ok(map?.held, JSON.stringify(map));
    // 8,192 bytes of doubles and the array's own object, and not much more.
    assert.ok(map.held.heapBytes >= LOW * 8192 && map.held.heapBytes < 9000, `held ${map.held.heapBytes}`);
    assert.equal(map.held.sizeBytes, 8192);
    // Its inputs are small integers: a few bytes each at most.
    assert.ok(map.inputHeld && map.inputHeld.heapBytes < 64, JSON.stringify(map.inputHeld));
  });

  it("measures the root's own elements, the batches the runner pulled", () => {
    const batch = profile.ops.find((o) => o.id === profile.pipeline.rootId);
    assert.equal(batch?.kind, 'batch');
    // 16 arrays of 1,024 doubles, batched: at least their 128 kB.
    assert.ok(batch.held && batch.held.heapBytes >= LOW * 16 * 8192 && batch.held.sizeBytes > 0, JSON.stringify(batch.held));
  });

  it('projects the shuffle buffer full of those elements', () => {
    const m = analyze(profile).memory;
    const shuffle = m?.parts.find((p) => p.what === 'shuffle buffer');
    assert.equal(shuffle?.elements, 2000);
    assert.ok(shuffle.bytes >= LOW * 2000 * 8192 && shuffle.bytes < 2000 * 9000, `${shuffle.bytes}`);
  });
});

describe('runner: the resident set after a collection', function () {
  this.timeout(60_000);
  const SETTLE = path.resolve(__dirname, '../../fixtures/memory/settle.ts');
  /** The fixture's falls after each reading, in a process of its own: a test suite's process frees memory of its own meanwhile. */
  const falls = (retainedMB: number, how?: 'once'): number[] => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', SETTLE, String(retainedMB), ...(how ? [how] : [])], { encoding: 'utf8', timeout: 50_000 });
    return (JSON.parse(out) as { falls: number[] }).falls;
  };

  it('is read once the pages the collection freed are returned, so nothing falls after it', () => {
    // A small heap, and 300 MB retained, whose sweep ends 55-75 ms after a collection here.
    for (const retainedMB of [0, 300]) {
      const f = falls(retainedMB);
      assert.equal(f.length, 3);
      assert.ok(
        f.every((b) => b < 2 * 2 ** 20),
        `with ${retainedMB} MB retained the set fell ${f.join(', ')} bytes after the readings`,
      );
    }
  });

  it('tells a reading taken at once after a collection, which the set falls below, from a settled one', () => {
    // The fixture itself can see the fault the test above guards against: 15-30 MB fell here.
    const f = falls(300, 'once');
    assert.ok(
      f.some((b) => b > 8 * 2 ** 20),
      `read at once, the set fell only ${f.join(', ')} bytes`,
    );
  });
});

describe('runner: what its probes leave that a run without them would not hold', () => {
  const MB = 2 ** 20;

  it("counts the resident growth outside V8's heap, not the heap pages the pipeline's own allocation touches too", () => {
    // The digits example: 20 MB more resident after the probes, 11 MB of it the young generation grown.
    assert.equal(probesLeftBytes({ rss: 150 * MB, heap: 40 * MB }, { rss: 170 * MB, heap: 51 * MB }), 9 * MB);
    // A heap that shrank takes nothing from the threads' leftovers.
    assert.equal(probesLeftBytes({ rss: 150 * MB, heap: 40 * MB }, { rss: 155 * MB, heap: 38 * MB }), 5 * MB);
    assert.equal(probesLeftBytes({ rss: 150 * MB, heap: 40 * MB }, { rss: 149 * MB, heap: 40 * MB }), 0);
  });
});
