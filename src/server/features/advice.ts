/**
 * How far the plan's advice can be trusted, in the words every surface uses (lens, quick fixes,
 * fix-all, hover, the tree and the report): the verified figure ("est. 1.8×, verified 1.7× ± 0.1"),
 * "no reliable gain on this machine right now" when verification found nothing faster, or
 * "not verified" when only the model spoke. Which changes are offered is the engine's rule
 * (src/engine/offer.ts), the one `plumber plan` and `plumber fix` apply too.
 */
import { changeKey, noChangeReason, type Analysis, type Plan, type PlanChange, type Verification, type VerifiedConfig } from '../../shared/analysis';
import type { Profile } from '../../shared/profile';
import type { AdviceVerdict, ReportAdvice, TriedConfig } from '../../shared/protocol';
import { offeredChanges } from '../../engine/offer';
import { formatSpeedup, speedupOf } from '../../engine/stats';
import { compact, fixTitle, speedup } from './format';
import { forOtherMachine, targetWords } from '../../shared/words';
import { rateIn, rootUnit } from './glance';

export { offeredChanges, predictsGain } from '../../engine/offer';

/** What the lens says when verification measured nothing reliably faster than the pipeline as written. */
export const NO_GAIN = 'no reliable gain on this machine right now';

export function verdictOf(plan: Plan): AdviceVerdict {
  const v = plan.verification;
  if (v && v.verdict !== 'gain') return v.verdict;
  if (offeredChanges(plan).length === 0) return 'none';
  return v ? 'gain' : 'unverified';
}

/** "est. 1.8×": the model's prediction for the offered changes over the rate measured as written. */
function estimate(plan: Plan): string | undefined {
  const x = speedup(plan.predictedRate, plan.currentRate);
  return x ? `est. ${x}` : undefined;
}

/**
 * The plan's figure in a lens's few words: "est. 1.8×, verified 1.7× ± 0.1", "est. 1.8×, not
 * verified", NO_GAIN, or "no fix offered: <why verification failed>". Undefined when the plan
 * proposes nothing.
 */
export function planFigure(plan: Plan): string | undefined {
  const v = plan.verification;
  const verdict = verdictOf(plan);
  const t = plan.target;
  if (forOtherMachine(t) && verdict !== 'none') {
    // A plan for other cores: "est. 7.3× predicted for 8 cores — verified here on 2 cores: 1.8× ± 0.3" (src/shared/words.ts).
    const label = targetWords(t, verdict === 'gain' ? formatSpeedup(v!.speedup, v!.speedupHalfWidth) : undefined)!;
    const est = estimate(plan);
    if (verdict === 'gain' || verdict === 'unverified') return est ? `${est} ${label}` : label;
    if (!t.verifiable) return `${verdict === 'no-gain' ? NO_GAIN : `no fix offered: ${v!.summary}`} (${label})`;
  }
  switch (verdict) {
    case 'gain': {
      const verified = `verified ${formatSpeedup(v!.speedup, v!.speedupHalfWidth)}`;
      const est = estimate(plan);
      return est ? `${est}, ${verified}` : verified;
    }
    case 'unverified': {
      const est = estimate(plan);
      return est ? `${est}, not verified` : 'not verified';
    }
    case 'no-gain':
      return NO_GAIN;
    case 'error':
      return `no fix offered: ${v!.summary}`;
    case 'none':
      return undefined;
  }
}

/** The lens / quick-fix title that applies every offered change: "Apply all Plumber fixes (est. 1.8×, verified 1.7× ± 0.1)". */
export function applyAllTitle(plan: Plan, count?: number): string {
  const parts: string[] = [];
  if (count !== undefined) parts.push(`${count} change${count === 1 ? '' : 's'}`);
  const figure = planFigure(plan);
  if (figure) parts.push(figure);
  return `Apply all Plumber fixes${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`;
}

/** The count a measured configuration ran `change` with, when it recorded one other than the change's (a doubled lever). */
function countIn(t: VerifiedConfig, change: PlanChange): PlanChange {
  const n = t.values?.[changeKey(change)];
  return n !== undefined && (change.kind === 'parallelism' || change.kind === 'cycleLength') && n !== change.to ? { ...change, to: n } : change;
}

/** True when the configuration ran `change` as it stands (not at another count). */
function ranAs(t: VerifiedConfig, change: PlanChange): boolean {
  return countIn(t, change) === change;
}

/** The configuration verification measured with exactly `change` applied, if it did. */
function measuredAlone(change: PlanChange, v: Verification | undefined): { speedup: number; halfWidth: number } | undefined {
  if (!v || !(v.asWritten.rate > 0)) return undefined;
  const key = changeKey(change);
  const alone = v.tried.find((t) => t.changes.length === 1 && t.changes[0] === key && t.measured.windows > 0 && ranAs(t, change));
  return alone ? speedupOf(alone.measured, v.asWritten) : undefined;
}

/**
 * What `change` added to the configuration verification kept, when it also ran that configuration
 * without it (a prefetch at the end, which the model does not price, is tried on top of the kept
 * changes): the kept rate over the rate without it.
 */
function measuredOverRest(change: PlanChange, v: Verification | undefined): { speedup: number; halfWidth: number } | undefined {
  const key = changeKey(change);
  if (!v || v.verdict !== 'gain' || v.kept.changes.length < 2 || !v.kept.changes.includes(key)) return undefined;
  const rest = v.kept.changes.filter((k) => k !== key);
  const same = (t: VerifiedConfig): boolean => t.changes.length === rest.length && rest.every((k) => t.changes.includes(k)) && rest.every((k) => t.values?.[k] === v.kept.values?.[k]);
  const without = v.tried.find((t) => same(t) && t.measured.windows > 0 && t.measured.rate > 0);
  return without ? speedupOf(v.kept.measured, without.measured) : undefined;
}

/**
 * One change's own effect: "est. 1.6× alone" from the model's per-change prediction, and
 * "measured 1.5× ± 0.1 alone" when verification ran it alone — or, for a change the model does not
 * price, "measured 2.7× ± 0.5 over the other changes" when verification ran the kept changes with
 * and without it. Undefined when none is known (a plan from a model that does not predict per
 * change).
 */
export function changeEffect(change: PlanChange, plan: Plan): string | undefined {
  const est = change.predictedRate !== undefined ? speedup(change.predictedRate, plan.currentRate) : undefined;
  const measured = measuredAlone(change, plan.verification);
  const m = measured ? `measured ${formatSpeedup(measured.speedup, measured.halfWidth)}` : undefined;
  if (est && m) return `est. ${est}, ${m} alone`;
  if (est) return `est. ${est} alone`;
  if (m) return `${m} alone`;
  const over = measuredOverRest(change, plan.verification);
  return over ? `measured ${formatSpeedup(over.speedup, over.halfWidth)} over the other changes` : undefined;
}

/** The quick-fix title of one change with its own effect: "Apply Plumber fix: set parallelism of map(decode) to 2 (est. 1.6× alone)". */
export function offerTitle(change: PlanChange, plan: Plan, profile: Profile): string {
  const effect = changeEffect(change, plan);
  return `${fixTitle(change, profile)}${effect ? ` (${effect})` : ''}`;
}

/** A change's title without the quick-fix prefix, for the report's lists. */
function changeWords(change: PlanChange, profile: Profile): string {
  return fixTitle(change, profile).replace(/^Apply Plumber fix: /, '');
}

function measuredText(rate: number, halfWidth: number, unit: string): string {
  return `${rateIn(rate, unit)} ± ${compact(halfWidth)}`;
}

/** What the report shows of the plan: the verdict, every configuration measured, what was dropped and why, the cores note and the plan's notes. */
export function reportAdvice(plan: Plan, analysis: Analysis | undefined, profile: Profile): ReportAdvice {
  const verdict = verdictOf(plan);
  const out: ReportAdvice = {
    verdict,
    headline: planFigure(plan) ?? `the plan proposes no change: ${analysis ? noChangeReason(analysis) : 'the knobs are already right for this machine'}`,
    tried: [],
    dropped: [],
    notes: [...(analysis?.unexplained ? [analysis.unexplained] : []), ...(plan.notes ?? [])],
  };
  const coresNote = analysis?.coresNote ?? plan.coresNote;
  if (coresNote) out.coresNote = coresNote;
  const v = plan.verification;
  if (!v) return out;
  out.summary = v.summary;
  out.seconds = v.seconds;
  const known = [...plan.changes, ...v.dropped.map((d) => d.change)];
  const label = (t: VerifiedConfig): string =>
    t.changes.length === 0
      ? 'as written'
      : t.changes
          .map((k) => {
            const c = known.find((x) => changeKey(x) === k);
            return c ? changeWords(countIn(t, c), profile) : k;
          })
          .join(' + ');
  // A configuration is the one kept when it applied the same changes at the same counts.
  const configKey = (t: VerifiedConfig): string =>
    [...t.changes]
      .sort()
      .map((k) => `${k}=${t.values?.[k] ?? ''}`)
      .join(' ');
  const keptKey = configKey(v.kept);
  const unit = rootUnit(profile);
  out.tried = v.tried.map((t): TriedConfig => {
    const row: TriedConfig = { label: label(t), measured: measuredText(t.measured.rate, t.measured.halfWidth, unit), kept: v.verdict === 'gain' && t.changes.length > 0 && configKey(t) === keptKey };
    if (t.changes.length > 0 && v.asWritten.rate > 0) {
      const s = speedupOf(t.measured, v.asWritten);
      row.speedup = formatSpeedup(s.speedup, s.halfWidth);
    }
    if (t.predictedRate !== undefined) row.predicted = rateIn(t.predictedRate, unit);
    return row;
  });
  out.dropped = v.dropped.map((d) => ({ title: changeWords(d.change, profile), why: d.why }));
  return out;
}
