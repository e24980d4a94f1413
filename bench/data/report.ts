/** Output of the plumber-data benchmarks: JSON lines with --json, an aligned table otherwise. */

import { groupedRowsTables, writeResults } from '../results';

export type Line = Record<string, string | number | boolean>;

const lines: Line[] = [];

/** Records one result and prints it at once in JSON mode (so a long run shows progress). */
export function emit(line: Line, json: boolean): void {
  lines.push(line);
  if (json) process.stdout.write(`${JSON.stringify(line)}\n`);
}

function fmt(v: string | number | boolean): string {
  if (typeof v !== 'number') return String(v);
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a >= 100 ? v.toFixed(0) : a >= 1 ? v.toFixed(2) : v.toPrecision(3);
}

/** Readable tables of everything emitted: one per benchmark, with that benchmark's columns. */
export function table(): string {
  const groups = new Map<string, Line[]>();
  for (const l of lines) {
    const g = String(l.bench);
    groups.set(g, [...(groups.get(g) ?? []), l]);
  }
  const out: string[] = [];
  for (const [name, ls] of groups) {
    const keys: string[] = [];
    for (const l of ls) for (const k of Object.keys(l)) if (k !== 'bench' && !keys.includes(k)) keys.push(k);
    const rows = [keys, ...ls.map((l) => keys.map((k) => (l[k] === undefined ? '' : fmt(l[k]))))];
    const widths = keys.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
    out.push(`${name}\n${rows.map((r, ri) => '  ' + r.map((c, i) => (ri > 0 && /^-?[\d.]/.test(c) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ')).join('\n')}`);
  }
  return out.join('\n\n');
}

/** Everything emitted, as the `bench` section of bench/RESULTS.md (after a full run). */
export function writeResultsSection(): void {
  writeResults('bench', groupedRowsTables(lines));
}

/** The median of a few measurements: robust to one slow run on a shared machine. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
