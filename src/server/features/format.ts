/**
 * The phrases features build from the model (a fix's title) and the URI ↔ path conversions every
 * feature needs. How numbers are written lives in src/shared/words.ts.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { PlanChange } from '../../shared/analysis';
import type { Profile } from '../../shared/profile';
import { changeTitle } from '../../model/describe';
import { FIX_PREFIX } from '../../shared/words';

// advice.ts still takes these from here under their old names; the words themselves are shared.
export { compact, speedupOver as speedup } from '../../shared/words';

/** The quick-fix title of one plan change: "Apply Plumber fix: set parallelism of map(decode) to 2". */
export function fixTitle(change: PlanChange, profile: Profile): string {
  return FIX_PREFIX + changeTitle(change, profile);
}

export function fileToUri(file: string): string {
  return pathToFileURL(file).href;
}

export function uriToFile(uri: string): string {
  if (!uri.startsWith('file:')) return uri;
  try {
    return fileURLToPath(uri);
  } catch {
    return uri;
  }
}
