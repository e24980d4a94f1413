/**
 * Short numbers for lenses and hints ("1.2k el/s", "61% CPU") and the shared phrases features use,
 * so every surface says the same thing.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { PlanChange } from '../../shared/analysis';
import type { Profile } from '../../shared/profile';
import { changeTitle } from '../../model/describe';

/** 310, 2.1k, 12k, 1.5M; one decimal below ten of a unit. */
export function compact(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? '∞' : '—';
  const abs = Math.abs(n);
  const unit = (v: number, s: string): string => `${v < 10 ? Number(v.toFixed(1)) : Math.round(v)}${s}`;
  if (abs >= 1e6) return unit(n / 1e6, 'M');
  if (abs >= 1e3) return unit(n / 1e3, 'k');
  if (abs >= 10) return String(Math.round(n));
  return String(Number(n.toFixed(abs >= 1 ? 1 : 2)));
}

export function rateText(n: number): string {
  return `${compact(n)} el/s`;
}

export function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/** "6.8×" speed-up text (predicted over measured). */
export function speedup(predicted: number, current: number): string | undefined {
  if (!(current > 0) || !Number.isFinite(predicted)) return undefined;
  const x = predicted / current;
  return `${x < 10 ? x.toFixed(1) : Math.round(x)}×`;
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
