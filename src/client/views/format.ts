/**
 * Pure formatting and ranking for the Bottlenecks tree, the status bar and the report: no vscode
 * import, so unit tests run them in plain Node. The words for each number are the shared ones
 * (src/shared/words.ts), the server's lenses' too.
 */
import type { OpSeverity, OpSummary, PipelineSummary } from '../../shared/protocol';
import { STALE_WORDS, compact, forOtherMachine, formatShare as shareWords, formatSpeedup, rateWords, speedupOver } from '../../shared/words';

export { STALE_WORDS };

/** A rate in elements per second, as the lenses write it: `310 el/s`, `2.1k el/s`, `1.5M el/s`; `–` when unknown. */
export function formatRate(rate: number | undefined): string {
  return formatRateIn(rate);
}

/** A share (0..1) as a whole percentage: `37%`, `<1%`; empty when unknown. */
export function formatShare(share: number | undefined): string {
  return share === undefined || !Number.isFinite(share) ? '' : shareWords(share);
}

const SEVERITY_ORDER: Record<OpSeverity, number> = { bottleneck: 0, warning: 1, ok: 2, unknown: 3 };

/**
 * Orders operators by how much they hold the pipeline back: the bottleneck first, then by severity,
 * then by the lowest bound (the op allowing the lowest root rate limits most), then by CPU share.
 * Unprofiled operators keep their chain order.
 */
export function rankOps(ops: readonly OpSummary[]): OpSummary[] {
  return ops
    .map((op, index) => ({ op, index }))
    .sort((a, b) => {
      const s = SEVERITY_ORDER[a.op.severity] - SEVERITY_ORDER[b.op.severity];
      if (s !== 0) return s;
      const boundA = a.op.bound ?? Infinity;
      const boundB = b.op.bound ?? Infinity;
      if (boundA !== boundB) return boundA - boundB;
      const cpu = (b.op.cpuShare ?? 0) - (a.op.cpuShare ?? 0);
      if (cpu !== 0) return cpu;
      return a.index - b.index;
    })
    .map((x) => x.op);
}

/** A rate in the pipeline's unit: `1.3 batches/s`, `310 el/s`; `–` when unknown. */
export function formatRateIn(rate: number | undefined, unit = 'el'): string {
  return rate === undefined || Number.isNaN(rate) ? '–' : rateWords(rate, unit);
}

/**
 * The tree's description for an operator, in the pipeline's unit so two operators compare:
 * `41 el/s = 1.3 batches/s · bound 1.4 · 64% CPU` (its own count first when it counts other
 * elements than the pipeline), or `stale` when the file changed since the profile.
 */
export function describeOp(op: OpSummary, stale: boolean, unit = 'el'): string {
  if (stale) return 'stale';
  const parts: string[] = [];
  if (op.rate !== undefined) {
    const root = op.rootRate ?? op.rate;
    const same = Math.abs(root - op.rate) <= 0.005 * Math.max(root, op.rate);
    parts.push(same ? formatRateIn(root, unit) : `${formatRate(op.rate)} = ${formatRateIn(root, unit)}`);
  }
  if (op.bound !== undefined) parts.push(`bound ${compact(op.bound)}`);
  if (op.cpuShare !== undefined) parts.push(`${formatShare(op.cpuShare)} CPU`);
  return parts.join(' · ');
}

/**
 * What the fixes are worth, in a sidebar's few words: "fixes: verified 1.7×" when verification
 * measured a gain, "no reliable gain" when it measured none, "fixes: est. 1.8× (not verified)"
 * when only the model spoke. Undefined when there is nothing to say.
 */
export function fixesWords(p: PipelineSummary): string | undefined {
  // A plan for other cores: "fixes: est. 7.3× predicted for 8 cores — verified here on 2 cores: 1.8×" (the server's words).
  if (forOtherMachine(p.target) && (p.verdict === 'gain' || p.verdict === 'unverified') && p.advice) return `fixes: ${p.advice}`;
  switch (p.verdict) {
    case 'gain':
      return p.verified ? `fixes: verified ${formatSpeedup(p.verified.speedup)}` : 'fixes: verified';
    case 'no-gain':
      return 'no reliable gain';
    case 'error':
      return 'fixes not verified';
    case 'none':
      return undefined;
    case 'unverified':
    case undefined: {
      const speedup = speedupOver(p.predictedRate, p.rate);
      if (!speedup || !(p.predictedRate! > p.rate! * 1.05)) return undefined;
      return p.verdict === 'unverified' ? `fixes: est. ${speedup} (not verified)` : `fixes: est. ${speedup}`;
    }
  }
}

/**
 * The tree's row above a training run's operators: the loop's verdict at a glance (the lens's
 * words, from the server) with the model's sentence on it as the tooltip. None before a training
 * profile, after a failed one, or once the file changed (the operators' numbers go then too).
 */
export function trainerRow(p: PipelineSummary): { label: string; tooltip: string } | undefined {
  if (!p.trainer || p.stale || p.error) return undefined;
  return { label: p.trainer.headline, tooltip: [p.trainer.verdict, p.trainer.target, p.trainer.plan].join('\n\n') };
}

/** The tree's description for a pipeline: its rate and what the fixes are worth, or its state. */
export function describePipeline(p: PipelineSummary): string {
  if (p.error) return 'profile failed';
  if (p.rate === undefined) return 'not profiled';
  if (p.stale) return STALE_WORDS;
  // Short: a sidebar is narrow. The bound, the prediction and the verification are in the tooltip.
  const parts = [formatRateIn(p.rate, p.unit)];
  const fixes = fixesWords(p);
  if (fixes) parts.push(fixes);
  return parts.join(' · ');
}

/** The status bar text for the most recent profile. */
export function statusText(p: PipelineSummary | undefined): string {
  if (!p) return 'Plumber';
  if (p.error) return `Plumber: ${p.name} failed`;
  if (p.rate === undefined) return 'Plumber';
  if (p.stale) return `Plumber: ${p.name} · ${STALE_WORDS}`;
  const fixes = fixesWords(p);
  const tail = fixes ? ` (${fixes})` : '';
  return `Plumber: ${p.name} ${formatRateIn(p.rate, p.unit)}${tail}`;
}

/**
 * The pipeline the cursor is in: the last pipeline whose head starts on or before the cursor line
 * (a chain runs from its head downwards), else the first one.
 */
export function pipelineAt(pipelines: readonly PipelineSummary[], line: number): PipelineSummary | undefined {
  let best: PipelineSummary | undefined;
  for (const p of pipelines) {
    if (p.range.start.line <= line && (!best || p.range.start.line >= best.range.start.line)) best = p;
  }
  return best ?? pipelines[0];
}

/** One operator's heat bar: how busy it is at its limit, and the words its hover shows. */
export interface Heat {
  op: OpSummary;
  /** 0..1: the pipeline's measured rate over the rate this operator allows (1 = it is the limit). */
  share: number;
  words: string;
}

/**
 * The heat of each profiled operator of a fresh pipeline: the share of its time it is busy at the
 * pipeline's measured rate (the rate over its bound; the bottleneck is near 1), so the hottest line
 * is the one holding the pipeline back. None for a stale or unprofiled pipeline: old numbers are
 * not drawn.
 */
export function heatOf(p: PipelineSummary): Heat[] {
  if (p.stale || p.error || p.rate === undefined) return [];
  const out: Heat[] = [];
  for (const op of p.ops) {
    if (op.bound === undefined || !(op.bound > 0)) continue;
    const share = Number.isFinite(op.bound) ? Math.min(1, p.rate / op.bound) : 0;
    out.push({ op, share, words: `${op.label}: busy ${formatShare(share) || '0%'} of the time at ${formatRateIn(p.rate, p.unit)} (allows ${formatRateIn(op.bound, p.unit)})` });
  }
  return out;
}
