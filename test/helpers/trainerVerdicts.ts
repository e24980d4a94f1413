/** Trainer verdicts the server's and the client's tests both read (one fixture, one place). */
import type { TrainerVerdict } from '../../src/shared/analysis';

/** A loop that waited 39% of its time at 14.1 steps/s; the plan feeds it 25% faster with one worker thread. */
export const FED: TrainerVerdict = {
  steps: 141,
  stepsPerSec: 14.1,
  inputBound: 0.39,
  unstarvedStepsPerSec: 23.1,
  trainerSecondsPerStep: 1 / 23.1,
  trainerMainCpuPerStep: 0.04,
  pipelineMainPerStep: 0.03,
  targetStepsPerSec: 23.1,
  predictedStepsPerSec: 17.5,
  asWrittenPredictedStepsPerSec: 14,
  workers: 1,
  limit: 'main-thread',
  changed: true,
  summary: 'the trainer waited 39% of its time for input (14.1 steps/s; never starved it would take 23.1 steps/s); the plan feeds it 17.5 steps/s (1.25×) with 1 worker thread.',
};
