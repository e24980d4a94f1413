import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { runProfile } from '../../../src/runner/spawn';

const PIPELINES = path.resolve(__dirname, '../../fixtures/pipelines');

describe('runner profiles of plumber-data pipelines', function () {
  this.timeout(30_000);

  it('counts the batch in progress when the budget ends the window, in the rate as in every counter', async () => {
    // One 10 ms call at a time into batches of 16: the event loop is free between calls, so the
    // stop timer ends the window inside a batch. The map's counters hold that batch's calls; the
    // window's elements must hold them too, or the rate is low and the calls per batch high.
    const file = path.join(PIPELINES, 'latency-bound.ts');
    const p = await runProfile({ file, seconds: 0.5, warmupSeconds: 0.2, probes: false });
    assert.equal(p.error, undefined, p.error?.message);
    assert.equal(p.run.endReason, 'budget');
    const map = p.ops.find((o) => o.kind === 'map');
    assert.ok(map && p.run.elements >= 1, JSON.stringify(p.run));
    const partial = p.run.partialElement ?? 0;
    assert.ok(partial >= 0 && partial < 1, `partialElement ${partial}`);
    assert.ok(Math.abs(map.counters.produced / 16 - p.run.elements) <= 1.5 / 16, `${map.counters.produced} calls in a window of ${p.run.elements} batches of 16`);
    const sliced = (p.run.windowSlices ?? []).reduce((a, x) => a + x.elements, 0);
    if (p.run.windowSlices) assert.ok(Math.abs(sliced - p.run.elements) < 1e-6, `slices hold ${sliced} of ${p.run.elements}`);
  });

  it('records each operator at its TypeScript line and column, with the chain as run', async () => {
    const file = path.join(PIPELINES, 'latency-bound.ts');
    const profile = await runProfile({ file, seconds: 0.5, warmupSeconds: 0.2 });
    assert.equal(profile.error, undefined, profile.error?.message);
    const byKind = new Map(profile.ops.map((o) => [o.kind, o]));
    // range( is on line 10, `.map(` on line 11 and `.batch(` on line 12 of the fixture.
    assert.equal(byKind.get('range')?.id, '10:25');
    assert.equal(byKind.get('map')?.id, '11:4');
    assert.equal(byKind.get('batch')?.id, '12:4');
    assert.deepEqual(byKind.get('map')?.site, { file, line: 11, column: 4 });
    assert.deepEqual(byKind.get('batch')?.inputs, ['11:4']);
    assert.equal(profile.pipeline.rootId, '12:4');
    assert.equal(profile.pipeline.exportName, 'pipeline');
  });

  it('counts only the measured window: the root operator produced what the run consumed', async () => {
    const profile = await runProfile({ file: path.join(PIPELINES, 'main-thread-bound.ts'), seconds: 0.8, warmupSeconds: 0.3 });
    assert.equal(profile.error, undefined, profile.error?.message);
    const root = profile.ops.find((o) => o.id === profile.pipeline.rootId)!;
    assert.ok(profile.run.warmupElements > 0);
    // Anything produced before the window was subtracted; at most one element is in flight at the ends.
    assert.ok(Math.abs(root.counters.produced - profile.run.elements) <= 1, `${root.counters.produced} vs ${profile.run.elements}`);
    assert.ok(profile.run.mainThreadCpuSeconds > 0);
    assert.ok(profile.run.processCpuSeconds >= profile.run.mainThreadCpuSeconds * 0.5);
    assert.ok((profile.machine.diskReadBytesPerSec ?? 0) > 0);
    // The CPU probe: what this process could get, never more than the machine has.
    const available = profile.machine.availableCores ?? 0;
    assert.ok(available > 0 && available <= profile.machine.cores, `availableCores ${available}`);
    // The runner leads its own session, so with Linux's autogroup on its threads are one group.
    const flag = '/proc/sys/kernel/sched_autogroup_enabled';
    const autogroup = existsSync(flag) ? readFileSync(flag, 'latin1').trim() === '1' : undefined;
    assert.equal(profile.machine.groupScheduled, autogroup);
  });

  it('finds where a main-thread map fn is exported, so it can move to worker threads', async () => {
    const file = path.join(PIPELINES, 'main-thread-bound.ts');
    const profile = await runProfile({ file, seconds: 0.5, warmupSeconds: 0.2 });
    const map = profile.ops.find((o) => o.kind === 'map');
    assert.deepEqual(map?.fnModule, { file, exportName: 'decode' });
    assert.equal(map?.placement, 'main');
  });

  it('finds a map fn exported by another module the pipeline imports', async () => {
    const file = path.join(PIPELINES, 'split', 'pipeline.ts');
    const profile = await runProfile({ file, seconds: 0.4, warmupSeconds: 0.1 });
    assert.equal(profile.error, undefined, profile.error?.message);
    const map = profile.ops.find((o) => o.kind === 'map');
    assert.deepEqual(map?.fnModule, { file: path.join(PIPELINES, 'split', 'transforms.ts'), exportName: 'heavy' });
  });

  it('finds a map fn exported by an ES module the pipeline imports, and runs it in worker threads from there', async () => {
    // A "type": "module" package (tsx loads the .ts files as ES modules) and a native .mjs
    // pipeline: nothing like require.cache lists ES modules, so before the runner logged them
    // these fns had no module and the plan said "heavy is not exported".
    const dir = path.join(PIPELINES, 'split-esm');
    for (const [name, fn, module] of [
      ['pipeline.ts', 'heavy', 'transforms.ts'],
      ['native.mjs', 'spin', 'spin.mjs'],
    ] as const) {
      const file = path.join(dir, name);
      const profile = await runProfile({ file, seconds: 0.4, warmupSeconds: 0.1 });
      assert.equal(profile.error, undefined, profile.error?.message);
      const map = profile.ops.find((o) => o.kind === 'map');
      assert.deepEqual(map?.fnModule, { file: path.join(dir, module), exportName: fn }, name);
      const moved = await runProfile({ file, seconds: 0.4, warmupSeconds: 0.1, probes: false, overrides: { [map!.id]: { placement: 'worker', parallelism: 2, module: map!.fnModule!.file } } });
      assert.equal(moved.error, undefined, moved.error?.message);
      const there = moved.ops.find((o) => o.id === map!.id);
      assert.equal(there?.placement, 'worker', name);
      assert.ok((there?.counters.calls ?? 0) > 0, `${name}: the moved fn ran`);
    }
  });

  it('applies overrides by operator id and reports them', async () => {
    const file = path.join(PIPELINES, 'main-thread-bound.ts');
    const profile = await runProfile({ file, seconds: 0.5, warmupSeconds: 0.2, overrides: { '12:4': { placement: 'worker', parallelism: 2 } } });
    assert.equal(profile.error, undefined, profile.error?.message);
    const map = profile.ops.find((o) => o.id === '12:4')!;
    assert.equal(map.placement, 'worker');
    assert.equal(map.knobs.parallelism, 2);
    assert.ok(map.counters.workerCpuSeconds > 0);
    assert.deepEqual(profile.run.overrides, { '12:4': { placement: 'worker', parallelism: 2 } });
  });

  it('refuses an override whose operator id matches no operator, listing the ids', async () => {
    const profile = await runProfile({ file: path.join(PIPELINES, 'latency-bound.ts'), seconds: 0.3, warmupSeconds: 0.1, overrides: { '40:2': { parallelism: 2 } } });
    assert.equal(profile.error?.kind, 'override');
    assert.match(profile.error!.message, /No operator has the id 40:2.*10:25, 11:4, 12:4/);
  });
});
