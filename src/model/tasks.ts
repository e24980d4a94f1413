/**
 * Worker tasks as plumber-data dispatches them: how many elements one task carries, so the model
 * pays a task's fixed cost per task and an element's clones and work per element.
 *
 * The library sizes tasks as a map runs (src/data/internal/ops/worker-map.ts `ChunkSizer`): a task
 * carries the elements that make its fixed cost `overheadShare` of it, at most `maxTaskSeconds`
 * of fn work, `maxTaskBytes` of elements in and out, and `maxGroup` elements. The model prices the
 * size the sizer settles on, from the figures it would measure:
 * - the fixed cost is the round trip of a one-element task less the fn's work: the dispatch on the
 *   main thread, the task's overhead in the worker, and that element's clones on both sides;
 * - the work per element is what the model prices as the fn's CPU in a worker (its own time and
 *   the runtime's GC that moves with it), and for an async fn its wait there;
 * - the bytes per element are the input's and, but for a filter (which sends back a flag), the
 *   output's per call.
 * The sizer's occasional one-element probe tasks and its cap at a thread's share of what is left of
 * a finite input are left out: they change the tasks of a long run by a few percent at most.
 */
import type { Machine } from '../shared/profile';
import { MODEL_CONSTANTS as C } from './constants';
import type { OpMeasure } from './measured';
import { cloneSide } from './move';

/** What one moved call costs besides its share of a task's fixed cost. */
export interface MovedCall {
  /** Main-thread seconds one call keeps for its operator's bookkeeping. */
  book: number;
  /** Seconds of one call's clones on each side (main thread and worker alike). */
  clone: number;
  /** The fn's CPU in a worker ÷ on the main thread. */
  ratio: number;
}

/** Seconds one task costs besides its elements: on the main thread (dispatch) and in the worker (overhead). */
export function taskCosts(machine: Machine): { dispatch: number; overhead: number } {
  return {
    dispatch: machine.workerDispatchSeconds ?? C.workerDispatchSeconds,
    overhead: machine.workerTaskOverheadSeconds ?? C.workerTaskOverheadSeconds,
  };
}

/**
 * One call of a main-thread fn moved to worker threads. With a measured move cost the clones are
 * the measured rounds (input and output, half on each side) and the fn's CPU scales by what it
 * measured in a worker; without, only the input is cloned, priced by its bytes, and the fn costs
 * in a worker what it cost on the main thread.
 */
export function movedCall(om: OpMeasure): MovedCall {
  const perCall = om.callsPerRoot > 0 ? om.selfPerRoot / om.callsPerRoot : 0;
  return {
    book: Math.min(C.bookkeepingSecondsPerElement, perCall / 2),
    clone: om.move ? cloneSide(om.move) : om.inputBytesPerElement / C.cloneBytesPerSecond,
    ratio: om.move ? om.move.workerCpuRatio : 1,
  };
}

/** Elements per task plumber-data's worker map settles on for `om`'s fn once it runs in worker threads (see the header). */
export function taskGroup(om: OpMeasure, machine: Machine): number {
  const chunking = machine.workerChunking ?? C.workerChunking;
  const calls = om.callsPerRoot;
  const perCall = calls > 0 ? om.selfPerRoot / calls : 0;
  const { book, clone, ratio } = movedCall(om);
  const { dispatch, overhead } = taskCosts(machine);
  const fixed = dispatch + overhead + 2 * clone;
  const gcPerCall = calls > 0 ? om.overheadWorkPerRoot / calls : 0;
  const work = (Math.max(0, perCall - book) + gcPerCall) * ratio + (om.move?.awaited?.wait ?? 0);
  const outBytes = om.op.kind === 'filter' || !(calls > 0) ? 0 : (om.bytesPerElement * om.visitRatio) / calls;
  const bytes = om.inputBytesPerElement + outBytes;
  // As the library computes it: less a rounding error's worth, so an exact quotient is not rounded up past itself.
  const want = work > 0 ? Math.ceil(fixed / (chunking.overheadShare * work) - 1e-9) : chunking.maxGroup;
  const byTime = work > 0 ? Math.floor(chunking.maxTaskSeconds / work) : chunking.maxGroup;
  const byBytes = bytes > 0 ? Math.floor(chunking.maxTaskBytes / bytes) : chunking.maxGroup;
  return Math.max(1, Math.min(want, byTime, byBytes, chunking.maxGroup));
}
