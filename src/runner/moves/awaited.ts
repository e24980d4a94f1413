/** An async fn's findings on the main thread: its calls awaited one at a time. */
import { isDeepStrictEqual } from 'node:util';
import type { MoveBlocked } from '../../shared/profile';
import { copyChange } from '../fidelity';
import type { SampledElement } from '../tracer';
import { FIDELITY_SAMPLES, freshContext, handOn, normalise, priceClones, tryClone } from './calls';
import { TARGET_CPU_SECONDS, median } from './timing';
import type { MainSide, MoveFindings, MoveTarget } from './types';

/** The least an awaited call may take before the probe gives up on its op (a request to a service that is gone). */
const AWAIT_MIN_MS = 500;
/**
 * Share of an awaited call's wall time the main thread must be busy for an async fn to be taken
 * to work rather than wait (a request, a read): below it its calls are not repeated to time them,
 * since each repeats whatever it waits on, and the figures of the determinism pairs stand. (The
 * model moves only such fns, by the same share: `awaitedWorkShare`.)
 */
const AWAITED_WORK_SHARE = 0.5;
/** What a call's timer resolves to when the call has not settled in time. */
const LATE = Symbol('late');
/** A call that did not settle in time: the op's probe ends. */
class LateCall extends Error {}

/**
 * `measureMain` for a fn that returns promises: each call awaited alone, one at a time, so its work
 * and its wall time are its own. The work an async fn does after its first await (a decode after
 * a file read) runs in the library's promise callbacks, where the window's counters cannot see it:
 * this is where it is measured, as the time the main thread's event loop was active during the
 * call (`performance.eventLoopUtilization`), the same wall-clock kind of time the window's
 * `selfSeconds` are. Process CPU would add the libuv thread that read the file and V8's GC helper
 * threads; the thread's schedstat clock advances only at scheduler ticks and context switches, so
 * it reads 0 for a short call that never sleeps. A call that has not settled within the time left
 * (at least AWAIT_MIN_MS) ends the op's probe.
 */
export async function measureAwaited(t: MoveTarget, deadline: number): Promise<MainSide | undefined> {
  // Per call, the main thread's busy time and the call's wall time; their medians are the figures:
  // the first calls of a fn that the window ran on its engine can still compile, and while a call
  // waits V8 runs its idle-time tasks (a GC step) on the thread, and the call is charged with them.
  const busy: number[] = [];
  const walls: number[] = [];
  const call = async (x: unknown, index: number): Promise<{ value: unknown } | undefined> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<typeof LATE>((resolve) => {
      timer = setTimeout(() => resolve(LATE), Math.max(AWAIT_MIN_MS, deadline - performance.now()));
    });
    const e0 = performance.eventLoopUtilization();
    const t0 = performance.now();
    try {
      const r = await Promise.race([Promise.resolve().then(() => t.fn(x, freshContext(index)) as unknown), late]);
      if (r === LATE) throw new LateCall();
      busy.push(performance.eventLoopUtilization(e0).active / 1000);
      walls.push((performance.now() - t0) / 1000);
      return normalise(t.kind, r);
    } finally {
      clearTimeout(timer);
    }
  };
  const inputs: SampledElement[] = [];
  const originals: unknown[] = [];
  const outputs: unknown[] = [];
  const handed: unknown[] = [];
  let compared = 0;
  let differs = false;
  let blocked: MoveBlocked | undefined;
  try {
    for (const s of t.samples) {
      if (compared > 0 && performance.now() >= deadline) break;
      const a = tryClone(s.element);
      const b = tryClone(s.element);
      // An element that cannot be copied cannot reach a worker: no move to price, and nothing
      // checked on the element itself (it would run its side effects again).
      if (!a.ok || !b.ok) return { findings: { moveBlocked: copyChange(s.element, 'input') ?? { side: 'input', change: 'uncloneable', what: 'values' } }, inputs: [] };
      // The input is checked before the calls: a fn that needs its element's class throws on the copies.
      // An async fn is not called again on the element itself (it would repeat its request).
      if (compared < FIDELITY_SAMPLES) blocked ??= copyChange(s.element, 'input');
      let ra: { value: unknown } | undefined;
      let rb: { value: unknown } | undefined;
      try {
        ra = await call(a.value, s.index);
        rb = await call(b.value, s.index);
      } catch (e) {
        if (e instanceof LateCall) throw e;
        // The fn throws or rejects on this element: nothing to learn from it.
        continue;
      }
      if (ra === undefined || rb === undefined) return undefined;
      compared++;
      if (!isDeepStrictEqual(ra.value, rb.value)) differs = true;
      if (compared <= FIDELITY_SAMPLES && t.kind !== 'filter') blocked ??= copyChange(ra.value, 'result');
      handOn(handed, t.kind, s.element, ra);
      inputs.push({ element: a.value, index: s.index });
      originals.push(s.element);
      outputs.push(ra.value);
    }
    if (compared === 0) return blocked ? { findings: { moveBlocked: blocked }, inputs: [] } : undefined;
    // A fn that works more than it waits is timed over more calls, as a sync fn is.
    const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
    while (sum(busy) >= AWAITED_WORK_SHARE * sum(walls) && sum(busy) < TARGET_CPU_SECONDS && performance.now() < deadline) {
      for (let i = 0; i < inputs.length && performance.now() < deadline; i++) await call(inputs[i]!.element, inputs[i]!.index);
    }
  } catch {
    // A call that did not settle in time, or one that failed on repeat: the pairs that completed
    // speak for determinism, and nothing is priced.
    return compared > 0 ? { findings: { randomObserved: differs, ...(blocked ? { moveBlocked: blocked } : {}) }, inputs: [] } : undefined;
  }
  const findings: MoveFindings = { randomObserved: differs };
  if (blocked !== undefined) return { findings: { ...findings, moveBlocked: blocked }, inputs: [], handed };
  const priced = priceClones(originals, outputs, deadline);
  if (priced === undefined || busy.length === 0) return { findings, inputs: [], handed };
  findings.moveCost = { samples: inputs.length, ...priced, mainCpuSeconds: median(busy), awaitedSeconds: median(walls) };
  return { findings, inputs, handed };
}
