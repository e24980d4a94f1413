/** Whether a pipeline is still speeding up during its warm-up. */

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
 * no faster than the cheap ones before that, so each slice is judged against the fastest before
 * it, not against the one before alone. A pipeline too slow to fill slices is judged by the clock
 * alone.
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
