import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { listPipelines, PipelineListError, runProfile } from '../../../src/runner/spawn';
import type { RunProfileOptions } from '../../../src/runner/spawn';
import { MIN_ELEMENTS } from '../../../src/runner/measure';
import type { Profile } from '../../../src/shared/profile';
import { gone } from '../../helpers/processes';

const PIPELINES = path.resolve(__dirname, '../../fixtures/pipelines');

function run(name: string, extra: Partial<RunProfileOptions> = {}): Promise<Profile> {
  return runProfile({ file: path.join(PIPELINES, name), seconds: 0.5, warmupSeconds: 0.2, timeoutSeconds: 30, probes: false, ...extra });
}

describe('runner hardening', function () {
  this.timeout(60_000);

  it('ends a detached process the pipeline started when the run ends', async () => {
    const pidFile = path.join(os.tmpdir(), `plumber-test-${process.pid}-detached.pid`);
    process.env.PLUMBER_TEST_PIDFILE = pidFile;
    try {
      const profile = await run('harden-detached.ts');
      assert.equal(profile.error, undefined, profile.error?.message);
      const detached = Number(fs.readFileSync(pidFile, 'utf8'));
      assert.ok(detached > 0);
      assert.ok(await gone(detached), `the detached process ${detached} outlived the run`);
    } finally {
      delete process.env.PLUMBER_TEST_PIDFILE;
      fs.rmSync(pidFile, { force: true });
    }
  });

  it('delivers every line a pipeline prints, the last one included', async () => {
    let out = '';
    const profile = await run('harden-chatty.ts', { onOutput: (stream, text) => (out += stream === 'stdout' ? text : '') });
    assert.equal(profile.error, undefined, profile.error?.message);
    const lines = out.split('\n').filter((l) => l.startsWith('line '));
    assert.equal(lines.length, 20_000);
    assert.equal(lines.at(-1), 'line 20000 of 20000');
  });

  it('measures a source that ends on the last element of warm-up from the whole run, not from an empty window', async () => {
    // A warm-up far longer than the source: it ends by element count, on the source's last element.
    const profile = await run('harden-short.ts', { warmupSeconds: 1000, seconds: 1 });
    assert.equal(profile.error, undefined, profile.error?.message);
    assert.equal(profile.run.endReason, 'exhausted');
    assert.ok(profile.run.elements >= MIN_ELEMENTS, `a rate from ${profile.run.elements} elements`);
    assert.equal(profile.run.elements + profile.run.warmupElements, 100_000);
    assert.ok(profile.run.elements / profile.run.seconds > 0);
  });

  it('lists only the operators of the pipeline that ran, nested ones included', async () => {
    const second = await run('harden-two.ts', { exportName: 'second' });
    assert.equal(second.error, undefined, second.error?.message);
    assert.deepEqual(second.ops.map((o) => o.kind).sort(), ['filter', 'map', 'range']);
    assert.ok(
      second.ops.every((o) => o.id.startsWith('10:')),
      `other pipelines' operators: ${second.ops.map((o) => o.id).join(', ')}`,
    );

    const first = await run('harden-two.ts', { exportName: 'first' });
    assert.equal(first.error, undefined, first.error?.message);
    assert.ok(
      first.ops.every((o) => !o.id.startsWith('10:')),
      `other pipelines' operators: ${first.ops.map((o) => o.id).join(', ')}`,
    );
    const nested = first.ops.filter((o) => o.parentId !== undefined);
    assert.ok(nested.length >= 2, 'the operators built inside the flatMap are kept');
    assert.ok(nested.every((o) => first.ops.some((p) => p.id === o.parentId && p.kind === 'flatMap')));
  });

  it('says a directory is not a pipeline file, without an internal stack path', async () => {
    const profile = await run('.', { cwd: PIPELINES });
    assert.equal(profile.error?.kind, 'not-found');
    assert.match(profile.error!.message, /pipelines is a directory; give the pipeline's \.ts\/\.js file\./);
    assert.doesNotMatch(profile.error!.message, /modules\/esm|node:internal/);
    await assert.rejects(listPipelines(PIPELINES), (e: unknown) => e instanceof PipelineListError && /is a directory/.test(e.error.message));
  });

  it('does not time out at once when the time limit is beyond what a Node timer holds', async () => {
    const profile = await run('harden-tiny.ts', { timeoutSeconds: 2_200_000 });
    assert.equal(profile.error, undefined, profile.error?.message);
    assert.equal(profile.run.endReason, 'exhausted');
  });

  it("refuses an override whose export name is not one of the module's own exported functions", async () => {
    for (const name of ['constructor', 'toString', 'pipeline', 'missing']) {
      const profile = await run('harden-export.ts', { overrides: { '8:40': { placement: 'worker', exportName: name } } });
      assert.equal(profile.error?.kind, 'override', `exportName ${name}: ${profile.error?.message}`);
      assert.match(profile.error!.message, new RegExp(`exports no function named "${name}"\\. Its exported functions: double\\.`));
    }
  });

  it('names the module that exports a fn an override moves to worker threads without naming its module', async () => {
    const profile = await run('split/pipeline.ts', { overrides: { '6:41': { placement: 'worker', parallelism: 2 } } });
    assert.equal(profile.error?.kind, 'override', profile.error?.message);
    const transforms = path.join(PIPELINES, 'split', 'transforms.ts');
    assert.equal(profile.error!.message, `Override for 6:41: placement:worker runs heavy from the module that exports it, and pipeline.ts does not: ${transforms} does. Add --override 6:41=module:${transforms}.`);
    // Named, it runs in worker threads.
    const named = await run('split/pipeline.ts', { overrides: { '6:41': { placement: 'worker', parallelism: 2, module: transforms } } });
    assert.equal(named.error, undefined, named.error?.message);
    assert.equal(named.ops.find((o) => o.id === '6:41')?.placement, 'worker');
  });

  it("names the export a fn an override moves to worker threads has in the pipeline, when it is not the fn's own name", async () => {
    const profile = await run('harden-renamed.ts', { overrides: { '7:41': { placement: 'worker' } } });
    assert.equal(profile.error?.kind, 'override', profile.error?.message);
    assert.equal(profile.error!.message, 'Override for 7:41: placement:worker runs triple from the module that exports it, and harden-renamed.ts exports it as times3. Add --override 7:41=exportName:times3.');
    const named = await run('harden-renamed.ts', { overrides: { '7:41': { placement: 'worker', exportName: 'times3' } } });
    assert.equal(named.error, undefined, named.error?.message);
  });

  it('refuses an override whose worker module does not exist', async () => {
    const missing = path.join(PIPELINES, 'harden-no-such-module.ts');
    const profile = await run('harden-export.ts', { overrides: { '8:40': { placement: 'worker', module: missing, exportName: 'double' } } });
    assert.equal(profile.error?.kind, 'override');
    assert.match(profile.error!.message, /harden-no-such-module\.ts does not exist/);
  });

  it('reports a cache override on a file Plumber did not write as not a cache, and never advises deleting it', async () => {
    const plain = await run('harden-export.ts');
    assert.equal(plain.error, undefined, plain.error?.message);
    const map = plain.ops.find((o) => o.kind === 'map');
    assert.ok(map);
    const stranger = path.join(os.tmpdir(), `plumber-test-${process.pid}-not-a-cache.txt`);
    fs.writeFileSync(stranger, 'root:x:0:0:root:/root:/bin/bash\n');
    try {
      const profile = await run('harden-export.ts', { overrides: { [map.id]: { cache: stranger } } });
      assert.ok(profile.error, 'the run must fail');
      assert.match(profile.error.message, /is not a plumber-data cache file/);
      assert.doesNotMatch(profile.error.message, /delete|remove/i);
      assert.equal(fs.readFileSync(stranger, 'utf8'), 'root:x:0:0:root:/root:/bin/bash\n');
    } finally {
      fs.rmSync(stranger, { force: true });
    }
  });
});
