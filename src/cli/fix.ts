/**
 * `plumber fix <file> [--export NAME] [--diff|--write] [--from-profile profile.json]`: profile the
 * pipeline (or read a saved profile), plan, and apply the plan to the source with the language
 * server's fix engine — printed as a unified diff (the default) or written in place atomically.
 * Exit codes: 0 done (or nothing to fix), 1 the run or a fix failed, 2 the command was used wrongly.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { changeTitle, plan } from '../model';
import { runProfile } from '../runner/spawn';
import { PROFILE_VERSION, type Profile } from '../shared/profile';
import { applyEdits, editsForChanges, type PlannedEdit } from '../engine/fixes/edits';
import { GraphWorkspace } from '../engine/graph/workspace';
import { joinOps } from '../engine/join';
import { UsageError, numberFlag, parseArgs } from './args';

const USAGE = `Usage: plumber fix <file> [--export NAME] [--diff | --write] [--from-profile profile.json] [--seconds N]

Profiles the pipeline, plans knob changes with the model, and applies them to the source.
  --export NAME          the pipeline's export name (needed when the file exports several)
  --diff                 print the changes as a unified diff (the default)
  --write                write the changed files in place
  --from-profile FILE    use a saved profile (plumber profile --json > FILE) instead of running
  --seconds N            measurement budget when profiling (default 3)
`;

function readProfile(file: string): Profile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`Could not read the profile ${file}: ${error instanceof Error ? error.message : String(error)}. Save one with \`plumber profile <file> --json > ${file}\`.`);
  }
  const p = (parsed as { profile?: unknown }).profile ?? parsed;
  const v = (p as { version?: unknown }).version;
  if (v !== PROFILE_VERSION || !Array.isArray((p as { ops?: unknown }).ops)) {
    throw new UsageError(`${file} is not a Plumber profile of version ${PROFILE_VERSION}: profile the pipeline again with this version of Plumber.`);
  }
  return p as Profile;
}

/** Write a file via a temporary sibling and a rename, so a crash never leaves it half-written. */
function writeAtomically(file: string, text: string): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.plumber-${process.pid}.tmp`);
  fs.writeFileSync(tmp, text, { mode: fs.statSync(file).mode });
  fs.renameSync(tmp, file);
}

/** Entry point of `plumber fix`; returns the exit code. */
export async function runFixCommand(argv: string[]): Promise<number> {
  try {
    return await fix(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`plumber fix: ${error.message}\n`);
      return 2;
    }
    process.stderr.write(`plumber fix: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

async function fix(argv: string[]): Promise<number> {
  const p = parseArgs(argv, { export: { value: true }, diff: { value: false }, write: { value: false }, 'from-profile': { value: true }, seconds: { value: true }, help: { value: false } }, 'fix');
  if (p.flags.has('help')) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (p.positionals.length !== 1) throw new UsageError(`\`plumber fix\` takes one pipeline file, e.g. \`plumber fix pipeline.ts --diff\`.\n${USAGE}`);
  if (p.flags.has('diff') && p.flags.has('write')) throw new UsageError('Choose one of --diff (print the changes) and --write (apply them).');
  const file = path.resolve(p.positionals[0]!);
  if (!fs.existsSync(file)) throw new UsageError(`There is no file ${file}.`);
  const seconds = numberFlag(p, 'seconds', { min: 0, exclusiveMin: true }) ?? 3;
  const profileFile = p.flags.get('from-profile')?.[0];
  const saved = profileFile ? readProfile(path.resolve(profileFile)) : undefined;

  const ws = new GraphWorkspace();
  const text = fs.readFileSync(file, 'utf8');
  ws.setText(file, text);
  const graph = ws.graphOf(file);
  const exported = graph.pipelines.filter((x) => x.exported);
  const wanted = p.flags.get('export')?.[0] ?? saved?.pipeline.exportName ?? (exported.length === 1 ? exported[0]!.name : undefined);
  if (wanted === undefined) {
    const names = exported.map((x) => x.name).join(', ') || 'none';
    throw new UsageError(`${path.basename(file)} exports ${exported.length} pipelines (${names}): say which with --export NAME.`);
  }
  const pipeline = graph.pipelines.find((x) => x.name === wanted);
  if (!pipeline) throw new UsageError(`${path.basename(file)} has no pipeline named ${wanted}. Pipelines: ${exported.map((x) => x.name).join(', ') || 'none'}.`);

  const profile = saved ?? (await runProfile({ file, exportName: wanted, seconds }));
  if (profile.error) {
    process.stderr.write(`plumber fix: ${profile.error.message}\n`);
    return 1;
  }
  const thePlan = plan(profile);
  if (thePlan.changes.length === 0) {
    process.stderr.write(`Nothing to fix: the model proposes no change for ${wanted} (${Math.round(thePlan.currentRate)} el/s).\n`);
    return 0;
  }
  const { byProfileId } = joinOps(pipeline, profile);
  const outcome = editsForChanges(thePlan.changes, {
    pipeline,
    graphOf: (f) => ws.graphOf(f),
    textOf: (f) => ws.sourceFile(f)?.getFullText() ?? '',
    opFor: (id) => byProfileId.get(id),
  });
  if (!outcome.ok) {
    process.stderr.write(`plumber fix: ${outcome.reason}\n`);
    return 1;
  }
  const byFile = new Map<string, PlannedEdit[]>();
  for (const e of outcome.edits) byFile.set(e.file, [...(byFile.get(e.file) ?? []), e]);
  for (const change of thePlan.changes) process.stderr.write(`Plumber fix: ${changeTitle(change, profile)}\n`);
  const speedup = thePlan.currentRate > 0 ? thePlan.predictedRate / thePlan.currentRate : undefined;
  for (const [f, edits] of byFile) {
    const before = ws.sourceFile(f)?.getFullText() ?? fs.readFileSync(f, 'utf8');
    const after = applyEdits(before, edits);
    if (p.flags.has('write')) {
      writeAtomically(f, after);
      process.stderr.write(`Wrote ${path.relative(process.cwd(), f) || f}.\n`);
    } else {
      const rel = path.relative(process.cwd(), f).split(path.sep).join('/');
      process.stdout.write(createTwoFilesPatch(`a/${rel}`, `b/${rel}`, before, after, '', '', { context: 3 }).replace(/^=+\n/, ''));
    }
  }
  if (speedup !== undefined) process.stderr.write(`Predicted: ${Math.round(thePlan.currentRate)} → ${Math.round(thePlan.predictedRate)} el/s (est. ${speedup.toFixed(1)}×). Profile again to confirm.\n`);
  return 0;
}
