/**
 * plumber/pipelines: the tree data — each pipeline with its operators, most limiting first once
 * profiled (by the model's per-operator bound), else in chain order.
 */
import type { OpSeverity, OpSummary, PipelineSummary } from '../../shared/protocol';
import type { LintFinding } from '../../engine/lints/rules';
import { labelOf, type PipelineView } from '../views';
import { rootRateOf } from './glance';
import { fileToUri } from './format';
import { trainerReportLines } from '../../shared/trainerWords';
import { trainerVerdictOf } from './trainerLens';
import { offerTitle, offeredChanges, planFigure, verdictOf } from './advice';
import { shownAt } from '../../engine/join';
import { opMemoryWords, peakMemoryWords } from '../../shared/memoryWords';

export function pipelineSummary(v: PipelineView, file: string, lints: LintFinding[]): PipelineSummary {
  const rec = v.record;
  const ok = rec && !rec.profile.error ? rec : undefined;
  // Operators' numbers and fixes from before the last edit are not listed: the tree says
  // "stale — profile again" instead (the pipeline keeps its old rate for the status bar's record).
  const fresh = v.stale ? undefined : ok;
  const bottleneckId = fresh?.analysis ? shownAt(fresh.profile, fresh.analysis.bottleneck.opId) : undefined;
  const offered = fresh?.plan ? offeredChanges(fresh.plan) : [];
  const ops: OpSummary[] = v.graph.ops.map((op) => {
    const joined = v.byGraphId.get(op.id);
    const an = fresh ? joined?.an : undefined;
    const change = joined && offered.find((c) => c.opId === joined.prof.id);
    const linted = lints.some((f) => f.op.file === op.file && f.op.name.start === op.name.start);
    let severity: OpSeverity = 'unknown';
    if (joined && bottleneckId === joined.prof.id) severity = 'bottleneck';
    else if (change || linted) severity = 'warning';
    else if (joined && fresh) severity = 'ok';
    const s: OpSummary = { id: op.id, kind: op.kind, label: labelOf(v, op), uri: v.uri, range: op.name.range, severity };
    if (op.file !== file) s.uri = fileToUri(op.file);
    if (an) {
      s.rate = an.measuredRate;
      s.rootRate = rootRateOf(an);
      s.cpuShare = an.cpuShare;
      s.bound = an.bound;
    }
    if (severity === 'bottleneck' && fresh?.analysis) s.reason = fresh.analysis.bottleneck.reason;
    else if (linted) s.reason = lints.find((f) => f.op.name.start === op.name.start && f.op.file === op.file)?.message;
    // The same title as the quick fix, so the tree's "Apply fix" finds that action.
    if (change && fresh?.plan) s.fixTitle = offerTitle(change, fresh.plan, fresh.profile);
    const memory = joined && opMemoryWords(fresh?.analysis?.memory, joined.prof.id);
    if (memory) s.memory = memory;
    return s;
  });
  if (fresh?.analysis) ops.sort((a, b) => (a.bound ?? Infinity) - (b.bound ?? Infinity));
  const summary: PipelineSummary = { uri: v.uri, name: v.graph.name, range: v.graph.head.range, ops, stale: v.stale, unit: v.unit ?? 'el' };
  if (rec?.profile.error) summary.error = rec.profile.error.message;
  if (ok?.analysis) {
    summary.rate = ok.analysis.measuredRate;
    summary.bound = ok.analysis.bound;
    if (ok.analysis.memory) summary.memory = peakMemoryWords(ok.analysis.memory);
  }
  const plan = fresh?.plan;
  if (plan) {
    summary.predictedRate = plan.predictedRate;
    summary.verdict = verdictOf(plan);
    const figure = planFigure(plan);
    if (figure) summary.advice = figure;
    const v = plan.verification;
    if (v && summary.verdict === 'gain') summary.verified = { speedup: v.speedup, halfWidth: v.speedupHalfWidth };
    if (plan.target) summary.target = plan.target;
  }
  // The loop's verdict heads the pipeline's operators, as the lens heads its chain (stale: none, as for the operators).
  const verdict = v.stale ? undefined : trainerVerdictOf(v);
  if (verdict) summary.trainer = trainerReportLines(verdict);
  if (rec) summary.profiledAt = rec.at;
  return summary;
}

export function pipelines(views: PipelineView[], file: string, lints: LintFinding[]): PipelineSummary[] {
  return views.map((v) => pipelineSummary(v, file, lints));
}
