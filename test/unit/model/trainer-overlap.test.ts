/**
 * The trainer model prices what a training step that holds the main thread does to a worker pool:
 * while the step runs nothing is posted and no result is taken, so the pool works only on the
 * tasks its threads hold (two each); a root element's work beyond them (a batch of 64 elements
 * against two tasks of a few per thread) is made while the loop waits. A real profile of examples/train-digits as written
 * (tfjs-layers on the pure-JS CPU backend, 2 cores; recorded with the runner) and hand-built ones.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { plan } from '../../../src/model';
import { trainerRate, uncoveredShare, WORKER_TASKS_PER_THREAD } from '../../../src/model/trainer';
import type { Overrides, Profile } from '../../../src/shared/profile';
import { trainingProfile } from './training';

const DIGITS = resolve(__dirname, '../../fixtures/train/digits-as-written.profile.json');
const AUGMENT = '21:115';

function digits(): Profile {
  return JSON.parse(readFileSync(DIGITS, 'utf8')) as Profile;
}

/** augment in a pool of `threads` worker threads. */
function pool(p: Profile, threads: number): Overrides {
  const op = p.ops.find((o) => o.id === AUGMENT)!;
  return { [AUGMENT]: { placement: 'worker', parallelism: threads, module: op.fnModule!.file, exportName: op.fnModule!.exportName } };
}

describe('the trainer in the loop: a step that holds the main thread (model)', () => {
  it('leaves none of the pipeline uncovered as written (no worker threads)', () => {
    const p = digits();
    assert.equal(uncoveredShare({ ...p, trainer: undefined }, {}), 0);
  });

  it('leaves part of a 64-element batch to the wait with one thread, less with more threads, none once the posted tasks cover it', () => {
    const p = digits();
    const alone = { ...p, trainer: undefined };
    const shares = [1, 2, 3, 4, 8, 16].map((k) => uncoveredShare(alone, pool(p, k)));
    assert.ok(shares[0]! > 0.25, `one thread leaves ${shares[0]} of the batch to the wait`);
    for (let i = 1; i < shares.length; i++) assert.ok(shares[i]! <= shares[i - 1]!, `shares fall with threads: ${shares.join(', ')}`);
    // Enough threads for WORKER_TASKS_PER_THREAD tasks of one element each to cover the batch.
    assert.equal(uncoveredShare(alone, pool(p, Math.ceil(64 / WORKER_TASKS_PER_THREAD))), 0);
  });

  it('predicts one worker thread well below the rate two give, and below 1.3× as written (it measured 1.17× on main)', () => {
    const p = digits();
    const asWritten = trainerRate(p, {}).rate;
    const one = trainerRate(p, pool(p, 1)).rate;
    const two = trainerRate(p, pool(p, 2)).rate;
    assert.ok(one / asWritten < 1.3, `one thread predicted ${(one / asWritten).toFixed(2)}× as written`);
    assert.ok(two > one * 1.1, `two threads ${two.toFixed(1)} against one ${one.toFixed(1)} steps/s`);
  });

  it('plans at least two worker threads for the digits loop', () => {
    const p = digits();
    const made = plan(p);
    assert.ok(made.trainer?.changed, made.trainer?.summary);
    assert.ok((made.trainer?.workers ?? 0) >= 2, made.trainer?.summary);
  });

  it('plans a pool beyond the cores when the threads it adds hold more of the batch through a step, and never past twice the cores', () => {
    const p = digits();
    const made = plan(p);
    const cores = p.machine.cores;
    const workers = made.trainer?.workers ?? 0;
    assert.ok(workers > cores, `${workers} worker threads on ${cores} cores: ${made.trainer?.summary}`);
    assert.ok(workers <= 2 * cores, made.trainer?.summary);
    // The pool it chose leaves less of the batch to the wait than a pool of one thread per core.
    const alone = { ...p, trainer: undefined };
    assert.ok(uncoveredShare(alone, pool(p, workers)) < uncoveredShare(alone, pool(p, cores)));
    // Asked for at most `cores` threads per pool, it keeps to them.
    assert.ok((plan(p, { maxWorkers: cores }).trainer?.workers ?? 0) <= cores);
  });

  it('slows the step by what a pool beyond the cores takes from it while the pool works through its tasks', () => {
    // The pool ran four threads on two cores; each step's 3 ms of worker CPU is posted before it.
    const two = trainingProfile({ pipe: 3e-3, step: 10e-3, workers: 4, wait: 0.5e-3, cores: 2 });
    const threads = (k: number): Overrides => ({ '3:20': { placement: 'worker', parallelism: k } });
    const rates = [1, 2, 3, 4].map((k) => trainerRate(two, threads(k)));
    // Five runnable threads on two cores: the trainer's thread gets two fifths of a core until the pool is through.
    assert.equal(rates[3]!.limit, 'trainer');
    assert.ok(rates[3]!.rate < rates[2]!.rate && rates[2]!.rate < rates[1]!.rate, rates.map((r) => r.rate.toFixed(1)).join(', '));
    // Where the cores hold every thread, the pool's size takes nothing from the step.
    const eight = trainingProfile({ pipe: 3e-3, step: 10e-3, workers: 4, wait: 0.5e-3, cores: 8 });
    const wide = [2, 4].map((k) => trainerRate(eight, threads(k)).rate);
    assert.ok(Math.abs(wide[0]! - wide[1]!) <= 1e-9 * wide[0]!, wide.join(' vs '));
  });

  it('changes nothing for a loop whose root element is one element (the posted tasks cover it)', () => {
    const p = trainingProfile({ pipe: 3e-3, step: 1e-3 });
    const moved = plan(p).overrides;
    assert.equal(uncoveredShare({ ...p, trainer: undefined }, moved), 0);
  });
});
