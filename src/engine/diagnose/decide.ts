/**
 * The decision, from what was measured alone: which configuration is kept, why each change left
 * out went, and what the verification says. No run here: given the same measurements it decides
 * the same, so every rule is tested on configurations built by hand (test/unit/engine/diagnose/decide.test.ts).
 */
import type { PlanChange, Verification } from '../../shared/analysis';
import { changeKey } from '../../shared/analysis';
import { bothRan, compareSides, sideFaster, sideSlower, withoutBestWords } from '../paired';
import { pooledRate } from '../stats';
import { formatSpeedup } from '../../shared/words';
import { configOut, fmtMeasured, keyOf, type Config } from './config';
import { firstBatchFaster, firstBatchGain, firstBatchWords, isFirstBatchMove, movesFirstBatch } from './firstBatch';

/** What verification measured, as the decision reads it (`Trials` is one). */
export interface Measurements {
  /** The plan's changes. */
  all: readonly PlanChange[];
  asWritten: Config;
  /** The whole plan. */
  planned: Config;
  /** Every configuration of the plan's changes, by `keyOf` its changes. */
  configs: ReadonlyMap<string, Config>;
  /** The configurations that ran, in the order they first ran. */
  order: readonly Config[];
  /** Parts of the plan measured beside it: run by a pass, or left out in turn by verification. */
  measuredParts: ReadonlySet<Config>;
  /** What a person calls a configuration. */
  name(c: Config): string;
}

/** The verification's verdict and the changes it keeps (what `Verification` holds besides the runs and the time). */
export interface Verdict {
  verification: Omit<Verification, 'asWritten' | 'tried' | 'seconds'>;
  keep: PlanChange[];
}

/**
 * The changes that lost alone, by `changeKey`, with why: a change whose run alone failed, or that
 * measured reliably slower alone than as written. None in a plan of one change (alone is the plan).
 */
export function lostAlone(m: Measurements): Map<string, string> {
  const lost = new Map<string, string>();
  for (const c of m.all) {
    const alone = m.configs.get(keyOf([c]));
    if (!alone || alone.runs === 0 || m.all.length === 1) continue;
    if (alone.error) lost.set(changeKey(c), `its run failed alone: ${alone.error.message}`);
    else if (sideSlower(alone, m.asWritten)) lost.set(changeKey(c), `measured ${formatSpeedup(compareSides(alone, m.asWritten).speedup)} alone`);
  }
  return lost;
}

/**
 * The configuration to keep: the fastest that is a reliable gain and holds no change that lost
 * alone (undefined: none is, keep the pipeline as written).
 */
export function chooseKept(m: Measurements): Config | undefined {
  const { asWritten, planned } = m;
  const lost = lostAlone(m);
  // A reorder priced by its first batch is a gain when faster on one measure and no slower on the other (./firstBatch.ts).
  const gain = (c: Config): boolean => (movesFirstBatch(c) ? firstBatchGain(c, asWritten, sideFaster, sideSlower) : sideFaster(c, asWritten));
  const eligible = (c: Config): boolean => c !== asWritten && !c.error && c.slices.length > 0 && !c.changes.some((x) => lost.has(changeKey(x))) && gain(c);
  let best: Config | undefined;
  for (const c of m.order) {
    if (!eligible(c)) continue;
    if (!best || compareSides(c, asWritten).speedup > compareSides(best, asWritten).speedup) best = c;
  }
  // A part of the plan (left out in turn, or run by a pass) replaces a plan that is itself a gain
  // only when it measured reliably faster than it: the plan is the model's best guess.
  if (best && best !== planned && eligible(planned) && !sideFaster(best, planned)) best = planned;
  // But a change is recommended only when it was measured to help: a part of the plan that is
  // itself a gain, and that the plan did not beat beyond the spread, says the changes it leaves
  // out were not (a trivial fn moved to worker threads beside the parallelism that carried the
  // gain: the user would start threads for nothing). That part is kept instead; of several, the
  // fastest. A part a pass ran counts as one left out here: a later pass may plan a change beside
  // the part it ran (a move beside a cache) that the whole plan does not measure to help.
  if (best === planned) {
    let leaner: Config | undefined;
    for (const c of m.measuredParts) {
      if (!eligible(c) || sideFaster(planned, c)) continue;
      // Nor does a part drop a move whose first batch the plan measured faster than the part's.
      if (movesFirstBatch(planned) && !movesFirstBatch(c) && firstBatchFaster(planned, c)) continue;
      if (!leaner || compareSides(c, asWritten).speedup > compareSides(leaner, asWritten).speedup) leaner = c;
    }
    if (leaner) best = leaner;
  }
  return best;
}

/**
 * The verdict on everything measured, `kept` being the configuration finally kept (`chooseKept`'s,
 * or one tried on top of it that won): a gain with what it measured; else the plan's failure; else
 * "no reliable gain" with what the plan and its parts measured. Each change not kept says why.
 */
export function verdictOf(m: Measurements, kept: Config | undefined): Verdict {
  const { asWritten, planned } = m;
  const lost = lostAlone(m);
  const keptKeys = new Set((kept?.changes ?? []).map(changeKey));
  const dropped = m.all.filter((c) => !keptKeys.has(changeKey(c))).map((change) => ({ change, why: whyDropped(m, lost, kept, change) }));
  if (kept) {
    const s = compareSides(kept, asWritten);
    const first = movesFirstBatch(kept) ? `; ${firstBatchWords(kept, asWritten)}` : '';
    return {
      verification: {
        verdict: 'gain',
        kept: configOut(kept),
        speedup: s.speedup,
        speedupHalfWidth: s.halfWidth,
        dropped,
        summary: `verified ${formatSpeedup(s.speedup, s.halfWidth)}${withoutBestWords(kept, asWritten)}${first}`,
      },
      keep: kept.changes,
    };
  }
  const nothing = { changes: [], measured: pooledRate(asWritten.slices) };
  if (planned.error) {
    // The plan itself did not run (a worker could not load the fn, an override the library
    // refused), and no part of it measured a gain: nothing is kept, and the reason is the failure.
    return { verification: { verdict: 'error', kept: nothing, speedup: 1, speedupHalfWidth: 0, dropped, summary: `verification failed: the plan's run failed: ${planned.error.message}` }, keep: [] };
  }
  return { verification: { verdict: 'no-gain', kept: nothing, speedup: 1, speedupHalfWidth: 0, dropped, summary: `no reliable gain on this machine right now: ${noGain(m)}` }, keep: [] };
}

/** Why a change of the plan is not in the configuration kept; for a move judged by its first batch, with what the first batches measured. */
function whyDropped(m: Measurements, lost: ReadonlyMap<string, string>, kept: Config | undefined, change: PlanChange): string {
  const why = whyDroppedRate(m, lost, kept, change);
  const { planned, asWritten } = m;
  return isFirstBatchMove(change) && planned.firstBatch.length > 0 && asWritten.firstBatch.length > 0 ? `${why}; ${firstBatchWords(planned, asWritten)}` : why;
}

function whyDroppedRate(m: Measurements, lost: ReadonlyMap<string, string>, kept: Config | undefined, change: PlanChange): string {
  const { all, asWritten, planned } = m;
  const k = changeKey(change);
  const lostAlone = lost.get(k);
  if (lostAlone) return lostAlone;
  const speedup = (c: Config): string => formatSpeedup(compareSides(c, asWritten).speedup);
  // The plan without it beat the plan: that is why it went, whatever it measured alone.
  const without = m.configs.get(keyOf(all.filter((x) => changeKey(x) !== k)));
  if (without && without.runs > 0 && !without.error && all.length > 1 && sideFaster(without, planned)) {
    return `the plan measured ${speedup(planned)} with it and ${speedup(without)} without`;
  }
  const alone = m.configs.get(keyOf([change]));
  if (alone && alone.runs > 0 && all.length > 1) return `measured ${speedup(alone)} alone`;
  if (without && without.runs > 0 && !without.error && all.length > 1) {
    const measured = `the plan measured ${speedup(planned)} with it and ${speedup(without)} without`;
    return sideFaster(planned, without) ? measured : `not measured to help: ${measured}`;
  }
  if (planned.error) return `the plan's run failed: ${planned.error.message}`;
  if (kept) return 'not measured alone within the time budget; the kept changes measured faster without it';
  return `the plan measured ${speedup(planned)}`;
}

/** What "no reliable gain" rests on: the plan's rate against as written's, and what each other configuration measured. */
function noGain(m: Measurements): string {
  const { asWritten, planned } = m;
  const s = compareSides(planned, asWritten);
  const parts = [`the plan measured ${fmtMeasured(planned)} against ${fmtMeasured(asWritten)} as written (${formatSpeedup(s.speedup, s.halfWidth)}${bothRan(s)})`];
  const others = m.order.filter((c) => c !== asWritten && c !== planned && c.runs > 0);
  if (others.length > 0) {
    parts.push(others.map((c) => `${m.name(c)}: ${c.error ? 'failed' : formatSpeedup(compareSides(c, asWritten).speedup)}`).join(', '));
  }
  return parts.join('; ');
}
