/**
 * plumber/report: everything the report view draws for one pipeline — the summary, the profile,
 * analysis and plan, the critical path through the bottleneck, and the history of runs.
 */
import type { ReportResult } from '../../shared/protocol';
import type { Profile } from '../../shared/profile';
import type { LintFinding } from '../../engine/lints/rules';
import type { PipelineView } from '../views';
import { pipelineSummary } from './pipelines';
import { reportAdvice } from './advice';

/** Ids from the source to the root through `through`: its main-input ancestors, itself, and its consumers. */
export function criticalPath(profile: Profile, through: string | undefined): string[] {
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const start = through && byId.has(through) ? through : profile.pipeline.rootId;
  const up: string[] = [];
  const seen = new Set<string>();
  for (let cur = byId.get(start); cur && !seen.has(cur.id); cur = cur.inputs[0] !== undefined ? byId.get(cur.inputs[0]) : undefined) {
    seen.add(cur.id);
    up.unshift(cur.id);
  }
  const consumerOf = new Map<string, string>();
  for (const o of profile.ops) for (const i of o.inputs) if (!consumerOf.has(i)) consumerOf.set(i, o.id);
  for (let next = consumerOf.get(start); next && !seen.has(next); next = consumerOf.get(next)) {
    seen.add(next);
    up.push(next);
  }
  return up;
}

export function report(view: PipelineView, file: string, lints: LintFinding[], history: ReportResult['history']): ReportResult {
  const rec = view.record;
  const result: ReportResult = { pipeline: pipelineSummary(view, file, lints), criticalPath: [], history };
  if (!rec) return result;
  result.profile = rec.profile;
  if (rec.analysis) result.analysis = rec.analysis;
  if (rec.plan) result.plan = rec.plan;
  if (rec.plan && !rec.profile.error) result.advice = reportAdvice(rec.plan, rec.analysis, rec.profile);
  if (!rec.profile.error) result.criticalPath = criticalPath(rec.profile, rec.analysis?.bottleneck.opId);
  return result;
}
