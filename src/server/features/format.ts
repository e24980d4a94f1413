/**
 * Short numbers for lenses and hints ("1.2k el/s", "61% CPU") and the shared phrases features use,
 * so every surface says the same thing.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { PlanChange } from '../../shared/analysis';
import type { Profile } from '../../shared/profile';
import { changeTitle } from '../../model/describe';
import { compact } from '../../shared/format';
import { formatSpeedup } from '../../engine/stats';

export { compact };

export function rateText(n: number): string {
  return `${compact(n)} el/s`;
}

export function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/** "6.8×" speed-up text (predicted over measured). */
export function speedup(predicted: number, current: number): string | undefined {
  if (!(current > 0) || !Number.isFinite(predicted)) return undefined;
  // As the CLI and the verified figure write it, so one title never mixes "14054×" and "14,054×".
  return formatSpeedup(predicted / current);
}

export const FIX_PREFIX = 'Apply Plumber fix: ';

/** The quick-fix title of one plan change. */
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
