/**
 * Consuming a pipeline for a measured window: warm up, reset the counters, then measure until
 * successive rate estimates agree within 2% or the budget runs out.
 */
import type { RunInfo, RunnerMessage, WindowSlice } from '../shared/profile';
import type { DatasetLike } from './discover';
import { timerMs } from './timers';

export interface MeasureOptions {
  seconds: number;
  maxElements: number;
  warmupSeconds: number;
  warmupMaxElements: number;
  /** Warm-up lasts at least this many elements, for at most `seconds` beyond `warmupSeconds`. */
  warmupMinElements?: number;
  /** Seconds allowed before the first element (worker pools start, modules load). */
  startSeconds: number;
  progressInterval: number;
}

export interface MeasureHooks {
  /** Called once when the measured window starts (after warm-up): reset counters and clocks here. */
  onWindowStart(): void;
  /** Called once when the window ends, before the iterator is closed: read counters and clocks here. */
  onWindowEnd(): void;
  /**
   * Called before onWindowEnd when the source ended during warm-up, or so soon after it that the
   * window holds too few elements for a rate: the run is measured from its first element instead
   * (`fromFirst`; from its start when it saw fewer than three), so counters and clocks must be
   * read from there.
   */
  onWindowWidened?(fromFirst: boolean): void;
  /**
   * Called when the first element has arrived (to check overrides against the operators built,
   * and to read the counters and clocks a widened window starts from).
   */
  onFirstElement(): void;
  /**
   * False while the pipeline is not yet in its steady state for a reason the clock cannot see: a
   * cache still on its first pass (every later epoch is served from memory, so a window taken
   * during the fill measures the wrong pipeline). Warm-up goes on while it says false, up to
   * `FILL_LIMIT_SECONDS` more.
   */
  steady?(): boolean;
  /**
   * A count finer than the root's elements that grows in step with them: the elements the root
   * took from its input when it batches them (32 images per batch). Read on a timer during the
   * window, so a pipeline that makes a batch a second still yields a dozen slices with dozens of
   * events each, and verification can tell 1.5× from noise in a few seconds.
   */
  fineCount?(): number;
  progress(m: Extract<RunnerMessage, { type: 'progress' }>): void;
}

export type MeasureResult = Pick<RunInfo, 'elements' | 'seconds' | 'warmupElements' | 'warmupSeconds' | 'firstElementSeconds' | 'converged' | 'endReason' | 'rateEstimates' | 'windowSlices' | 'windowCurve' | 'partialElement'> & {
  /** Elements consumed before the failure, when the pipeline threw. */
  thrown?: { error: unknown; consumed: number };
};

/** Relative agreement successive estimates must reach. */
const TOLERANCE = 0.02;
/**
 * Fewest elements in the window before convergence may be declared (a rate of 5 elements says
 * little); also the fewest a rate should come from at all (see `plumber check`).
 */
export const MIN_ELEMENTS = 30;
/** Longest a warm-up is extended while `hooks.steady()` says a cache is still filling, seconds. */
export const FILL_LIMIT_SECONDS = 20;
/** How many successive estimates must agree. */
const AGREEING = 3;
/**
 * Fewest slices a converged window holds: verification's spread and its comparisons on the same
 * elements need several (a window that converged in half a second, its points thinned by a busy
 * main thread, held three).
 */
const MIN_CONVERGED_SLICES = 4;
/** Most slices `windowSlices` reports: adjacent estimate intervals merge beyond this. */
const MAX_SLICES = 12;
/**
 * Most slices `windowCurve` reports: the window's points as finely as they were taken (a 3 s
 * profile window holds about 40), for comparing two runs element by element (engine/paired.ts).
 * Merged to 12, a profile run of the text example gave its comparison with a plan's run six
 * stretches of the batches they shared, and a 1.9× gain an interval of ± 1.5.
 */
const MAX_CURVE_SLICES = 48;

const now = (): number => performance.now() / 1000;

/**
 * Runs the pipeline. Never throws for the pipeline's own errors: they come back in `thrown`.
 * A pipeline that yields nothing for the whole budget ends with `endReason: 'budget'` and zero
 * elements; the caller decides what that means.
 */
export async function measure(ds: DatasetLike, o: MeasureOptions, hooks: MeasureHooks): Promise<MeasureResult> {
  const it = ds[Symbol.asyncIterator]();
  const estimateInterval = Math.max(0.1, o.seconds / 20);
  const minWindow = Math.min(1, o.seconds / 3);
  const t0 = now();
  let phase = 'warmup' as 'warmup' | 'measuring';
  let total = 0;
  let warmStart = t0;
  let warmupElements = 0;
  let warmupSeconds = 0;
  let filling = false;
  let extended = false;
  let ramp = new RampDetector();
  // Whether the last look at `hooks.steady()` said a cache was still filling.
  let wasFilling = false;
  let windowStart = t0;
  let windowElements = 0;
  let windowEnd = t0;
  let nextEstimate = 0;
  let nextProgress = t0 + o.progressInterval;
  const estimates: number[] = [];
  // Points of the run, (time, root elements so far, fine count so far): at the first element, at
  // the window's start, at each estimate (an element's arrival) and on a timer; consecutive points
  // bound the window's slices.
  const points: WindowPoint[] = [];
  const fine = (): number => hooks.fineCount?.() ?? 0;
  const fineAtStart = fine();
  let fineAtLastArrival = fineAtStart;
  // The fine count when the window started, and when it ended between two root elements.
  let fineAtWindowStart = fineAtStart;
  let fineAtBudget: number | undefined;
  let sampler: NodeJS.Timeout | undefined;
  let endReason: RunInfo['endReason'] = 'budget';
  let converged = false;
  let thrown: MeasureResult['thrown'];

  // One timer ends the current phase if the pipeline stalls; racing each pull against a promise
  // of its own costs no timer per element. Not one promise for the whole phase: every race leaves
  // a reaction on the promise it raced against, and each holds the element that won it, so one
  // long-lived promise kept the whole window's elements alive (800 MB of 800 kB batches, and a
  // pipeline 13× slower than untraced).
  let stopTimer: NodeJS.Timeout | undefined;
  const stalled = Symbol('stalled');
  let timedOut = false;
  let wake: (v: typeof stalled) => void = () => undefined;
  const untilStalled = (): Promise<typeof stalled> =>
    new Promise((resolve) => {
      wake = resolve;
      if (timedOut) resolve(stalled);
    });
  const armStop = (seconds: number): void => {
    if (stopTimer) clearTimeout(stopTimer);
    timedOut = false;
    stopTimer = setTimeout(() => {
      timedOut = true;
      wake(stalled);
    }, timerMs(seconds));
  };
  // Before the first element the pipeline may be starting worker pools that load TypeScript:
  // give it `startSeconds` (or the whole budget, if longer) before calling it stuck.
  armStop(Math.max(o.startSeconds, o.warmupSeconds + o.seconds));

  const startWindow = (t: number): void => {
    phase = 'measuring';
    warmupElements = total;
    warmupSeconds = t - t0;
    windowStart = t;
    windowEnd = t;
    nextEstimate = t + estimateInterval;
    hooks.onWindowStart();
    fineAtWindowStart = fineAtLastArrival;
    points.push({ t, elements: total, fine: fineAtLastArrival });
    armStop(o.seconds);
  };

  try {
    for (;;) {
      const r = await Promise.race([it.next(), untilStalled()]);
      const t = now();
      if (r === stalled) {
        endReason = 'budget';
        if (phase === 'measuring') {
          windowEnd = t;
          if (hooks.fineCount) fineAtBudget = fine();
        }
        break;
      }
      if (r.done) {
        endReason = 'exhausted';
        break;
      }
      total++;
      if (hooks.fineCount) fineAtLastArrival = fine();
      if (total === 1) {
        hooks.onFirstElement();
        // Warm-up counts from the first element, so a slow start does not eat it.
        warmStart = t;
        armStop(o.warmupSeconds + o.seconds);
        points.push({ t, elements: total, fine: fineAtLastArrival });
        if (hooks.fineCount) {
          // From the first element, so a run measured from its start (a finite source a fast plan
          // drains during warm-up) is sliced too. A pipeline busy on the main thread delays this
          // timer, never skews it: each point carries the time it was actually read.
          sampler = setInterval(() => points.push({ t: now(), elements: total, fine: fine() }), timerMs(estimateInterval / 2));
          sampler.unref();
        }
      }
      if (phase === 'warmup') {
        // A pipeline that keeps the main thread busy between its elements starves the sampler's
        // timer: its arrivals are read as points too, so a run measured from its start is sliced.
        if (t - (points.at(-1)?.t ?? t0) >= estimateInterval / 2) points.push({ t, elements: total, fine: fineAtLastArrival });
        const warmed = t - warmStart;
        // A minimum of elements extends the warm-up by at most one window's budget: a pipeline
        // slower than asked for is measured anyway.
        const fewElements = total < (o.warmupMinElements ?? 0) && warmed < o.warmupSeconds + o.seconds;
        const warm = (warmed >= o.warmupSeconds || total >= o.warmupMaxElements) && !fewElements;
        if (fewElements && warmed >= o.warmupSeconds && !extended) {
          extended = true;
          armStop(2 * o.seconds + o.warmupSeconds - warmed);
        }
        const filled = !hooks.steady || hooks.steady();
        // The end of a fill starts a ramp of its own (the replay's code cold, the heap resized
        // for the cached elements): the audio cache's first quarter second after its fill ran at
        // 118–520 batches/s before 1,400–3,000. What the detector judged during the fill says
        // nothing about it, so it judges afresh from the fill's end.
        if (filled && wasFilling) ramp = new RampDetector();
        wasFilling = !filled;
        const rising = ramp.add(t);
        const steady = (filled && !rising) || t - warmStart >= o.warmupSeconds + FILL_LIMIT_SECONDS;
        if (warm && steady) startWindow(t);
        else if (warm && !filling) {
          // The warm-up's own time is up but a cache is still filling: give the fill its limit,
          // then the measured window its budget.
          filling = true;
          armStop(o.warmupSeconds + FILL_LIMIT_SECONDS - (t - warmStart) + o.seconds);
        }
      } else {
        windowElements++;
        windowEnd = t;
        if (t >= nextEstimate) {
          estimates.push(windowElements / (t - windowStart));
          points.push({ t, elements: total, fine: fineAtLastArrival });
          nextEstimate = t + estimateInterval;
          const enoughSlices = (): boolean => (slices(points.filter((p) => p.t >= windowStart), { t, elements: total, fine: fineAtLastArrival })?.length ?? 0) >= MIN_CONVERGED_SLICES;
          if (agree(estimates) && windowElements >= MIN_ELEMENTS && t - windowStart >= minWindow && enoughSlices()) {
            converged = true;
            endReason = 'converged';
            break;
          }
        }
        if (windowElements >= o.maxElements) {
          endReason = 'budget';
          break;
        }
        // The budget is also read at each arrival: a pipeline that is synchronous throughout (a
        // sync source and sync maps on the main thread) settles every pull in microtasks and
        // never lets the event loop reach the stop timer, so a 3 s window of 3 batches a second
        // ran until 30 elements had converged (10 s), or to the run's time limit.
        if (t - windowStart >= o.seconds) {
          endReason = 'budget';
          break;
        }
      }
      if (t >= nextProgress) {
        nextProgress = t + o.progressInterval;
        const seconds = phase === 'warmup' ? t - t0 : t - windowStart;
        const elements = phase === 'warmup' ? total : windowElements;
        hooks.progress({ type: 'progress', phase, elements, seconds, rate: seconds > 0 ? elements / seconds : undefined });
      }
    }
  } catch (error) {
    thrown = { error, consumed: total };
    endReason = 'error';
  } finally {
    if (stopTimer) clearTimeout(stopTimer);
    if (sampler) clearInterval(sampler);
  }

  // A source that ended during warm-up, or so soon after it that the window holds too few
  // elements for a rate (none at all when it ended on the warm-up's last element): what the whole
  // run saw is all there is to measure.
  const tooFew = phase === 'measuring' && endReason === 'exhausted' && windowElements < MIN_ELEMENTS && total > windowElements;
  if (tooFew) {
    phase = 'warmup';
    // Estimates of the few-element window say nothing about the run's rate.
    estimates.length = 0;
  }
  // Measured from the first element, when there are a few more: the time before it is the
  // pipeline's start (a pool of 187 requests filling, worker threads loading), not its rate — a
  // remote pipeline drained in 0.8 s waited 0.25 s for its first batch, and that slice alone
  // spread the plan's rate ±75%.
  const fromFirst = total >= 3 && points.length > 0;
  if (phase === 'warmup') {
    hooks.onWindowWidened?.(fromFirst);
    warmupElements = fromFirst ? 1 : 0;
    warmupSeconds = fromFirst ? warmStart - t0 : 0;
    windowStart = fromFirst ? warmStart : t0;
    windowElements = fromFirst ? total - 1 : total;
    windowEnd = now();
  }
  // A window the budget ended between two root elements holds part of the next one: the elements
  // its root has taken towards it (a batch of 32 with 20 images in it), which every operator's
  // counters already include. Dropping it biased slow pipelines low by up to one root element in
  // the window, and unevenly: the timer fires only when the event loop is free, so a run busy on
  // the main thread through a batch ends on a whole one, and one that awaits (worker threads,
  // async reads) is cut mid-batch (three images configurations in worker threads measured exactly
  // 5 batches in 6 s, as written 6); and their per-element demands high by as much.
  const partialElement = phase === 'measuring' && fineAtBudget !== undefined ? partialOf(windowElements, fineAtWindowStart, fineAtLastArrival, fineAtBudget) : 0;
  hooks.onWindowEnd();
  await closeIterator(it);
  const windowPoints = phase === 'measuring' ? points.filter((p) => p.t >= windowStart) : fromFirst ? points : [{ t: t0, elements: 0, fine: fineAtStart }, ...points];
  const windowEndPoint: WindowPoint =
    phase === 'measuring' ? { t: windowEnd, elements: total + partialElement, fine: fineAtBudget ?? fineAtLastArrival } : { t: windowEnd, elements: total, fine: fineAtLastArrival };
  const windowSlices = slices(windowPoints, windowEndPoint);
  const windowCurve = windowSlices ? slices(windowPoints, windowEndPoint, MAX_CURVE_SLICES) : undefined;
  return {
    elements: windowElements + partialElement,
    ...(partialElement > 0 ? { partialElement } : {}),
    seconds: Math.max(windowEnd - windowStart, 1e-9),
    warmupElements,
    warmupSeconds,
    ...(total >= 1 ? { firstElementSeconds: warmStart - t0 } : {}),
    converged,
    endReason,
    rateEstimates: estimates,
    ...(windowSlices ? { windowSlices } : {}),
    // Only when finer than the slices: otherwise it says nothing they do not.
    ...(windowSlices && windowCurve && windowCurve.length > windowSlices.length ? { windowCurve } : {}),
    ...(thrown ? { thrown } : {}),
  };
}

/** A point of the measured window: seconds, root elements so far, fine count so far. */
export interface WindowPoint {
  t: number;
  elements: number;
  fine: number;
}

/** Fine events per root element below which the fine count is no finer than the root's own. */
const FINER = 2;

/**
 * The share of one more root element a window holds when it ended between two: the fine events
 * since the last root element over the fine events per root element in the window (0 ≤ x < 1).
 * 0 when the window holds no whole root element or the fine count is no finer than the root's.
 */
export function partialOf(elements: number, fineAtStart: number, fineAtLast: number, fineAtEnd: number): number {
  if (elements < 1) return 0;
  const perElement = (fineAtLast - fineAtStart) / elements;
  if (!(perElement >= FINER)) return 0;
  return Math.min(1 - 1e-6, Math.max(0, (fineAtEnd - fineAtLast) / perElement));
}

/**
 * Consecutive, non-overlapping slices of the window from its points (the first is its start) and
 * its end. When the fine count grew at least FINER times as fast as the root's elements, slices
 * count fine events scaled to root elements (so their sum is still the window's elements);
 * otherwise root elements. Points after the end are dropped; adjacent slices merge so there are at
 * most `max`, evenly in time. Undefined below 2.
 */
export function slices(points: readonly WindowPoint[], end: WindowPoint, max = MAX_SLICES): WindowSlice[] | undefined {
  const start = points[0];
  if (!start || !(end.t > start.t)) return undefined;
  const inside = [...points.filter((p) => p.t > start.t && p.t < end.t), end].sort((a, b) => a.t - b.t);
  const fineTotal = end.fine - start.fine;
  const rootTotal = end.elements - start.elements;
  const useFine = rootTotal > 0 && fineTotal >= FINER * rootTotal;
  const count = (p: WindowPoint): number => (useFine ? ((p.fine - start.fine) * rootTotal) / fineTotal : p.elements - start.elements);
  const seconds = end.t - start.t;
  const m = Math.min(max, inside.length);
  const out: WindowSlice[] = [];
  let prev: WindowPoint = start;
  let next = 0;
  for (let k = 1; k <= m; k++) {
    // The last point at or before the k-th m-th of the window closes slice k (the end closes the last).
    const until = start.t + (k * seconds) / m;
    let close: WindowPoint | undefined;
    while (next < inside.length && (inside[next]!.t <= until + 1e-12 || k === m)) close = inside[next++];
    // A slice in which nothing arrived is not closed: its time goes to the next (a timer point
    // a millisecond after the window opened made a slice of 0 elements in 1 ms).
    if (!close || close.t <= prev.t || (k < m && count(close) === count(prev))) continue;
    out.push({ elements: count(close) - count(prev), seconds: close.t - prev.t });
    prev = close;
  }
  // Nothing after the last arrival: the tail's time belongs to the slice before it.
  const tail = out.at(-1);
  if (out.length >= 2 && tail && tail.elements === 0) {
    out.pop();
    out[out.length - 1]!.seconds += tail.seconds;
  }
  return out.length >= 2 ? out : undefined;
}

/** A warm-up slice holds at least this many elements and this many seconds before its rate is judged. */
const RAMP_SLICE_ELEMENTS = 8;
const RAMP_SLICE_SECONDS = 0.25;
/** A slice this much faster than every one before it says the pipeline is still speeding up. */
const RAMP_RISE = 1.1;

/**
 * Tells whether the rate is still rising during warm-up: worker threads that have just started
 * (loading modules, their JIT still cold), connection pools filling, a cache on its first pass. The
 * warm-up is cut into slices of a few elements; while each slice runs clearly faster than every
 * slice before it, the pipeline has not reached its steady state, and a window taken now would
 * measure the start-up. A start-up sets a new high with each slice; elements that differ in cost
 * do not: after a stretch of dear ones, a slice of cheap ones runs faster than the one before but
 * no faster than the cheap ones before that. (Judged against the slice before alone, the text
 * example's emails held the warm-up of a run with the tokenizer in workers to 895 batches where it
 * asked for 402, past every element the run as written had measured.) A pipeline too slow to fill
 * slices is judged by the clock alone.
 */
export class RampDetector {
  private sliceStart = -1;
  private sliceElements = 0;
  private highest: number | undefined;
  private judged = 0;
  private rising = true;

  /**
   * Counts an element that arrived at `t` seconds. True until two full slices were compared, and
   * then while the last slice ran clearly faster than every one before it; false at once for a
   * pipeline too slow to fill a slice in a second.
   */
  add(t: number): boolean {
    if (this.sliceStart < 0) {
      this.sliceStart = t;
      return this.rising;
    }
    this.sliceElements++;
    const seconds = t - this.sliceStart;
    if (this.sliceElements >= RAMP_SLICE_ELEMENTS && seconds >= RAMP_SLICE_SECONDS) {
      const rate = this.sliceElements / seconds;
      if (this.highest !== undefined) {
        this.judged++;
        this.rising = rate > this.highest * RAMP_RISE;
      }
      this.highest = Math.max(this.highest ?? 0, rate);
      this.sliceStart = t;
      this.sliceElements = 0;
    } else if (this.judged === 0 && this.sliceElements < RAMP_SLICE_ELEMENTS && seconds >= 4 * RAMP_SLICE_SECONDS) {
      this.rising = false;
    }
    return this.rising;
  }
}

function agree(estimates: number[]): boolean {
  if (estimates.length < AGREEING) return false;
  const last = estimates.slice(-AGREEING);
  const hi = Math.max(...last);
  const lo = Math.min(...last);
  return hi > 0 && (hi - lo) / hi < TOLERANCE;
}

/** Stops the pipeline (cancelling workers and in-flight calls), waiting at most a second for it. */
async function closeIterator(it: AsyncIterator<unknown>): Promise<void> {
  if (typeof it.return !== 'function') return;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.resolve(it.return()).catch(() => undefined),
      new Promise((resolve) => {
        timer = setTimeout(resolve, 1000);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}
