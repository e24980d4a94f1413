import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { listPipelines, runProfile, PipelineListError } from '../../../src/runner/spawn';
import type { RunProfileOptions } from '../../../src/runner/spawn';
import type { Profile } from '../../../src/shared/profile';
import { alive } from '../../helpers/processes';

const BAD = path.resolve(__dirname, '../../fixtures/pipelines/bad');

/**
 * Runs a fixture with a short budget, recording the child's pid. Which limit ended a run is read
 * from its error (each names its own limit), never from the wall time it took on a shared machine.
 */
async function run(name: string, extra: Partial<RunProfileOptions> = {}): Promise<{ profile: Profile; pid?: number }> {
  let pid: number | undefined;
  const profile = await runProfile({ file: path.join(BAD, name), seconds: 0.5, warmupSeconds: 0.2, timeoutSeconds: 8, onStart: (p) => (pid = p), ...extra });
  return { profile, pid };
}

describe('runner isolation', function () {
  this.timeout(30_000);

  it('profiles a steady pipeline and leaves no process behind', async () => {
    const { profile, pid } = await run('ok.ts', { seconds: 1 });
    assert.equal(profile.error, undefined, profile.error?.message);
    assert.ok(profile.run.elements > 0);
    assert.equal(profile.pipeline.exportName, 'default');
    assert.ok(profile.run.rateEstimates.length > 0);
    assert.ok(pid !== undefined && !alive(pid));
  });

  it('says the file does not exist', async () => {
    const { profile, pid } = await run('missing.ts');
    assert.equal(profile.error?.kind, 'not-found');
    assert.match(profile.error!.message, /missing\.ts does not exist/);
    assert.equal(pid, undefined, 'no runner is started for a file that is not there');
  });

  it('shows the compiler message with file:line for a file that does not compile', async () => {
    const { profile, pid } = await run('compile.ts');
    assert.equal(profile.error?.kind, 'compile');
    assert.match(profile.error!.message, /compile\.ts:4:\d+: ERROR: Unexpected/);
    assert.ok(pid !== undefined && !alive(pid));
  });

  it("points a library error about the user's options at the user's line, not into plumber-data", async () => {
    const { profile } = await run('relative-module.ts');
    assert.equal(profile.error?.kind, 'load');
    assert.match(profile.error!.message, /module '\.\/relative-module\.ts' is a relative path/);
    assert.match(profile.error!.message, /\(at [^()]*relative-module\.ts:9:\d+\)\.$/);
  });

  it("names the operator that refused its input at the user's line, and no frame inside plumber-data", async () => {
    const { profile } = await run('unbatch-typed.ts');
    assert.equal(profile.error?.kind, 'throw');
    assert.match(profile.error!.message, /The pipeline threw in unbatch at [^ ]*unbatch-typed\.ts:8:\d+ on element 0 of its input/);
    assert.match(profile.error!.message, /unbatch\(\) needs batches: .*, not a Float32Array\./);
    assert.doesNotMatch(profile.error!.message, /src\/data\/|plumber-data\//, profile.error!.message);
    // Pulled by the runner's own loop: none of its frames either.
    const { profile: rows } = await run('rebatch-rows.ts');
    assert.match(rows.error!.message, /The pipeline threw in rebatch at [^ ]*rebatch-rows\.ts:8:\d+ on element 0 of its input/);
    assert.match(rows.error!.message, /rebatch\(\) needs batches: .*, not a number\.$/);
  });

  it('lists the exports when no pipeline is exported', async () => {
    const { profile } = await run('none.ts');
    assert.equal(profile.error?.kind, 'no-pipeline');
    assert.match(profile.error!.message, /batchSize, helper/);
  });

  it('asks which pipeline to run when there are several, and runs the one named', async () => {
    const ambiguous = await run('two.ts');
    assert.equal(ambiguous.profile.error?.kind, 'no-pipeline');
    assert.deepEqual(ambiguous.profile.error?.available, ['first', 'second']);
    const named = await run('two.ts', { exportName: 'second' });
    assert.equal(named.profile.error, undefined, named.profile.error?.message);
    assert.equal(named.profile.pipeline.exportName, 'second');
    const unknown = await run('two.ts', { exportName: 'third' });
    assert.match(unknown.profile.error!.message, /no pipeline named "third".*first, second/);
  });

  it('reports the element at which the pipeline threw', async () => {
    const { profile, pid } = await run('throws.ts');
    assert.equal(profile.error?.kind, 'throw');
    assert.match(profile.error!.message, /after 5 elements: bad record 5/);
    assert.ok(pid !== undefined && !alive(pid));
  });

  it('ends a pipeline that never yields within its budget', async () => {
    const { profile, pid } = await run('hangs.ts', { startSeconds: 1 });
    assert.equal(profile.error?.kind, 'timeout');
    assert.match(profile.error!.message, /produced no element in 1\.0 s/);
    assert.ok(pid !== undefined && !alive(pid));
  });

  it('kills a pipeline that blocks the main thread when the time limit passes', async () => {
    const { profile, pid } = await run('spins.ts', { timeoutSeconds: 3 });
    assert.equal(profile.error?.kind, 'timeout');
    assert.match(profile.error!.message, /3 s time limit/);
    assert.ok(pid !== undefined && !alive(pid));
  });

  it('says where the pipeline called process.exit', async () => {
    const { profile, pid } = await run('exits.ts');
    assert.equal(profile.error?.kind, 'exit');
    assert.match(profile.error!.message, /process\.exit\(3\).*exits\.ts:5/);
    assert.ok(pid !== undefined && !alive(pid));
  });

  it('reports running out of memory under the memory limit', async () => {
    const { profile, pid } = await run('oom.ts', { memoryMB: 128, seconds: 5 });
    assert.equal(profile.error?.kind, 'oom');
    assert.match(profile.error!.message, /128 MB/);
    assert.ok(pid !== undefined && !alive(pid));
  });

  it('reports a pipeline that yields nothing', async () => {
    const { profile } = await run('empty.ts');
    assert.equal(profile.error?.kind, 'empty');
  });

  it('rejects a malformed override before starting anything', async () => {
    const { profile, pid } = await run('ok.ts', { overrides: { line12: { parallelism: 2 } } });
    assert.equal(profile.error?.kind, 'override');
    assert.match(profile.error!.message, /not an operator id/);
    assert.equal(pid, undefined);
    const negative = await run('ok.ts', { overrides: { '3:5': { parallelism: 0 } } });
    assert.match(negative.profile.error!.message, /parallelism must be a whole number/);
  });

  it('stops the run and its process group when cancelled', async () => {
    const controller = new AbortController();
    const pidFile = path.join(os.tmpdir(), `plumber-test-${process.pid}-cancel.pid`);
    process.env.PLUMBER_TEST_PIDFILE = pidFile;
    try {
      const pending = run('spawns.ts', { signal: controller.signal, seconds: 20, timeoutSeconds: 25, onProgress: () => controller.abort() });
      const { profile, pid } = await pending;
      assert.equal(profile.error?.kind, 'cancelled');
      assert.ok(pid !== undefined && !alive(pid));
    } finally {
      delete process.env.PLUMBER_TEST_PIDFILE;
    }
  });

  it('kills what the pipeline started when the run ends', async () => {
    const pidFile = path.join(os.tmpdir(), `plumber-test-${process.pid}-grandchild.pid`);
    process.env.PLUMBER_TEST_PIDFILE = pidFile;
    try {
      const { profile } = await run('spawns.ts');
      assert.ok(profile.run.elements + profile.run.warmupElements >= 1);
      const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
      // The group kill is delivered before runProfile resolves; the kernel reaps the orphan shortly after.
      const deadline = Date.now() + 3000;
      while (alive(grandchild) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(!alive(grandchild), `grandchild ${grandchild} survived`);
    } finally {
      delete process.env.PLUMBER_TEST_PIDFILE;
      fs.rmSync(pidFile, { force: true });
    }
  });

  it('keeps the pipeline output apart from the profile', async () => {
    const out: string[] = [];
    const { profile } = await run('chatty.ts', { onOutput: (_s, text) => out.push(text) });
    assert.equal(profile.error, undefined, profile.error?.message);
    assert.ok(out.join('').includes('"fake":0'));
    assert.ok(out.join('').includes('working on 0'));
  });

  it('lists the pipelines a module exports', async () => {
    assert.deepEqual(await listPipelines(path.join(BAD, 'two.ts')), ['first', 'second']);
    await assert.rejects(listPipelines(path.join(BAD, 'compile.ts')), (e: unknown) => e instanceof PipelineListError && e.error.kind === 'compile');
  });
});
