/**
 * `plumber lint [files…|globs…]`: every static rule on every pipeline of the files, read with the
 * same graph extraction and rules as the editor's diagnostics (src/engine/lints/file.ts), plus the
 * measured rules of the pipelines a stored profile (`--profile`) ran. Suppression comments work
 * as in the editor. Nothing is run.
 * Exit codes: 0 no finding at or above --max-severity, 1 some (or a file could not be read),
 * 2 the command was used wrongly.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Profile } from '../shared/profile';
import { GraphWorkspace } from '../engine/graph/workspace';
import { joinOps } from '../engine/join';
import { allRules } from '../engine/lints/catalog';
import { fileFindings } from '../engine/lints/file';
import { measuredLints, type MeasuredPipeline } from '../engine/lints/measured';
import { lintPipelines, type LintSeverity } from '../engine/lints/rules';
import { UsageError, numberFlag, parseArgs, type FlagSpec, type Parsed } from './args';
import { readProfile } from './fix';
import { HELP } from './help';
import { namedFiles, workspaceFiles } from './lintFiles';
import { FORMATS, githubLines, jsonReport, sarifLog, shownPath, textLines, type Format, type Located } from './lintFormats';
import { packageInfo } from './version';

export const LINT_FLAGS: Record<string, FlagSpec> = {
  format: { value: true },
  json: { value: false },
  'max-severity': { value: true },
  rule: { value: true, repeat: true },
  'ignore-rule': { value: true, repeat: true },
  profile: { value: true, repeat: true },
  cores: { value: true },
  help: { value: false },
};

/** Severities from the most severe: `--max-severity S` fails on S and everything above it. */
const SEVERITIES: LintSeverity[] = ['warning', 'information'];

interface LintOptions {
  format: Format;
  failAt: LintSeverity;
  only: Set<string> | undefined;
  ignored: Set<string>;
  cores: number;
  profiles: Profile[];
}

/** A rule as typed: `cache-after-random` or `plumber/cache-after-random`; unknown rules are usage errors. */
function ruleIds(p: Parsed, flag: string, known: Set<string>): Set<string> {
  const out = new Set<string>();
  for (const raw of (p.flags.get(flag) ?? []).flatMap((v) => v.split(','))) {
    const name = raw.trim();
    if (name === '') continue;
    const id = name.startsWith('plumber/') ? name : `plumber/${name}`;
    if (!known.has(id)) throw new UsageError(`--${flag} ${raw}: there is no such rule. Rules: ${[...known].map((r) => r.replace(/^plumber\//, '')).join(', ')}.`);
    out.add(id);
  }
  return out;
}

function optionsOf(p: Parsed): LintOptions {
  const formatRaw = p.flags.get('format')?.[0] ?? (p.flags.has('json') ? 'json' : 'text');
  if (!(FORMATS as readonly string[]).includes(formatRaw)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, got "${formatRaw}".`);
  if (p.flags.has('json') && formatRaw !== 'json') throw new UsageError(`--json is --format json; it cannot go with --format ${formatRaw}.`);
  const failRaw = p.flags.get('max-severity')?.[0] ?? 'warning';
  if (!(SEVERITIES as string[]).includes(failRaw)) throw new UsageError(`--max-severity must be warning or information, got "${failRaw}".`);
  const known = new Set(allRules().map((r) => r.id));
  const only = ruleIds(p, 'rule', known);
  const cores = numberFlag(p, 'cores', { min: 1, integer: true }) ?? os.availableParallelism();
  const profiles = (p.flags.get('profile') ?? []).map((f) => readProfile(path.resolve(f)));
  return { format: formatRaw as Format, failAt: failRaw as LintSeverity, only: only.size > 0 ? only : undefined, ignored: ruleIds(p, 'ignore-rule', known), cores, profiles };
}

/** The measured inputs of `file`: each stored profile of one of its pipelines, joined to the pipeline's graph. */
function measuredOf(file: string, pipelines: MeasuredPipeline['graph'][], profiles: Profile[], warn: (m: string) => void): MeasuredPipeline[] {
  const out: MeasuredPipeline[] = [];
  for (const profile of profiles) {
    if (profile.error || path.resolve(profile.pipeline.file) !== file) continue;
    const graph = pipelines.find((g) => g.name === profile.pipeline.exportName);
    if (!graph) {
      warn(`the profile of ${profile.pipeline.exportName} does not match a pipeline of ${file} any more: its measured rules are skipped. Profile it again.`);
      continue;
    }
    out.push({ graph, profile, byProfileId: joinOps(graph, profile).byProfileId });
  }
  return out;
}

/** Every finding on `files`, sorted by file and position, with the rules selected. */
export function lintFiles(files: string[], o: LintOptions, warn: (m: string) => void): { findings: Located[]; failed: string[] } {
  const failed: string[] = [];
  const ws = new GraphWorkspace({ onError: (f, e) => failed.push(`could not read the pipelines of ${f}: ${e instanceof Error ? e.message : String(e)}`) });
  const findings: Located[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      failed.push(`could not read ${file}: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    const graph = ws.graphOf(file);
    const lints = lintPipelines(graph.pipelines, { cores: o.cores });
    const measured = measuredLints(measuredOf(file, graph.pipelines, o.profiles, warn));
    for (const f of fileFindings(file, text, { lints, measured, stops: graph.stops })) {
      if ((o.only && !o.only.has(f.rule)) || o.ignored.has(f.rule)) continue;
      findings.push({ ...f, file });
    }
  }
  findings.sort((a, b) => a.file.localeCompare(b.file) || a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character || a.rule.localeCompare(b.rule));
  return { findings, failed };
}

function lint(argv: string[]): number {
  const p = parseArgs(argv, LINT_FLAGS, 'lint');
  if (p.flags.has('help')) {
    process.stdout.write(`${HELP['lint']}\n`);
    return 0;
  }
  const o = optionsOf(p);
  const cwd = process.cwd();
  const files = p.positionals.length > 0 ? namedFiles(p.positionals, cwd) : workspaceFiles(cwd);
  // A project that lists nothing (a solution tsconfig of references, a wrong directory) must not pass as clean.
  if (files.length === 0)
    throw new UsageError(`there are no TypeScript files to lint in ${cwd} (its tsconfig.json includes none, or git ignores them all). Run it in the project's directory, or name the files or globs.`);
  for (const profile of o.profiles) {
    if (!profile.error && !files.includes(path.resolve(profile.pipeline.file))) files.push(path.resolve(profile.pipeline.file));
  }
  const warn = (m: string): void => void process.stderr.write(`plumber lint: ${m}\n`);
  const { findings, failed } = lintFiles(files, o, warn);
  for (const m of failed) warn(m);
  switch (o.format) {
    case 'json':
      process.stdout.write(`${JSON.stringify(jsonReport(findings, files.length, cwd), null, 2)}\n`);
      break;
    case 'sarif':
      process.stdout.write(`${JSON.stringify(sarifLog(findings, allRules(), { version: packageInfo().version, informationUri: packageInfo().homepage }, cwd), null, 2)}\n`);
      break;
    case 'github':
      process.stdout.write(githubLines(findings, cwd));
      break;
    case 'text':
      process.stdout.write(textLines(findings, cwd));
  }
  const failing = findings.filter((f) => SEVERITIES.indexOf(f.severity) <= SEVERITIES.indexOf(o.failAt));
  const counts = SEVERITIES.map((s) => `${findings.filter((f) => f.severity === s).length} ${s}`).join(', ');
  const where = files.length === 1 ? shownPath(files[0]!, cwd) : `${files.length} files`;
  process.stderr.write(`plumber lint: ${findings.length === 0 ? 'no findings' : `${findings.length} finding${findings.length === 1 ? '' : 's'} (${counts})`} in ${where}.\n`);
  return failing.length > 0 || failed.length > 0 ? 1 : 0;
}

/** Entry point of `plumber lint`; returns the exit code. */
export function runLintCommand(argv: string[]): number {
  try {
    return lint(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`plumber lint: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
