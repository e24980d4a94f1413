/**
 * Number formatting shared by everything that shows a rate to a person (lenses, hovers, the tree,
 * the status bar, the report), so the same rate reads the same everywhere.
 */

/** 310, 2.1k, 12k, 1.5M; one decimal below ten of a unit. Infinite values read `∞`, NaN `—`. */
export function compact(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? '∞' : '—';
  const abs = Math.abs(n);
  const unit = (v: number, s: string): string => `${v < 10 ? Number(v.toFixed(1)) : Math.round(v)}${s}`;
  if (abs >= 1e6) return unit(n / 1e6, 'M');
  if (abs >= 1e3) return unit(n / 1e3, 'k');
  if (abs >= 10) return String(Math.round(n));
  return String(Number(n.toFixed(abs >= 1 ? 1 : 2)));
}
