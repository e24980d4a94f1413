/**
 * How `plumber check` reports: plain text for a person, JSON for a script, JUnit XML for CI
 * dashboards (one testcase per pipeline), and GitHub Actions workflow commands (`::error
 * file=…::`) that annotate the pipeline's file in a pull request.
 */
import type { GateOutcome, GateResult } from '../engine/gate';
import type { Profile } from '../shared/profile';

export type CheckFormat = 'text' | 'json' | 'junit' | 'github';

/** One check's verdict (`--min-rate`, `--baseline`). */
export interface Verdict {
  check: 'min-rate' | 'baseline' | 'run';
  outcome: GateOutcome;
  message: string;
}

/** What `plumber check` found, whatever the format. */
export interface CheckReport {
  file: string;
  exportName: string;
  /** The line of the pipeline's last operator, for annotations. */
  line?: number;
  rate: number;
  unit: string;
  minRate?: number;
  verdicts: Verdict[];
  strict: boolean;
  gate?: GateResult;
  saved?: { path: string; message: string };
  tooFewElements?: { elements: number; message: string };
  profile: Profile;
}

type Output = Array<['stdout' | 'stderr', string]>;

/** The report in `format`: what goes to stdout and what to stderr, in order. */
export function renderCheck(format: CheckFormat, r: CheckReport): Output {
  switch (format) {
    case 'json':
      return [['stdout', `${JSON.stringify(jsonReport(r), null, 2)}\n`]];
    case 'junit':
      return [['stdout', junitReport(r)]];
    case 'github':
      return [['stdout', githubReport(r)]];
    default:
      return textReport(r);
  }
}

/** The outcome of the whole check: a failure fails it; else something that could not be compared; else a pass. */
function overall(r: CheckReport): GateOutcome {
  if (r.tooFewElements || r.verdicts.some((v) => v.outcome === 'fail')) return 'fail';
  return r.verdicts.some((v) => v.outcome === 'incomparable') ? 'incomparable' : 'pass';
}

/** `pass` stays true for `--json` readers of `check --min-rate`; `outcome` says more. */
function jsonReport(r: CheckReport): Record<string, unknown> {
  const out = overall(r);
  return {
    pass: out === 'pass' || (out === 'incomparable' && !r.strict),
    outcome: out,
    rate: r.rate,
    unit: r.unit,
    ...(r.minRate !== undefined ? { minRate: r.minRate } : {}),
    checks: r.verdicts,
    ...(r.gate ? { baseline: r.gate } : {}),
    ...(r.saved ? { saved: r.saved.path } : {}),
    ...(r.tooFewElements ? { tooFewElements: true, elements: r.tooFewElements.elements, message: r.tooFewElements.message } : {}),
    profile: r.profile,
  };
}

function textReport(r: CheckReport): Output {
  const out: Output = [];
  if (r.tooFewElements) return [['stderr', `plumber check: ${r.tooFewElements.message}\n`]];
  for (const v of r.verdicts) {
    const word = v.outcome === 'incomparable' ? ' (not a failure unless --strict)' : '';
    out.push([v.outcome === 'pass' ? 'stdout' : 'stderr', `plumber check: ${v.message}${v.check === 'baseline' && v.outcome === 'pass' ? ' ok' : word}\n`]);
  }
  if (r.saved) out.push(['stdout', `plumber check: ${r.saved.message}\n`]);
  return out;
}

/** Text made safe inside XML attributes and elements. */
function xml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** JUnit XML: one testsuite, one testcase for the pipeline; a failure (or with --strict an incomparable run) as <failure>, an incomparable run as <skipped>. */
function junitReport(r: CheckReport): string {
  const out = overall(r);
  const failing = out === 'fail' || (out === 'incomparable' && r.strict);
  const messages = r.tooFewElements ? [r.tooFewElements.message] : r.verdicts.map((v) => `${v.check}: ${v.message}`);
  const summary = messages.join(' ');
  const name = `${r.file}#${r.exportName}`;
  const seconds = (r.profile.run.warmupSeconds + r.profile.run.seconds).toFixed(3);
  const body = failing
    ? `      <failure message="${xml(summary)}" type="${out === 'fail' ? 'slower' : 'incomparable'}">${xml(messages.join('\n'))}</failure>\n`
    : out === 'incomparable'
      ? `      <skipped message="${xml(summary)}"/>\n`
      : '';
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="plumber check" tests="1" failures="${failing ? 1 : 0}" skipped="${!failing && out === 'incomparable' ? 1 : 0}">`,
    `  <testsuite name="plumber check" tests="1" failures="${failing ? 1 : 0}" skipped="${!failing && out === 'incomparable' ? 1 : 0}" time="${seconds}">`,
    `    <testcase classname="plumber.check" name="${xml(name)}" file="${xml(r.file)}" time="${seconds}">`,
    `${body}      <system-out>${xml(messages.join('\n'))}</system-out>`,
    '    </testcase>',
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/** A workflow command's message: %, CR and LF escaped as GitHub reads them. */
function ghData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A workflow command's property value: the message's escapes plus : and ,. */
function ghProperty(text: string): string {
  return ghData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** GitHub Actions annotations: ::error for a failure, ::warning for runs that could not be compared, ::notice for a pass. */
function githubReport(r: CheckReport): string {
  const where = `file=${ghProperty(r.file)}${r.line !== undefined ? `,line=${r.line}` : ''}`;
  const level = (o: GateOutcome): string => (o === 'fail' || (o === 'incomparable' && r.strict) ? 'error' : o === 'incomparable' ? 'warning' : 'notice');
  if (r.tooFewElements) return `::error ${where},title=plumber check::${ghData(r.tooFewElements.message)}\n`;
  const lines = r.verdicts.map((v) => `::${level(v.outcome)} ${where},title=${ghProperty(`plumber check (${v.check})`)}::${ghData(v.message)}`);
  if (r.saved) lines.push(`::notice ${where},title=plumber check::${ghData(r.saved.message)}`);
  return `${lines.join('\n')}\n`;
}
