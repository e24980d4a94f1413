/**
 * What the editor's features say about an operator at a glance: its numbers in the pipeline's unit
 * (root elements per second, with the op's own count where it differs), its label from the source
 * text, and the model's what-if for a knob. How each number is written lives in
 * src/shared/words.ts.
 */
import type { Analysis, OpAnalysis, Plan } from '../../shared/analysis';
import type { KnobOverride, Profile } from '../../shared/profile';
import { rootRateOf } from '../../shared/units';
import { callLabel } from '../../shared/labels';
import { compact, coresWords, forOtherMachine, rateWords } from '../../shared/words';
import type { GraphOp } from '../../engine/graph/types';
import { describeOp, predict } from '../../model';

export { rootRateOf, rootUnit } from '../../shared/units';
// advice.ts still takes the rate's words from here under their old name.
export { rateWords as rateIn } from '../../shared/words';

/**
 * An operator's numbers in the pipeline's unit: "41 el/s = 1.3 batches/s · bound 1.4" when it
 * counts other elements than the pipeline (its own count first, so a person sees both), else
 * "1.3 el/s · bound 1.4". Two operators' numbers compare directly: the lower bound holds the
 * pipeline back.
 */
export function opRateWords(an: OpAnalysis, unit: string): string {
  const root = rateWords(rootRateOf(an), unit);
  // An operator that counts what the pipeline counts (visit ratio 1) needs no second number.
  const rate = Math.abs(an.visitRatio - 1) <= 0.005 ? root : `${rateWords(an.measuredRate)} = ${root}`;
  return `${rate} · bound ${compact(an.bound)}`;
}

/**
 * How close an operator is to holding the pipeline back: its bound over the pipeline's bound
 * (1 = it is the limit; 2 = it allows twice the pipeline's bound). Ranking by it puts the
 * bottleneck first.
 */
export function headroom(an: OpAnalysis, analysis: Analysis): number {
  return analysis.bound > 0 ? an.bound / analysis.bound : Infinity;
}

/**
 * The operator's label from the source text: `range(0, 1_000_000)`, `map(fetchRecord, { parallelism: 1 })`,
 * `map((x) => …)` (see `callLabel`). Falls back to the graph's label when the text does not hold the call.
 */
export function sourceLabel(op: GraphOp, text: string | undefined): string {
  if (text === undefined || op.own.end > text.length) return op.label;
  return callLabel(text.slice(op.own.start, op.own.end)) ?? op.label;
}

/** One alternative value of a knob and the model's predicted pipeline rate with it. */
export interface WhatIf {
  value: number;
  rate: number;
  /** The binding resource with that value, in a few words, when it is not the operator itself. */
  limit?: string;
}

/** The knobs the what-if varies, with the override that sets one to a value. */
const WHAT_IF_KNOBS: Record<string, (n: number) => KnobOverride> = {
  parallelism: (n) => ({ parallelism: n }),
  cycleLength: (n) => ({ cycleLength: n }),
  bufferSize: (n) => ({ prefetch: n }),
};

/** A few values around `current`: halves and doubles, within 1…`cap`, current included. */
export function alternatives(current: number, cap: number): number[] {
  const set = new Set<number>([1, current]);
  for (let v = Math.max(1, Math.floor(current / 2)); v >= 1 && set.size < 4; v = Math.floor(v / 2)) set.add(v);
  for (let v = Math.max(2, current * 2); v <= cap && set.size < 6; v *= 2) set.add(v);
  return [...set].sort((a, b) => a - b);
}

const LIMIT_WORDS: Record<string, string> = {
  cpu: 'cores busy',
  'main-thread': 'main thread busy',
  disk: 'disk',
  libuv: 'libuv pool',
  source: 'source',
};

/**
 * The model's predicted pipeline rate for a few values of one knob of one operator, from the
 * profile as it ran; undefined when the knob is not one the model can vary.
 */
export function whatIf(profile: Profile, profileOpId: string, knob: string, current: number, options: { cores?: number } = {}): WhatIf[] | undefined {
  const make = WHAT_IF_KNOBS[knob];
  if (!make) return undefined;
  const op = profile.ops.find((o) => o.id === profileOpId);
  if (!op) return undefined;
  const cores = options.cores && options.cores > 0 ? options.cores : profile.machine.cores;
  const cap = Math.max(4, 4 * cores, current);
  return alternatives(current, cap).map((value) => {
    const overrides = { ...profile.run.overrides, [profileOpId]: { ...profile.run.overrides[profileOpId], ...make(value) } };
    const p = predict(profile, overrides, options.cores && options.cores > 0 ? { cores: options.cores } : undefined);
    // What binds instead, when it is not this knob's operator: another operator by name, or a shared resource.
    const other = p.bottleneck.opId !== undefined && p.bottleneck.opId !== profileOpId ? profile.ops.find((o) => o.id === p.bottleneck.opId) : undefined;
    const limit = p.bottleneck.opId === profileOpId ? undefined : other ? `${describeOp(other)} limits` : LIMIT_WORDS[p.bottleneck.resource];
    return { value, rate: p.rate, ...(limit ? { limit } : {}) };
  });
}

/** "parallelism 1 → 0.4/s · 2 → 1.2/s · 4 → 1.3/s (cores busy)", the current value marked. */
export function whatIfWords(knob: string, current: number, rows: WhatIf[], unit: string): string {
  return `${knob} ${rows.map((r) => `${r.value === current ? `**${r.value}** (now)` : r.value} → ${rateWords(r.rate, unit)}${r.limit ? ` (${r.limit})` : ''}`).join(' · ')}`;
}

/**
 * The what-if for the target machine (`plumber.model.cores`), when the plan is for other cores
 * than here: "on 8 cores: ≈ 410 el/s as written, ≈ 900 el/s with the plan (predicted; 2 cores
 * here)". Undefined when the plan is for the cores here.
 */
export function coresWhatIf(profile: Profile, plan: Plan | undefined, unit: string): string | undefined {
  const t = plan?.target;
  if (!plan || !forOtherMachine(t)) return undefined;
  const asWritten = predict(profile, profile.run.overrides, { cores: t.cores }).rate;
  const withPlan = plan.changes.length > 0 ? `, ≈ ${rateWords(plan.predictedRate, unit)} with the plan` : '';
  return `on ${coresWords(t.cores)}: ≈ ${rateWords(asWritten, unit)} as written${withPlan} (predicted; ${coresWords(t.hereCores)} here)`;
}
