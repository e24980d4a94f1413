import { strict as assert } from 'node:assert';
import { readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { trainerFigures } from '../../../src/model/trainer';
import { runProfile } from '../../../src/runner/spawn';
import type { Profile } from '../../../src/shared/profile';
import { gone } from '../../helpers/processes';

const SCRIPT = path.resolve(__dirname, '../../fixtures/train/synthetic.ts');

/** Profiles the synthetic training script with its work set through the environment the runner child inherits. */
async function profileTraining(env: Record<string, number | string>, extra: { onStart?(pid: number): void; seconds?: number } = {}): Promise<Profile> {
  const saved = { ...process.env };
  for (const [k, v] of Object.entries(env)) process.env[k] = String(v);
  try {
    return await runProfile({ file: SCRIPT, seconds: extra.seconds ?? 0.8, warmupSeconds: 0.1, probes: false, ...(extra.onStart ? { onStart: extra.onStart } : {}) });
  } finally {
    for (const k of Object.keys(env)) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
}

function inputBound(p: Profile): number {
  assert.equal(p.error, undefined, p.error?.message);
  assert.ok(p.trainer, 'the profile has no trainer section');
  return p.trainer.waitSeconds / p.trainer.seconds;
}

describe('runner: a training script profiled as written', () => {
  it('recognises a module that iterates a dataset in a loop of its own, and splits the loop’s window into waits and steps', async () => {
    const p = await profileTraining({ TRAIN_PIPE_ROUNDS: 200_000, TRAIN_STEP_ROUNDS: 200_000 });
    assert.equal(p.error, undefined, p.error?.message);
    const t = p.trainer;
    assert.ok(t);
    assert.ok(t.steps > 0 && t.warmupSteps >= 3, JSON.stringify(t));
    assert.equal(t.seconds, t.waitSeconds + t.stepSeconds);
    assert.equal(p.run.elements, t.steps);
    // Slices of the window in steps, as a pipeline run's, that add up to it: verification's spread.
    const slices = p.run.windowSlices;
    assert.ok(slices !== undefined && slices.length >= 4, `window slices: ${JSON.stringify(slices)}`);
    assert.ok(slices.every((s) => s.elements > 0 && s.seconds > 0));
    assert.equal(
      slices.reduce((a, s) => a + s.elements, 0),
      t.steps,
    );
    assert.ok(Math.abs(slices.reduce((a, s) => a + s.seconds, 0) - t.seconds) < 1e-6);
    // The loop's input is the pipeline it iterates: its last operator is the profile's root.
    const root = p.ops.find((o) => o.id === p.pipeline.rootId);
    assert.equal(root?.kind, 'prefetch');
    assert.ok(p.ops.some((o) => o.kind === 'map' && o.counters.calls > 0));
  });

  it('reads a slower pipeline as a more input-bound loop', async () => {
    const light = inputBound(await profileTraining({ TRAIN_PIPE_ROUNDS: 100_000, TRAIN_STEP_ROUNDS: 400_000 }));
    const heavy = inputBound(await profileTraining({ TRAIN_PIPE_ROUNDS: 1_600_000, TRAIN_STEP_ROUNDS: 400_000 }));
    assert.ok(heavy > light + 0.2, `input-bound ${heavy} with the heavy pipeline vs ${light} with the light one`);
  });

  it('reads a heavier step as a less input-bound loop', async () => {
    const light = inputBound(await profileTraining({ TRAIN_PIPE_ROUNDS: 800_000, TRAIN_STEP_ROUNDS: 100_000 }));
    const heavy = inputBound(await profileTraining({ TRAIN_PIPE_ROUNDS: 800_000, TRAIN_STEP_ROUNDS: 3_200_000 }));
    assert.ok(heavy < light - 0.2, `input-bound ${heavy} with the heavy step vs ${light} with the light one`);
  });

  it('counts the main thread’s CPU of a main-thread pipeline in the waits, and leaves the trainer’s out of the pipeline’s share', async () => {
    const p = await profileTraining({ TRAIN_PIPE_ROUNDS: 800_000, TRAIN_STEP_ROUNDS: 800_000 });
    const t = p.trainer;
    assert.ok(t, p.error?.message);
    // Both sides spin on the main thread: each is busy for most of its time.
    assert.ok(t.waitMainCpuSeconds > 0.3 * t.waitSeconds, JSON.stringify(t));
    assert.ok(t.stepMainCpuSeconds > 0.3 * t.stepSeconds, JSON.stringify(t));
    assert.ok(p.run.mainThreadCpuSeconds < t.waitMainCpuSeconds + t.stepMainCpuSeconds, `${p.run.mainThreadCpuSeconds} vs ${JSON.stringify(t)}`);
  });

  it('reads a loop whose pipeline shares the main thread as input-bound by the share of its time that is not the trainer’s own step', async () => {
    const report = path.join(os.tmpdir(), `plumber-train-truth-${process.pid}.json`);
    rmSync(report, { force: true });
    try {
      // Equal spins on both sides, one thread: half the loop's time is the input's, by the script's clock.
      const p = await profileTraining({ TRAIN_PIPE_ROUNDS: 1_500_000, TRAIN_STEP_ROUNDS: 1_500_000, TRAIN_REPORT: report }, { seconds: 1.5 });
      assert.equal(p.error, undefined, p.error?.message);
      const took = JSON.parse(readFileSync(report, 'utf8')) as { ownMs: number; cycleMs: number };
      const truth = 1 - took.ownMs / took.cycleMs;
      const t = p.trainer!;
      // Wherever the input's work runs (before an element is handed over, or inside the steps'
      // clock, as the prefetch's refill did when a handover ended a pending turn), it is the input's.
      const f = trainerFigures(p)!;
      assert.ok(
        Math.abs(f.inputBound - truth) <= 0.08,
        `input-bound ${f.inputBound.toFixed(3)} (waits alone ${(t.waitSeconds / t.seconds).toFixed(3)}, in the steps ${(t.pipelineStepSeconds / t.seconds).toFixed(3)}), true ${truth.toFixed(3)}`,
      );
    } finally {
      rmSync(report, { force: true });
    }
  });

  it('counts the input’s work that runs inside the steps’ awaits as the input’s, not the trainer’s', async () => {
    // An input that awaits (I/O-like) finishes its main-thread work when its await resolves: while
    // the trainer's step awaits too, that is inside the step's clock.
    const p = await profileTraining({ TRAIN_PIPE_ROUNDS: 1_500_000, TRAIN_STEP_ROUNDS: 1_500_000, TRAIN_PIPE_AWAIT_MS: 1, TRAIN_STEP_AWAIT_MS: 2 }, { seconds: 1.5 });
    assert.equal(p.error, undefined, p.error?.message);
    const t = p.trainer!;
    assert.ok(t.pipelineStepSeconds > 0.1 * t.seconds, JSON.stringify(t));
    const f = trainerFigures(p)!;
    assert.ok(f.inputBound > t.waitSeconds / t.seconds + 0.1, `input-bound ${f.inputBound.toFixed(3)}, waits alone ${(t.waitSeconds / t.seconds).toFixed(3)}`);
  });

  it('ends an endless training script when the budget is spent, leaving no process behind', async () => {
    let pid = 0;
    const p = await profileTraining({ TRAIN_PIPE_ROUNDS: 50_000, TRAIN_STEP_ROUNDS: 50_000 }, { onStart: (x) => (pid = x), seconds: 0.5 });
    assert.equal(p.error, undefined, p.error?.message);
    assert.equal(p.trainer?.endReason, 'budget');
    assert.ok(pid > 0);
    assert.ok(await gone(pid), `the runner ${pid} outlived its run`);
  });

  it('reports a loop whose data runs out as exhausted, with the steps it measured', async () => {
    const p = await profileTraining({ TRAIN_PIPE_ROUNDS: 1_000, TRAIN_STEP_ROUNDS: 100_000, TRAIN_EPOCH: 400 }, { seconds: 30 });
    assert.equal(p.error, undefined, p.error?.message);
    assert.equal(p.trainer?.endReason, 'exhausted');
    assert.ok((p.trainer?.steps ?? 0) > 0);
  });

  it('says clearly that the training script threw, and after how many elements', async () => {
    let pid = 0;
    const p = await profileTraining({ TRAIN_PIPE_ROUNDS: 10_000, TRAIN_STEP_ROUNDS: 10_000, TRAIN_THROW_AT: 50 }, { onStart: (x) => (pid = x), seconds: 5 });
    assert.ok(p.error, 'the run did not fail');
    assert.match(p.error.message, /the step failed on element 50/);
    assert.match(p.error.message, /training script threw after taking 51 elements/);
    assert.ok(await gone(pid), `the runner ${pid} outlived its run`);
  });
});
