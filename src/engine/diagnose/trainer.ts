/**
 * A training loop's plan, verified over its neighbours: the model ranks pools of worker threads
 * for the trainer (src/model/trainer.ts) from one run as written, and what a pool of k threads
 * gives a loop whose step holds the main thread depends on quantities no run as written shows
 * (how many elements the library packs into a task, how much of a core each thread gets beside
 * the trainer). So verification measures the pool the plan chose and then its neighbours, one
 * thread more and one fewer, each beside a run as written (alternating, as every verification
 * run), and moves to a neighbour only when it measured reliably faster than the pool it replaces
 * (`sideFaster`: beyond the spread and by MIN_RELATIVE_GAIN), climbing on while it keeps winning
 * and the budget has room. A neighbour that measured faster but within the noise is measured
 * again beside the pool it would replace (UNDECIDED_ROUNDS), budget permitting, before it is
 * judged. No rule for any pipeline: the same noise rules as the rest of verification decide, on
 * what the runs measured.
 */
import type { PlanChange } from '../../shared/analysis';
import { changeKey } from '../../shared/analysis';
import { overridesFor } from '../../model';
import { bothRan, compareSides, sideFaster } from '../paired';
import { formatSpeedup } from '../../shared/words';
import { fmtMeasured, safePredict, unmeasured, type Config } from './config';
import type { Trials } from './trials';

/** The pool a configuration sizes: the change that sets a worker op's threads, and how many. */
interface Pool {
  index: number;
  threads: number;
}

/**
 * The worker pool `changes` size: a move to worker threads, or a parallelism change of an op that
 * runs in worker threads. Undefined when there is none, or more than one (the neighbours of two
 * pools are a grid, not a line: left to the model).
 */
export function poolOf(changes: readonly PlanChange[], trials: Pick<Trials, 'first'>): Pool | undefined {
  let found: Pool | undefined;
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i]!;
    let threads: number | undefined;
    if (c.kind === 'placement' && c.to === 'worker') threads = c.parallelism;
    else if (c.kind === 'parallelism' && typeof c.to === 'number' && trials.first.ops.find((o) => o.id === c.opId)?.placement === 'worker') threads = c.to;
    if (threads === undefined) continue;
    if (found) return undefined;
    found = { index: i, threads };
  }
  return found;
}

/** `changes` with the pool at `threads` (the reason says the count it runs). */
export function withThreads(changes: readonly PlanChange[], pool: Pool, threads: number): PlanChange[] {
  const plural = (k: number): string => `${k} worker thread${k === 1 ? '' : 's'}`;
  return changes.map((c, i) => {
    if (i !== pool.index) return c;
    if (c.kind === 'placement') return { ...c, parallelism: threads, reason: c.reason.replace(/\b\d+ worker threads?/g, plural(threads)) };
    if (c.kind === 'parallelism') return { ...c, to: threads, reason: c.reason.replace(/\b\d+ worker threads?/g, plural(threads)) };
    return c;
  });
}

/**
 * Extra rounds, at most, of a neighbour and the configuration it must beat when it measured faster
 * but not beyond the noise. Each adds two runs, and only while the budget has room; more looks
 * at the same question would make a gain of noise likelier to pass.
 */
const UNDECIDED_ROUNDS = 2;

/** Largest pool tried: the model's own budget of worker threads (twice the machine's cores). */
function maxThreads(trials: Trials): number {
  return 2 * Math.max(1, trials.first.machine.cores);
}

/**
 * For a training profile, the neighbours of the kept pool (or of the plan's, when verification
 * kept nothing), measured while the budget has room: what is kept after them, or 'cancelled'.
 * Not a training profile, or no single pool to size: `kept` as it was.
 */
export async function tryPoolNeighbours(trials: Trials, kept: Config | undefined): Promise<Config | undefined | 'cancelled'> {
  if (!trials.first.trainer) return kept;
  const from = kept ?? (trials.planned.error ? undefined : trials.planned);
  if (!from) return kept;
  const pool = poolOf(from.changes, trials);
  if (!pool) return kept;
  let best = kept;
  let current = from;
  let threads = pool.threads;
  // Up first: the plan's pick is the fewest threads the model thought enough, and a step that
  // holds the main thread leaves a small pool idle; then down, from the pool the plan chose.
  for (const step of [1, -1]) {
    for (let k = threads + step; k >= 1 && k <= maxThreads(trials); k += step) {
      if (!trials.budget.room(2)) return best;
      const changes = withThreads(current.changes, pool, k);
      const c = neighbour(trials, current, changes);
      if (c.runs > 0) break;
      if (!(await trials.measure(c, `${trials.name(current)} with ${k} worker thread${k === 1 ? '' : 's'}`))) {
        if (trials.cancelled) return 'cancelled';
        break;
      }
      // Beside it, a run as written on the same elements: load that drifts weighs on both.
      if (trials.budget.room(1)) {
        await trials.measure(trials.asWritten, `as written (${trials.asWritten.runs + 1})`, c);
        if (trials.cancelled) return 'cancelled';
      }
      // A pool verification did not keep is no bar: beating as written is enough to replace it.
      const bar = best === undefined ? trials.asWritten : current;
      const wins = (): boolean => sideFaster(c, bar) && sideFaster(c, trials.asWritten);
      // Undecided (faster than the bar as measured, not beyond the noise): a thread's worth of
      // gain is small beside one run's spread, so while the budget has room both sides run
      // again, the bar first, each neighbour beside it, and the same rule decides on all the runs.
      for (let r = 0; r < UNDECIDED_ROUNDS && !wins() && compareSides(c, bar).speedup > 1 && trials.budget.room(2); r++) {
        if (!(await trials.measure(bar, `${trials.name(bar)} (again, beside ${k} worker thread${k === 1 ? '' : 's'})`))) {
          if (trials.cancelled) return 'cancelled';
          break;
        }
        if (!(await trials.measure(c, `${trials.name(current)} with ${k} worker thread${k === 1 ? '' : 's'} (again)`, bar))) {
          if (trials.cancelled) return 'cancelled';
          break;
        }
      }
      if (!wins()) break;
      c.changes = measuredReasons(c, current, pool.index, threads, k);
      best = c;
      current = c;
      threads = k;
    }
    if (current !== from) break;
  }
  return best;
}

/** The configuration of `changes`, a neighbour of `was`: made once, its prediction the model's. */
function neighbour(trials: Trials, was: Config, changes: PlanChange[]): Config {
  const key = `${changes
    .map((c) => `${changeKey(c)}${c.kind === 'placement' ? `@${c.parallelism}` : c.kind === 'parallelism' ? `@${String(c.to)}` : ''}`)
    .sort()
    .join(' ')} pool`;
  const existing = trials.configs.get(key);
  if (existing) return existing;
  const { first, options } = trials.ctx;
  const overrides = overridesFor(first, changes, options);
  const c = unmeasured(key, changes, overrides, safePredict(first, overrides, options)?.rate ?? was.predictedRate);
  trials.configs.set(key, c);
  return c;
}

/** The neighbour's changes (`k` threads), the pool's reason saying what verification measured at both sizes (`was` at `before`). */
function measuredReasons(c: Config, was: Config, index: number, before: number, k: number): PlanChange[] {
  const j = compareSides(c, was);
  return c.changes.map((x, i) =>
    i === index
      ? {
          ...x,
          reason: `${x.reason} Verification measured ${fmtMeasured(c)} with ${k} worker thread${k === 1 ? '' : 's'} against ${fmtMeasured(was)} with ${before} (${formatSpeedup(j.speedup, j.halfWidth)}${bothRan(j)}).`,
        }
      : x,
  );
}
