/**
 * `plumber check`: the CI gate. A run is checked against an absolute floor (`--min-rate R`), a
 * stored baseline (`--baseline FILE [--max-slowdown 10%]`: the engine's comparison, see
 * src/engine/gate/compare.ts), or both, and can be stored as the next baseline
 * (`--save-baseline FILE`). Exit codes: 0 pass, 1 a check failed (or the pipeline did), 3 too few
 * elements for a rate, 4 the baseline and this run cannot be compared (1 with `--strict`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MIN_ELEMENTS } from '../runner/measure';
import type { Profile } from '../shared/profile';
import { rootUnit } from '../shared/units';
import { BaselineError, baselineOf, compareToBaseline, DEFAULT_MAX_SLOWDOWN, fileHash, otherLoad, parseBaseline, type Baseline, type GateResult } from '../engine/gate';
import { UsageError, numberFlag, type FlagSpec, type Parsed } from './args';
import { commandName, thisInvocation } from './help';
import { renderCheck, type CheckFormat, type CheckReport, type Verdict } from './gateReport';
import { rootRate } from './render';
import { fmtRate, fmtRateIn } from './table';

/** `plumber check`: the run measured too few elements for a rate to mean anything. */
export const EXIT_SAMPLE_TOO_SMALL = 3;
/** `plumber check --baseline`: the baseline and this run cannot be compared (other machine, busy machine, too noisy). */
export const EXIT_INCOMPARABLE = 4;

/** The flags `check` adds to every running command's. */
export const CHECK_FLAGS: Record<string, FlagSpec> = {
  'min-rate': { value: true },
  baseline: { value: true },
  'save-baseline': { value: true },
  'max-slowdown': { value: true },
  'max-load': { value: true },
  strict: { value: false },
  format: { value: true },
};

const FORMATS: readonly CheckFormat[] = ['text', 'json', 'junit', 'github'];

/** What `check` was asked to do, read (and the baseline loaded) before anything runs. */
export interface CheckOptions {
  file: string;
  exportName?: string;
  minRate?: number;
  baseline?: { path: string; value: Baseline };
  saveTo?: string;
  maxSlowdown: number;
  maxLoad?: number;
  strict: boolean;
  format: CheckFormat;
}

/** `--max-slowdown`: a percentage (`10%`) or a fraction below 1 (`0.1`). */
export function maxSlowdownFlag(p: Parsed): number {
  const raw = p.flags.get('max-slowdown')?.[0];
  if (raw === undefined) return DEFAULT_MAX_SLOWDOWN;
  const m = /^\s*(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*$/.exec(raw);
  const x = m ? Number(m[1]) / (m[2] ? 100 : 1) : NaN;
  if (!(x > 0 && x < 1) || (m && !m[2] && Number(m[1]) >= 1)) {
    throw new UsageError(`--max-slowdown must be a percentage above 0% and below 100% (10%) or a fraction (0.1); got "${raw}".`);
  }
  return x;
}

/** Reads and checks `check`'s flags; loads the baseline, so a missing or broken file is said before the run. */
export function checkOptions(file: string, p: Parsed): CheckOptions {
  const minRate = numberFlag(p, 'min-rate', { min: 0 });
  const baselinePath = p.flags.get('baseline')?.[0];
  const saveTo = p.flags.get('save-baseline')?.[0];
  if (minRate === undefined && baselinePath === undefined && saveTo === undefined) {
    throw new UsageError('`plumber check` needs --min-rate R (root elements per second, e.g. --min-rate 500), --baseline FILE (compare with a stored run) or --save-baseline FILE (store this run).');
  }
  const format = (p.flags.get('format')?.[0] ?? (p.flags.has('json') ? 'json' : 'text')) as CheckFormat;
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}; got "${format}".`);
  if (p.flags.has('max-slowdown') && baselinePath === undefined) throw new UsageError('--max-slowdown goes with --baseline FILE: the slowdown allowed against that baseline.');
  return {
    file,
    exportName: p.flags.get('export')?.[0],
    minRate,
    ...(baselinePath !== undefined ? { baseline: { path: baselinePath, value: readBaseline(baselinePath) } } : {}),
    ...(saveTo !== undefined ? { saveTo } : {}),
    maxSlowdown: maxSlowdownFlag(p),
    maxLoad: numberFlag(p, 'max-load', { min: 0, exclusiveMin: true }),
    strict: p.flags.has('strict'),
    format,
  };
}

function readBaseline(file: string): Baseline {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === 'ENOENT' ? `the baseline ${file} does not exist. Make it once with \`plumber check FILE --save-baseline ${file}\` and commit it.` : `cannot read the baseline ${file}: ${(e as Error).message}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`the baseline ${file} is not JSON (${(e as Error).message}).`);
  }
  try {
    return parseBaseline(json, file);
  } catch (e) {
    if (e instanceof BaselineError) throw new UsageError(e.message);
    throw e;
  }
}

/** Writes a file whole or not at all: a temporary file beside it, renamed over it. */
function writeAtomically(file: string, text: string): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

/** The min-rate check's verdict, in the words `check --min-rate` always printed. */
function minRateVerdict(o: CheckOptions, profile: Profile): Verdict {
  const rate = rootRate(profile);
  // --min-rate is in the pipeline's unit: batches/s when it ends in a batch.
  const unit = rootUnit(profile);
  const pass = rate >= (o.minRate ?? 0);
  return pass
    ? { check: 'min-rate', outcome: 'pass', message: `${fmtRateIn(rate, unit)} ≥ ${fmtRateIn(o.minRate, unit)}: ok` }
    : { check: 'min-rate', outcome: 'fail', message: `${fmtRateIn(rate, unit)} is below the required ${fmtRateIn(o.minRate, unit)}. Run \`${commandName(thisInvocation())} plan ${o.file}\` to see what holds it back.` };
}

/** The baseline check's verdict. */
function baselineVerdict(result: GateResult, o: CheckOptions): Verdict {
  const notes = result.notes.length > 0 ? ` (${result.notes.join('; ')})` : '';
  const hint = result.outcome === 'fail' ? ` Run \`${commandName(thisInvocation())} plan ${o.file}\` to see what holds it back.` : '';
  return { check: 'baseline', outcome: result.outcome, message: `${result.message}${notes}${hint}` };
}

/** The exit code of a report: any failure 1; else anything incomparable 4 (1 when strict); else 0. */
export function exitCodeOf(verdicts: readonly Verdict[], strict: boolean): number {
  if (verdicts.some((v) => v.outcome === 'fail')) return 1;
  if (verdicts.some((v) => v.outcome === 'incomparable')) return strict ? 1 : EXIT_INCOMPARABLE;
  return 0;
}

/** Checks a finished run as asked, saves it as a baseline when asked, prints the report; returns the exit code. */
export function finishCheck(o: CheckOptions, profile: Profile, write: (stream: 'stdout' | 'stderr', text: string) => void): number {
  const rate = rootRate(profile);
  const unit = rootUnit(profile);
  const report: CheckReport = { file: o.file, exportName: profile.pipeline.exportName, line: rootLine(profile), rate, unit, minRate: o.minRate, verdicts: [], strict: o.strict, profile };
  // A source that ran out after a handful of elements gives a rate that is noise: a gate must
  // not pass or fail on it, nor keep it as a baseline. (A slow pipeline that measured few
  // elements over its whole budget is measured: its rate is what it is.)
  if (profile.run.endReason === 'exhausted' && profile.run.elements < MIN_ELEMENTS) {
    // What the run saw in all (a window measured from the first element holds one fewer).
    const seen = profile.run.warmupElements + profile.run.elements;
    const what = o.minRate !== undefined ? `whether the pipeline reaches ${fmtRate(o.minRate)}` : 'how fast the pipeline is';
    const message = `the source ended after ${seen} element${seen === 1 ? '' : 's'} (at least ${MIN_ELEMENTS} are needed for a rate), so the run cannot say ${what}. Check a source with more elements, or lower --warmup so the source does not end during it.`;
    report.tooFewElements = { elements: profile.run.elements, message };
    render(o, report, write);
    return EXIT_SAMPLE_TOO_SMALL;
  }
  if (o.minRate !== undefined) report.verdicts.push(minRateVerdict(o, profile));
  const now = baselineOf(profile, {
    file: path.relative(process.cwd(), path.resolve(o.file)) || o.file,
    sha256: fileHash(o.file),
    exportName: o.exportName,
    seconds: profile.run.seconds,
    warmupSeconds: profile.run.warmupSeconds,
  });
  if (o.baseline) {
    report.gate = compareToBaseline(o.baseline.value, now, { maxSlowdown: o.maxSlowdown, maxLoad: o.maxLoad });
    report.verdicts.push(baselineVerdict(report.gate, o));
  }
  if (o.saveTo !== undefined) {
    writeAtomically(o.saveTo, `${JSON.stringify(now, null, 2)}\n`);
    const load = otherLoad(now.machine);
    const busy =
      load !== undefined && load >= (o.maxLoad ?? now.machine.cores)
        ? ` The machine was busy (load average ${now.machine.loadAverage}): a later run cannot be compared with this baseline; save it again on a quieter machine.`
        : '';
    report.saved = { path: o.saveTo, message: `saved ${fmtRateIn(now.run.rate, unit)} ± ${fmtRateIn(now.run.halfWidth, unit)} (${now.run.slices.length} slices) as the baseline ${o.saveTo}.${busy}` };
  }
  render(o, report, write);
  return exitCodeOf(report.verdicts, o.strict);
}

/** A run that failed, reported in a CI format (text and JSON keep the command's own failure report); returns the exit code. */
export function failedCheck(o: CheckOptions, profile: Profile, write: (stream: 'stdout' | 'stderr', text: string) => void): number {
  const message = `the pipeline failed: ${profile.error?.message ?? 'no profile'}`;
  const report: CheckReport = {
    file: o.file,
    exportName: (profile.pipeline as Profile['pipeline'] | undefined)?.exportName ?? o.exportName ?? 'default',
    line: undefined,
    rate: 0,
    unit: 'el',
    verdicts: [{ check: 'run', outcome: 'fail', message }],
    strict: o.strict,
    profile,
  };
  render(o, report, write);
  // Ctrl-C ends with the shell's usual code for an interrupt.
  return profile.error?.kind === 'cancelled' ? 130 : 1;
}

function render(o: CheckOptions, report: CheckReport, write: (stream: 'stdout' | 'stderr', text: string) => void): void {
  for (const [stream, text] of renderCheck(o.format, report)) if (text) write(stream, text);
}

/** The line of the pipeline's last operator in its own file, for annotations; undefined when elsewhere or unknown. */
function rootLine(profile: Profile): number | undefined {
  const root = profile.ops.find((op) => op.id === profile.pipeline.rootId);
  return root?.site && /^\d+:\d+$/.test(root.id) ? root.site.line : undefined;
}
