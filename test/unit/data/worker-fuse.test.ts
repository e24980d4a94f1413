import assert from 'node:assert/strict';
import { join } from 'node:path';
import { range, type KnobOverride } from 'plumber-data';
import { rejection, traced } from './helpers';

// Adjacent worker maps with `fuse: true` on the later one (issue 54 part 2): one task per group of
// elements carries both fns, so elements cross to a thread and back once.
const MODULE = join(__dirname, '../../fixtures/data/cpu-work.ts');

type Opts = { fuse?: boolean };
const worker = (exportName: string, o: Opts = {}) => ({ placement: 'worker' as const, module: MODULE, exportName, parallelism: 2, ...o });

/** range(n) → map(hashElement) → map(double) in workers, the later one fused or not. */
const twoMaps = (n: number, o: Opts) =>
  range(n)
    .map((x: number) => x, worker('hashElement'))
    .map((x: number) => x, worker('double', o));

describe('plumber-data fused worker maps', function () {
  this.timeout(60_000);

  it('gives the same elements in the same order as the two maps unfused, in one task crossing instead of two', async () => {
    const n = 300;
    const apart = traced(() => twoMaps(n, {}));
    const fused = traced(() => twoMaps(n, { fuse: true }));
    const [a, b] = [await apart.value.toArray(), await fused.value.toArray()];
    assert.deepEqual(b, a);
    const tasks = (t: typeof apart.tracer): number[] => t.infos.filter((i) => i.kind === 'map').map((i) => t.counters.get(i.key)!.workerTasks);
    const [ta, tb] = [tasks(apart.tracer), tasks(fused.tracer)];
    // Unfused, both maps post tasks; fused, the later map runs in the first map's tasks, which carry every element.
    assert.ok(ta[0] > 0 && ta[1] > 0, `unfused tasks: ${ta}`);
    assert.equal(tb[1], 0, `fused: the later map posts no task of its own (${tb})`);
    assert.ok(tb[0] > 0);
    const [first, second] = fused.tracer.infos.filter((i) => i.kind === 'map');
    assert.equal(second.knobs.fuse, true);
    assert.equal(first.knobs.fuse, undefined);
    const c1 = fused.tracer.counters.get(first.key)!;
    const c2 = fused.tracer.counters.get(second.key)!;
    // Each fn's calls and CPU stay its own op's: hashElement does nearly all the work.
    assert.equal(c1.calls, n);
    assert.equal(c2.calls, n);
    assert.equal(c1.produced, n);
    assert.equal(c2.produced, n);
    assert.ok(c1.workerCpuSeconds > 5 * c2.workerCpuSeconds, `hashElement ${c1.workerCpuSeconds} s, double ${c2.workerCpuSeconds} s`);
  });

  it('fuses a filter after a worker map: it keeps the map results that pass, in order', async () => {
    const build = (o: Opts) =>
      range(60)
        .map((x: number) => x, worker('double'))
        .filter((x: number) => x, worker('isMultipleOfThree', o));
    const expected = [...Array(60).keys()].map((x) => x * 2).filter((x) => x % 3 === 0);
    const fused = traced(() => build({ fuse: true }));
    assert.deepEqual(await fused.value.toArray(), expected);
    assert.equal(fused.tracer.only('filter').counters.workerTasks, 0);
    assert.ok(fused.tracer.only('map').counters.workerTasks > 0);
    assert.equal(fused.tracer.only('filter').counters.produced, expected.length);
  });

  it('gives each fused map its own ctx.index and ctx.rng, as unfused', async () => {
    const build = (o: Opts) =>
      range(40)
        .map((x: number) => x, { ...worker('jitter'), seed: 3 })
        .map((x: number) => x, { ...worker('indexOf', o), seed: 9 });
    const build2 = (o: Opts) =>
      range(40)
        .map((x: number) => x, { ...worker('indexOf'), seed: 3 })
        .map((x: number) => x, { ...worker('jitter', o), seed: 9 });
    assert.deepEqual(await build({ fuse: true }).toArray(), await build({}).toArray());
    assert.deepEqual(await build2({ fuse: true }).toArray(), await build2({}).toArray());
  });

  it('names the op and the element whose fn threw, whichever fused map it was', async () => {
    const firstFails = range(10)
      .map((x: number) => x, worker('failOnThree'))
      .map((x: number) => x, worker('double', { fuse: true }));
    const e1 = await rejection(firstFails.toArray());
    assert.equal(e1.op.kind, 'map');
    assert.equal(e1.index, 3);
    assert.match(e1.message, /failOnThree|three is not allowed/);
    const secondFails = range(10)
      .map((x: number) => x, worker('indexOf'))
      .filter((x: number) => x, worker('failOnThree', { fuse: true }));
    const e2 = await rejection(secondFails.toArray());
    assert.equal(e2.op.kind, 'filter');
    assert.equal(e2.index, 3);
  });

  it('runs as written when there is no worker map to fuse with, and honours a fuse override on the later map', async () => {
    const main = range(10)
      .map((x: number) => x + 1)
      .map((x: number) => x, worker('double', { fuse: true }));
    assert.deepEqual(
      await main.toArray(),
      [...Array(10).keys()].map((x) => 2 * (x + 1)),
    );
    // The override is keyed by the later map's call site: capture it from a traced build.
    const probe = traced(() => twoMaps(50, {}));
    const second = probe.tracer.infos.filter((i) => i.kind === 'map')[1];
    const site = second.site!;
    const overrides = new Map<string, KnobOverride>([[`${site.file}:${site.line}:${site.column}`, { fuse: true }]]);
    const over = traced(() => twoMaps(50, {}), overrides);
    assert.deepEqual(await over.value.toArray(), await probe.value.toArray());
    const [f1, f2] = over.tracer.infos.filter((i) => i.kind === 'map');
    assert.equal(f2.knobs.fuse, true);
    assert.equal(f2.overridden, true);
    assert.equal(over.tracer.counters.get(f2.key)!.workerTasks, 0);
    assert.ok(over.tracer.counters.get(f1.key)!.workerTasks > 0);
  });
});
