/** What the move probe measures for an operator, and what it finds. */
import type { DiskCacheCost, HeldBytes, MoveBlocked, MoveCost } from '../../shared/profile';
import type { SampledElement } from '../tracer';

/** An operator whose fn can be measured. */
export interface MoveTarget {
  id: string;
  kind: 'map' | 'filter' | 'flatMap';
  fn: Function;
  samples: SampledElement[];
  /** Where the fn is exported from: only then can a worker thread load it. */
  fnModule?: { file: string; exportName: string };
  /** The fn returns promises: its calls are awaited one at a time (see `measureAwaited`). */
  async?: boolean;
  /** A cache after the op could pay (a repeat reads its output again): measure what its elements hold in memory. */
  heap?: boolean;
  /** A cache after the op could pay (a repeat reads its output again): measure what a cache on disk would cost per element (diskCost.ts). */
  diskCost?: boolean;
}

export interface MoveFindings {
  moveCost?: MoveCost;
  randomObserved?: boolean;
  /** Memory one element the op hands on keeps alive (see heap.ts), when asked for. */
  held?: HeldBytes;
  /** What a disk cache after the op would pay per element (see diskCost.ts), measured where `held` is. */
  diskCacheCost?: DiskCacheCost;
  /** What a copy between threads changed in the sampled elements (see fidelity.ts): no move is priced then. */
  moveBlocked?: MoveBlocked;
}

/** What the main thread measured of one operator's fn (sync.ts, awaited.ts). */
export interface MainSide {
  findings: MoveFindings;
  /** Cloned inputs the fn ran on, with their indices: what a worker gets. */
  inputs: SampledElement[];
  /** What the op handed on for the sample (see `handOn`). */
  handed?: unknown[];
}
