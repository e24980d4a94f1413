/**
 * The context handed to user functions: the element's index, a lazily created per-element RNG
 * (touching it marks the operator random for tracers), and an AbortSignal that fires when the
 * consumer stops early.
 */
import { setMaxListeners } from 'node:events';
import type { OpInfo } from '../tracing';
import { elementRng, type Rng } from './rng';

/** What a user fn receives as its second argument. */
export interface ElementContext {
  /** The element's index in this operator's input (per pass). */
  readonly index: number;
  /** A seeded generator unique to this element and epoch. Using it marks the operator random. */
  readonly rng: Rng;
  /** Aborted when the pipeline is stopped (break, return, error): cancel slow work with it. */
  readonly signal: AbortSignal;
}

/** Per-iterator state shared by the contexts of one pass. */
export class FnEnv {
  private controller: AbortController | null = null;
  constructor(
    readonly seed: number,
    readonly epoch: number,
    private readonly info: OpInfo | null,
  ) {}
  get signal(): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController();
      // One signal serves every call in flight (each adds a listener while it waits): not a leak.
      setMaxListeners(0, this.controller.signal);
    }
    return this.controller.signal;
  }
  markRandom(): void {
    if (this.info !== null) this.info.random = true;
  }
  abort(): void {
    this.controller?.abort(new Error('The pipeline was stopped before this call finished.'));
  }
  ctx(index: number): ElementContext {
    return new Ctx(index, this);
  }
}

class Ctx implements ElementContext {
  private r: Rng | null = null;
  constructor(
    readonly index: number,
    private readonly env: FnEnv,
  ) {}
  /** One generator per call, made on first use: successive draws go on from each other. */
  get rng(): Rng {
    this.env.markRandom();
    return (this.r ??= elementRng(this.env.seed, this.env.epoch, this.index));
  }
  get signal(): AbortSignal {
    return this.env.signal;
  }
}
