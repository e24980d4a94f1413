/**
 * When one A/B pair is enough: the comparison of as written and the plan that a second pair, run
 * the other way round (A B B A), could not turn.
 */
import { MIN_RELATIVE_GAIN } from '../stats';
import { compareSides, sideFaster, unpairable } from '../paired';
import { alignedStart, type Config } from './config';
import { movesFirstBatch } from './firstBatch';

/** Slices each side needs before one pair of runs can settle the comparison. */
const SETTLE_MIN_SLICES = 4;
/** The most the free cores of the two runs of a pair may differ, as a share of the machine, for it to settle the comparison. */
const SETTLE_CORES_DRIFT = 0.1;

/**
 * One pair of runs (as written, the plan) settles the comparison, so the second pair of the ABBA
 * design can be skipped: both sides measured a spread (enough slices) and the pair already
 * decides, whatever a change of load between the two runs (the drift the second pair, run the
 * other way round, would otherwise cancel) could have done. On runs that found the same cores free
 * the pair decides when the plan is reliably faster, or reliably slower, or no faster than
 * MIN_RELATIVE_GAIN even at its point estimate. A second pair narrows the interval by about √2 and
 * cannot turn a plan that did not even measure a gain on a steady machine into one; it would only
 * add two runs to the wait. When the two runs found different cores free, the drift can explain at most their ratio
 * (a pipeline that took every free core runs that much faster or slower; one that used fewer,
 * less): the pair still decides when the plan's speed-up, its interval and the drift against it
 * taken together, is a gain (a plan that measured 3× ± 0.5 is one whatever share of the cores
 * was free to either run), a loss, or no gain even with the drift for it. Without a measure of free cores (off Linux) nothing settles early.
 */
export function settledAfterOnePair(asWritten: Config, planned: Config, cores: number): boolean {
  // A move judged by its first batch needs FIRST_BATCH_MIN_RUNS runs a side (./firstBatch.ts).
  if (planned.runs !== 1 || planned.error || movesFirstBatch(planned)) return false;
  if (asWritten.slices.length < SETTLE_MIN_SLICES || planned.slices.length < SETTLE_MIN_SLICES) return false;
  const free = firstPairFreeCores(asWritten, planned);
  if (free === undefined) return false;
  if (firstPairAlignable(asWritten, planned)) return false;
  if (steadyFirstPair(asWritten, planned, cores)) {
    return sideFaster(planned, asWritten) || sideFaster(asWritten, planned) || compareSides(planned, asWritten).speedup < 1 + MIN_RELATIVE_GAIN;
  }
  // Above 1 the load eased for the plan; below 1 it grew.
  const drift = free.planned / free.asWritten;
  const { speedup, halfWidth } = compareSides(planned, asWritten);
  const against = Math.max(1, drift);
  const forIt = Math.max(1, 1 / drift);
  return speedup - halfWidth > (1 + MIN_RELATIVE_GAIN) * against || (speedup + halfWidth) * forIt < 1 || speedup * forIt < 1 + MIN_RELATIVE_GAIN;
}

/**
 * The first pair's two runs measured different stretches of the data (too few shared elements to
 * be compared on the same ones), and a run as written can be made to measure the plan's: the plan's
 * window started within what as written's window reached. The plan's run warms up longer when it
 * moves a fn to worker threads (`warmupElementsFor`), so its window can start past the middle of as
 * written's, and its pooled rate then speaks of elements as written never ran, which may cost
 * several times less or more. Such a pair settles nothing; the second, with as written aligned
 * (`alignedStart`), compares the same elements. A plan whose window started beyond as written's
 * (a fast cache) has only its pooled rates, whichever pair.
 */
export function firstPairAlignable(asWritten: Config, planned: Config): boolean {
  return unpairable(planned, asWritten) && alignedStart(asWritten, planned) > 0;
}

/**
 * The cores the first pair's two runs found free: the run as written beside the plan's first is
 * the last one as written (the passes' part of the plan may have run in between). Undefined when
 * either could not read them.
 */
function firstPairFreeCores(asWritten: Config, planned: Config): { asWritten: number; planned: number } | undefined {
  const a = asWritten.freeCores.at(-1);
  const [b] = planned.freeCores;
  return a !== undefined && b !== undefined && a > 0 && b > 0 ? { asWritten: a, planned: b } : undefined;
}

/** The first pair's two runs found the same cores free (within SETTLE_CORES_DRIFT of the machine); false when either could not read them. */
export function steadyFirstPair(asWritten: Config, planned: Config, cores: number): boolean {
  const free = firstPairFreeCores(asWritten, planned);
  return free !== undefined && Math.abs(free.asWritten - free.planned) <= SETTLE_CORES_DRIFT * cores;
}
