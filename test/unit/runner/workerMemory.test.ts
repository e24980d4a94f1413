/**
 * What a worker thread running a fn holds, measured by the runner (src/runner/workerRss.ts): the
 * reader's arithmetic, and a real run in which a map's elements all pass during warm-up (its
 * sample is warm-up's: src/runner/tracer.ts) and its fn is run in the timer worker.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { runProfile } from '../../../src/runner/spawn';
import { ThreadMemoryReader, threadBytes } from '../../../src/runner/workerRss';
import type { Profile } from '../../../src/shared/profile';

const FILE = path.resolve(__dirname, '../../fixtures/pipelines/memory-warm-worker.ts');
const MB = 2 ** 20;

describe('runner: a worker thread running a fn, measured', function () {
  it("adds the thread's resident growth with the fn loaded to its heap's largest growth, read no more often than every few ms", () => {
    let t = 0;
    let heap = 10 * MB;
    const reader = new ThreadMemoryReader(
      () => 150 * MB,
      () => heap,
      () => t,
    );
    reader.loaded();
    // Garbage rises to 40 MB above the start, collected, rises to 25 MB: the top is 40 MB.
    for (const [at, bytes] of [
      [5, 30],
      [10, 50],
      [11, 90],
      [15, 12],
      [20, 35],
    ] as const) {
      t = at;
      heap = bytes * MB;
      reader.poll();
    }
    // The reading at 11 ms came 1 ms after the one at 10: not read (its 90 MB is never seen).
    assert.deepEqual(reader.report(), { loadedRssBytes: 150 * MB, heapGrowthBytes: 40 * MB });
    assert.equal(threadBytes(120 * MB, reader.report()), 30 * MB + 40 * MB);
    assert.equal(threadBytes(undefined, reader.report()), undefined);
    assert.equal(threadBytes(120 * MB, {}), undefined);
  });

  describe('in a real run', function () {
    this.timeout(90_000);
    let profile: Profile;

    before(async () => {
      profile = await runProfile({ file: FILE, seconds: 1, warmupSeconds: 0.3 });
      assert.equal(profile.error, undefined, profile.error?.message);
    });

    it("keeps warm-up's sample of a map whose elements all passed before the window", () => {
      const map = profile.ops.find((o) => o.kind === 'map');
      assert.ok(map?.held, `no sample measured: ${JSON.stringify(map)}`);
      // 16 doubles and the array's own object.
      assert.ok(map.held.heapBytes >= 128 && map.held.heapBytes < 1024, `held ${map.held.heapBytes}`);
    });

    it('measures what a worker thread running its fn adds to the process', () => {
      const map = profile.ops.find((o) => o.kind === 'map');
      const bytes = map?.moveCost?.workerRssBytes;
      assert.ok(map?.moveCost?.workerCpuSeconds !== undefined, `the fn was not run in a worker: ${JSON.stringify(map?.moveCost)}`);
      // A thread with its isolate and module costs at least a MB, and this fn's garbage is tiny.
      assert.ok(bytes !== undefined && bytes > 1 * MB && bytes < 512 * MB, `${bytes}`);
    });
  });
});
