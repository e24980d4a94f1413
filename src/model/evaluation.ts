/**
 * What `evaluate` (./evaluate.ts) finds for one configuration: each operator's demands under it,
 * and the bounds they set. Types only, so the parts of the model that read an evaluation need not
 * import the evaluating.
 */
import type { Bound } from '../shared/analysis';

/** One op's demands per root element under a configuration. */
export interface Effective {
  /** All main-thread seconds, including `overhead`. */
  main: number;
  /** The op's share of main-thread time no op claimed (runtime overhead), part of `main`. */
  overhead: number;
  worker: number;
  /** Seconds per root element a worker thread holds for the op beyond its CPU: an async fn's waits, its calls run one after another there. */
  workerWait: number;
  other: number;
  disk: number;
  /** Async calls per root element. */
  async: number;
  /** Seconds per root element the op holds up its segment when it runs one element at a time. */
  wait: number;
  /** Fraction of its measured work that remains (0 when cached away). */
  factor: number;
  /** It decouples its input: it has two or more calls or threads in flight. */
  decoupler: boolean;
  /** Instances of it that run at once because it sits inside inner datasets an interleave pulls in parallel (1 outside). */
  nested: number;
}

export interface Evaluation {
  bound: number;
  binding: Bound;
  /** Finite bounds, lowest first. */
  bounds: Bound[];
  /** Lowest bound attributed to each op (Infinity when none). */
  opBound: Map<string, number>;
  eff: Map<string, Effective>;
  mainPerRoot: number;
  cpuPerRoot: number;
  /** Each op's segment: ops with the same key run in series for each element. */
  segmentOf: Map<string, string>;
}
