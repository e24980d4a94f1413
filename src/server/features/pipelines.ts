/**
 * plumber/pipelines: the tree data — each pipeline with its operators, most limiting first once
 * profiled (by the model's per-operator bound), else in chain order.
 */
import type { OpSeverity, OpSummary, PipelineSummary } from '../../shared/protocol';
import type { LintFinding } from '../lints/rules';
import type { PipelineView } from '../views';
import { fileToUri } from './format';
import { offerTitle, offeredChanges, planFigure, verdictOf } from './advice';

export function pipelineSummary(v: PipelineView, file: string, lints: LintFinding[]): PipelineSummary {
  const rec = v.record;
  const ok = rec && !rec.profile.error ? rec : undefined;
  const bottleneckId = ok?.analysis?.bottleneck.opId;
  const offered = ok?.plan ? offeredChanges(ok.plan) : [];
  const ops: OpSummary[] = v.graph.ops.map((op) => {
    const joined = v.byGraphId.get(op.id);
    const an = joined?.an;
    const change = joined && offered.find((c) => c.opId === joined.prof.id);
    const linted = lints.some((f) => f.op.file === op.file && f.op.name.start === op.name.start);
    let severity: OpSeverity = 'unknown';
    if (joined && bottleneckId === joined.prof.id) severity = 'bottleneck';
    else if (change || linted) severity = 'warning';
    else if (joined) severity = 'ok';
    const s: OpSummary = { id: op.id, kind: op.kind, label: op.label, uri: v.uri, range: op.name.range, severity };
    if (op.file !== file) s.uri = fileToUri(op.file);
    if (an) {
      s.rate = an.measuredRate;
      s.cpuShare = an.cpuShare;
      s.bound = an.bound;
    }
    if (severity === 'bottleneck' && ok?.analysis) s.reason = ok.analysis.bottleneck.reason;
    else if (linted) s.reason = lints.find((f) => f.op.name.start === op.name.start && f.op.file === op.file)?.message;
    // The same title as the quick fix, so the tree's "Apply fix" finds that action.
    if (change && ok?.plan) s.fixTitle = offerTitle(change, ok.plan, ok.profile);
    return s;
  });
  if (ok?.analysis) ops.sort((a, b) => (a.bound ?? Infinity) - (b.bound ?? Infinity));
  const summary: PipelineSummary = { uri: v.uri, name: v.graph.name, range: v.graph.head.range, ops, stale: v.stale };
  if (rec?.profile.error) summary.error = rec.profile.error.message;
  if (ok?.analysis) {
    summary.rate = ok.analysis.measuredRate;
    summary.bound = ok.analysis.bound;
  }
  if (ok?.plan) {
    summary.predictedRate = ok.plan.predictedRate;
    summary.verdict = verdictOf(ok.plan);
    const figure = planFigure(ok.plan);
    if (figure) summary.advice = figure;
    const v = ok.plan.verification;
    if (v && summary.verdict === 'gain') summary.verified = { speedup: v.speedup, halfWidth: v.speedupHalfWidth };
  }
  if (rec) summary.profiledAt = rec.at;
  return summary;
}

export function pipelines(views: PipelineView[], file: string, lints: LintFinding[]): PipelineSummary[] {
  return views.map((v) => pipelineSummary(v, file, lints));
}
