import { strict as assert } from 'node:assert';
import { analyze, plan } from '../../../src/model';
import { cheapest, trainerCandidates, trainerFigures, trainerVerdict } from '../../../src/model/trainer';
import { trainingProfile } from './training';
import { trainerLensTitle } from '../../../src/server/features/trainerLens';

describe('the trainer in the loop (model)', () => {
  it('reads the input-bound fraction as the share of the loop spent waiting, and the unstarved rate from the trainer’s own step', () => {
    const f = trainerFigures(trainingProfile({ pipe: 3e-3, step: 1e-3 }));
    assert.ok(f);
    assert.ok(Math.abs(f.inputBound - 0.75) < 1e-9, String(f.inputBound));
    assert.ok(Math.abs(f.ownSeconds - 1e-3) < 1e-9, String(f.ownSeconds));
    assert.ok(Math.abs(f.pipelineMain - 3e-3) < 1e-9, String(f.pipelineMain));
  });

  it('counts a main-thread pipeline’s work run inside the steps (a prefetch running ahead) as the input’s, not the trainer’s', () => {
    // One thread does 3 ms of input and 1 ms of step per element; 40% of the input's work ran after
    // an element was handed over, before the loop resumed, so the step's clock holds it.
    const p = trainingProfile({ pipe: 3e-3, step: 1e-3 });
    const t = p.trainer!;
    const inStep = 0.4 * t.waitSeconds;
    Object.assign(t, {
      waitSeconds: t.waitSeconds - inStep,
      waitMainCpuSeconds: t.waitMainCpuSeconds - inStep,
      stepSeconds: t.stepSeconds + inStep,
      stepMainCpuSeconds: t.stepMainCpuSeconds + inStep,
      pipelineStepSeconds: inStep,
    });
    const f = trainerFigures(p);
    assert.ok(f);
    assert.ok(Math.abs(f.inputBound - 0.75) < 1e-9, String(f.inputBound));
    assert.ok(Math.abs(f.ownSeconds - 1e-3) < 1e-9, String(f.ownSeconds));
    // The verdict says the same share, and the rate never starved is the measured rate over the rest.
    const v = trainerVerdict(p);
    assert.match(v?.summary ?? '', /waited 75% of its time for input/);
    assert.ok(Math.abs((v?.unstarvedStepsPerSec ?? 0) * (1 - f.inputBound) - f.measuredRate) < 1e-6);
  });

  it('does not count the pipeline’s work inside the trainer’s awaits as the trainer’s step', () => {
    const f = trainerFigures(trainingProfile({ pipe: 2e-3, step: 1e-3, workers: 2 }));
    assert.ok(f);
    // The step ran 1 ms of the trainer and 20 µs of worker dispatch: the trainer's own is the 1 ms.
    assert.ok(Math.abs(f.ownSeconds - 1e-3) < 1e-9, String(f.ownSeconds));
    assert.ok(Math.abs(f.ownMainCpu - 1e-3) < 1e-9, String(f.ownMainCpu));
  });

  it('plans worker threads for an input-bound loop whose augmentation holds the main thread, and predicts a faster loop', () => {
    const p = trainingProfile({ pipe: 3e-3, step: 1e-3 });
    const v = trainerVerdict(p);
    assert.ok(v);
    assert.ok(v.changed, v.summary);
    assert.ok(v.predictedStepsPerSec > v.asWrittenPredictedStepsPerSec * 1.3, `${v.predictedStepsPerSec} vs ${v.asWrittenPredictedStepsPerSec}`);
    assert.match(v.summary, /waited 75% of its time for input/);
    const pl = plan(p);
    assert.equal(pl.trainer?.changed, true);
    assert.ok(
      pl.changes.some((c) => c.kind === 'placement' && c.opId === '3:20'),
      JSON.stringify(pl.changes),
    );
    assert.equal(pl.overrides['3:20']?.placement, 'worker');
  });

  it('moves no augmentation to worker threads whose results a copy between threads would change', () => {
    const p = trainingProfile({ pipe: 3e-3, step: 1e-3 });
    p.ops[1]!.moveBlocked = { side: 'result', change: 'class', what: 'Tensor objects' };
    const pl = plan(p);
    assert.equal(pl.overrides['3:20']?.placement, undefined, JSON.stringify(pl.overrides));
    assert.ok(!pl.changes.some((c) => c.kind === 'placement'), JSON.stringify(pl.changes));
  });

  it('says “not input-bound: no change needed” when the trainer hardly waits, and proposes nothing', () => {
    const p = trainingProfile({ pipe: 0.1e-3, step: 5e-3 });
    const v = trainerVerdict(p);
    assert.ok(v);
    assert.equal(v.changed, false);
    assert.match(v.summary, /^not input-bound: .*no change needed/);
    assert.equal(plan(p).changes.length, 0);
    assert.equal(analyze(p).trainer?.changed, false);
  });

  it('gives worker threads back to a trainer that its pool outpaces, and predicts no slower loop', () => {
    const p = trainingProfile({ pipe: 1e-3, step: 8e-3, workers: 2 });
    const v = trainerVerdict(p);
    assert.ok(v);
    assert.ok(v.workers < 2, v.summary);
    assert.ok(v.predictedStepsPerSec >= v.asWrittenPredictedStepsPerSec * 0.97, `${v.predictedStepsPerSec} vs ${v.asWrittenPredictedStepsPerSec}`);
    assert.match(v.summary, /; 1 worker thread feeds it as fast as 2: give 1 back to the trainer \(predicted /);
  });

  it('says a loop that waits for input is input-bound when fewer threads feed it as fast', () => {
    // The pool of four on eight cores measured with the loop waiting half its time, which fewer threads' work covers as well.
    const p = trainingProfile({ pipe: 1e-3, step: 1e-3, workers: 4, wait: 1e-3, cores: 8 });
    const v = trainerVerdict(p);
    assert.ok(v && v.workers < 4 && v.inputBound >= 0.3, v?.summary);
    assert.match(v.summary, /^the trainer waited \d+% of its time for input .*; \d worker threads? feeds? it as fast as 4: give \d back to the trainer/);
  });

  it('chooses the cheapest configuration that reaches the best rate: fewer threads win among equals', () => {
    const p = trainingProfile({ pipe: 3e-3, step: 1e-3, cores: 8 });
    const all = trainerCandidates(p);
    const chosen = cheapest(all);
    assert.ok(chosen);
    const best = Math.max(...all.map((c) => c.rate));
    assert.ok(chosen.rate >= best * 0.97);
    for (const c of all) if (c.rate >= best * 0.97) assert.ok(c.workers >= chosen.workers, `${c.workers} < ${chosen.workers}`);
    // Feeding a 1 ms step from a 3 ms map takes 3 threads, not the machine's 8.
    assert.ok(chosen.workers <= 4, `${chosen.workers} workers`);
  });

  it('puts the loop’s rate, its wait for input and the plan’s gain on the editor’s lens', () => {
    const fed = trainerVerdict(trainingProfile({ pipe: 3e-3, step: 1e-3 }));
    const bound = trainerVerdict(trainingProfile({ pipe: 0.1e-3, step: 5e-3 }));
    assert.ok(fed && bound);
    assert.match(trainerLensTitle(fed), /^trainer 250 steps\/s · waits 75% on input · plan: \+\d+%$/);
    assert.match(trainerLensTitle(bound), /^trainer [\d.]+ steps\/s · waits 2% on input · plan: no change$/);
  });

  it('leaves a pipeline profile without a trainer verdict', () => {
    const p = trainingProfile({ pipe: 1e-3, step: 1e-3 });
    delete p.trainer;
    assert.equal(trainerVerdict(p), undefined);
    assert.equal(analyze(p).trainer, undefined);
  });
});
