/**
 * The model plans only what an operator's own library can change (`OpProfile.levers`), and
 * proposes converting a dialect's chain to plumber-data when only plumber-data's levers reach a
 * better rate. Profiles are hand-built (./builder.ts) and then marked as written in a dialect, so
 * each test can compare the same counters with and without the dialect's levers.
 */
import * as assert from 'node:assert/strict';
import { analyze, can, changeTitle, leverOf, plan, predict } from '../../../src/model';
import type { PlanChange } from '../../../src/shared/analysis';
import type { Dialect, Lever, Profile } from '../../../src/shared/profile';
import { ProfileBuilder } from './builder';
import { trainingProfile } from './training';

const id = ProfileBuilder.id;

/** The profile's operators as written in `dialect`, each with the levers given by index (default: `levers`). */
function inDialect(profile: Profile, dialect: Dialect, levers: Lever[], byIndex: Record<number, Lever[]> = {}): Profile {
  return { ...profile, ops: profile.ops.map((op, i) => ({ ...op, dialect, levers: byIndex[i] ?? levers })) };
}

function change<K extends PlanChange['kind']>(changes: PlanChange[], kind: K, opId?: string): Extract<PlanChange, { kind: K }> | undefined {
  return changes.find((c): c is Extract<PlanChange, { kind: K }> => c.kind === kind && (opId === undefined || c.opId === opId));
}

/** Every change but a conversion is one the operator's library can make. */
function assertWithinLevers(profile: Profile, changes: PlanChange[]): void {
  for (const c of changes) {
    if (c.kind === 'convert') continue;
    const op = profile.ops.find((o) => o.id === c.opId);
    assert.ok(op, `no operator ${c.opId}`);
    const lever = leverOf(c);
    assert.ok(lever !== undefined && can(op, lever), `${changeTitle(c, profile)} is not one of ${op.dialect}'s levers (${op.levers?.join(', ')})`);
  }
}

/** A CPU-heavy map whose fn a worker can import, on 2 cores: plumber-data moves it to worker threads. */
function heavyMap(module: boolean): Profile {
  return new ProfileBuilder({ cores: 2 }).op({ kind: 'from' }).map('augment', { self: 12e-3, module }).batch(32).build({ rootElements: 20, rate: 2.5 });
}

/** An async fn awaited one call at a time, 10 ms each, ahead of 1 ms of work on the main thread. */
function oneAtATime(): Profile {
  return new ProfileBuilder().op({ kind: 'from' }).map('lookup', { latency: 10e-3, self: 20e-6, parallelism: 1 }).map('parse', { self: 1e-3 }).build({ rootElements: 500, rate: 98 });
}

describe('model: levers of a dialect', () => {
  it('moves the heavy map of a plumber-data pipeline to worker threads (the baseline the dialect tests compare with)', () => {
    const p = plan(heavyMap(true));
    assert.equal(change(p.changes, 'placement', id(1))?.to, 'worker');
    assert.equal(change(p.changes, 'convert'), undefined);
  });

  it('gives a tfjs-data map no worker placement, and proposes a conversion whose plumber-data changes place it in workers', () => {
    const profile = inDialect(heavyMap(true), 'tfjs-data', ['prefetch']);
    const p = plan(profile);
    assertWithinLevers(profile, p.changes);
    assert.equal(change(p.changes, 'placement'), undefined);
    const convert = change(p.changes, 'convert');
    assert.ok(convert, 'expected a convert change');
    assert.equal(convert, p.changes[p.changes.length - 1], 'the conversion comes after the dialect’s own changes');
    assert.equal(convert.from, 'tfjs-data');
    assert.equal(convert.opId, profile.pipeline.rootId);
    assert.deepEqual(convert.opIds, [id(0), id(1), id(2)]);
    const move = change(convert.then, 'placement', id(1));
    assert.equal(move?.to, 'worker');
    assert.equal(move?.parallelism, 2);
    // The plan's prediction is the conversion's, which the plumber-data plan of the same counters makes.
    const asPlumber = plan(heavyMap(true));
    assert.equal(p.predictedRate, asPlumber.predictedRate);
    assert.equal(convert.predictedRate, asPlumber.predictedRate);
    assert.match(
      convert.reason,
      /^tfjs-data cannot run map\(augment\) in worker threads\. Converted to plumber-data \(run map\(augment\) in worker threads\), the model predicts [\d.]+ batches\/s, against [\d.]+ batches\/s as written \(tfjs-data's own knobs gain nothing\): the plan predicts the conversion's rate\./,
    );
    assert.match(convert.reason, /plumber-data's lower per-element cost is not priced\.$/);
    // The runner cannot run a conversion by overrides: the plan's overrides stay the dialect's.
    assert.deepEqual(p.overrides, {});
    assert.match(changeTitle(convert, profile), /^convert the pipeline to plumber-data \(run map\(augment\) in worker threads\)$/);
  });

  it('proposes no conversion for a tfjs-data map no worker can import, and says to export it and convert', () => {
    const profile = inDialect(heavyMap(false), 'tfjs-data', ['prefetch']);
    assert.equal(plan(profile).changes.length, 0);
    const a = analyze(profile);
    assert.equal(a.bottleneck.opId, id(1));
    assert.match(a.bottleneck.reason, /but tfjs-data runs it on the main thread only: converted to plumber-data with augment exported \(`export function augment`\), the plan can move it\./);
    assert.doesNotMatch(a.bottleneck.reason, /and the plan can move it/);
  });

  it('tells a tfjs-data map with an exported fn that a conversion, not an export, lets it move', () => {
    const a = analyze(inDialect(heavyMap(true), 'tfjs-data', ['prefetch']));
    assert.match(a.bottleneck.reason, /tfjs-data runs it on the main thread only: converted to plumber-data, the plan can move it\./);
  });

  it('tells a tfjs-data map whose results cannot cross threads as they are what else a move needs besides the conversion', () => {
    const base = heavyMap(true);
    const blocked = { ...base, ops: base.ops.map((op, i) => (i === 1 ? { ...op, moveBlocked: { side: 'result' as const, change: 'class' as const, what: 'Sample objects' } } : op)) };
    const reason = analyze(inDialect(blocked, 'tfjs-data', ['prefetch'])).bottleneck.reason;
    assert.match(reason, /but tfjs-data runs it on the main thread only, and its results are Sample objects, .* and the plan can move it once the pipeline is converted to plumber-data\.$/);
    assert.equal(change(plan(inDialect(blocked, 'tfjs-data', ['prefetch'])).changes, 'convert'), undefined);
  });

  it('tells a tfjs-data generator that computes its elements to hand the work to a map in a converted pipeline', () => {
    const base = new ProfileBuilder({ cores: 2 }).op({ kind: 'from', ownPerElement: 5e-3 }).batch(8).build({ rootElements: 50, rate: 24 });
    const reason = analyze(inDialect(base, 'tfjs-data', ['prefetch'])).bottleneck.reason;
    assert.match(reason, /in a pipeline converted to plumber-data \(tfjs-data runs maps on the main thread too\), and the plan can move that map\.$/);
    assert.doesNotMatch(analyze(base).bottleneck.reason, /converted/);
  });

  it('does not price an override the library cannot apply: a tfjs-data map stays on the main thread', () => {
    const profile = inDialect(heavyMap(true), 'tfjs-data', ['prefetch']);
    const moved = { [id(1)]: { placement: 'worker' as const, parallelism: 2, module: '/work/transforms.ts', exportName: 'augment' } };
    assert.equal(predict(profile, moved).bound, predict(profile, {}).bound);
    assert.ok(predict(heavyMap(true), moved).bound > 1.5 * predict(heavyMap(true), {}).bound);
  });

  it('gives a Node-streams async map at concurrency 1 a concurrency raise, titled with its own option name, and no conversion', () => {
    const profile = inDialect(oneAtATime(), 'node-streams', ['prefetch'], { 1: ['parallelism', 'prefetch'], 2: ['prefetch'] });
    const p = plan(profile);
    assertWithinLevers(profile, p.changes);
    const raise = change(p.changes, 'parallelism', id(1));
    assert.ok(raise, 'expected a concurrency raise');
    assert.equal(raise.from, 1);
    assert.ok(raise.to > 1);
    assert.equal(changeTitle(raise, profile), `set concurrency of map(lookup) to ${raise.to}`);
    // plumber-data would do the same: nothing is left for a conversion.
    assert.equal(change(p.changes, 'convert'), undefined);
    assert.equal(p.predictedRate, plan(oneAtATime()).predictedRate);
  });

  it('gives a tfjs-data mapAsync no parallelism, proposes a conversion that keeps calls in flight, and says why it binds', () => {
    const profile = inDialect(oneAtATime(), 'tfjs-data', ['prefetch']);
    const p = plan(profile);
    assertWithinLevers(profile, p.changes);
    assert.equal(change(p.changes, 'parallelism'), undefined);
    // Its own knob overlaps the calls with the parse after them; only plumber-data keeps several in flight.
    assert.deepEqual(
      p.changes.map((c) => c.kind),
      ['prefetch', 'convert'],
    );
    assert.equal(changeTitle(p.changes[0], profile), 'insert prefetch(2) after map(lookup)');
    const convert = change(p.changes, 'convert');
    assert.ok(convert, 'expected a convert change');
    assert.ok((change(convert.then, 'parallelism', id(1))?.to ?? 0) > 1);
    assert.match(convert.reason, /^tfjs-data cannot set parallelism of map\(lookup\) to \d+/);
    // tfjs-data starts a call when the next element is pulled: its wait and the parse run in series
    // (1 / (10 ms + 1 ms)), where plumber-data's engine overlaps them even with one call in flight.
    const a = analyze(profile);
    assert.equal(a.bottleneck.resource, 'sequential-op');
    assert.ok(Math.abs(a.bound - 1 / (10e-3 + 20e-6 + 1e-3)) < 1e-6 * a.bound, String(a.bound));
    assert.ok(Math.abs(analyze(oneAtATime()).bound - 100) < 1e-6, String(analyze(oneAtATime()).bound));
    assert.equal(a.bottleneck.opId, id(1));
    assert.match(a.bottleneck.reason, /tfjs-data awaits its calls one at a time and has no knob for more; converted to plumber-data, the plan can keep more in flight\./);
    // A plumber-data map is the plan's to tune: no such words.
    assert.doesNotMatch(analyze(oneAtATime()).bottleneck.reason, /converted to plumber-data/);
  });

  it('inserts a prefetch where the library has one, spelt as the library spells it, and converts where it has none', () => {
    const base = new ProfileBuilder().op({ kind: 'from', wait: 5e-3 }).map('decode', { self: 5e-3 }).build({ rootElements: 500, rate: 98 });
    const tfjs = inDialect(base, 'tfjs-data', ['prefetch']);
    const pf = change(plan(tfjs).changes, 'prefetch', id(0));
    assert.equal(pf?.size, 2);
    assert.equal(changeTitle(pf!, tfjs), 'insert prefetch(2) after from');
    const node = inDialect(base, 'node-streams', ['prefetch']);
    const hwm = change(plan(node).changes, 'prefetch', id(0));
    assert.ok(hwm);
    assert.equal(changeTitle(hwm, node), 'set highWaterMark of from to 2');
    assert.match(hwm.reason, /a buffer of its own \(highWaterMark\) lets them run at the same time\.$/);
    assert.match(pf!.reason, /a prefetch buffer after it lets them run at the same time\.$/);
    // Async-generator stages have no knob at all: only a conversion adds the buffer.
    const gen = inDialect(base, 'async-generator', []);
    const p = plan(gen);
    assert.deepEqual(
      p.changes.map((c) => c.kind),
      ['convert'],
    );
    const convert = change(p.changes, 'convert')!;
    assert.equal(change(convert.then, 'prefetch', id(0))?.size, 2);
  });

  it('counts a Node stream’s own highWaterMark as a buffer after it: nothing to insert, and its waits overlap the work after it', () => {
    const base = new ProfileBuilder().op({ kind: 'from', wait: 5e-3 }).map('decode', { self: 5e-3 }).build({ rootElements: 500, rate: 190 });
    const buffered = inDialect(base, 'node-streams', ['prefetch']);
    buffered.ops[0] = { ...buffered.ops[0], knobs: { ...buffered.ops[0].knobs, bufferSize: 16 } };
    assert.equal(change(plan(buffered).changes, 'prefetch'), undefined);
    // In series the two would allow 1 / 10 ms; overlapped, each allows 200 el/s.
    assert.ok(Math.abs(analyze(buffered).bound - 200) < 1e-6, String(analyze(buffered).bound));
    assert.ok(Math.abs(analyze(inDialect(base, 'node-streams', ['prefetch'])).bound - 100) < 1e-6);
    // A plumber-data shuffle's buffer is its window, and a plumber-data operator has no buffer of its own.
    const plain = { ...base, ops: base.ops.map((op, i) => (i === 0 ? { ...op, knobs: { ...op.knobs, bufferSize: 16 } } : op)) };
    assert.ok(Math.abs(analyze(plain).bound - 100) < 1e-6);
  });

  it('proposes no cache in a dialect that has none, but converts to get one', () => {
    const base = new ProfileBuilder().range(1000).map('decode', { self: 10e-3, bytes: 100e3 }).op({ kind: 'repeat', count: -1 }).batch(10).build({ rootElements: 100, rate: 9.8 });
    assert.ok(change(plan(base).changes, 'cache', id(1)));
    const profile = inDialect(base, 'tfjs-data', ['prefetch']);
    const p = plan(profile);
    assertWithinLevers(profile, p.changes);
    assert.equal(change(p.changes, 'cache'), undefined);
    assert.ok(change(change(p.changes, 'convert')?.then ?? [], 'cache', id(1)));
  });

  it('keeps the dialect’s own change and puts the conversion after it when each helps', () => {
    // An async source read one element at a time, a heavy exported map: Node streams can buffer
    // after the source (highWaterMark), only plumber-data can also move the map.
    const base = new ProfileBuilder({ cores: 4 }).op({ kind: 'from', wait: 2e-3 }).map('augment', { self: 4e-3, module: true }).build({ rootElements: 500, rate: 160 });
    const profile = inDialect(base, 'node-streams', ['prefetch']);
    const p = plan(profile);
    assertWithinLevers(profile, p.changes);
    assert.deepEqual(
      p.changes.map((c) => c.kind),
      ['prefetch', 'convert'],
    );
    const convert = change(p.changes, 'convert')!;
    assert.ok(convert.predictedRate! > (p.changes[0].predictedRate ?? 0) * 1.05);
    assert.equal(p.predictedRate, convert.predictedRate);
    assert.match(convert.reason, /against [\d.,]+ el\/s with node-streams' own knobs \(set highWaterMark of from to 2\)/);
  });

  it('proposes a conversion for a tfjs-data pipeline a training loop waits on, in the loop’s steps per second, with the converted pipeline’s verdict', () => {
    const written = trainingProfile({ pipe: 3e-3, step: 1e-3 });
    const profile = inDialect(written, 'tfjs-data', ['prefetch']);
    const p = plan(profile);
    assertWithinLevers(profile, p.changes);
    assert.deepEqual(
      p.changes.map((c) => c.kind),
      ['convert'],
    );
    const convert = change(p.changes, 'convert')!;
    assert.equal(change(convert.then, 'placement', '3:20')?.to, 'worker');
    // The same loop written with plumber-data: its plan's steps per second are the conversion's.
    const asPlumber = plan(written);
    assert.equal(p.predictedRate, asPlumber.predictedRate);
    assert.ok(p.predictedRate > 1.3 * p.currentRate);
    assert.match(convert.reason, /the model predicts [\d.,]+ steps\/s, against [\d.,]+ steps\/s as written/);
    assert.equal(p.trainer?.changed, true);
    assert.deepEqual(p.notes, asPlumber.notes);
  });

  it('converts a Node stream read from an async generator as a Node-streams pipeline, the generator with it', () => {
    const base = new ProfileBuilder({ cores: 2 }).op({ kind: 'from' }).op({ kind: 'from' }).map('augment', { self: 5e-3, module: true }).build({ rootElements: 200, rate: 190 });
    const profile: Profile = {
      ...base,
      ops: base.ops.map((op, i) => (i === 0 ? { ...op, dialect: 'async-generator' as const, levers: [] } : { ...op, dialect: 'node-streams' as const, levers: ['prefetch' as const] })),
    };
    const convert = change(plan(profile).changes, 'convert');
    assert.ok(convert);
    assert.equal(convert.from, 'node-streams');
    assert.deepEqual(convert.opIds, [id(0), id(1), id(2)]);
  });

  it('titles a conversion’s changes with plumber-data’s knob names, which the converted chain is written with', () => {
    // A Node stream stage with no concurrency of its own to give (a Transform): only plumber-data keeps calls in flight.
    const profile = inDialect(oneAtATime(), 'node-streams', ['prefetch']);
    const convert = change(plan(profile).changes, 'convert');
    assert.ok(convert);
    assert.match(changeTitle(convert, profile), /^convert the pipeline to plumber-data \(set parallelism of map\(lookup\) to \d+\)$/);
    assert.match(convert.reason, /^node-streams cannot set parallelism of map\(lookup\) to \d+\./);
  });

  it('plans nothing for a dialect chain that nothing helps', () => {
    // One core, a fn no worker can import: neither the library nor plumber-data can do more.
    const profile = inDialect(new ProfileBuilder({ cores: 1 }).op({ kind: 'from' }).map('augment', { self: 2e-3 }).batch(8).build({ rootElements: 100, rate: 60 }), 'tfjs-data', ['prefetch']);
    const p = plan(profile);
    assert.deepEqual(p.changes, []);
    assert.equal(p.predictedRate, p.currentRate);
  });
});
