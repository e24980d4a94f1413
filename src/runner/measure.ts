/**
 * Consuming a pipeline for a measured window: warm up, reset the counters, then measure until
 * successive rate estimates agree within 2% or the budget runs out.
 */
import type { RunInfo, RunnerMessage } from '../shared/profile';
import type { DatasetLike } from './discover';
import { RampDetector } from './ramp';
import { MAX_CURVE_SLICES, partialOf, slices, type WindowPoint } from './slices';
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
  /** Called with each element the pipeline hands on (the runner keeps a few, for what they hold on the heap). */
  onElement?(element: unknown): void;
}

export type MeasureResult = Pick<
  RunInfo,
  'elements' | 'seconds' | 'warmupElements' | 'warmupSeconds' | 'firstElementSeconds' | 'converged' | 'endReason' | 'rateEstimates' | 'windowSlices' | 'windowCurve' | 'partialElement'
> & {
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
 * elements need several, and a window that converges fast on a busy main thread may have few.
 */
const MIN_CONVERGED_SLICES = 4;

const now = (): number => performance.now() / 1000;

/**
 * Runs the pipeline. Never throws for the pipeline's own errors: they come back in `thrown`.
 * A pipeline that yields nothing for the whole budget ends with `endReason: 'budget'` and zero
 * elements; the caller decides what that means.
 */
export async function measure(ds: DatasetLike, o: MeasureOptions, hooks: MeasureHooks): Promise<MeasureResult> {
  const it = ds[Symbol.asyncIterator]();
  const run = new Measurement(o, hooks);
  await run.consume(it);
  const fromFirst = run.widenIfShort();
  const partialElement = run.partialElement();
  hooks.onWindowEnd();
  await closeIterator(it);
  return run.result(fromFirst, partialElement);
}

const STALLED = Symbol('stalled');

/**
 * One timer that ends the current phase if the pipeline stalls; racing each pull against a
 * promise of its own costs no timer per element. Not one promise for the whole phase: every race
 * leaves a reaction on the promise it raced against, and each holds the element that won it, so
 * one long-lived promise would keep the whole window's elements alive.
 */
class StallTimer {
  private timer: NodeJS.Timeout | undefined;
  private timedOut = false;
  private wake: (v: typeof STALLED) => void = () => undefined;

  /** Resolves with STALLED when the timer fires (at once when it has). */
  until(): Promise<typeof STALLED> {
    return new Promise((resolve) => {
      this.wake = resolve;
      if (this.timedOut) resolve(STALLED);
    });
  }

  arm(seconds: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timedOut = false;
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.wake(STALLED);
    }, timerMs(seconds));
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}

/** The state of one run through warm-up and the measured window, element by element. */
class Measurement {
  private readonly estimateInterval: number;
  private readonly minWindow: number;
  private readonly t0 = now();
  private phase = 'warmup' as 'warmup' | 'measuring';
  private total = 0;
  private warmStart: number;
  private warmupElements = 0;
  private warmupSeconds = 0;
  private filling = false;
  private extended = false;
  private ramp = new RampDetector();
  /** Whether the last look at `hooks.steady()` said a cache was still filling. */
  private wasFilling = false;
  private windowStart: number;
  private windowElements = 0;
  private windowEnd: number;
  private nextEstimate = 0;
  private nextProgress: number;
  private readonly estimates: number[] = [];
  /**
   * Points of the run, (time, root elements so far, fine count so far): at the first element, at
   * the window's start, at each estimate (an element's arrival) and on a timer; consecutive points
   * bound the window's slices.
   */
  private readonly points: WindowPoint[] = [];
  private readonly fineAtStart: number;
  private fineAtLastArrival: number;
  /** The fine count when the window started, and when it ended between two root elements. */
  private fineAtWindowStart: number;
  private fineAtBudget: number | undefined;
  private sampler: NodeJS.Timeout | undefined;
  private endReason: RunInfo['endReason'] = 'budget';
  private converged = false;
  private thrown: MeasureResult['thrown'];
  private readonly stop = new StallTimer();

  constructor(
    private readonly o: MeasureOptions,
    private readonly hooks: MeasureHooks,
  ) {
    this.estimateInterval = Math.max(0.1, o.seconds / 20);
    this.minWindow = Math.min(1, o.seconds / 3);
    this.warmStart = this.t0;
    this.windowStart = this.t0;
    this.windowEnd = this.t0;
    this.nextProgress = this.t0 + o.progressInterval;
    this.fineAtStart = this.fine();
    this.fineAtLastArrival = this.fineAtStart;
    this.fineAtWindowStart = this.fineAtStart;
    // Before the first element the pipeline may be starting worker pools that load TypeScript:
    // give it `startSeconds` (or the whole budget, if longer) before calling it stuck.
    this.stop.arm(Math.max(o.startSeconds, o.warmupSeconds + o.seconds));
  }

  private fine(): number {
    return this.hooks.fineCount?.() ?? 0;
  }

  /** Pulls elements until the window converges, its budget ends, the source ends or it throws. */
  async consume(it: AsyncIterator<unknown>): Promise<void> {
    try {
      for (;;) {
        const r = await Promise.race([it.next(), this.stop.until()]);
        const t = now();
        if (r === STALLED) {
          this.endReason = 'budget';
          if (this.phase === 'measuring') {
            this.windowEnd = t;
            if (this.hooks.fineCount) this.fineAtBudget = this.fine();
          }
          break;
        }
        if (r.done) {
          this.endReason = 'exhausted';
          break;
        }
        this.total++;
        this.hooks.onElement?.(r.value);
        if (this.hooks.fineCount) this.fineAtLastArrival = this.fine();
        if (this.total === 1) this.firstElement(t);
        if (this.phase === 'warmup') this.warmupStep(t);
        else if (this.windowStep(t)) break;
        this.progress(t);
      }
    } catch (error) {
      this.thrown = { error, consumed: this.total };
      this.endReason = 'error';
    } finally {
      this.stop.clear();
      if (this.sampler) clearInterval(this.sampler);
    }
  }

  private firstElement(t: number): void {
    this.hooks.onFirstElement();
    // Warm-up counts from the first element, so a slow start does not eat it.
    this.warmStart = t;
    this.stop.arm(this.o.warmupSeconds + this.o.seconds);
    this.points.push({ t, elements: this.total, fine: this.fineAtLastArrival });
    if (this.hooks.fineCount) {
      // From the first element, so a run measured from its start (a finite source a fast plan
      // drains during warm-up) is sliced too. A pipeline busy on the main thread delays this
      // timer, never skews it: each point carries the time it was actually read.
      this.sampler = setInterval(() => this.points.push({ t: now(), elements: this.total, fine: this.fine() }), timerMs(this.estimateInterval / 2));
      this.sampler.unref();
    }
  }

  private warmupStep(t: number): void {
    const o = this.o;
    // A pipeline that keeps the main thread busy between its elements starves the sampler's
    // timer: its arrivals are read as points too, so a run measured from its start is sliced.
    if (t - (this.points.at(-1)?.t ?? this.t0) >= this.estimateInterval / 2) this.points.push({ t, elements: this.total, fine: this.fineAtLastArrival });
    const warmed = t - this.warmStart;
    // A minimum of elements extends the warm-up by at most one window's budget: a pipeline
    // slower than asked for is measured anyway.
    const fewElements = this.total < (o.warmupMinElements ?? 0) && warmed < o.warmupSeconds + o.seconds;
    const warm = (warmed >= o.warmupSeconds || this.total >= o.warmupMaxElements) && !fewElements;
    if (fewElements && warmed >= o.warmupSeconds && !this.extended) {
      this.extended = true;
      this.stop.arm(2 * o.seconds + o.warmupSeconds - warmed);
    }
    const filled = !this.hooks.steady || this.hooks.steady();
    // The end of a fill starts a ramp of its own (the replay's code cold, the heap resized for
    // the cached elements): what the detector judged during the fill says nothing about it, so it
    // judges afresh from the fill's end.
    if (filled && this.wasFilling) this.ramp = new RampDetector();
    this.wasFilling = !filled;
    const rising = this.ramp.add(t);
    const steady = (filled && !rising) || t - this.warmStart >= o.warmupSeconds + FILL_LIMIT_SECONDS;
    if (warm && steady) this.startWindow(t);
    else if (warm && !this.filling) {
      // The warm-up's own time is up but a cache is still filling: give the fill its limit,
      // then the measured window its budget.
      this.filling = true;
      this.stop.arm(o.warmupSeconds + FILL_LIMIT_SECONDS - (t - this.warmStart) + o.seconds);
    }
  }

  private startWindow(t: number): void {
    this.phase = 'measuring';
    this.warmupElements = this.total;
    this.warmupSeconds = t - this.t0;
    this.windowStart = t;
    this.windowEnd = t;
    this.nextEstimate = t + this.estimateInterval;
    this.hooks.onWindowStart();
    this.fineAtWindowStart = this.fineAtLastArrival;
    this.points.push({ t, elements: this.total, fine: this.fineAtLastArrival });
    this.stop.arm(this.o.seconds);
  }

  /** Counts an element of the window; true when the window is over. */
  private windowStep(t: number): boolean {
    this.windowElements++;
    this.windowEnd = t;
    if (t >= this.nextEstimate) {
      this.estimates.push(this.windowElements / (t - this.windowStart));
      this.points.push({ t, elements: this.total, fine: this.fineAtLastArrival });
      this.nextEstimate = t + this.estimateInterval;
      const enoughSlices = (): boolean =>
        (slices(
          this.points.filter((p) => p.t >= this.windowStart),
          { t, elements: this.total, fine: this.fineAtLastArrival },
        )?.length ?? 0) >= MIN_CONVERGED_SLICES;
      if (agree(this.estimates) && this.windowElements >= MIN_ELEMENTS && t - this.windowStart >= this.minWindow && enoughSlices()) {
        this.converged = true;
        this.endReason = 'converged';
        return true;
      }
    }
    if (this.windowElements >= this.o.maxElements) {
      this.endReason = 'budget';
      return true;
    }
    // The budget is also read at each arrival: a pipeline that is synchronous throughout (a sync
    // source and sync maps on the main thread) settles every pull in microtasks and never lets
    // the event loop reach the stop timer.
    if (t - this.windowStart >= this.o.seconds) {
      this.endReason = 'budget';
      return true;
    }
    return false;
  }

  private progress(t: number): void {
    if (t < this.nextProgress) return;
    this.nextProgress = t + this.o.progressInterval;
    const phase = this.phase;
    const seconds = phase === 'warmup' ? t - this.t0 : t - this.windowStart;
    const elements = phase === 'warmup' ? this.total : this.windowElements;
    this.hooks.progress({ type: 'progress', phase, elements, seconds, rate: seconds > 0 ? elements / seconds : undefined });
  }

  /**
   * A source that ended during warm-up, or so soon after it that the window holds too few
   * elements for a rate (none at all when it ended on the warm-up's last element) or too short a
   * time for one estimate of it (the end of a pass: a shuffle's buffer handing on what it holds at
   * once, with no work above it): what the whole run saw is all there is to measure, from its
   * first element when there are a few more (the time before it is the pipeline's start, not its
   * rate). Returns whether it is measured from its first element.
   */
  widenIfShort(): boolean {
    const short = this.windowElements < MIN_ELEMENTS || this.windowEnd - this.windowStart < this.estimateInterval;
    const tooFew = this.phase === 'measuring' && this.endReason === 'exhausted' && short && this.total > this.windowElements;
    if (tooFew) {
      this.phase = 'warmup';
      // Estimates of the few-element window say nothing about the run's rate.
      this.estimates.length = 0;
    }
    const fromFirst = this.total >= 3 && this.points.length > 0;
    if (this.phase === 'warmup') {
      this.hooks.onWindowWidened?.(fromFirst);
      this.warmupElements = fromFirst ? 1 : 0;
      this.warmupSeconds = fromFirst ? this.warmStart - this.t0 : 0;
      this.windowStart = fromFirst ? this.warmStart : this.t0;
      this.windowElements = fromFirst ? this.total - 1 : this.total;
      this.windowEnd = now();
    }
    return fromFirst;
  }

  /**
   * The share of one more root element a window the budget ended between two holds: the elements
   * its root has taken towards it (a batch of 32 with 20 images in it), which every operator's
   * counters already include. Without it slow pipelines would read low by up to one root element,
   * and unevenly: the timer fires only when the event loop is free, so a run busy on the main
   * thread through a batch ends on a whole one, and one that awaits is cut mid-batch.
   */
  partialElement(): number {
    return this.phase === 'measuring' && this.fineAtBudget !== undefined ? partialOf(this.windowElements, this.fineAtWindowStart, this.fineAtLastArrival, this.fineAtBudget) : 0;
  }

  result(fromFirst: boolean, partialElement: number): MeasureResult {
    const measuring = this.phase === 'measuring';
    const windowPoints = measuring ? this.points.filter((p) => p.t >= this.windowStart) : fromFirst ? this.points : [{ t: this.t0, elements: 0, fine: this.fineAtStart }, ...this.points];
    const windowEndPoint: WindowPoint = measuring
      ? { t: this.windowEnd, elements: this.total + partialElement, fine: this.fineAtBudget ?? this.fineAtLastArrival }
      : { t: this.windowEnd, elements: this.total, fine: this.fineAtLastArrival };
    const windowSlices = slices(windowPoints, windowEndPoint);
    const windowCurve = windowSlices ? slices(windowPoints, windowEndPoint, MAX_CURVE_SLICES) : undefined;
    return {
      elements: this.windowElements + partialElement,
      ...(partialElement > 0 ? { partialElement } : {}),
      seconds: Math.max(this.windowEnd - this.windowStart, 1e-9),
      warmupElements: this.warmupElements,
      warmupSeconds: this.warmupSeconds,
      ...(this.total >= 1 ? { firstElementSeconds: this.warmStart - this.t0 } : {}),
      converged: this.converged,
      endReason: this.endReason,
      rateEstimates: this.estimates,
      ...(windowSlices ? { windowSlices } : {}),
      // Only when finer than the slices: otherwise it says nothing they do not.
      ...(windowSlices && windowCurve && windowCurve.length > windowSlices.length ? { windowCurve } : {}),
      ...(this.thrown ? { thrown: this.thrown } : {}),
    };
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
