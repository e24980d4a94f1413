/**
 * What the model says about a profile: the analysis (rates, bounds, the bottleneck) and the plan
 * (knob changes with their predicted effect). Produced by `src/model`, shown by the server, the
 * extension and the CLI. Rates are root elements per second.
 */
import type { Dialect, Overrides, Profile } from './profile';

/** A resource that can cap the pipeline's rate. */
export type Resource =
  | 'cpu' // all cores together
  | 'main-thread' // Node's one JavaScript thread: every sync fn and all operator bookkeeping
  | 'sequential-op' // one operator running one element at a time
  | 'parallel-op' // one operator at its parallelism limit
  | 'latency' // an awaiting operator with too few calls in flight
  | 'disk' // read bandwidth of the data's filesystem
  | 'libuv' // Node's thread pool (fs, zlib, sharp)
  | 'source'; // the source produced no more elements than this (a finite or slow source)

/** One upper bound on the pipeline's rate. */
export interface Bound {
  resource: Resource;
  /** The operator the bound belongs to, for per-operator bounds. */
  opId?: string;
  /** The highest root rate this resource allows. */
  rate: number;
  /** One sentence: what was measured and how the bound follows from it. */
  detail: string;
  /** A series bound whose operator spends most of its time waiting rather than working. */
  waiting?: boolean;
}

/** Per-operator numbers. */
export interface OpAnalysis {
  opId: string;
  /** Elements at this operator per root element (V_i). */
  visitRatio: number;
  /** Measured elements per second produced by this operator during the run. */
  measuredRate: number;
  /** Root elements per CPU-second this operator could sustain on one core (R_i); Infinity when it used no measurable CPU. */
  ratePerCore: number;
  /** CPU seconds per root element (V_i · c_i / C_i), all threads. */
  cpuPerRootElement: number;
  /** Share of all measured CPU spent in this operator (0..1). */
  cpuShare: number;
  /** Main-thread seconds per root element. */
  mainThreadPerRootElement: number;
  /** The highest root rate this operator allows with its current knobs. */
  bound: number;
  /** Where its work runs. */
  placement: 'main' | 'worker' | 'libuv' | 'remote';
  /** True for the operator that holds the pipeline back. */
  isBottleneck: boolean;
  /** A reader's work by part, per element, and the part that binds: "reading 0.2 µs, decompressing 5.9 µs and parsing 3.2 µs per row: it binds on decompressing; 1 of its 8 shards read at once". */
  readerParts?: string;
}

/** The answer to "why is it slow": the binding resource and, if one, the operator. */
export interface Bottleneck {
  resource: Resource;
  opId?: string;
  /** A sentence for a person, e.g. "map(decode) runs on the main thread and needs 12 ms per element". */
  reason: string;
  /** The operator is held in series and spends most of its time waiting (see `Bound.waiting`). */
  waiting?: boolean;
}

export interface Analysis {
  /** Root rate measured in the profiled run. */
  measuredRate: number;
  /** The model's bound with the current knobs: min over `bounds`. */
  bound: number;
  bottleneck: Bottleneck;
  bounds: Bound[];
  ops: OpAnalysis[];
  /** Cores the model assumed. */
  cores: number;
  /**
   * Cores the pipeline could actually get, as measured (fractional: `run.availableCores`, else
   * `machine.availableCores`). Absent when the profile did not measure it.
   */
  coresAvailable?: number;
  /**
   * One sentence on the cores planned for, e.g. "1.1 of 2 cores free: planning for 1", or
   * "planning for 8 cores, as asked (1.1 of 2 cores free here)". Absent when neither a
   * measurement nor an explicit `cores` option says anything beyond the machine's cores.
   */
  coresNote?: string;
  /** For a training profile (`profile.trainer`): how input-bound the loop is and what would feed it. */
  trainer?: TrainerVerdict;
  /** Stages placed on a cluster: their capacity and the workers a target rate needs. */
  capacity?: ClusterCapacity[];
  /** The configuration as it ran: its projected peak memory. */
  memory?: MemoryProjection;
  /** The configuration as it ran: time to the first batch and per epoch, projected. */
  time?: TimeProjection;
  /**
   * Set when the run measured far below the model's bound on this machine: most of the pipeline's
   * time went to something the profile does not attribute to an operator, and the sentence says
   * so. The bottleneck named is then the model's best guess, not what holds the pipeline back.
   */
  unexplained?: string;
}

/**
 * The verdict on a training loop (src/model/trainer.ts): the share of its time it waited for input,
 * its rate when never starved, and what the plan targets and predicts. Rates are steps per second
 * (one element of the pipeline per step).
 */
export interface TrainerVerdict {
  /** Steps measured. */
  steps: number;
  /** Steps per second as measured. */
  stepsPerSec: number;
  /** Fraction of the loop's time spent waiting in `next()` for input (0..1). */
  inputBound: number;
  /** The trainer's rate when never starved: one over its own time per step. */
  unstarvedStepsPerSec: number;
  /** The trainer's own wall seconds per step (its step less the pipeline's work that ran inside it). */
  trainerSecondsPerStep: number;
  /** The trainer's main-thread CPU seconds per step. */
  trainerMainCpuPerStep: number;
  /** The pipeline's main-thread seconds per step, as it ran. */
  pipelineMainPerStep: number;
  /** The rate the plan aims at: the unstarved rate, or less when no configuration can feed that on these cores. */
  targetStepsPerSec: number;
  /** Predicted steps per second with the plan (as written when it changes nothing). */
  predictedStepsPerSec: number;
  /** The model's steps per second for the configuration as it ran (what the prediction compares with). */
  asWrittenPredictedStepsPerSec: number;
  /** Worker threads the pipeline runs with the plan. */
  workers: number;
  /** What binds the loop with the plan: the trainer itself, the main thread they share, the pipeline, or the cores. */
  limit: 'trainer' | 'main-thread' | 'pipeline' | 'cpu';
  /** The plan changes the configuration (feeds it faster, or gives threads back). */
  changed: boolean;
  /** One sentence: "the trainer waited 62% of its time for input (…); the plan feeds it 38 steps/s (1.6×) with 1 worker thread." */
  summary: string;
}

/** What every plan change carries besides its knob. */
export interface ChangeEffect {
  /**
   * The model's predicted root rate with only this change applied on top of the configuration the
   * profile ran with (absent when the model made no such prediction).
   */
  predictedRate?: number;
}

/** One knob change in a plan. */
export type PlanChange = ChangeEffect &
  (
    | { kind: 'parallelism'; opId: string; from: number | 'auto' | undefined; to: number; reason: string }
    /** An interleave's cycle length: how many inner datasets are open at once (with `parallelism`, how many are pulled at once). */
    | { kind: 'cycleLength'; opId: string; from: number | undefined; to: number; reason: string }
    /**
     * Where a sync fn runs: in `parallelism` worker threads, or back on the main thread (a worker
     * pool whose dispatch and clones the run measured costing the main thread more than the fn;
     * `parallelism` is then 1).
     */
    | { kind: 'placement'; opId: string; to: 'worker' | 'main'; parallelism: number; reason: string }
    | {
        kind: 'prefetch';
        /** The operator after which a prefetch goes (or the existing prefetch op whose size changes). */
        opId: string;
        /** True when `opId` is an existing prefetch whose buffer changes; false to insert a new one. */
        existing: boolean;
        from?: number;
        size: number;
        reason: string;
      }
    | {
        /**
         * Rewrite the chain from its dialect (tfjs-data, Node streams, async generators) into
         * plumber-data, keeping the export and what consumers receive, then apply `then` (plumber-data
         * changes keyed by the original operators' ids). Offered only when the converted pipeline
         * was measured faster and the rewrite is faithful.
         */
        kind: 'convert';
        /** The operator the chain ends with (the pipeline's root). */
        opId: string;
        from: Dialect;
        /** The operators the rewrite replaces, in chain order. */
        opIds: string[];
        then: PlanChange[];
        reason: string;
      }
    | {
        kind: 'cache';
        /** Insert `.cache()` right after this operator. */
        opId: string;
        /** Estimated bytes the cache will hold (cardinality × bytes per element). */
        estimatedBytes: number;
        /** Cache on disk at this path (`.cache(path)`), relative to the pipeline file's directory: the memory budget cannot hold it and the disk serves it faster than recomputing. Absent: in memory. */
        path?: string;
        reason: string;
      }
    | {
        /**
         * Move operator `opId` (its call with its arguments) to just before operator `before` in
         * the same chain: a filter ahead of maps it does not depend on, a shrinking map earlier, a
         * shuffle ahead of expensive work, deterministic work above a random step. Offered only when
         * the runner found the reshaped pipeline's output equal to the original's on a sample.
         */
        kind: 'reorder';
        opId: string;
        before: string;
        /** One sentence with its figures: "filter(isValid) drops 62% of elements; running it before map(decode) saves 0.62 × 21 ms per element". */
        reason: string;
        /**
         * Predicted seconds to the first batch with the move, when what it gains is the first batch
         * (a shuffle moved ahead of the work its buffer filled behind): verification keeps it when
         * the first batch measured faster and the rate not slower, each beyond the spread.
         */
        firstBatchSeconds?: number;
      }
    | {
        /** Run worker map `opId` in the same worker task as the worker map right before it, `with`: one crossing per element instead of two. */
        kind: 'fuse';
        opId: string;
        with: string;
        reason: string;
      }
    | {
        /** Let a map's fast calls pass a slow one (`deterministic: false`): output order changes. Never where order is observable. */
        kind: 'deterministic';
        opId: string;
        to: false;
        reason: string;
      }
  );

/** What one operator's buffers hold at a configuration's peak (src/model/memory.ts). */
export interface MemoryPart {
  opId: string;
  /** What holds the bytes. */
  what: 'shuffle buffer' | 'prefetch buffer' | 'calls in flight' | 'batch' | 'worker threads' | 'cache' | 'reader';
  bytes: number;
  /** Elements held, where the part holds elements. */
  elements?: number;
}

/**
 * A configuration's peak memory, projected by the model from the element sizes the runner
 * measured on the heap: the process as it stands before the pipeline holds anything, plus what each
 * operator's buffers, calls in flight, worker threads and caches hold at once.
 */
export interface MemoryProjection {
  /** Projected peak resident bytes of the process running the pipeline. */
  peakBytes: number;
  /** The process before the pipeline holds any element (runtime, modules), measured. */
  baseBytes: number;
  /**
   * Working memory the run measured beyond the base and its buffers (garbage between collections,
   * elements passing through), carried to any configuration as it was: part of `peakBytes`.
   */
  workingBytes?: number;
  /** Largest first. */
  parts: MemoryPart[];
  /** The budget plans keep within (ModelOptions.memoryBudgetBytes or its default). */
  budgetBytes: number;
  /** V8's heap limit on the machine that ran the profile: a peak past it crashes the process. */
  heapLimitBytes?: number;
  /** One sentence: "≈ 410 MB at peak: shuffle buffer 320 MB". */
  summary: string;
}

/** Time to the first batch and per epoch, projected by the model (src/model/epochs.ts). */
export interface TimeProjection {
  /** Seconds from iterating the pipeline to its first root element. */
  firstBatchSeconds: number;
  /** Where those seconds go, largest first. */
  firstBatchParts: { what: 'start' | 'shuffle fill' | 'prefetch fill' | 'first element' | 'cache fill' | 'workers start'; opId?: string; seconds: number }[];
  /** One sentence naming what dominates and what would shorten it: "the shuffle buffer of 10,000 fills behind map(decode): ≈ 41 s; move the shuffle before the decode or shrink it". */
  firstBatchSummary: string;
  /** A finite pipeline: seconds of its first epoch and of each later one (cache reuse, shuffle refill); absent for an endless one. */
  epochSeconds?: number[];
  /** One sentence on the epochs, e.g. "first epoch ≈ 42 s (the cache fills), later epochs ≈ 9 s". */
  epochSummary?: string;
}

export interface Plan {
  changes: PlanChange[];
  /**
   * The rate measured before the plan: the first run's, or, when verification kept nothing, every
   * run as written pooled (then equal to `predictedRate`).
   */
  currentRate: number;
  /** The model's predicted root rate with every change applied. */
  predictedRate: number;
  /** The bound the model computes with the plan applied. */
  predictedBound: number;
  /** The binding resource after the plan. */
  predictedBottleneck: Bottleneck;
  /** Cores the plan was made for (see `Analysis.cores`). */
  cores?: number;
  /** Measured cores the pipeline could get (see `Analysis.coresAvailable`). */
  coresAvailable?: number;
  /** One sentence on the cores planned for (see `Analysis.coresNote`). */
  coresNote?: string;
  /** Set when the plan is for other cores than this machine gives the pipeline (`--cores`, `plumber.model.cores`): see `PlanTarget`. */
  target?: PlanTarget;
  /** The same plan as runner overrides: what `--override` / `plumber/profile` accept. */
  overrides: Overrides;
  /** Sentences about changes the model considered and did not propose (e.g. a cache that does not fit in memory). */
  notes?: string[];
  /**
   * What verification runs measured (src/engine/diagnose.ts). Absent when the plan was not
   * verified (verification off, or nothing to verify). When present, `changes` holds only what
   * verification kept: a change measured to lose is never in `changes`.
   */
  verification?: Verification;
  /** For a training profile: the loop's verdict (see `TrainerVerdict`); the plan then targets the trainer's rate. */
  trainer?: TrainerVerdict;
  /** Stages placed on a cluster: their capacity and the workers a target rate needs (see `ClusterCapacity`). */
  capacity?: ClusterCapacity[];
  /** With every change applied: projected peak memory (never past `budgetBytes`: the planner refuses a change that would be). */
  memory?: MemoryProjection;
  /** With every change applied: time to the first batch and per epoch, projected. */
  time?: TimeProjection;
}

/**
 * A plan for a target machine: the cores it was made for, this machine's cores (where
 * verification runs it) and whether a run here can measure the plan. A plan can be verified here
 * when its worker threads fit in the cores here (the model plans up to one worker per core beside
 * the main thread); a plan that needs more would run starved here, and its measurement is not the
 * target's figure.
 */
export interface PlanTarget {
  /** Cores the plan is for. */
  cores: number;
  /** This machine's cores (`Machine.cores`): where verification runs the plan. */
  hereCores: number;
  /** Worker threads the plan runs (at least 1: the main thread). */
  threads: number;
  /** `threads` ≤ `hereCores`: a run here measures the plan as it would run on the target. */
  verifiable: boolean;
}

/** A measured rate with its spread: root elements per second over repeated windows. */
export interface MeasuredRate {
  /** Mean of the windows' rates. */
  rate: number;
  /** Half the width of the interval the rate lies in (same unit): 1.7 ± 0.1 has halfWidth 0.1. */
  halfWidth: number;
  /** How many windows (slices of runs) the figure pools. */
  windows: number;
}

/** One configuration verification ran, with what it measured. */
export interface VerifiedConfig {
  /** Which plan changes it applied, as `changeKey`s (`kind:opId`); empty for the pipeline as written. */
  changes: string[];
  measured: MeasuredRate;
  /** The model's prediction for this configuration, when it made one. */
  predictedRate?: number;
  /**
   * The count each of its `parallelism` and `cycleLength` changes ran with, by `changeKey`: the
   * same change key can run at two counts (verification's last run doubles the free levers of the
   * configuration it keeps), and a report tells them apart by it.
   */
  values?: Record<string, number>;
}

/** The outcome of verifying a plan against the pipeline as written, on this machine, now. */
export interface Verification {
  /**
   * `gain`: the kept configuration measured faster than as written beyond the spread;
   * `no-gain`: nothing measured reliably faster (the plan keeps no changes);
   * `error`: a verification run failed (the message says which and why; the plan keeps no changes).
   */
  verdict: 'gain' | 'no-gain' | 'error';
  asWritten: MeasuredRate;
  /** The configuration kept (equal to `asWritten`'s with no changes when the verdict is not `gain`). */
  kept: VerifiedConfig;
  /** Every configuration measured, in the order they ran. */
  tried: VerifiedConfig[];
  /**
   * Measured speed-up of the kept configuration over as written, with its half-width: timed on the
   * same elements when their runs covered enough of the same ones (src/engine/paired.ts), else
   * kept.rate ÷ asWritten.rate.
   */
  speedup: number;
  speedupHalfWidth: number;
  /** Changes the first plan proposed that verification dropped, with why ("measured 0.8× alone"). */
  dropped: Array<{ change: PlanChange; why: string }>;
  /** One sentence for a person: "verified 1.7× ± 0.1" or "no reliable gain on this machine right now: …". */
  summary: string;
  /** Wall seconds the verification runs took. */
  seconds: number;
}

/**
 * A stage placed on a cluster (placement 'remote'): what the workers measured give, and how many
 * workers like them a target rate needs (issue 12). Rates are of the pipeline's root elements.
 */
export interface ClusterCapacity {
  opId: string;
  /** The cluster's name (`connect({ name })`). */
  cluster?: string;
  /** Worker processes that served the op during the run. */
  workersSeen: number;
  /** Root elements per second one worker like those measured can serve (its concurrency over the fn's time, or its cores over the fn's CPU, whichever is less). */
  perWorkerRate: number;
  /** The bound of the workers seen together. */
  capacityRate: number;
  /** The bound of the calls in flight (the map's parallelism) over each call's service plus round trip. */
  inFlightRate: number;
  /** Per call: the fn's time in the worker, the time waiting in the queue, and the network and Redis round trip (seconds). */
  serviceSeconds: number;
  queueWaitSeconds: number;
  roundTripSeconds: number;
  /** The rate asked about: `targetRate` when given, else the rate at which the next bound of the pipeline binds. */
  targetRate: number;
  /** Workers like the ones measured that reach `targetRate` (Infinity when the target is unreachable). */
  workersNeeded: number;
  /** Calls in flight (parallelism) that reach `targetRate` at the measured service and round trip. */
  parallelismNeeded: number;
  /** "To reach 800 el/s, map(decode) needs 4 workers like the ones measured (200 el/s each) and parallelism ≥ 18." */
  summary: string;
  /** Hosts the measured workers ran on, and workers per host (workers of one host share its cores). */
  hostsSeen?: number;
  workersPerHost?: number;
  /** The most the measured hosts serve however many workers they run (their cores, less the consumer's and Redis's share where they share its host): past it, only new hosts help. */
  sameHostsRate?: number;
  /** New hosts like the measured ones that `workersNeeded` takes (0: the measured hosts suffice). */
  newHostsNeeded?: number;
}

/**
 * Why a plan proposes no change, claiming no more than the bottleneck says: a pipeline bound by
 * the machine (its cores, disk, libuv pool or source) already runs at what it allows; one bound
 * by the main thread may leave cores idle, but nothing it runs can move to worker threads at a
 * gain (a batch's stacking, a fn no worker can load, a move a run measured slower);
 * one bound by an operator's waits or its one-at-a-time work is held by something no knob the plan
 * can turn relieves (the bottleneck's reason says what would: an interleave for a flatMap's
 * datasets, an exported fn for a worker move).
 */
export function noChangeWords(resource: Resource | undefined): string {
  if (resource === 'latency' || resource === 'sequential-op' || resource === 'parallel-op') return 'no knob Plumber can turn relieves what binds (the bottleneck says what would)';
  if (resource === 'main-thread') return 'the main thread binds, and none of its work can move off it at a gain (the bottleneck says what binds)';
  return 'the pipeline already runs at what this machine allows';
}

/** Why a plan proposes no change, from its analysis: what the profile cannot explain, or `noChangeWords`. */
export function noChangeReason(analysis: Pick<Analysis, 'unexplained' | 'bottleneck'>): string {
  return analysis.unexplained ? 'what holds the pipeline back is not in the profile' : noChangeWords(analysis.bottleneck.resource);
}

/** The key a change is known by across passes and verification: `kind:opId`. */
export function changeKey(change: Pick<PlanChange, 'kind' | 'opId'>): string {
  return `${change.kind}:${change.opId}`;
}

/** Inputs the model takes besides the profile. */
/** What the source says of one operator's fn (see `ModelOptions.fields`). A list that is absent is unknown: any field. */
export interface OpFields {
  reads?: string[];
  writes?: string[];
  /** The fn takes the element context (`ctx.index`, `ctx.rng`), which moving an operator ahead of it changes. */
  usesContext?: boolean;
  /** `keepPosition: true`: never moved, and nothing is moved across it. */
  pinned?: boolean;
}

export interface ModelOptions {
  /**
   * Cores to plan for: a target machine, the user's explicit choice. Default: the whole cores the
   * pipeline could get during the run (`run.availableCores`, else `machine.availableCores`, else
   * `machine.cores`; see src/model/README.md "Cores").
   */
  cores?: number;
  /** Bytes the pipeline may hold at its peak: no plan projects past it, and a cache that would is placed on disk or not at all (default: 0.5 × free memory at profile time). */
  memoryBudgetBytes?: number;
  /** Directory a disk cache goes in, relative to the pipeline file's directory (default `.cache/plumber`). */
  cacheDir?: string;
  /** Largest worker pool to propose per operator (default: cores). */
  maxWorkers?: number;
  /** Largest concurrency to propose for an awaiting operator, and inner datasets pulled at once for an interleave (default 256). */
  maxConcurrency?: number;
  /**
   * Earlier profiles of the same pipeline with other knobs (e.g. the first pass of plan →
   * re-trace → plan). The model fits how each awaiting operator's latency grows with its calls in
   * flight (a throttled disk or service), instead of assuming it stays the same.
   */
  history?: Profile[];
  /**
   * Ids of operators known to be random from outside the profile (the static graph: `Math.random`,
   * crypto, `ctx.rng`, calls into fns that do). With `op.random` and `op.randomObserved`, the model
   * never caches at or after any of them.
   */
  randomOps?: string[];
  /** Ids of maps whose source writes `deterministic: true` (the static graph): the user pinned their order, and no plan sets it false. */
  orderPinned?: string[];
  /**
   * What the source says of each operator's fn (the static graph, keyed by op id): the element
   * fields it reads and writes, and whether the user pinned it (`keepPosition: true`). The
   * model proposes a reorder only across operators whose fields it knows (src/model/reshape.ts).
   */
  fields?: Record<string, OpFields>;
  /** Plan changes that reshape the pipeline (reorder; fuse and deterministic: false once they exist) — default true; false plans knobs only. */
  reshape?: boolean;
  /**
   * A root rate that is enough: the planner stops adding threads and calls in flight once the
   * bound reaches it (a trainer's unstarved rate: feeding it faster only takes cores from it).
   */
  targetRate?: number;
}
