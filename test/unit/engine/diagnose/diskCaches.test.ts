/**
 * A diagnosis's disk caches: every run that names a plan's cache(path) starts without the file (so
 * it measures its own first pass, then reads back what it wrote), and none is left after.
 */
import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { diskCachePaths, freshDiskCaches } from '../../../../src/engine/diagnose/diskCaches';
import type { DiagnoseInput } from '../../../../src/engine/diagnose';
import type { Overrides, Profile } from '../../../../src/shared/profile';
import { ProfileBuilder } from '../../model/builder';

describe('diagnose: disk caches between runs', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'plumber-diskcache-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('removes the cache a run names before the run and every one after, never a file the plan did not name', async () => {
    const ours = path.join(dir, 'train-11_4.plumbercache');
    const users = path.join(dir, 'mine.cache');
    writeFileSync(ours, 'PLDC2\nstale');
    writeFileSync(users, 'kept');
    const profile = new ProfileBuilder().range(10).map('f', { self: 1e-3 }).build({ rootElements: 10, rate: 100 });
    const seen: boolean[] = [];
    const input = {
      file: '/work/pipeline.ts',
      run: async (overrides: Overrides): Promise<Profile> => {
        seen.push(existsSync(ours));
        // The run writes the cache, as plumber-data would at the end of its first pass.
        if (diskCachePaths(overrides).length > 0) writeFileSync(ours, 'PLDC2\nfresh');
        return profile;
      },
    } as unknown as DiagnoseInput;
    const { input: fresh, cleanup } = freshDiskCaches(input);
    await fresh.run({ '11:4': { cache: ours }, '12:4': { cache: users } }, 'verify');
    await fresh.run({ '11:4': { cache: ours } }, 'verify');
    assert.deepEqual(seen, [false, false], 'each run starts without the cache it names');
    assert.ok(existsSync(ours));
    await cleanup();
    assert.equal(existsSync(ours), false, 'no cache is left after the diagnosis');
    assert.ok(existsSync(users), "a file the plan did not name as a Plumber cache is the user's");
  });

  it('names only disk caches, not memory ones', () => {
    assert.deepEqual(diskCachePaths({ a: { cache: 'memory' }, b: { cache: '/x/y.plumbercache' }, c: { cache: false }, d: { parallelism: 2 } }), ['/x/y.plumbercache']);
  });
});
