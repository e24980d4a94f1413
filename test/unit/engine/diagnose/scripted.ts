/**
 * Scripted runs for diagnose's tests: profiles whose plans have the changes a scenario needs, and a
 * runner that measures each configuration at a rate the test chooses.
 */
import * as assert from 'node:assert/strict';
import type { RunPurpose } from '../../../../src/engine/diagnose';
import { plan as modelPlan } from '../../../../src/model';
import { changeKey, type PlanChange } from '../../../../src/shared/analysis';
import type { Overrides, Profile } from '../../../../src/shared/profile';
import { ProfileBuilder } from '../../model/builder';

export const id = ProfileBuilder.id;

/** Two awaiting maps with one call in flight each and a CPU-heavy importable map on 4 cores: the model proposes three changes. */
export function threeChangeProfile(): Profile {
  const p = new ProfileBuilder({ cores: 4 })
    .range()
    .map('fetch', { latency: 20e-3, parallelism: 1 })
    .map('lookup', { latency: 10e-3, parallelism: 1 })
    .map('decode', { self: 5e-3, module: true })
    .build({ rootElements: 100, rate: 28 });
  assert.equal(modelPlan(p).changes.length, 3, 'the scenario needs a plan of three changes');
  return p;
}

/** Two awaiting maps with one call in flight each: the model raises both parallelisms. */
export function twoChangeProfile(): Profile {
  const p = new ProfileBuilder({ cores: 2 }).range().map('fetch', { latency: 20e-3, parallelism: 1 }).map('lookup', { latency: 10e-3, parallelism: 1 }).build({ rootElements: 100, rate: 33 });
  assert.equal(modelPlan(p).changes.length, 2, 'the scenario needs a plan of two changes');
  return p;
}

/** An awaiting fetch with one call in flight, then a 1 ms decode: the model raises the fetch's parallelism and moves the decode to worker threads. */
export function fetchDecodeProfile(): Profile {
  const p = new ProfileBuilder({ cores: 2 })
    .range()
    .map('fetch', { latency: 20e-3, parallelism: 1 })
    .map('decode', { self: 1e-3, module: true })
    .build({ rootElements: 100, rate: 1 / 21e-3 });
  assert.deepEqual(
    modelPlan(p)
      .changes.map((c) => c.kind)
      .sort(),
    ['parallelism', 'placement'],
    'the scenario needs a parallelism change and a worker move',
  );
  return p;
}

/**
 * fetchDecodeProfile's plan, scripted so that the plan measures what the model predicted and the
 * plan without the worker move (the parallelism alone) measures `without` × that.
 */
export function moveOnTopOfParallelism(without: number) {
  const first = fetchDecodeProfile();
  const planned = modelPlan(first).changes;
  const gain = asPredicted(first);
  const placement = changeKey(planned.find((c) => c.kind === 'placement')!);
  const parallelism = changeKey(planned.find((c) => c.kind === 'parallelism')!);
  const factor = (applied: string[]): number => (applied.length === 2 ? gain : applied.length === 1 && applied[0] === parallelism ? without * gain : 1);
  return { placement, parallelism, s: scripted(first, () => planned, factor) };
}

/** An awaiting fetch with one call in flight: the model proposes one change, more calls in flight. */
export function oneFetchProfile(): Profile {
  const p = new ProfileBuilder({ cores: 2 })
    .range()
    .map('fetch', { latency: 20e-3, parallelism: 1 })
    .build({ rootElements: 100, rate: 1 / 21e-3 });
  assert.equal(modelPlan(p).changes.length, 1, 'the scenario needs a plan of one change');
  return p;
}

/** Gives `first` five window slices within ±2% and `cores` free during its run: a steady run as written. */
export function steadyRun(first: Profile, cores: number): Profile {
  first.run.windowSlices = [1, 1.02, 0.98, 1, 1].map((k) => ({ elements: k * (first.run.elements / first.run.seconds), seconds: 1 }));
  first.run.availableCores = cores;
  return first;
}

/** `run`, with every run after the first finding `cores` free. */
export function findingFree(first: Profile, run: (o: Overrides, purpose: RunPurpose) => Promise<Profile>, cores: number) {
  return async (o: Overrides, purpose: RunPurpose): Promise<Profile> => {
    const p = await run(o, purpose);
    if (p !== first) p.run.availableCores = cores;
    return p;
  };
}

/** The speed-up the model predicts for its whole plan on `first`: a run measuring it falls short of nothing. */
export function asPredicted(first: Profile): number {
  const p = modelPlan(first);
  return p.predictedRate! / p.currentRate!;
}

interface Call {
  purpose: RunPurpose;
  /** Which plan changes the overrides applied, as change keys. */
  applied: string[];
}

function widenedBeyond(changes: PlanChange[], o: Overrides): boolean {
  return changes.some((c) => {
    const k = o[c.opId];
    if (c.kind === 'parallelism') return typeof k?.parallelism === 'number' && k.parallelism > c.to;
    if (c.kind === 'cycleLength') return typeof k?.cycleLength === 'number' && k.cycleLength > c.to;
    return false;
  });
}

/**
 * A scripted runner: the first call returns `first`; every later call returns `first` measured at
 * `factor(applied)` × first's rate, as five windows spread ±`noise`.
 */
export function scripted(first: Profile, changes: () => PlanChange[], factor: (applied: string[]) => number, noise = 0.02, prefetchFactor = 1) {
  const calls: Call[] = [];
  const widened: Call[] = [];
  const prefetched: Call[] = [];
  const rootId = first.pipeline.rootId;
  const run = async (overrides: Overrides, purpose: RunPurpose): Promise<Profile> => {
    const applied = changes()
      .filter((c) => overrides[c.opId] !== undefined && Object.keys(overrides[c.opId]!).length > 0 && appliedKnob(c, overrides))
      .map(changeKey)
      .sort();
    // A prefetch at the end that no plan change asked for is verification's last try.
    const atEnd = overrides[rootId]?.prefetch !== undefined && !changes().some((c) => c.kind === 'prefetch' && c.opId === rootId);
    // A run of the plan with its free levers doubled, or with a prefetch at the end (verification's
    // last phases), is counted apart: the tests of the other phases count the runs of the plan's
    // own configurations.
    if (widenedBeyond(changes(), overrides)) widened.push({ purpose, applied });
    else if (atEnd) prefetched.push({ purpose, applied });
    else calls.push({ purpose, applied });
    if (calls.length === 1 && !atEnd) return first;
    const rate = (first.run.elements / first.run.seconds) * factor(applied) * (atEnd ? prefetchFactor : 1);
    const p = structuredClone(first);
    p.run.overrides = overrides;
    p.run.windowSlices = [-2, -1, 0, 1, 2].map((k) => ({ elements: rate * (1 + (k * noise) / 2), seconds: 1 }));
    p.run.seconds = 1;
    p.run.elements = rate;
    return p;
  };
  return { run, calls, widened, prefetched };
}

export function appliedKnob(c: PlanChange, o: Overrides): boolean {
  const k = o[c.opId]!;
  switch (c.kind) {
    case 'placement':
      return k.placement === 'worker';
    case 'parallelism':
      return k.parallelism === c.to;
    case 'prefetch':
      return k.prefetch === c.size;
    case 'cache':
      return k.cache === 'memory';
    default:
      return false;
  }
}

/** A clock that advances `step` seconds on every run. */
export function steppingClock(step: number): { clock: () => number; tick: () => void } {
  let now = 0;
  return { clock: () => now, tick: () => (now += step) };
}
