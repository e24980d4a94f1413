/**
 * The model's assumptions that are not measured in a profile. Each one is a number someone can
 * calibrate against real runs (bench/model measures prediction accuracy, M1/M2). Each comment says
 * what the number assumes; the runs that set it are in this file's history (`git log -p`).
 */
export const MODEL_CONSTANTS = {
  /**
   * Main-thread seconds to post one task to a worker thread and take its result back, besides
   * cloning the input. Used only when the profile has no calibration
   * (`machine.workerDispatchSeconds`).
   */
  workerDispatchSeconds: 60e-6,
  /** Worker-thread seconds per task besides the fn itself (message handling); `machine.workerTaskOverheadSeconds` replaces it when measured. */
  workerTaskOverheadSeconds: 40e-6,
  /**
   * How plumber-data groups a worker map's elements into tasks (src/model/tasks.ts), when the
   * profile does not say (`machine.workerChunking`): the library's own values, from
   * src/data/internal/ops/worker-map.ts (OVERHEAD_SHARE, MAX_TASK_SECONDS, MAX_TASK_BYTES,
   * MAX_GROUP; tracers read them as the tracing contract's WORKER_CHUNKING). Not a choice of the
   * model: change them only with the library.
   */
  workerChunking: { overheadShare: 0.05, maxTaskSeconds: 0.025, maxTaskBytes: 1 << 20, maxGroup: 4096 },
  /**
   * Structured-clone speed for a task's input, bytes per second, paid once on each side: the speed
   * of large typed arrays. Results are transferred, not cloned. Used only without a measured
   * `op.moveCost`: small plain objects clone far slower per byte, so for them this errs cheap.
   */
  cloneBytesPerSecond: 1.2e9,
  /**
   * A measured move cost (`op.moveCost`) scales the fn's CPU in a worker by workerCpuSeconds ÷
   * mainCpuSeconds of the same sample, clamped to this range. The same code under the same JIT
   * runs at most a few times slower in a fresh isolate; a ratio above it says more about a small
   * sample (a cold JIT, one GC pause) than about the steady state. Below 1 the probe cannot speak:
   * its worker calls the fn on a few inputs it keeps, in an isolate with a tiny heap and nothing
   * else running, where the pipeline's workers take fresh clones every task beside a busy main
   * thread, so it reads lower than the pipeline's workers run. A probe can raise the fn's worker
   * CPU (a deopt only a fresh isolate hits) but never lower it below the main thread's.
   */
  workerCpuRatioMin: 1,
  workerCpuRatioMax: 3,
  /**
   * Turning measured free cores (fractional) into the cores to plan for: a core counts when at
   * least 1 − this fraction of it is free. Free CPU measured over a window of a few seconds moves
   * by a few hundredths of a core with the kernel's and the runner's own threads, so an idle
   * 2-core machine reads 1.95, not 2.
   */
  wholeCoreTolerance: 0.1,
  /** Main-thread seconds an operator spends on its own bookkeeping per element once its fn moves to a worker. */
  bookkeepingSecondsPerElement: 2e-6,
  /**
   * Main-thread CPU per second of wall time that the runtime spends whatever the rate (timers, the
   * runner's progress messages, idle GC): subtracted before the rest of the unclaimed main-thread
   * time is charged (measure.ts `overheadRates`).
   */
  idleMainOverheadPerSecond: 0.01,
  /**
   * Unclaimed main-thread seconds charged per produced element at most (promise settling,
   * generator resumption: a few µs, more with other work's callbacks on the same thread); the rest
   * is split by the main thread's busy fraction (see measure.ts `overheadRates`).
   */
  plumbingSecondsPerElement: 25e-6,
  /**
   * Process CPU outside the main thread and the workers' task clocks that is expected anyway, as a
   * fraction of the measured main + worker CPU (V8's GC and compiler threads, libuv). Only the
   * excess is charged to worker ops as CPU their clock missed.
   */
  runtimeThreadsCpuFraction: 0.1,
  /** Latency that grows less than this fraction across the concurrencies seen in history is taken as constant. */
  minLatencyGrowth: 0.2,
  /** A source's unexplained wait per element below this is noise (an array source's own pulls), not latency. */
  minInferredLatencySeconds: 20e-6,
  /** Main-thread seconds a memory cache spends serving one element. */
  cacheHitSecondsPerElement: 1e-6,
  /**
   * A sync map whose move costs were not measured (no `moveCost` in its profile) is considered for
   * worker threads only when one call costs at least this much (with them, the floor is what a
   * call leaves on the main thread in a worker: plan.ts `moveFloor`). The model then decides by
   * the gain; this floor keeps it away from tiny fns where its dispatch estimate is least certain.
   */
  minWorkerTaskSeconds: 20e-6,
  /**
   * The predicted rate is the predicted bound times the measured efficiency (measured rate ÷
   * bound) of the profiled run, clamped to this range: it carries over overheads the model does
   * not see (other processes on the cores, scheduling gaps) without letting a badly explained run
   * drag the prediction to nothing.
   */
  efficiencyMin: 0.5,
  efficiencyMax: 1.2,
  /**
   * The fn's CPU per call on the sampled elements and in the window must agree within this factor
   * for the sample's worker/main CPU ratio to be used (move.ts `moveOf`): a fn that caches by
   * input (a tokenizer's word cache) runs far cheaper on a few repeated samples, and the ratio of
   * two such figures is noise.
   */
  moveSampleAgreement: 2,
  /**
   * The least share of an awaited call's wall time that must be the fn's own CPU for an async fn
   * to move to worker threads: it then mostly works (a decode after a read). One that mostly waits
   * waits on something threads do not multiply (a device, a service): on the main thread more
   * calls in flight reach it as well, and the queue its latency shows does not vanish in a worker
   * (a throttle each worker thread would seem to get afresh is still one throttle).
   */
  awaitedWorkShare: 0.5,
  /**
   * A fn's per-call cost carried from one run to another scales with the input bytes per call of
   * each run's stretch of the data (move.ts `inputScale`), by at most this factor either way:
   * a larger ratio says more about a byte estimate (an element whose size the library guesses)
   * than about the data.
   */
  inputScaleMax: 4,
  /** Non-binding operators keep this much headroom over the predicted rate, so a cheap op is never the next bottleneck. */
  hedgeFactor: 1.25,
  /** A plan (or a cache) must raise the bound by at least this fraction to be worth proposing. */
  minGain: 0.05,
  /**
   * A run that measured below this share of its bound on the cores it had spent most of its time
   * on something the profile does not see (analysis.unexplained). A run the profile explains
   * measures near its bound on an idle machine, well above this share.
   */
  unexplainedShare: 0.5,
  /**
   * A run bound by waits that finish on the main thread, with that thread busy at least this
   * share of the core it got, and a movable fn taking at least `eventLoopFnShare` of its busy
   * time: part of each wait is the loop's, busy with the fn, and the fn is worth one verification
   * run in worker threads (`eventLoopMove`).
   */
  eventLoopBusy: 0.5,
  eventLoopFnShare: 0.25,
  /** The greedy allocator keeps a configuration only when it raises the bound by at least this fraction. */
  minStepGain: 0.01,
  /** Each extra move to worker threads must raise the bound by at least this fraction. */
  minMoveGain: 0.02,
  /** A concurrency change within this fraction of the current value is noise, unless that op binds. */
  hysteresis: 0.25,
  /** Fraction of the memory budget a cache may fill (DESIGN.md). */
  cacheMemoryFraction: 0.9,
  /** Default memory budget: this fraction of free memory at profile time. */
  defaultMemoryBudgetFraction: 0.5,
  /**
   * Calls in flight the plan may give one awaiting op. plumber-data's async map keeps a slot per
   * call, and a remote service often keeps scaling well past a few dozen calls in flight.
   */
  defaultMaxConcurrency: 256,
  /**
   * Calls in flight plumber-data runs for a main-thread fn written with `parallelism: 'auto'` once
   * it returns promises (src/data/dataset.ts `resolveParallelism` and the map's runtime
   * parallelism): the model resolves `'auto'` the same way. Not a choice of the model: change it
   * only with the library.
   */
  autoAsyncInFlight: 16,
  /** Buffer of a prefetch the plan inserts to decouple a chain that runs in series. */
  minPrefetch: 2,
  /** Rounds of the greedy allocator; each round adds one unit to the binding operator. */
  maxAllocationRounds: 256,
  /**
   * A policy line, not a measurement (the same as the lint plumber/shuffle-fill-dominates): a
   * shuffle is moved ahead of expensive work for its first batch only when its fill is at least
   * this share of the first batch and at least `firstBatchMinSeconds` long (a fill of a few
   * milliseconds delays nobody, whatever its share).
   */
  shuffleFillShare: 0.5,
  firstBatchMinSeconds: 1,
} as const;
