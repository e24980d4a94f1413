/**
 * The pipeline "with Plumber's kept plan applied", as a user gets it from `plumber fix --write`:
 * the changes the editor would offer (src/engine/offer.ts: a conversion only once verified)
 * turned into source edits by the fix engine and the conversion (src/engine/convert/fix.ts), the
 * same steps src/cli/fix.ts takes after its diagnosis. The edits go into a copy of the example's
 * folder beside it (`examples/.bench-<name>-<pid>/`, so its relative imports
 * still resolve), never into the example; the copy is removed when the benchmark is done with it.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import type { FileDiagnosis } from '../../src/engine/diagnose';
import { editsForPlan } from '../../src/engine/convert/fix';
import { applyEdits, type PlannedEdit } from '../../src/engine/fixes/edits';
import { GraphWorkspace } from '../../src/engine/graph/workspace';
import { offeredChanges } from '../../src/engine/offer';
import type { PlanChange } from '../../src/shared/analysis';

/** What the kept plan changes: a conversion to plumber-data, the dialect's own knobs, or nothing. */
export type Kept = 'convert' | 'knobs' | 'none';

export function keptKind(changes: readonly PlanChange[]): Kept {
  if (changes.some((c) => c.kind === 'convert')) return 'convert';
  return changes.length > 0 ? 'knobs' : 'none';
}

/** A copy of the example with the plan applied: measure `file`, then `remove()`. */
export interface AppliedPlan {
  file: string;
  remove(): void;
}

/**
 * Applies the offered changes of `d` (a diagnosis of `file`) to a copy of `file`'s folder. Throws
 * with the fix engine's sentence when the changes cannot be written, or when they edit a file
 * outside the example's folder (the copy could not hold it).
 */
export function applyKeptPlan(file: string, d: FileDiagnosis): AppliedPlan {
  const offered = offeredChanges(d.plan);
  const ws = new GraphWorkspace();
  ws.setText(file, readFileSync(file, 'utf8'));
  const outcome = editsForPlan(file, ws, (f) => ws.sourceFile(f)?.getFullText() ?? '', offered, d.first, d.last);
  if (!outcome.ok) throw new Error(`the kept plan could not be written into the source: ${outcome.reason}`);

  const dir = dirname(file);
  const copy = join(dirname(dir), `.bench-${basename(dir)}-${process.pid}`);
  const byFile = new Map<string, PlannedEdit[]>();
  for (const e of outcome.edits) byFile.set(e.file, [...(byFile.get(e.file) ?? []), e]);
  for (const f of byFile.keys()) {
    if (relative(dir, f).startsWith(`..${sep}`)) throw new Error(`the kept plan edits ${f}, outside examples/${basename(dir)}; the benchmark applies plans to a copy of that folder only`);
  }
  rmSync(copy, { recursive: true, force: true });
  mkdirSync(copy);
  cpSync(dir, copy, { recursive: true });
  for (const [f, edits] of byFile) {
    const before = ws.sourceFile(f)?.getFullText() ?? readFileSync(f, 'utf8');
    writeFileSync(join(copy, relative(dir, f)), applyEdits(before, edits));
  }
  return { file: join(copy, basename(file)), remove: () => rmSync(copy, { recursive: true, force: true }) };
}
