/**
 * What Plumber flags in one file, for every surface alike: the places the graph stopped following
 * a chain, the static findings and the measured ones, kept to those in the file, with the file's
 * suppression comments applied. The editor turns these into diagnostics and `plumber lint` prints
 * them, so both show the same set.
 */
import type { GraphStop, Range } from '../graph/types';
import { NOT_FOLLOWED } from './catalog';
import type { LintFinding, LintSeverity } from './rules';
import { isSuppressed, parseSuppressions } from './suppress';

/** A finding placed in a file: ranges are LSP's (0-based lines, UTF-16 columns, end exclusive). */
export interface FileFinding {
  rule: string;
  severity: LintSeverity;
  message: string;
  range: Range;
  related: Array<{ file: string; range: Range; message: string }>;
}

export interface FindingSources {
  /** The static findings of the file's pipelines (`lintPipelines`). */
  lints: LintFinding[];
  /** The measured findings (`measuredLints`), when profiles are known. */
  measured?: LintFinding[];
  /** Chains the graph saw and could not follow. */
  stops?: GraphStop[];
}

/** The findings shown on `file` whose text is `text` (for its suppression comments). */
export function fileFindings(file: string, text: string, sources: FindingSources): FileFinding[] {
  const out: FileFinding[] = (sources.stops ?? []).map((s) => ({ rule: NOT_FOLLOWED, severity: 'information', message: s.message, range: s.range, related: [] }));
  for (const f of [...sources.lints, ...(sources.measured ?? [])]) {
    if (f.op.file !== file) continue;
    out.push({ rule: f.rule, severity: f.severity, message: f.message, range: f.op.name.range, related: f.related.map((r) => ({ file: r.op.file, range: r.op.name.range, message: r.message })) });
  }
  const suppressions = parseSuppressions(text);
  return out.filter((f) => !isSuppressed(suppressions, f.rule, f.range.start.line));
}
