/**
 * The ground truth for a tfjs-data training script (issue 49): a `tf.data.generator` pipeline
 * batched by tfjs-data and trained with `model.fitDataset`, the way such scripts are written, with
 * known costs injected on both sides:
 *   FIT_PIPE_AWAIT_MS  an await of this length per element inside the generator (an input that waits)
 *   FIT_STEP_AWAIT_MS  an await of this length in each step's onBatchEnd callback (a step that leaves the main thread)
 *   FIT_BATCH          elements per batch (default 8)
 *   TRAIN_REPORT       a file where the script keeps what each side really took per step, in ms
 * There is no prefetch: fitDataset pulls a batch, then trains on it, so the loop waits for the
 * whole of the generator's work. The true input-bound fraction is the generator's time per step
 * over the loop's whole time per step (from one batch's start to the next's, tfjs's own
 * bookkeeping included): what the report says as pipeMs and cycleMs (timers fire late on a busy
 * machine, so the lengths the awaits really took are measured here, not assumed).
 */
import { writeFileSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import * as tfd from '@tensorflow/tfjs-data';
import * as tfl from '@tensorflow/tfjs-layers';

const env = (name: string, fallback: number): number => (process.env[name] === undefined ? fallback : Number(process.env[name]));
const pipeAwaitMs = env('FIT_PIPE_AWAIT_MS', 4);
const stepAwaitMs = env('FIT_STEP_AWAIT_MS', 8);
const batch = env('FIT_BATCH', 8);
const report = process.env.TRAIN_REPORT;

/** The generator's time (pipe), and the loop's from the first batch's start to the latest's over the steps between (cycle). */
const took = { pipe: 0, pipeAtFirst: 0, first: 0, last: 0, steps: 0 };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Endless elements of 4 features and a one-hot label; each waits `pipeAwaitMs` first. */
async function* examples(): AsyncGenerator<{ xs: number[]; ys: number[] }> {
  for (let i = 0; ; i++) {
    const t0 = performance.now();
    await sleep(pipeAwaitMs);
    const x = [(i % 7) / 7, (i % 5) / 5, (i % 3) / 3, (i % 2) / 2];
    // Plain arrays: tfjs-data's batch stacks them into tensors (and owns those).
    const e = { xs: x, ys: i % 2 === 0 ? [1, 0] : [0, 1] };
    took.pipe += performance.now() - t0;
    yield e;
  }
}

const data = tfd.generator(examples).batch(batch);

async function train(): Promise<void> {
  await tf.setBackend('cpu');
  const model = tfl.sequential();
  model.add(tfl.layers.dense({ inputShape: [4], units: 2, activation: 'softmax' }));
  model.compile({ optimizer: 'sgd', loss: 'categoricalCrossentropy' });
  await model.fitDataset(data, {
    epochs: 1_000_000,
    batchesPerEpoch: 1_000_000,
    verbose: 0,
    callbacks: {
      onBatchBegin: async () => {
        const t = performance.now();
        // The generator's time counts from the first batch's start: what it made for that batch came before.
        if (took.first === 0) [took.first, took.pipeAtFirst] = [t, took.pipe];
        else took.steps++;
        took.last = t;
        if (report !== undefined && took.steps > 0 && took.steps % 5 === 0) {
          writeFileSync(report, JSON.stringify({ pipeMs: (took.pipe - took.pipeAtFirst) / took.steps, cycleMs: (took.last - took.first) / took.steps }));
        }
      },
      onBatchEnd: async () => {
        if (stepAwaitMs > 0) await sleep(stepAwaitMs);
      },
    },
  });
}

void train();
