/**
 * Plain-text tables for the terminal, and the cells they hold: the shared words for a number
 * (src/shared/words.ts), or `-` when there is none.
 */
import { formatSeconds, formatShare, terminalRate } from '../shared/words';

/** Renders rows under a header, columns padded to their widest cell; numeric-looking columns are right-aligned. */
export function renderTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => /^<?[-\d.,×%∞]*( ?[a-z]*\/s|%| ms| µs| s)?$/.test(r[i] ?? '')));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '─'.repeat(w))), ...rows.map(line)].join('\n');
}

/** A rate in elements per second (`1,234/s`), `-` when unknown. */
export function fmtRate(r: number | undefined): string {
  return fmtRateIn(r, 'el');
}

/** A rate in the pipeline's unit: `1.3 batches/s`, or in elements as `fmtRate` writes it; `-` when unknown. */
export function fmtRateIn(r: number | undefined, unit: string): string {
  return r === undefined || Number.isNaN(r) ? '-' : terminalRate(r, unit);
}

/** Seconds per element (or per call, per step): `12.1 ms`, `840 µs`; `-` when none was measured. */
export function fmtPerElement(seconds: number): string {
  return Number.isFinite(seconds) && seconds > 0 ? formatSeconds(seconds) : '-';
}

/** A share as a whole percentage (`37%`, `<1%`); `-` when unknown. */
export function fmtShare(x: number | undefined): string {
  return x === undefined || !Number.isFinite(x) ? '-' : formatShare(x);
}
