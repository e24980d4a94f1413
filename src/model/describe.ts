/**
 * Words and numbers for people: operator labels, change titles and the formatting every reason
 * sentence uses, so the CLI, the code lenses and the quick fixes say the same thing.
 */
import type { PlanChange } from '../shared/analysis';
import { rootUnit } from '../shared/units';
import { describeOp } from '../shared/labels';
import { formatNumber, formatRate } from '../shared/words';
import { optionName, type OptionKnob } from '../shared/dialects';
import type { OpProfile, Profile } from '../shared/profile';

export { describeOp, formatNumber, formatRate };

/** The name `knob` has in `op`'s own options: its dialect's spelling, else plumber-data's. */
export function knobName(op: Pick<OpProfile, 'dialect'> | undefined, knob: OptionKnob): string {
  return optionName(op?.dialect, knob);
}

/** The profile's operators as plumber-data's: a converted chain's changes are titled with plumber-data's knob names. */
export function inPlumberData(profile: Profile): Profile {
  return profile.ops.some((op) => op.dialect !== undefined) ? { ...profile, ops: profile.ops.map(({ dialect: _dialect, ...op }) => op) } : profile;
}

/** The title of one plan change, e.g. "set parallelism of map(decode) to 2". The server prefixes "Apply Plumber fix: ". */
export function changeTitle(change: PlanChange, profile: Profile): string {
  const op = profile.ops.find((o) => o.id === change.opId);
  const label = op ? describeOp(op) : change.opId;
  switch (change.kind) {
    case 'parallelism':
      return `set ${knobName(op, 'parallelism')} of ${label} to ${change.to}`;
    case 'cycleLength':
      return `set cycleLength of ${label} to ${change.to}`;
    case 'placement':
      return change.to === 'main' ? `run ${label} on the main thread` : `run ${label} in worker threads`;
    case 'prefetch':
      // A buffer that is an option of the operator itself (a Node stream's highWaterMark), not an operator after it.
      if (knobName(op, 'prefetch') !== 'prefetch') return `set ${knobName(op, 'prefetch')} of ${label} to ${change.size}`;
      return change.existing ? `change prefetch(${change.from ?? '?'}) after ${inputLabel(op, profile)} to prefetch(${change.size})` : `insert prefetch(${change.size}) after ${label}`;
    case 'cache':
      return `cache after ${label} (≈ ${formatBytes(change.estimatedBytes)}${change.path !== undefined ? `, on disk at ${change.path}` : ''})`;
    case 'reorder': {
      const before = profile.ops.find((o) => o.id === change.before);
      return `move ${label} before ${before ? describeOp(before) : change.before}`;
    }
    case 'fuse': {
      const first = profile.ops.find((o) => o.id === change.with);
      return `run ${label} in the same worker task as ${first ? describeOp(first) : change.with}`;
    }
    case 'deterministic':
      return `let ${label}'s fast calls pass slow ones (deterministic: false)`;
    case 'convert':
      return `convert the pipeline to plumber-data (${change.then.map((c) => changeTitle(c, inPlumberData(profile))).join('; ') || 'same knobs'})`;
  }
}

/** The label of the operator an existing prefetch follows, so its title says where it is. */
function inputLabel(op: OpProfile | undefined, profile: Profile): string {
  const input = op && profile.ops.find((o) => o.id === op.inputs[0]);
  return input ? describeOp(input) : 'its input';
}

/** Seconds with a unit a person reads at a glance: 840 µs, 12.1 ms, 1.52 s. */
export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return String(s);
  if (s < 1e-3) return `${formatNumber(s * 1e6)} µs`;
  if (s < 1) return `${formatNumber(s * 1e3)} ms`;
  return `${formatNumber(s)} s`;
}

/**
 * What a per-element figure is made of when an op runs more or less than once per root element
 * (a map above a batch): "32.9 µs per call × 16 calls"; empty when it runs once.
 */
export function perCallPhrase(total: number, calls: number): string {
  return calls > 0 && Math.abs(calls - 1) > 1e-9 ? `${formatSeconds(total / calls)} per call × ${Number(calls.toPrecision(3))} calls` : '';
}

/** `perCallPhrase` in parentheses after a figure: " (32.9 µs per call × 16 calls)", or empty. */
export function perCallWords(total: number, calls: number): string {
  const phrase = perCallPhrase(total, calls);
  return phrase ? ` (${phrase})` : '';
}

/**
 * What one root element of a pipeline is, in the words the model's sentences use: a batch when the
 * pipeline ends in a batching operator (the CLI's table and the editor count batches/s there), else
 * an element. The model's figures are per root element.
 */
export interface RootUnit {
  /** The rate unit: `el` or `batches`. */
  plural: string;
  /** One of them: `element` or `batch`. */
  one: string;
  /** Several of them, in words: `elements` or `batches`. */
  many: string;
}

/** The pipeline's root unit (see `rootUnit` in shared/units). */
export function rootUnitOf(profile: Profile): RootUnit {
  return rootUnit(profile) === 'batches' ? { plural: 'batches', one: 'batch', many: 'batches' } : { plural: 'el', one: 'element', many: 'elements' };
}

/** A root rate in the pipeline's unit: 4,690 batches/s. */
export function formatRootRate(m: { unit: RootUnit }, r: number): string {
  return formatRate(r, m.unit.plural);
}

/** Bytes in decimal units: 410 MB, 1.2 GB, 3.1 kB. */
export function formatBytes(b: number): string {
  if (b >= 1e9) return `${formatNumber(b / 1e9)} GB`;
  if (b >= 1e6) return `${formatNumber(b / 1e6)} MB`;
  if (b >= 1e3) return `${formatNumber(b / 1e3)} kB`;
  return `${Math.round(b)} B`;
}

/** A fraction as a percentage a person reads: 0.5%, 12%, 40%. */
export function formatPercent(x: number): string {
  const p = x * 100;
  return p < 1 && p > 0 ? `${Number(p.toPrecision(1))}%` : `${Math.round(p)}%`;
}

/** "a", "a and b", "a, b and c". */
export function listWords(words: string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}
