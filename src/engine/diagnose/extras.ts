/**
 * Configurations the model does not price, tried on top of the one the decision kept: one run
 * each and, when that run wins, a second pair (the kept configuration, then the extra) to confirm
 * it; kept only when reliably faster than without. Each is a row of EXTRAS — when it applies, what
 * it runs, how its reasons read when it wins — tried in order by `tryExtras` while the budget has
 * room. A new idea of this kind is a new row.
 */
import type { PlanChange } from '../../shared/analysis';
import { changeKey } from '../../shared/analysis';
import type { Overrides, Profile } from '../../shared/profile';
import { eventLoopMove, fuseAlternative, overridesFor, rootUnitOf, widenFreeLevers } from '../../model';
import { bothRan, compareSides, sideFaster, sideOf, type MeasuredSide } from '../paired';
import { formatSpeedup, terminalRate } from '../../shared/words';
import { fmtMeasured, shortName, unmeasured, type Config } from './config';
import { convertIn } from './convert';
import type { Trials } from './trials';

/** One configuration to try on top of the kept one. */
interface Attempt {
  key: string;
  /** All its changes (the kept ones, with one added or some resized). */
  changes: PlanChange[];
  /** What the progress report says it verifies. */
  what: string;
  /**
   * Not run when a run already measured a configuration with its overrides (the plan itself, whose
   * extra change the decision dropped as not measured to help): the decision saw it.
   */
  unlessMeasured: boolean;
  /** Its changes as kept when it won: the reasons say what verification measured. */
  won(tried: Config, was: Config): PlanChange[];
}

/** A kind of configuration the model does not price: the attempt on top of `kept`, or undefined when it does not apply. */
interface Extra {
  attempt(kept: Config, trials: Trials): Attempt | undefined;
}

/**
 * The kept configuration's free levers (calls in flight, inner datasets pulled at once;
 * src/model/headroom.ts) doubled. The model sizes them just above the next bound, from mean waits
 * and the CPU an element cost at the rate the run measured. Near that bound waits run longer than
 * their mean, and the CPU an element costs falls as more are in flight (more records per wake-up
 * of the event loop, more elements per worker task), which no run at the planned count shows.
 * The widened changes replace the kept ones; no "already measured" skip, as no earlier
 * configuration has them.
 */
const widerFreeLevers: Extra = {
  attempt(was, trials) {
    const { ctx, first } = trials;
    // From the last pass's run and the runs before it: an op whose latency grew with its calls in
    // flight across them (a throttled disk) has no free lever.
    const wider = widenFreeLevers(ctx.last, was.changes, { ...ctx.options, history: ctx.history });
    if (!wider) return undefined;
    const raised = wider.filter((c) => !was.changes.includes(c));
    return {
      key: `${was.key} widened`,
      changes: wider,
      what: `${trials.name(was)}, doubling what it keeps in flight (${raised.map((c) => shortName(c, first)).join(', ')})`,
      unlessMeasured: false,
      won: (tried) => wider.map((c) => (raised.includes(c) ? withSizeMeasured(c, tried, was) : c)),
    };
  },
};

/**
 * A count the plan sized, resized by `widerFreeLevers`, with what verification measured at both
 * sizes. No prediction of its own: the model priced the levers at the plan's counts (the final
 * plan's figure is priced from the last pass's run, see keep.ts).
 */
function withSizeMeasured(c: PlanChange, tried: Config, was: Config): PlanChange {
  if (c.kind !== 'parallelism' && c.kind !== 'cycleLength') return c;
  const planned = was.changes.find((x) => changeKey(x) === changeKey(c));
  const from = planned && (planned.kind === 'parallelism' || planned.kind === 'cycleLength') ? planned.to : undefined;
  if (from === undefined) return c;
  const measured = (m: Config, to: number): string => `${fmtMeasured(m)} with ${to}`;
  const predicted = was.predictedRate !== undefined ? ` (predicted ${terminalRate(was.predictedRate)})` : '';
  return {
    ...c,
    reason: `${c.reason} The plan sized it at ${from}; verification measured ${measured(tried, c.to)} against ${measured(was, from)}${predicted}: near the next bound waits run longer than their mean, and more in flight lowers the CPU an element costs.`,
  };
}

/**
 * A fn on the main thread beside waits that bind there (model `eventLoopMove`) moved to worker
 * threads: the model takes the waits as measured, and part of each was the event loop busy with
 * the fn. Judged from the kept configuration's latest run; not when it already places that fn.
 */
const eventLoopMoveOnTop: Extra = {
  attempt(was, trials) {
    const move = was.last ? eventLoopMove(was.last, trials.ctx.options) : undefined;
    if (!move || was.changes.some((c) => c.opId === move.opId && c.kind === 'placement')) return undefined;
    return onTop(was, move, trials, (measured) => `${move.reason} Verification ${measured}.`);
  },
};

/**
 * A prefetch at the end, which the model does not price (on one thread it overlaps nothing the
 * model sees) and which a consumer can still feel: a loop that works on each element beside a
 * busy thread can run faster when the pipeline prepares the next one meanwhile. The plan's
 * estimate stays the model's; its reason says what verification measured the prefetch add.
 */
const prefetchAtEndOnTop: Extra = {
  attempt(was, trials) {
    const { first } = trials;
    const atEnd = prefetchAtEnd(first, was.changes, trials.ctx.input.userOverrides);
    if (!atEnd) return undefined;
    const unit = rootUnitOf(first);
    const next = atEnd.size === 1 ? unit.one : `${atEnd.size} ${unit.many}`;
    return onTop(was, atEnd, trials, (measured) => `A prefetch at the end lets the pipeline prepare its next ${next} while the loop that consumes it works. The model does not price it; verification ${measured}.`);
  },
};

/**
 * Adjacent worker maps the kept changes leave unfused (or move apart) fused instead (model
 * `fuseAlternative`): the model does not see all of the crossing a fusion removes, so a run decides.
 */
const fuseInstead: Extra = {
  attempt(was, trials) {
    // A plan of knobs alone (`reshape: false`) has no flow levers.
    if (trials.ctx.options.reshape === false) return undefined;
    const changes = fuseAlternative(trials.first, was.changes, trials.ctx.options);
    if (!changes) return undefined;
    const added = changes.filter((c) => !was.changes.includes(c));
    return {
      key: `${was.key} ${added.map(changeKey).join(' ')}`,
      changes,
      what: `the kept changes with ${added.map((c) => shortName(c, trials.first)).join(', ')}`,
      unlessMeasured: true,
      won(tried) {
        const gain = compareSides(tried, was);
        const measured = `Verification measured ${fmtMeasured(tried)} with it against ${fmtMeasured(was)} without (${formatSpeedup(gain.speedup, gain.halfWidth)}${bothRan(gain)}).`;
        return changes.map((c) => (added.includes(c) ? { ...c, reason: `${c.reason}. ${measured}` } : c));
      },
    };
  },
};

/** Tried in this order, each on top of what the ones before kept. */
export const EXTRAS: readonly Extra[] = [fuseInstead, widerFreeLevers, eventLoopMoveOnTop, prefetchAtEndOnTop];

/**
 * The kept changes `was` with `extra` added, its reason rewritten by `reason` from what it
 * measured over `was` ("measured 963/s ± 48.2 with it against 775/s ± 11.5 without (1.2× ± 0.1)").
 */
function onTop(was: Config, extra: PlanChange, trials: Trials, reason: (measured: string) => string): Attempt {
  return {
    key: `${was.key} ${changeKey(extra)}`,
    changes: [...was.changes, extra],
    what: `${keptName(trials, was)}, with ${shortName(extra, trials.first)}`,
    unlessMeasured: true,
    won(tried) {
      const gain = compareSides(tried, was);
      const measured = `measured ${fmtMeasured(tried)} with it against ${fmtMeasured(was)} without (${formatSpeedup(gain.speedup, gain.halfWidth)}${bothRan(gain)})`;
      return [...was.changes, { ...extra, reason: reason(measured) }];
    },
  };
}

/**
 * Tries each of EXTRAS on top of `kept` while the budget has room for its run: what is kept
 * after them (`kept` itself when none won), or 'cancelled'.
 */
export async function tryExtras(trials: Trials, kept: Config | undefined): Promise<Config | undefined | 'cancelled'> {
  const { first, options } = trials.ctx;
  let best = kept;
  if (!best) return undefined;
  // The extras are knobs of the operators as written; a converted chain has its own in its text.
  if (convertIn(best.changes)) return best;
  for (const extra of EXTRAS) {
    if (!trials.budget.room(1)) continue;
    const a = extra.attempt(best, trials);
    if (!a) continue;
    const overrides = overridesFor(first, a.changes, options);
    if (a.unlessMeasured && trials.ran(overrides)) continue;
    const tried = unmeasured(a.key, a.changes, overrides);
    await trials.measure(tried, a.what);
    if (trials.cancelled) return 'cancelled';
    if (tried.error || !sideFaster(tried, best)) continue;
    const confirmed = await confirmWin(trials, tried, best, a.what);
    if (confirmed === 'cancelled') return 'cancelled';
    if (!confirmed) continue;
    tried.changes = a.won(tried, best);
    best = tried;
  }
  return best;
}

/** What the progress calls the kept configuration: its name when it is one of the plan's, else "the kept changes". */
function keptName(trials: Trials, kept: Config): string {
  return trials.configs.get(kept.key) === kept ? trials.name(kept) : 'the kept changes';
}

/**
 * A first run's win confirmed by a second pair, the kept configuration first and the extra beside
 * it, which must win on its own and with all the runs: two runs of one configuration differ by
 * more than one run's windows say, so one run of an extra that changes nothing beats one slow run
 * of the kept configuration often enough to be kept on noise. Without room for the pair the win
 * is not confirmed, and the extra is not kept.
 */
async function confirmWin(trials: Trials, tried: Config, best: Config, what: string): Promise<boolean | 'cancelled'> {
  if (!trials.budget.room(2)) return false;
  const again = [
    { c: best, what: `${keptName(trials, best)} again, to confirm the gain the last run measured` },
    { c: tried, what: `${what}, again beside it`, partner: best },
  ];
  for (const run of again) {
    if (!(await trials.measure(run.c, run.what, run.partner))) return trials.cancelled ? 'cancelled' : false;
  }
  // The second pair on its own, as the first won on its own; then all the runs together.
  const latest = (c: Config, seq: number): MeasuredSide => (c.last ? sideOf(c.last, seq) : { slices: [], curves: [] });
  return sideFaster(latest(tried, 1), latest(best, 0)) && sideFaster(tried, best);
}

/** Elements a prefetch the plan adds at the end of a pipeline holds: one being consumed, one ready. */
const PREFETCH_AT_END = 2;

/**
 * The change that puts a prefetch at the end of the pipeline, when it has none: not when its last
 * operator is a prefetch, the user's overrides already give it one, or the kept changes do.
 */
function prefetchAtEnd(first: Profile, changes: PlanChange[], user: Overrides | undefined): Extract<PlanChange, { kind: 'prefetch' }> | undefined {
  const rootId = first.pipeline.rootId;
  const root = first.ops.find((o) => o.id === rootId);
  if (!root || root.kind === 'prefetch' || user?.[rootId]?.prefetch !== undefined) return undefined;
  if (changes.some((c) => c.kind === 'prefetch' && c.opId === rootId)) return undefined;
  return { kind: 'prefetch', opId: rootId, existing: false, size: PREFETCH_AT_END, reason: 'A prefetch at the end lets the pipeline prepare its next elements while the loop that consumes it works.' };
}
