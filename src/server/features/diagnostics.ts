/**
 * Diagnostics: the static lints, and the measured bottleneck of each profiled pipeline, as
 * Information/Warning (never Error: the code runs) with related information pointing at the other
 * operators involved.
 */
import { DiagnosticSeverity, type Diagnostic, type DiagnosticRelatedInformation } from 'vscode-languageserver';
import type { Settings } from '../../shared/settings';
import type { LintFinding } from '../../engine/lints/rules';
import { measuredLints } from '../../engine/lints/measured';
import { fileFindings } from '../../engine/lints/file';
import { NOT_FOLLOWED } from '../../engine/lints/catalog';
import { isSuppressed, parseSuppressions } from '../../engine/lints/suppress';
import type { PipelineView } from '../views';
import type { GraphStop } from '../../engine/graph/types';
import type { Plan } from '../../shared/analysis';
import { fileToUri } from './format';
import { STALE_WORDS, rateWords } from '../../shared/words';
import { NO_GAIN, offerTitle, offeredChanges, verdictOf } from './advice';
import { shownAt } from '../../engine/join';

/** What the plan promises, in the diagnostic's words: the prediction, verified or not, or that nothing measured faster. */
function predictedWords(plan: Plan, unit: string): string {
  switch (verdictOf(plan)) {
    case 'gain':
      return `, ${rateWords(plan.predictedRate, unit)} predicted with the fixes (${plan.verification!.summary})`;
    case 'unverified':
      return `, ${rateWords(plan.predictedRate, unit)} predicted with the fixes (not verified)`;
    case 'no-gain':
      return `; ${NO_GAIN}, so no fix is offered`;
    case 'error':
      return `; no fix is offered (${plan.verification!.summary})`;
    case 'none':
      return '';
  }
}

export const SOURCE = 'plumber';

/** The measured bottleneck's code; a suppression comment naming it (or none) hides it too. */
const BOTTLENECK = 'plumber/bottleneck';

/**
 * Diagnostics for one document. `uri` is the document's URI as the client sent it; `stops` are the
 * places the graph saw a chain and could not follow it (said as Information, never silence); `text`
 * is the document's, whose suppression comments (engine/lints/suppress.ts) hide what they name.
 */
export function diagnostics(uri: string, file: string, views: PipelineView[], lints: LintFinding[], settings: Settings['diagnostics'], stops: GraphStop[] = [], text = ''): Diagnostic[] {
  if (!settings.enabled) return [];
  const uriOf = (f: string): string => (f === file ? uri : fileToUri(f));
  const measured = measuredLints(views.map((v) => ({ graph: v.graph, profile: v.record?.profile, byProfileId: v.byProfileId })));
  const out: Diagnostic[] = fileFindings(file, text, { lints, measured, stops }).map((f) => ({
    range: f.range,
    severity: f.severity === 'warning' ? DiagnosticSeverity.Warning : DiagnosticSeverity.Information,
    source: SOURCE,
    code: f.rule,
    message: f.message,
    ...(f.rule === NOT_FOLLOWED ? {} : { relatedInformation: f.related.map((r) => ({ location: { uri: uriOf(r.file), range: r.range }, message: r.message })) }),
  }));
  const suppressions = parseSuppressions(text);
  for (const v of views) {
    const rec = v.record;
    const b = rec?.analysis?.bottleneck;
    if (!rec || !b?.opId || rec.profile.error) continue;
    const op = v.byProfileId.get(shownAt(rec.profile, b.opId) ?? b.opId);
    if (!op || op.file !== file || isSuppressed(suppressions, BOTTLENECK, op.name.range.start.line)) continue;
    const related: DiagnosticRelatedInformation[] = [];
    // Stale: no fix is offered, and the numbers are named as old (the lenses say "stale — profile again").
    const plan = v.stale ? undefined : rec.plan;
    for (const change of plan ? offeredChanges(plan) : []) {
      const target = v.byProfileId.get(change.opId);
      if (target) related.push({ location: { uri: uriOf(target.file), range: target.name.range }, message: `${offerTitle(change, plan!, rec.profile)} — ${change.reason}` });
    }
    const a = rec.analysis!;
    const unit = v.unit ?? 'el';
    out.push({
      range: op.name.range,
      severity: v.stale ? DiagnosticSeverity.Information : DiagnosticSeverity.Warning,
      source: SOURCE,
      code: BOTTLENECK,
      message: v.stale
        ? `Bottleneck of ${v.graph.name} when last profiled (${STALE_WORDS}: the file changed since): ${b.reason}`
        : `Bottleneck of ${v.graph.name}: ${b.reason} Measured ${rateWords(a.measuredRate, unit)}, bound ${rateWords(a.bound, unit)}${plan ? predictedWords(plan, unit) : ''}.`,
      relatedInformation: related,
    });
  }
  return out;
}
