/**
 * `plumber fix <file> [plan's options] [--diff|--write] [--from-profile profile.json]`: the same
 * diagnosis as `plumber plan` (profile, plan in passes, verify; the same flags), then the changes
 * the editor would offer (src/engine/offer.ts: what verification kept, and only from a plan that
 * predicts a gain) applied to the source with the engine's fix engine — printed as a unified diff
 * (the default) or written in place atomically. The pipeline is found the way the runner finds it
 * (the profile names the export that ran and every operator's id), and each operator's source by
 * id across every chain of the file and the files it imports.
 * Exit codes: 0 done (or nothing to fix), 1 the run or a fix failed, 2 the command was used wrongly.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { changeTitle, plan as planOf, planTarget } from '../model';
import type { Plan } from '../shared/analysis';
import { PROFILE_VERSION, type Profile } from '../shared/profile';
import { rootUnit } from '../shared/units';
import { applyEdits, type PlannedEdit } from '../engine/fixes/edits';
import { editsForPlan } from '../engine/convert/fix';
import { offeredChanges } from '../engine/offer';
import { GraphWorkspace } from '../engine/graph/workspace';
import { commandName, thisInvocation } from './help';
import { sourceRandomOps } from '../engine/diagnose';
import { fileProblem } from '../runner/spawn';
import { UsageError, parseArgs } from './args';
import { PLAN_FLAGS, diagnoseFromFlags, modelOptionsOf } from './diagnoseRun';
import { HELP } from './help';
import { droppedLines, verdictLine } from './render';

export function readProfile(file: string): Profile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`Could not read the profile ${file}: ${error instanceof Error ? error.message : String(error)}. Save one with \`${commandName(thisInvocation())} profile <file> --json > ${file}\`.`);
  }
  const p = (parsed as { profile?: unknown }).profile ?? parsed;
  const v = (p as { version?: unknown }).version;
  if (v !== PROFILE_VERSION || !Array.isArray((p as { ops?: unknown }).ops)) {
    throw new UsageError(`${file} is not a Plumber profile of version ${PROFILE_VERSION}: profile the pipeline again with this version of Plumber.`);
  }
  return p as Profile;
}

/**
 * Write a file via a temporary sibling and a rename, so a crash never leaves it half-written. The
 * sibling is created exclusively (whatever is already at its name is someone else's and is left
 * alone) and removed when the write fails; the error names the file, which is then unchanged.
 */
export function writeAtomically(file: string, text: string): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.plumber-${process.pid}.tmp`);
  let opened = false;
  try {
    const fd = fs.openSync(tmp, 'wx', fs.statSync(file).mode);
    opened = true;
    try {
      fs.writeFileSync(fd, text);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    if (opened) {
      try {
        fs.rmSync(tmp, { force: true });
      } catch {
        // A removal that fails too must not hide why the write failed.
      }
    }
    throw new Error(`could not write ${file} (${why}); it is unchanged. Check that this user may write to its directory, or apply the diff \`plumber fix\` prints without --write.`);
  }
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

export const FIX_FLAGS = { ...PLAN_FLAGS, diff: { value: false }, write: { value: false }, 'from-profile': { value: true } };

async function fix(argv: string[]): Promise<number> {
  const p = parseArgs(argv, FIX_FLAGS, 'fix');
  if (p.flags.has('help')) {
    process.stdout.write(`${HELP['fix']}\n`);
    return 0;
  }
  if (p.positionals.length !== 1) throw new UsageError(`\`plumber fix\` takes one pipeline file, e.g. \`plumber fix pipeline.ts --diff\`.\n${HELP['fix']}`);
  if (p.flags.has('diff') && p.flags.has('write')) throw new UsageError('Choose one of --diff (print the changes) and --write (apply them).');
  const file = path.resolve(p.positionals[0]!);
  // Before ts-morph reads it: a directory would fail there with a bare EISDIR.
  const problem = fileProblem(file, undefined);
  if (problem) throw new UsageError(problem.message);
  const profileFile = p.flags.get('from-profile')?.[0];
  const saved = profileFile ? readProfile(path.resolve(profileFile)) : undefined;
  if (saved && path.resolve(saved.pipeline.file) !== file) {
    throw new UsageError(`The profile ${profileFile} is of ${saved.pipeline.file}, not ${file}.`);
  }

  // The source as profiled: the plan's edits are made against it.
  const ws = new GraphWorkspace();
  ws.setText(file, fs.readFileSync(file, 'utf8'));

  let profile: Profile;
  let thePlan: Plan;
  let last: Profile;
  if (saved) {
    // A saved profile is one run: planning from it cannot re-run or verify anything.
    const randomOps = await sourceRandomOps(file, ws);
    const options = { ...modelOptionsOf(p), ...(randomOps.length > 0 ? { randomOps } : {}) };
    profile = saved;
    last = saved;
    const planned = planOf(saved, options);
    const target = planTarget(saved, planned, options);
    thePlan = target ? { ...planned, target } : planned;
  } else {
    const d = await diagnoseFromFlags(file, p, { graphs: ws });
    if (d.error) {
      process.stderr.write(`plumber fix: ${d.error.message}\n`);
      return d.error.kind === 'cancelled' ? 130 : 1;
    }
    profile = d.first;
    last = d.last;
    thePlan = d.plan;
  }
  if (profile.error) {
    process.stderr.write(`plumber fix: ${profile.error.message}\n`);
    return 1;
  }
  const unverified = saved ? 'saved-profile' : p.flags.has('no-verify') ? 'no-verify' : undefined;
  const exportName = profile.pipeline.exportName;
  const dropped = droppedLines(thePlan, profile, last);
  if (dropped.length > 0) process.stderr.write(`Dropped after verification:\n${dropped.join('\n')}\n`);
  const json = p.flags.has('json');
  const files: Array<{ file: string; diff: string }> = [];
  const printJson = (): void => {
    process.stdout.write(`${JSON.stringify({ pipeline: { file, exportName }, plan: thePlan, files, written: p.flags.has('write') }, null, 2)}\n`);
  };
  // What the editor would offer, and nothing else: a change verification dropped, or a plan whose
  // prediction reads as no gain, is not applied.
  const offered = offeredChanges(thePlan);
  if (offered.length === 0) {
    if (json) printJson();
    const n = thePlan.changes.length;
    const why =
      thePlan.changes.some((c) => c.kind === 'convert') && !thePlan.verification
        ? 'converting the pipeline to plumber-data is applied only once verification measured it faster; run `plumber fix` without --no-verify or --from-profile'
        : thePlan.verification && thePlan.verification.verdict !== 'gain'
          ? verdictLine(thePlan)
          : n === 0
            ? `the model proposes no change for ${exportName} (${Math.round(thePlan.currentRate)} ${rootUnit(profile)}/s)`
            : `the plan predicts no gain over the rate measured as written (${verdictLine(thePlan, unverified)}), so ${n === 1 ? 'its change is not' : `none of its ${n} changes is`} offered`;
    process.stderr.write(`Nothing to fix: ${why.replace(/^No reliable/, 'no reliable')}\n`);
    return 0;
  }

  const outcome = editsForPlan(file, ws, (f) => ws.sourceFile(f)?.getFullText() ?? '', offered, profile, last);
  if (!outcome.ok) {
    process.stderr.write(`plumber fix: ${outcome.reason}\n`);
    return 1;
  }
  const byFile = new Map<string, PlannedEdit[]>();
  for (const e of outcome.edits) byFile.set(e.file, [...(byFile.get(e.file) ?? []), e]);
  for (const change of offered) process.stderr.write(`Plumber fix: ${changeTitle(change, last.ops.some((o) => o.id === change.opId) ? last : profile)}\n`);
  for (const note of outcome.notes ?? []) process.stderr.write(`Note: ${note}\n`);
  for (const [f, edits] of byFile) {
    const before = ws.sourceFile(f)?.getFullText() ?? fs.readFileSync(f, 'utf8');
    const after = applyEdits(before, edits);
    const rel = path.relative(process.cwd(), f).split(path.sep).join('/');
    const diff = createTwoFilesPatch(`a/${rel}`, `b/${rel}`, before, after, '', '', { context: 3 }).replace(/^=+\n/, '');
    files.push({ file: f, diff });
    if (p.flags.has('write')) {
      writeAtomically(f, after);
      process.stderr.write(`Wrote ${path.relative(process.cwd(), f) || f}.\n`);
    } else if (!json) {
      process.stdout.write(diff);
    }
  }
  if (json) printJson();
  process.stderr.write(`Plumber fix: ${Math.round(thePlan.currentRate)} → ${Math.round(thePlan.predictedRate)} ${rootUnit(profile)}/s predicted; ${verdictLine(thePlan, unverified)}.\n`);
  return 0;
}
