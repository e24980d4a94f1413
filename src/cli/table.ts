/** Plain-text tables and number formats for the terminal. */

/** Renders rows under a header, columns padded to their widest cell; numeric-looking columns are right-aligned. */
export function renderTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => /^[-\d.,×%∞]*( ?[a-z]*\/s|%| ms| µs| s)?$/.test(r[i] ?? '')));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '─'.repeat(w))), ...rows.map(line)].join('\n');
}

/** A rate in elements per second with three significant digits and thousands separators. */
export function fmtRate(r: number | undefined): string {
  if (r === undefined || Number.isNaN(r)) return '-';
  if (!Number.isFinite(r)) return '∞';
  if (r >= 1000) return `${Math.round(Number(r.toPrecision(3))).toLocaleString('en-US')}/s`;
  return `${Number(r.toPrecision(3))}/s`;
}

/** A rate in a unit other than elements: `1.3 batches/s`; in elements, as `fmtRate` writes it. */
export function fmtRateIn(r: number | undefined, unit: string): string {
  const text = fmtRate(r);
  return unit === 'el' || text === '-' ? text : text.replace(/\/s$/, ` ${unit}/s`);
}

/** Seconds per element as ms or µs. */
export function fmtPerElement(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds <= 0) return '-';
  if (seconds >= 1e-3) return `${Number((seconds * 1e3).toPrecision(3))} ms`;
  return `${Number((seconds * 1e6).toPrecision(3))} µs`;
}

export function fmtShare(x: number | undefined): string {
  if (x === undefined || !Number.isFinite(x)) return '-';
  return `${Math.round(x * 100)}%`;
}
