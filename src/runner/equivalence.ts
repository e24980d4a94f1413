/**
 * The equivalence check a reshaping edit must pass before any speed is measured (issue 54): two
 * configurations of a pipeline — each a file, an export and knob overrides; the second is usually
 * the reshaped sibling file — are run in turn on the same sample, with the library's global seed
 * fixed, and their elements compared by canonical digest (canonical.ts): the same sequence where
 * the pipeline keeps order, the same multiset where it does not. What cannot be compared (a run
 * failed, an element holds a function) is not equivalent: a reshape that cannot be checked is not
 * offered.
 */
import * as path from 'node:path';
import type { Overrides, SampleMessage } from '../shared/profile';
import { DEFAULTS, type RunRequest } from './request';
import { fileProblem, runChild, type RunProfileOptions } from './spawn';
import { acquireRunLock } from './runLock';

/** One configuration of a pipeline. */
export interface SampleConfig {
  file: string;
  exportName?: string;
  overrides?: Overrides;
}

/** How the sample is drawn. */
export interface SampleOptions extends Pick<RunProfileOptions, 'nodePath' | 'nodeArgs' | 'cwd' | 'signal' | 'memoryMB' | 'onWaiting'> {
  /** Elements compared (default 200): the pipeline's first elements. */
  elements?: number;
  /** Wall seconds each run may pull for (default 20); a shorter run's prefix is what both are compared on. */
  seconds?: number;
  /** The library's global seed in both runs (default 54). */
  seed?: number;
  /** Compare the sequence (true, default) or only the multiset (a pipeline whose order is not kept). */
  ordered?: boolean;
  /**
   * Compare the rows the root elements group (a batch's) as a multiset, over a whole pass: for a
   * change of order, which regroups batches and reaches other elements first. A sample that does not
   * reach the pipeline's end within `seconds` (or `elements` root elements) is then not comparable.
   */
  wholePassRows?: boolean;
}

/** One configuration's sample, or why there is none. */
export type Sample = { ok: true; digests: string[]; exhausted: boolean } | { ok: false; reason: string };

/** The verdict of the check. */
export interface Equivalence {
  /** The same elements (in the same order when `ordered`) on the sample. */
  equivalent: boolean;
  sameSequence: boolean;
  sameMultiset: boolean;
  /** Elements compared. */
  elements: number;
  /** One sentence: what was compared and what differed. */
  reason: string;
}

const DEFAULT_ELEMENTS = 200;
const DEFAULT_SECONDS = 20;
export const DEFAULT_SEED = 54;

/** The first elements of one configuration, digested in a runner child. */
export async function runSample(config: SampleConfig, opts: SampleOptions = {}): Promise<Sample> {
  const file = path.resolve(opts.cwd ?? process.cwd(), config.file);
  const missing = fileProblem(file, opts.cwd);
  if (missing) return { ok: false, reason: missing.message };
  const seconds = opts.seconds ?? DEFAULT_SECONDS;
  const request: RunRequest = {
    mode: 'sample',
    file,
    exportName: config.exportName,
    seconds,
    maxElements: opts.elements ?? DEFAULT_ELEMENTS,
    warmupSeconds: 0,
    warmupMaxElements: 0,
    startSeconds: seconds,
    overrides: config.overrides ?? {},
    progressInterval: DEFAULTS.progressInterval,
    probes: false,
    seed: opts.seed ?? DEFAULT_SEED,
    ...(opts.wholePassRows ? { sampleRows: true } : {}),
  };
  let lock: Awaited<ReturnType<typeof acquireRunLock>>;
  try {
    lock = await acquireRunLock({ signal: opts.signal, onWait: opts.onWaiting });
  } catch {
    return { ok: false, reason: 'The sample was cancelled while it waited for another Plumber run to finish.' };
  }
  let message: SampleMessage | undefined;
  let failure: string | undefined;
  try {
    const outcome = await runChild(request, { ...opts, file }, seconds + 30);
    if (outcome.message?.type === 'sample') message = outcome.message;
    else failure = outcome.message?.type === 'profile' ? outcome.message.profile.error?.message : outcome.error?.message;
  } finally {
    lock?.release();
  }
  if (!message) return { ok: false, reason: failure ?? 'The runner ended without sending a sample.' };
  if (message.notComparable) return { ok: false, reason: `Its elements cannot be compared: ${message.notComparable}.` };
  return { ok: true, digests: message.digests, exhausted: message.exhausted };
}

/** Compares two samples (see `Equivalence`); pure. With `wholePass`, both must have reached the pipeline's end. */
export function compareSamples(a: Sample, b: Sample, ordered = true, wholePass = false): Equivalence {
  const none = (reason: string): Equivalence => ({ equivalent: false, sameSequence: false, sameMultiset: false, elements: 0, reason });
  if (!a.ok) return none(`The original could not be sampled: ${a.reason}`);
  if (!b.ok) return none(`The reshaped pipeline could not be sampled: ${b.reason}`);
  // A change of order reaches other elements first: only whole passes hold the same elements.
  if (wholePass && !(a.exhausted && b.exhausted)) return none('A change of order can only be compared over a whole pass, and the sample did not reach the pipeline’s end.');
  // Both ended: every element counts. Otherwise the shorter prefix is compared (a run cut short by time).
  if (a.exhausted && b.exhausted && a.digests.length !== b.digests.length) return none(`The original yields ${a.digests.length} elements and the reshaped pipeline ${b.digests.length}.`);
  if (a.exhausted !== b.exhausted && (a.exhausted ? a.digests.length < b.digests.length : b.digests.length < a.digests.length)) {
    return none(`One pipeline ended after ${Math.min(a.digests.length, b.digests.length)} elements and the other went on.`);
  }
  const n = Math.min(a.digests.length, b.digests.length);
  if (n === 0) return none('Neither pipeline yielded an element to compare.');
  const x = a.digests.slice(0, n);
  const y = b.digests.slice(0, n);
  const firstDiff = x.findIndex((d, i) => d !== y[i]);
  const sameSequence = firstDiff < 0;
  const sy = sameSequence ? [] : sorted(y);
  const sameMultiset = sameSequence || sorted(x).every((d, i) => d === sy[i]);
  const equivalent = ordered ? sameSequence : sameMultiset;
  const reason = equivalent
    ? `The same ${n} elements${ordered ? ' in the same order' : ''} on a seeded sample.`
    : sameMultiset
      ? `The same ${n} elements, but in another order (element ${firstDiff + 1} differs), and this pipeline keeps order.`
      : `Element ${firstDiff + 1} of ${n} differs on a seeded sample.`;
  return { equivalent, sameSequence, sameMultiset, elements: n, reason };
}

function sorted(d: string[]): string[] {
  return [...d].sort();
}

/**
 * Runs both configurations on the same seeded sample, one after the other, and compares their
 * elements. Never rejects: a run that fails makes the pair not equivalent, with the reason.
 */
export async function checkEquivalence(original: SampleConfig, reshaped: SampleConfig, opts: SampleOptions = {}): Promise<Equivalence> {
  const ordered = opts.wholePassRows ? false : (opts.ordered ?? true);
  const a = await runSample(original, opts);
  if (!a.ok) return compareSamples(a, a, ordered);
  const b = await runSample(reshaped, opts);
  return compareSamples(a, b, ordered, opts.wholePassRows === true);
}
