import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runProfile } from '../../../src/runner/spawn';
import { calibrateWorkerTasks } from '../../../src/runner/calibrate';
import { processCpuSeconds, threadCpuClock, threadRunAndWait } from '../../../src/runner/machine';
import { usedFromNow, WALL_PER_CPU } from '../../../src/runner/moves/timing';
import { measureMoves, type MoveFindings } from '../../../src/runner/moves';
import { copiesFor } from '../../../src/runner/heap';
import { estimateBytes } from '../../../src/data/tracing';
import { Batch } from '../../../src/data/internal/batch-class';
import { isPlainInner, type OpProfile, type Profile } from '../../../src/shared/profile';
import { analyze, describeOp, plan } from '../../../src/model';
import * as probe from '../../fixtures/pipelines/probe-moves';
import * as crossing from '../../fixtures/pipelines/crossing';
import * as warming from '../../fixtures/pipelines/probe-warming';
import { alive } from '../../helpers/processes';
import { underLoad } from '../../../bench/load';
import { spin } from '../../fixtures/pipelines/work';

const PIPELINES = path.resolve(__dirname, '../../fixtures/pipelines');
const MOVES = path.join(PIPELINES, 'probe-moves.ts');
const NESTED = path.join(PIPELINES, 'probe-nested.ts');
const REREAD = path.join(PIPELINES, 'probe-reread.ts');

/** Temporary files and folders a process with this pid made for calibration or move pricing. */
function leftovers(pid: number): string[] {
  return fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith(`plumber-calibrate-${pid}-`) || f.startsWith(`plumber-moves-${pid}-`));
}

function threads(): number {
  return fs.readdirSync('/proc/self/task').length;
}

/** Waits (boundedly) for this process's thread count to come back down to `count`. */
async function threadsBackTo(count: number): Promise<number> {
  for (let i = 0; i < 50 && threads() > count; i++) await new Promise((r) => setTimeout(r, 20));
  return threads();
}

function byExport(p: Profile, name: string): OpProfile {
  const op = p.ops.find((o) => o.fnModule?.exportName === name);
  assert.ok(op, `no operator runs ${name}: ${p.ops.map((o) => o.id).join(', ')}`);
  return op;
}

/** The probe found nothing a copy between threads changes in `id`'s fn, and priced its move. */
function assertMovable(findings: Map<string, MoveFindings>, id: string): void {
  assert.equal(findings.get(id)?.moveBlocked, undefined, `${id}'s move is blocked: ${JSON.stringify(findings.get(id)?.moveBlocked)}`);
  assert.ok(findings.get(id)?.moveCost, `${id}'s move is priced`);
}

describe('the runner measures what honest plan pricing needs', function () {
  this.timeout(90_000);
  let profile: Profile;
  let pid: number | undefined;

  before(async () => {
    profile = await runProfile({ file: MOVES, seconds: 1.5, warmupSeconds: 0.3, onStart: (p) => (pid = p) });
    assert.equal(profile.error, undefined, profile.error?.message);
  });

  it('records at least four consecutive slices of the measured window that add up to it', () => {
    const slices = profile.run.windowSlices;
    assert.ok(slices !== undefined && slices.length >= 4, `window slices: ${JSON.stringify(slices)}`);
    assert.ok(slices.every((s) => s.elements > 0 && s.seconds > 0 && Number.isFinite(s.seconds)));
    // The slices cover the window: their elements and seconds are the window's.
    assert.equal(
      slices.reduce((a, s) => a + s.elements, 0),
      profile.run.elements,
    );
    assert.ok(Math.abs(slices.reduce((a, s) => a + s.seconds, 0) - profile.run.seconds) < 1e-6);
  });

  it('slices a run measured from its start, when a long warm-up drained a finite source, by the elements its batches took', async () => {
    const drained = await runProfile({ file: path.join(PIPELINES, 'drained-batches.ts'), seconds: 1, warmupSeconds: 1000, probes: false });
    assert.equal(drained.error, undefined, drained.error?.message);
    assert.equal(drained.run.endReason, 'exhausted');
    // Measured from the first of its 40 batches: the time before it is the pipeline's start.
    assert.equal(drained.run.warmupElements, 1);
    assert.ok(drained.run.warmupSeconds > 0);
    assert.equal(drained.run.elements, 39);
    // Its counters cover the same window: the batches produced in it are the window's elements.
    const batch = drained.ops.find((o) => o.kind === 'batch');
    assert.equal(batch?.counters.produced, 39);
    const slices = drained.run.windowSlices;
    // 39 batches in one window would be a single rate with a counting error of ±31%; sliced by the
    // images the batches took, the run has a spread of its own.
    assert.ok(slices !== undefined && slices.length >= 4, `window slices: ${JSON.stringify(slices)}`);
    assert.ok(Math.abs(slices.reduce((a, s) => a + s.elements, 0) - 39) < 1e-6);
    assert.ok(Math.abs(slices.reduce((a, s) => a + s.seconds, 0) - drained.run.seconds) < 1e-6);
    // A run without probes learns the free cores from its window alone (where the machine's idle
    // time can be read): no probe threads burn the cores before it.
    if (process.platform === 'linux') {
      assert.equal(drained.machine.availableCores, undefined);
      assert.ok((drained.run.availableCores ?? 0) > 0, `availableCores ${drained.run.availableCores}`);
    }
  });

  it('records the cores free during the window, between none and all of them, and the load average at its end', () => {
    const cores = profile.run.availableCores;
    assert.ok(cores !== undefined && cores > 0 && cores <= profile.machine.cores, `availableCores ${cores} of ${profile.machine.cores}`);
    assert.ok(profile.run.loadAverage !== undefined && profile.run.loadAverage >= 0);
  });

  it('calibrates what one worker task costs the main thread and the worker on this machine', () => {
    assert.ok((profile.machine.workerDispatchSeconds ?? 0) > 0, `dispatch ${profile.machine.workerDispatchSeconds}`);
    assert.ok((profile.machine.workerTaskOverheadSeconds ?? -1) >= 0);
  });

  it('observes randomness from Math.random and crypto.randomUUID, and none in a pure fn or one using ctx.rng', () => {
    assert.equal(byExport(profile, 'jitter').randomObserved, true);
    assert.equal(byExport(profile, 'stamp').randomObserved, true);
    assert.equal(byExport(profile, 'normalise').randomObserved, false);
    const seeded = byExport(profile, 'augment');
    assert.equal(seeded.randomObserved, false);
    // The library itself marks a ctx.rng user random: the two sources complement each other.
    assert.equal(seeded.random, true);
  });

  it('prices moving a map over parsed records: each is a few hundred bytes, yet cloning it costs far more than its bytes at memory speed', () => {
    const cost = byExport(profile, 'normalise').moveCost;
    assert.ok(cost, 'no move cost for the record map');
    assert.ok(cost.samples >= 1);
    assert.ok(cost.inBytes >= 100 && cost.inBytes < 1000, `inBytes ${cost.inBytes}`);
    assert.ok(cost.outBytes >= cost.inBytes, 'the fn adds a field, so its output is larger');
    assert.ok(cost.cloneInSeconds > 0 && cost.cloneOutSeconds > 0 && cost.mainCpuSeconds > 0);
    // The evidence: per-object work dominates, not bytes ÷ 1.2 GB/s.
    assert.ok(cost.cloneInSeconds > (2 * cost.inBytes) / 1.2e9, `clone ${cost.cloneInSeconds} s for ${cost.inBytes} bytes`);
  });

  it("sizes the sampled elements as the byte counters size the window's, so the model can carry clones from one to the other", () => {
    // Rows of one shape: the sample's sizes are the window's, by the same estimate.
    const op = byExport(profile, 'normalise');
    const input = profile.ops.find((o) => o.id === op.inputs[0]);
    assert.ok(op.moveCost && input);
    const perElement = (o: OpProfile): number => o.counters.bytesProduced / o.counters.produced;
    const { inSizeBytes, outSizeBytes } = op.moveCost;
    assert.ok(inSizeBytes !== undefined && outSizeBytes !== undefined, JSON.stringify(op.moveCost));
    const within = (a: number, b: number): boolean => Math.max(a, b) / Math.min(a, b) < 1.2;
    assert.ok(within(inSizeBytes, perElement(input)), `sample in ${inSizeBytes} B, window ${perElement(input)} B`);
    assert.ok(within(outSizeBytes, perElement(op)), `sample out ${outSizeBytes} B, window ${perElement(op)} B`);
    assert.ok(outSizeBytes > inSizeBytes, 'the fn adds a field');
  });

  it('measures a heavy exported fn in a worker thread as well as on the main thread', () => {
    const heavy = byExport(profile, 'heavy').moveCost;
    const light = byExport(profile, 'normalise').moveCost;
    assert.ok(heavy && light);
    assert.ok((heavy.workerCpuSeconds ?? 0) > 0, `worker CPU ${heavy.workerCpuSeconds}`);
    // 300,000 int32 rounds per call against one object spread: the heavy fn costs more on both threads.
    assert.ok(heavy.mainCpuSeconds > light.mainCpuSeconds);
    assert.ok(heavy.outBytes < heavy.inBytes, 'a number comes back for a record');
  });

  it('gives a fn it prices one generator per call, as the library does: a rejection loop on ctx.rng ends', async () => {
    // With a fresh generator on every read of ctx.rng, every draw of a call is the first: a
    // sample whose first draw is at most one half made the probe's call loop forever, and the run
    // hit its time limit.
    const p = await runProfile({ file: path.join(PIPELINES, 'probe-rejection.ts'), seconds: 0.5, warmupSeconds: 0.2, timeoutSeconds: 20 });
    assert.equal(p.error, undefined, p.error?.message);
    const op = byExport(p, 'accept');
    assert.ok(op.moveCost && op.moveCost.samples >= 2, JSON.stringify(op.moveCost));
    assert.equal(op.randomObserved, false, 'the same element draws the same numbers in both calls');
  });

  it('prices only fns it sampled: sources and batches carry no move cost', () => {
    for (const op of profile.ops.filter((o) => o.kind === 'range' || o.kind === 'batch')) {
      assert.equal(op.moveCost, undefined);
      assert.equal(op.randomObserved, undefined);
    }
  });

  it('leaves no process or temporary file behind', () => {
    assert.ok(pid !== undefined && !alive(pid));
    assert.deepEqual(leftovers(pid), []);
  });

  it('skips calibration and move pricing when asked to, still measuring the window', async () => {
    const p = await runProfile({ file: MOVES, seconds: 0.5, warmupSeconds: 0.1, probes: false });
    assert.equal(p.error, undefined, p.error?.message);
    assert.equal(p.machine.workerDispatchSeconds, undefined);
    assert.ok(p.ops.every((o) => o.moveCost === undefined && o.randomObserved === undefined));
    assert.ok(p.run.elements > 0 && p.run.loadAverage !== undefined);
  });

  it('counts a pass of a repeat, and measures on the heap what every sampled op hands on', async () => {
    const p = await runProfile({ file: REREAD, seconds: 0.5, warmupSeconds: 0.2 });
    assert.equal(p.error, undefined, p.error?.message);
    const repeat = p.ops.find((o) => o.kind === 'repeat');
    // range(0, 400) less every fourth: 300 a pass, which no operator could count in advance.
    assert.equal(repeat?.counters.passElements, 300);
    assert.equal(repeat?.cardinality, undefined);
    const bag = byExport(p, 'bagOf');
    const keep = byExport(p, 'keep');
    assert.ok(bag.held !== undefined && bag.held.heapBytes > 200 * 24, `bagOf: ${JSON.stringify(bag.held)}`);
    assert.ok(keep.held !== undefined && keep.held.heapBytes > 200 * 24, `keep: ${JSON.stringify(keep.held)}`);
    // Beside the estimate of the same elements, which counts the id alone.
    assert.equal(bag.held.sizeBytes, 8);
    // After the repeat too: the buffers below it hold what it hands on (src/model/memory.ts).
    assert.ok(byExport(p, 'size').held !== undefined, 'after the repeat: measured for the buffers below it');
    // What cache(path) would pay after the ops a repeat reads again (and only those, where a cache can pay): bytes a record holds, and a write and a read per element.
    for (const op of [bag, keep]) {
      const d = op.diskCacheCost;
      assert.ok(d !== undefined && d.samples > 0 && d.serializedBytes > 0 && d.writeSeconds > 0 && d.readSeconds > 0, `${describeOp(op)}: ${JSON.stringify(d)}`);
    }
    assert.equal(byExport(p, 'size').diskCacheCost, undefined);
  });

  it('records operators inside an interleave’s inner datasets with the interleave as parent', async () => {
    const p = await runProfile({ file: NESTED, exportName: 'interleaved', seconds: 0.5, warmupSeconds: 0.1 });
    assert.equal(p.error, undefined, p.error?.message);
    const interleave = p.ops.find((o) => o.kind === 'interleave');
    assert.ok(interleave);
    const decode = byExport(p, 'decodeRecord');
    assert.equal(decode.parentId, interleave.id);
    assert.equal(interleave.parentId, undefined);
    assert.equal(p.ops.find((o) => o.id === interleave.inputs[0])?.parentId, undefined);
  });

  it('counts the plain iterables an interleave’s fn returns on a source nested in it, so their waits bind', async () => {
    const p = await runProfile({ file: NESTED, exportName: 'generated', seconds: 0.5, warmupSeconds: 0.1 });
    assert.equal(p.error, undefined, p.error?.message);
    const interleave = p.ops.find((o) => o.kind === 'interleave');
    assert.ok(interleave);
    const inner = p.ops.filter((o) => o.parentId === interleave.id);
    assert.equal(inner.length, 1, JSON.stringify(p.ops.map((o) => [o.id, o.kind, o.parentId])));
    assert.ok(isPlainInner(inner[0]!));
    assert.equal(inner[0]!.counters.produced, interleave.counters.produced, 'every element the interleave handed out came from the generators');
    assert.ok(inner[0]!.counters.waitSeconds > 0);
    assert.match(describeOp(inner[0]!), /^inner iterable of interleave (on line \d+|at \S+:\d+)$/);
    // The model reads those waits as the generators' latency: the lever is the interleave's.
    assert.equal(analyze(p).bottleneck.opId, inner[0]!.id);
    const changes = plan(p).changes;
    assert.ok(
      changes.some((c) => c.opId === interleave.id && c.kind === 'cycleLength' && c.to > 1),
      JSON.stringify(changes),
    );
  });

  it('records operators built inside a flatMap’s fn with the flatMap as parent', async () => {
    const p = await runProfile({ file: NESTED, exportName: 'flattened', seconds: 0.5, warmupSeconds: 0.1 });
    assert.equal(p.error, undefined, p.error?.message);
    const flatMap = p.ops.find((o) => o.kind === 'flatMap');
    const inner = p.ops.filter((o) => o.kind === 'map');
    assert.ok(flatMap && inner.length === 1);
    assert.equal(inner[0].parentId, flatMap.id);
  });
});

describe('the runner and the model never move a fn whose elements a copy between threads changes', function () {
  this.timeout(90_000);
  const CROSSING = path.join(PIPELINES, 'crossing.ts');

  it('records that digest returns Digest objects, and the plan leaves it on the main thread saying why; the same bytes as a Buffer are priced', async () => {
    const objects = await runProfile({ file: CROSSING, exportName: 'objects', seconds: 1, warmupSeconds: 0.2 });
    assert.equal(objects.error, undefined, objects.error?.message);
    const digest = byExport(objects, 'digest');
    assert.deepEqual(digest.moveBlocked, { side: 'result', change: 'class', what: 'Digest objects' });
    assert.equal(
      plan(objects).changes.find((c) => c.kind === 'placement'),
      undefined,
    );
    const bottleneck = analyze(objects).bottleneck;
    assert.equal(bottleneck.opId, digest.id);
    // Said when other cores have room for it (not beside other programs that take them).
    if (/Worker threads could run it/.test(bottleneck.reason)) assert.match(bottleneck.reason, /its results are Digest objects, and a copy between threads keeps their data but not their class/);

    const buffers = await runProfile({ file: CROSSING, exportName: 'buffers', seconds: 1, warmupSeconds: 0.2 });
    assert.equal(buffers.error, undefined, buffers.error?.message);
    const bytes = byExport(buffers, 'digestBuffer');
    assert.equal(bytes.moveBlocked, undefined);
    assert.ok(bytes.moveCost, 'the move of the Buffer version is priced');
  });
});

describe('worker calibration and move pricing in this process', function () {
  this.timeout(60_000);

  it('times no fn in a worker that costs the main thread less than cloning its element, and gives the time to one that costs more', async () => {
    const samples = [1, 2, 3].map((i) => ({ element: probe.toRow(i), index: i }));
    const target = (exportName: 'normalise' | 'jitter' | 'heavy', fn: (r: probe.Row) => unknown) => ({ id: exportName, kind: 'map' as const, fn, samples, fnModule: { file: MOVES, exportName } });
    // The cheap fns first, in pipeline order, as in the fixture's pipeline; 0.3 s of the worker's
    // CPU is an equal share of 0.1 s each (70 ms of warm-up) if all three are timed.
    const findings = await measureMoves([target('normalise', probe.normalise), target('jitter', probe.jitter), target('heavy', probe.heavy)], 0.5);
    for (const cheap of ['normalise', 'jitter']) {
      const cost = findings.get(cheap)?.moveCost;
      assert.ok(cost, `${cheap} was measured on the main thread`);
      assert.ok(cost.mainCpuSeconds < cost.cloneInSeconds + cost.cloneOutSeconds, `the scenario: ${cheap} costs less than its clones (${JSON.stringify(cost)})`);
      assert.equal(cost.workerCpuSeconds, undefined, `${cheap} was timed in a worker`);
    }
    assert.ok((findings.get('heavy')?.moveCost?.workerCpuSeconds ?? 0) > 0, 'the heavy fn was timed in a worker');
  });

  it('ends every worker thread it starts and removes every file it writes', async () => {
    const clock = threadCpuClock();
    // A first round starts whatever Node creates lazily (libuv's pool, V8's helpers).
    await calibrateWorkerTasks(MOVES, clock.read, 0.02);
    const before = threads();
    const calibration = await calibrateWorkerTasks(MOVES, clock.read, 0.05);
    const samples = [1, 2, 3].map((i) => ({ element: probe.toRow(i), index: i }));
    // A budget that leaves the worker's warm-up time to see the fn settle on a busy machine (with
    // 0.1 s, 70 ms of warm-up, CI's first run once priced nothing: no steady state, no figure).
    const findings = await measureMoves([{ id: 'heavy', kind: 'map', fn: probe.heavy, samples, fnModule: { file: MOVES, exportName: 'heavy' } }], 1);
    assert.ok(calibration && calibration.dispatchSeconds > 0);
    assert.ok((findings.get('heavy')?.moveCost?.workerCpuSeconds ?? 0) > 0, 'the worker thread did measure');
    assert.equal(await threadsBackTo(before), before);
    assert.deepEqual(leftovers(process.pid), []);
  });

  it('measures what the elements an op hands on hold on the heap, where the byte estimate sees nothing inside a Map', async () => {
    const words = (i: number): Map<string, number> => new Map(Array.from({ length: 200 }, (_, k) => [`w${i}_${k}_${'x'.repeat(k % 8)}`, k]));
    const bag = (i: number): { id: number; pairs: Map<string, number> } => ({ id: i, pairs: words(i) });
    const floats = (i: number): Float32Array => new Float32Array(4096).fill(i);
    const even = (x: { id: number }): boolean => x.id % 2 === 0;
    const samples = (make: (i: number) => unknown) => Array.from({ length: 8 }, (_, i) => ({ element: make(i), index: i }));
    const findings = await measureMoves(
      [
        { id: 'bag', kind: 'map', fn: bag, samples: samples((i) => i), heap: true },
        { id: 'floats', kind: 'map', fn: floats, samples: samples((i) => i), heap: true },
        { id: 'even', kind: 'filter', fn: even, samples: samples(bag), heap: true },
        { id: 'unasked', kind: 'map', fn: bag, samples: samples((i) => i) },
      ],
      0.2,
    );
    const heap = (id: string): number => {
      const h = findings.get(id)?.held?.heapBytes;
      assert.ok(h !== undefined, `no heap figure for ${id}`);
      return h;
    };
    // 200 entries, each a string key of its own and a slot in the Map's table: kilobytes, where
    // the estimate counts 8 bytes for the id.
    assert.ok(heap('bag') > 200 * 24, `bag: ${heap('bag')} B`);
    assert.ok(heap('bag') > 50 * estimateBytes(bag(0)), `bag: ${heap('bag')} B against an estimate of ${estimateBytes(bag(0))} B`);
    // A typed array holds its bytes and a header, not a multiple of them.
    assert.ok(heap('floats') > 4096 * 4 * 0.9 && heap('floats') < 4096 * 4 * 1.5, `floats: ${heap('floats')} B`);
    // A filter hands on its input elements when it keeps them: each as big as a bag.
    assert.ok(heap('even') > heap('bag') / 2 && heap('even') < heap('bag') * 2, `even: ${heap('even')} B, bag: ${heap('bag')} B`);
    assert.equal(findings.get('floats')?.held?.sizeBytes, 4096 * 4, 'beside the estimate of the same elements');
    assert.equal(findings.get('unasked')?.held, undefined, 'measured only where asked');
  });

  it('measures the heap of a flatMap that yields 300,000 elements a call on a few of them, not all', async () => {
    const explode = (i: number): number[] => Array.from({ length: 300_000 }, (_, k) => i + k);
    const findings = await measureMoves([{ id: 'explode', kind: 'flatMap', fn: explode, samples: [0, 1].map((i) => ({ element: i, index: i })), heap: true }], 0.2);
    const held = findings.get('explode')?.held;
    assert.ok(held !== undefined, 'no heap figure');
    // A number in an array slot: 8 bytes, not a megabyte-sized array per element.
    assert.ok(held.heapBytes < 64, `${held.heapBytes} B per element`);
    assert.equal(held.sizeBytes, 8);
  });

  it('holds many copies of small elements to read their heap, and few of large ones: 16 MB at most, each element once', () => {
    assert.equal(copiesFor([1, 2, 3]), 4096);
    const image = new Float32Array(256 * 1024); // 1 MB
    const n = copiesFor([image]);
    assert.ok(n >= 1 && n <= 16, `${n} copies of a 1 MB image`);
    const large = Array.from({ length: 8 }, () => new Float32Array(512 * 1024)); // 2 MB each
    assert.equal(copiesFor(large), 8);
  });

  it('calls a fn that mutates its input on separate copies, so the mutation does not look like randomness', async () => {
    const bump = (r: { n: number }): number => ++r.n;
    const findings = await measureMoves([{ id: 'bump', kind: 'map', fn: bump, samples: [{ element: { n: 1 }, index: 0 }] }], 0.05);
    assert.equal(findings.get('bump')?.randomObserved, false);
    assert.equal(findings.get('bump')?.moveCost?.workerCpuSeconds, undefined, 'an inline fn has no module a worker could load');
  });

  it('awaits an async fn’s calls one at a time: the work after its awaits is its CPU, a timer it waits on is not', async () => {
    // JIT-stable int32 work after an await, as a decode after a file read; and a 20 ms wait.
    const work = async (x: number): Promise<number> => {
      await new Promise((resolve) => setImmediate(resolve));
      let h = x | 0;
      for (let i = 0; i < 4_000_000; i++) h = Math.imul(h ^ i, 0x01000193) | 0;
      return h;
    };
    const wait = async (x: number): Promise<number> => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return x + 1;
    };
    const drawn = async (x: number): Promise<number> => {
      await new Promise((resolve) => setImmediate(resolve));
      return x + Math.random();
    };
    const samples = [1, 2, 3].map((i) => ({ element: i, index: i }));
    const findings = await measureMoves(
      [
        { id: 'work', kind: 'map', fn: work, samples, async: true },
        { id: 'wait', kind: 'map', fn: wait, samples, async: true },
        { id: 'drawn', kind: 'map', fn: drawn, samples, async: true },
      ],
      1,
    );
    const w = findings.get('work')?.moveCost;
    const t = findings.get('wait')?.moveCost;
    assert.ok(w?.awaitedSeconds !== undefined && t?.awaitedSeconds !== undefined, JSON.stringify([...findings]));
    // (Whatever else the thread does while a call waits, a GC of earlier garbage say, is charged to
    // that call: so the margins below are wide.)
    assert.ok(w.mainCpuSeconds > 2 * t.mainCpuSeconds, `work ${w.mainCpuSeconds} s a call, wait ${t.mainCpuSeconds} s`);
    // A timer of 20 ms is waited for in full, and most of it is not the thread's CPU.
    assert.ok(t.awaitedSeconds >= 0.015 && t.awaitedSeconds - t.mainCpuSeconds >= 0.01, JSON.stringify(t));
    assert.equal(w.workerCpuSeconds, undefined, 'the timing worker calls fns synchronously');
    assert.equal(findings.get('work')?.randomObserved, false);
    assert.equal(findings.get('drawn')?.randomObserved, true, 'Math.random after an await is seen');
  });

  it('gives up on an async fn whose call never settles, and prices the others', async () => {
    const never = (): Promise<number> => new Promise<number>(() => undefined);
    const plus = async (x: number): Promise<number> => x + 1;
    const samples = [{ element: 1, index: 0 }];
    const findings = await measureMoves(
      [
        { id: 'never', kind: 'map', fn: never, samples, async: true },
        { id: 'plus', kind: 'map', fn: plus, samples, async: true },
      ],
      0.05,
    );
    assert.equal(findings.get('never'), undefined);
    assert.ok(findings.get('plus')?.moveCost?.awaitedSeconds !== undefined, JSON.stringify([...findings]));
  });

  it('blocks the move of a fn whose results or inputs a copy between threads changes, async fns too, and prices one whose elements cross as they are', async () => {
    class Point {
      constructor(readonly x: number) {}
    }
    const samples = [1, 2, 3].map((i) => ({ element: i, index: i }));
    const findings = await measureMoves(
      [
        { id: 'point', kind: 'map', fn: (i: number) => new Point(i), samples },
        { id: 'buffer', kind: 'map', fn: (i: number) => Buffer.from([i]), samples },
        { id: 'bufferMap', kind: 'map', fn: (i: number) => new Map([['hash', Buffer.from([i])]]), samples },
        { id: 'bytes', kind: 'map', fn: (i: number) => new Uint8Array([i]), samples },
        { id: 'keep', kind: 'filter', fn: (p: Point) => p.x > 1, samples: samples.map((s) => ({ ...s, element: new Point(s.element) })) },
        { id: 'fetched', kind: 'map', async: true, fn: async (p: Point) => p.x, samples: samples.map((s) => ({ ...s, element: new Point(s.element) })) },
      ],
      0.2,
    );
    assert.deepEqual(findings.get('point')?.moveBlocked, { side: 'result', change: 'class', what: 'Point objects' });
    assert.equal(findings.get('point')?.moveCost, undefined);
    // plumber-data rebuilds a Buffer on the main thread: it crosses whole.
    assertMovable(findings, 'buffer');
    assert.deepEqual(findings.get('bufferMap')?.moveBlocked, { side: 'result', change: 'buffer', what: 'Buffers' });
    assertMovable(findings, 'bytes');
    // A filter hands on its input, not a copy, and this one decides the same from a plain copy.
    assert.equal(findings.get('keep')?.moveBlocked, undefined);
    assert.deepEqual(findings.get('fetched')?.moveBlocked, { side: 'input', change: 'class', what: 'Point objects' });
    assert.equal(findings.get('fetched')?.moveCost, undefined);
  });

  it('lets a fn over class instances move when it computes the same from a plain copy, and not when it tells them apart; Batches cross as Batches', async () => {
    class Point {
      constructor(readonly x: number) {}
    }
    const points = [1, 2, 3].map((i) => ({ element: new Point(i), index: i }));
    const batches = [1, 2].map((i) => ({ element: new Batch(new Float32Array([i, i + 1]), [2]), index: i }));
    const findings = await measureMoves(
      [
        { id: 'fields', kind: 'map', fn: (p: Point) => p.x * 2, samples: points },
        { id: 'instanceof', kind: 'map', fn: (p: unknown) => (p instanceof Point ? 1 : 0), samples: points },
        { id: 'sum', kind: 'map', fn: (b: Batch<Float32Array>) => b.data.reduce((a, v) => a + v, 0), samples: batches },
        { id: 'row', kind: 'map', fn: (b: Batch) => b.row(0), samples: batches },
      ],
      0.2,
    );
    assertMovable(findings, 'fields');
    assert.deepEqual(findings.get('instanceof')?.moveBlocked, { side: 'input', change: 'class', what: 'Point objects' });
    assertMovable(findings, 'sum');
    // A worker gets a Batch as a Batch (plumber-data rebuilds it), so its methods work there.
    assertMovable(findings, 'row');
  });

  it('times a fn over Batches in a worker thread on Batches, as plumber-data hands them to its workers', async () => {
    const CROSSING = path.join(PIPELINES, 'crossing.ts');
    const samples = [1, 2, 3].map((i) => ({ element: new Batch(new Float32Array(1024).fill(i), [32, 32]), index: i }));
    const findings = await measureMoves([{ id: 'rows', kind: 'map', fn: crossing.rowSums, samples, fnModule: { file: CROSSING, exportName: 'rowSums' } }], 1);
    assert.equal(findings.get('rows')?.moveBlocked, undefined);
    assert.ok((findings.get('rows')?.moveCost?.workerCpuSeconds ?? 0) > 0, 'the worker thread timed it');
  });

  /** probe-warming's fns as move targets: `warming`, then four that cost the same on every call. */
  function warmingTargets() {
    const WARMING = path.join(PIPELINES, 'probe-warming.ts');
    const samples = [1, 2, 3].map((i) => ({ element: i, index: i }));
    const target = (id: string, exportName: 'settled' | 'warming') => ({ id, kind: 'map' as const, fn: exportName === 'settled' ? warming.settled : warming.warming, samples, fnModule: { file: WARMING, exportName } });
    return { warmingFn: target('warming', 'warming'), settled: ['a', 'b', 'c', 'd'].map((id) => target(id, 'settled')) };
  }

  /** `warming`'s and a settled fn's CPU per call in the worker, which must both be timed. */
  function workerCosts(findings: Map<string, MoveFindings>, when: string): { w: number; s: number } {
    const w = findings.get('warming')?.moveCost?.workerCpuSeconds;
    const s = findings.get('a')?.moveCost?.workerCpuSeconds;
    assert.ok(w !== undefined && s !== undefined, `sent ${when}: the worker timed warming (${w}) and settled (${s})`);
    return { w, s };
  }

  it('gives a fn that settles late in a worker the time the others left, and goes on warming it from where it stopped', async () => {
    const { warmingFn, settled } = warmingTargets();
    // 0.6 s of the worker's CPU for five fns: an equal share each (0.12 s, 84 ms of warm-up) is
    // less than `warming` needs to settle (WARM_SECONDS and six rounds more); the four settled
    // fns need a fraction of theirs.
    const budget = 1;
    const last = await measureMoves([...settled, warmingFn], budget);
    // Sent first, it has not settled in its share, and is sent again with what the others left.
    const first = await measureMoves([warmingFn, ...settled], budget);
    for (const [when, findings] of [
      ['last', last],
      ['first', first],
    ] as const) {
      const { w, s } = workerCosts(findings, when);
      // In its steady state: a figure taken while it was still falling would be several times this.
      assert.ok(w < 1.5 * s, `sent ${when}: warming ${w} s a call, settled ${s} s`);
    }
  });

  it('warms a fn that settles late by the CPU the worker gets, so it is priced warm when other processes take most of the cores', async () => {
    const { warmingFn, settled } = warmingTargets();
    // Two spinning threads a core: the worker gets about a fifth of one, and warm-up rounds of wall
    // time would hold a fifth of the calls, too few to see `warming` fall.
    const findings = await underLoad(
      2 * os.cpus().length,
      () => undefined,
      () => measureMoves([warmingFn, ...settled], 1),
    );
    const { w, s } = workerCosts(findings, 'first, beside the load');
    assert.ok(w < 1.5 * s, `warming ${w} s a call, settled ${s} s`);
  });

  it('tells the time a thread waits for a core from the time it sleeps, and the timer worker’s clock counts only the sleep', async () => {
    const start = threadRunAndWait();
    // The kernel says it on Linux only; elsewhere the timer worker counts all wall time as before.
    assert.equal(start === undefined, process.platform !== 'linux');
    if (start === undefined) return;
    const { busy, slept } = await underLoad(
      4 * os.cpus().length,
      () => undefined,
      async () => {
        const b0 = threadRunAndWait()!;
        const c0 = processCpuSeconds();
        const w0 = performance.now();
        const used = usedFromNow();
        while (threadRunAndWait()!.run - b0.run < 0.15) spin(1, 100_000);
        const usedBusy = used();
        const cpu = processCpuSeconds() - c0;
        const b1 = threadRunAndWait()!;
        const busyWall = (performance.now() - w0) / 1000;
        const sleeping = usedFromNow();
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
        const b2 = threadRunAndWait()!;
        return { busy: { wall: busyWall, run: b1.run - b0.run, wait: b1.wait - b0.wait, cpu, used: usedBusy }, slept: { wait: b2.wait - b1.wait, used: sleeping() } };
      },
    );
    // Spinning beside four busy threads a core, the thread waited for a core most of the time it
    // did not run, and that wait is nearly all of it.
    const off = busy.wall - busy.run;
    assert.ok(busy.wait > 0.3 * busy.wall, `waited ${busy.wait} s of ${busy.wall} s`);
    assert.ok(Math.abs(off - busy.wait) < 0.25 * off, `off a core ${off} s, waiting for one ${busy.wait} s`);
    // The clock the timer worker's time and rounds run on counts the CPU, not the wait for a core
    // (which at a WALL_PER_CPU-th would be 1.5 times the CPU here).
    assert.ok(busy.used < 1.2 * busy.cpu, `used ${busy.used} s for ${busy.cpu} s of CPU in ${busy.wall} s`);
    // Asleep it waited for nothing, but a core when it woke, and the sleep counts at a WALL_PER_CPU-th.
    assert.ok(slept.wait < 0.1, `waited ${slept.wait} s for a core in a 0.3 s sleep`);
    assert.ok(slept.used > 0.3 / WALL_PER_CPU / 2, `a 0.3 s sleep used ${slept.used} s`);
  });

  it('checks a fn that calls its element’s methods on the element itself, and prices no move for it, since a worker would get a plain copy', async () => {
    class Point {
      constructor(readonly x: number) {}
      twice(): number {
        return this.x * 2;
      }
    }
    const twice = (p: Point): number => p.twice();
    const findings = await measureMoves([{ id: 'twice', kind: 'map', fn: twice, samples: [{ element: new Point(3), index: 0 }] }], 0.05);
    assert.equal(findings.get('twice')?.randomObserved, false);
    assert.equal(findings.get('twice')?.moveCost, undefined);
  });
});
