/**
 * The trainer's verdict at the top of the Bottlenecks tree and in the report (issue 13): the tree's
 * data (`plumber/pipelines`) carries the lens's glance line, the model's sentence, the target rate
 * and what the plan does, from the same verdict the lens reads, in the same words.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { codeLenses, resolveCodeLens } from '../../../src/server/features/codeLens';
import { pipelines } from '../../../src/server/features/pipelines';
import { trainerLensTitle } from '../../../src/server/features/trainerLens';
import { Session } from '../../../src/server/session';
import { DEFAULT_SETTINGS } from '../../../src/shared/settings';
import type { TrainerVerdict } from '../../../src/shared/analysis';
import { trainerHeadline, trainerReportLines } from '../../../src/shared/trainerWords';
import { FED } from '../../helpers/trainerVerdicts';
import { FIXTURES } from './helpers';
import { handMade } from './handmade';

const FILE = path.join(FIXTURES, 'project', 'pipelines.ts');
const URI = pathToFileURL(FILE).href;
const TEXT = readFileSync(FILE, 'utf8');

/** A loop the trainer holds back: it waited 2%, and the plan changes nothing. */
const BOUND: TrainerVerdict = {
  ...FED,
  stepsPerSec: 3.9,
  inputBound: 0.02,
  unstarvedStepsPerSec: 4,
  trainerSecondsPerStep: 0.25,
  targetStepsPerSec: 4,
  predictedStepsPerSec: 3.9,
  asWrittenPredictedStepsPerSec: 3.9,
  workers: 0,
  limit: 'trainer',
  changed: false,
  summary: 'not input-bound: the trainer waited 2% of its time for input (3.9 steps/s; never starved it would take 4 steps/s); no change needed.',
};

/** `images` of the fixture profiled as a training run, with `verdict` on the analysis and `planVerdict` on the plan. */
function trained(verdict: TrainerVerdict | undefined, planVerdict?: TrainerVerdict, asTraining = true): Session {
  const s = new Session(() => undefined);
  s.update(URI, 1, TEXT);
  const images = s.views(URI).find((v) => v.graph.name === 'images')!.graph;
  const hand = handMade(images, 'map(decode)', () => []);
  const profile = asTraining
    ? {
        ...hand.profile,
        trainer: {
          steps: 141,
          seconds: 10,
          waitSeconds: 3.9,
          stepSeconds: 6.1,
          waitMainCpuSeconds: 3,
          stepMainCpuSeconds: 6,
          maxWaitSeconds: 0.1,
          pipelineStepSeconds: 0.2,
          warmupSteps: 10,
          endReason: 'budget' as const,
        },
      }
    : hand.profile;
  const analysis = verdict ? { ...hand.analysis, trainer: verdict } : hand.analysis;
  const plan = planVerdict ? { ...hand.plan, trainer: planVerdict } : hand.plan;
  s.store.setProfile(URI, 'images', { profile, analysis, plan, text: TEXT, at: '2026-11-30T18:00:00.000Z' }, 'defaults');
  return s;
}

function summaryOf(s: Session): ReturnType<typeof pipelines>[number] {
  return pipelines(s.views(URI), FILE, []).find((p) => p.name === 'images')!;
}

function lensTitles(s: Session): string[] {
  const views = s.views(URI);
  return (
    codeLenses(views, FILE, DEFAULT_SETTINGS.codeLens)
      // A client resolves only the lenses that come without a command (the trainer's comes resolved).
      .map((l) => (l.command ?? resolveCodeLens(l, views).command)!.title)
      .filter((t) => t.startsWith('trainer'))
  );
}

describe('the trainer verdict at the top of the tree and in the report', () => {
  it('words an input-bound loop as the lens does: rate, waits and the plan’s gain', () => {
    assert.equal(trainerHeadline(FED), 'trainer 14.1 steps/s · waits 39% on input · plan: +25%');
    assert.equal(trainerLensTitle, trainerHeadline);
  });

  it('gives the tree the same glance line the lens shows, with the verdict, the target and the plan', () => {
    const s = trained(FED);
    const t = summaryOf(s).trainer;
    assert.ok(t, 'a training profile’s pipeline carries its verdict');
    assert.deepEqual(lensTitles(s), [t.headline]);
    assert.equal(t.headline, 'trainer 14.1 steps/s · waits 39% on input · plan: +25%');
    assert.match(t.verdict, /^The trainer waited 39% of its time for input/);
    assert.equal(t.target, "Target: 23.1 steps/s, the trainer's rate when never starved (43.3 ms of its own per step).");
    assert.equal(t.plan, "Plan: 17.5 steps/s predicted (1.25× the model's 14 steps/s as written) with 1 worker thread; then bound by the main thread the trainer and the pipeline share.");
  });

  it('takes the plan’s verdict over the analysis’s, since the plan targets the trainer', () => {
    const t = summaryOf(trained(BOUND, FED)).trainer;
    assert.equal(t?.headline, trainerHeadline(FED));
  });

  it('says a trainer-bound loop needs no change, and what binds it', () => {
    const t = summaryOf(trained(BOUND)).trainer!;
    assert.equal(t.headline, 'trainer 3.9 steps/s · waits 2% on input · plan: no change');
    assert.match(t.verdict, /^Not input-bound: .*no change needed\.$/);
    assert.equal(t.plan, 'Plan: no change (3.9 steps/s predicted with 0 worker threads, bound by the trainer itself).');
  });

  it('names a target below the unstarved rate as the fastest any configuration feeds on these cores', () => {
    const lines = trainerReportLines({ ...FED, targetStepsPerSec: 18 });
    assert.equal(lines.target, 'Target: 18 steps/s, the fastest any configuration is predicted to feed it on these cores (never starved it would take 23.1 steps/s).');
  });

  it('drops the verdict from the tree once the file changes, as the lens turns stale', () => {
    const s = trained(FED);
    s.update(URI, 2, TEXT.replace('// decoder', '// decoder, edited'));
    assert.equal(summaryOf(s).trainer, undefined);
    assert.deepEqual(lensTitles(s), ['trainer: stale — profile again']);
  });

  it('gives a pipeline profile (no training loop) no verdict, even with one on its analysis', () => {
    assert.equal(summaryOf(trained(FED, undefined, false)).trainer, undefined);
    assert.equal(summaryOf(trained(undefined)).trainer, undefined);
  });
});
