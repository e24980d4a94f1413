/**
 * Every example pipeline runs: profiled through the real runner (a child process, as the editor
 * and the CLI do) until it has produced one root element. The full smoke benchmark (every
 * configuration, the plan, the grid) is `npm run test:bench`, out of the unit suite.
 */
import * as assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sourceArgSites } from '../../../src/engine/diagnose/file';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import { runProfile } from '../../../src/runner/spawn';

const ROOT = resolve(__dirname, '..', '..', '..');
/** The file each example runs: its pipeline, or the training script of a training example (profiled as it trains). */
const entryOf = (name: string): string | undefined => ['pipeline.ts', 'train.ts'].map((f) => join(ROOT, 'examples', name, f)).find((f) => existsSync(f));
/** Every folder of examples/ with a pipeline or a training script, so a new example is covered without a list to update. */
const EXAMPLES = readdirSync(join(ROOT, 'examples'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && !d.name.startsWith('.') && entryOf(d.name) !== undefined)
  .map((d) => d.name);

describe('the examples', function () {
  // The budgets below end each run by its count of elements; the time limits only stop a hang. A
  // first run also generates sample data (images: ~12 s on an idle machine), slower under load.
  this.timeout(15 * 60_000);

  it('are found: each folder of examples/ with a pipeline.ts', () => {
    assert.ok(EXAMPLES.length >= 5, `found ${EXAMPLES.join(', ')}`);
  });

  for (const name of EXAMPLES) {
    it(`${name}: produces a root element through the runner, without an error`, async () => {
      const file = entryOf(name) as string;
      // As the editor and the CLI run it: with the positions of pipeline()/compose() arguments the
      // source shows (a stack cannot).
      const graphs = new GraphWorkspace();
      graphs.setText(file, readFileSync(file, 'utf8'));
      const argSites = sourceArgSites(file, graphs);
      const profile = await runProfile({
        file,
        ...(argSites.length > 0 ? { argSites } : {}),
        maxElements: 1,
        warmupSeconds: 0,
        seconds: 600,
        startSeconds: 600,
        timeoutSeconds: 900,
      });
      assert.equal(profile.error, undefined, `${name} failed: ${profile.error?.message}`);
      assert.ok(profile.run.elements >= 1, `${name} produced ${profile.run.elements} elements (end: ${profile.run.endReason})`);
      assert.ok(profile.ops.length >= 2, `${name}: the runner saw ${profile.ops.length} operators`);
    });
  }

  it('cluster: says Redis is missing, instead of waiting for it, when redis-server cannot be found', async () => {
    // The runner and its workers start from absolute paths; only redis-server is looked up on PATH.
    const { PATH: path, PLUMBER_REDIS: redis } = process.env;
    process.env.PATH = '';
    delete process.env.PLUMBER_REDIS;
    try {
      const profile = await runProfile({ file: entryOf('cluster') as string, maxElements: 1, warmupSeconds: 0, seconds: 600, startSeconds: 600, timeoutSeconds: 120 });
      assert.match(profile.error?.message ?? '', /redis-server is not installed: install Redis .* or set PLUMBER_REDIS/);
      assert.equal(profile.run.elements, 0);
    } finally {
      process.env.PATH = path;
      if (redis !== undefined) process.env.PLUMBER_REDIS = redis;
    }
  });
});
