/**
 * The end-to-end benchmark's outputs: one JSON line per example, a readable table for the
 * terminal, a markdown table and an SVG bar chart for `artifacts/bench-e2e/`.
 */

import type { BenchLine } from '../goals';

/** The figures measured for one example at one load. Rates are root elements per second. */
export type E2eResult = BenchLine & { bench: 'e2e' };

/** Details that explain a result: which grid configuration won, what the plan changed. */
export interface E2eDetail {
  oracleConfig: string;
  planChanges: string[];
  /** Rate of each grid configuration in the one run that chose the oracle, by name (0 in smoke runs, which choose the first). */
  grid: Record<string, number>;
  /** Plumber's plan on the profile with the runner's and the library's gaps filled in (see fillGaps in index.ts). */
  gapsFilled?: { plumber: number; predicted: number; planChanges: string[] };
  /** Verification's sentence ("verified 1.7× ± 0.1", "no reliable gain …"), when it ran. */
  verification?: string;
  /** Configurations that failed to run (counted as rate 0), by name, with why. */
  failures: Record<string, string>;
}

export function jsonLine(r: E2eResult): string {
  return JSON.stringify(r);
}

function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x >= 100) return x.toFixed(0);
  if (x >= 10) return x.toFixed(1);
  return x.toFixed(2);
}

function ratio(a: number, b: number): string {
  return b > 0 ? `${(a / b).toFixed(2)}×` : '–';
}

const HEAD = [
  'pipeline',
  'load',
  'as written',
  'heuristic',
  'nodeHeuristic',
  'auto',
  'plumber',
  'oracle',
  'predicted',
  'verified',
  'plumber/oracle',
  'plumber/nodeHeuristic',
  '|pred−plumber|/plumber',
  'profile+plan+verify s',
];

function row(r: E2eResult): string[] {
  return [
    r.pipeline,
    String(r.load),
    fmt(r.asWritten),
    fmt(r.heuristic),
    fmt(r.nodeHeuristic),
    fmt(r.auto),
    fmt(r.plumber),
    fmt(r.oracle),
    fmt(r.predicted),
    r.verified === null ? '–' : fmt(r.verified),
    ratio(r.plumber, r.oracle),
    ratio(r.plumber, r.nodeHeuristic),
    r.plumber > 0 ? `${((Math.abs(r.predicted - r.plumber) / r.plumber) * 100).toFixed(0)}%` : '–',
    r.profileSeconds.toFixed(1),
  ];
}

/** A fixed-width table for the terminal. */
export function textTable(results: E2eResult[]): string {
  const rows = [HEAD, ...results.map(row)];
  const widths = HEAD.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')).join('\n');
}

/** The same table in markdown, with the details of each example below it (`details` by `pipeline@load`). */
export function markdownTable(results: E2eResult[], details: Map<string, E2eDetail>, header: string): string {
  const lines = [header, '', `| ${HEAD.map((h) => h.replaceAll('|', '\\|')).join(' | ')} |`, `|${HEAD.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`];
  for (const r of results) lines.push(`| ${row(r).join(' | ')} |`);
  lines.push('', 'Rates are root elements (batches) per second.', '');
  for (const r of results) {
    const d = details.get(`${r.pipeline}@${r.load}`);
    if (!d) continue;
    lines.push(`### ${r.pipeline} at load ${r.load}`, '', `- kept by Plumber: ${d.planChanges.length ? d.planChanges.join('; ') : 'no change'}${d.verification ? ` (${d.verification})` : ''}`);
    if (d.gapsFilled) {
      const g = d.gapsFilled;
      lines.push(
        `- plan once fnModule and the file count are known: ${g.planChanges.join('; ') || 'no change'} → measured ${fmt(g.plumber)}, predicted ${fmt(g.predicted)} (${ratio(g.plumber, r.oracle)} of the oracle, ${ratio(g.plumber, r.heuristic)} of the heuristic)`,
      );
    }
    lines.push(`- oracle's configuration: ${d.oracleConfig}, the fastest of the grid in one run each (then measured in the round-robin like the others):`);
    for (const [name, rate] of Object.entries(d.grid)) lines.push(`  - ${name}: ${fmt(rate)}`);
    for (const [name, why] of Object.entries(d.failures)) lines.push(`- ${name} failed (counted as 0): ${why}`);
    lines.push('');
  }
  return lines.join('\n');
}

const SERIES: { key: keyof E2eResult; label: string; color: string }[] = [
  { key: 'asWritten', label: 'as written', color: '#9e9e9e' },
  { key: 'heuristic', label: 'heuristic', color: '#f4a261' },
  { key: 'nodeHeuristic', label: 'nodeHeuristic', color: '#e9c46a' },
  { key: 'auto', label: 'auto', color: '#8ab17d' },
  { key: 'plumber', label: 'Plumber', color: '#2a9d8f' },
  { key: 'oracle', label: 'oracle', color: '#264653' },
];

function escapeXml(s: string): string {
  return s.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c] ?? c);
}

/**
 * Grouped bars of speed-up over the as-written pipeline, on a log scale (the gains range from
 * none to two orders of magnitude); a tick marks the model's predicted rate.
 */
export function svgChart(results: E2eResult[]): string {
  const BAR = 24;
  const GROUP = SERIES.length * BAR + 30;
  const plumberAt = SERIES.findIndex((s) => s.key === 'plumber');
  const manyLoads = new Set(results.map((r) => r.load)).size > 1;
  const width = Math.max(160 + results.length * GROUP, 100 + (SERIES.length + 1) * 120);
  const height = 380;
  const top = 50;
  const bottom = 310;
  const left = 70;
  const speedups = results.flatMap((r) => SERIES.map((s) => (r[s.key] as number) / r.asWritten).concat(r.predicted / r.asWritten));
  const maxDecade = Math.max(1, Math.ceil(Math.log10(Math.max(...speedups.filter(Number.isFinite), 1))));
  // The axis starts at 0.25× so that a configuration slower than as written still shows a bar.
  const floor = Math.log10(0.25);
  const y = (speedup: number): number => bottom - ((Math.log10(Math.max(speedup, 0.25)) - floor) / (maxDecade - floor)) * (bottom - top);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="24" font-size="15" font-weight="bold">Speed-up over the pipeline as written (log scale)</text>`,
  ];
  const ticks = [0.25, 0.5];
  for (let d = 0; d <= maxDecade; d++) ticks.push(...(d < maxDecade ? [1, 2, 5] : [1]).map((m) => m * 10 ** d));
  for (const v of ticks) {
    const major = Number.isInteger(Math.log10(v));
    parts.push(`<line x1="${left}" x2="${width - 20}" y1="${y(v)}" y2="${y(v)}" stroke="${major ? '#bbb' : '#eee'}"/>`);
    parts.push(`<text x="${left - 8}" y="${y(v) + 4}" text-anchor="end">${v}×</text>`);
  }
  results.forEach((r, i) => {
    const x0 = left + 20 + i * GROUP;
    SERIES.forEach((s, j) => {
      const v = (r[s.key] as number) / r.asWritten;
      // No bar when as written measured nothing: there is no speed-up to draw.
      if (!Number.isFinite(v)) return;
      const yy = y(v);
      parts.push(
        `<rect x="${x0 + j * BAR}" y="${yy}" width="${BAR - 4}" height="${bottom - yy}" fill="${s.color}"><title>${escapeXml(`${r.pipeline} ${s.label}: ${fmt(r[s.key] as number)}/s (${v.toFixed(2)}×)`)}</title></rect>`,
      );
    });
    const yp = y(r.predicted / r.asWritten);
    if (Number.isFinite(yp))
      parts.push(
        `<line x1="${x0 + plumberAt * BAR - 4}" x2="${x0 + (plumberAt + 1) * BAR}" y1="${yp}" y2="${yp}" stroke="#e63946" stroke-width="3"><title>${escapeXml(`${r.pipeline} predicted: ${fmt(r.predicted)}/s`)}</title></line>`,
      );
    const label = manyLoads ? `${r.pipeline} (load ${r.load})` : r.pipeline;
    parts.push(`<text x="${x0 + (SERIES.length * BAR) / 2}" y="${bottom + 18}" text-anchor="middle">${escapeXml(label)}</text>`);
  });
  const legend = [...SERIES.map((s) => ({ label: s.label, color: s.color })), { label: 'predicted (Plumber)', color: '#e63946' }];
  legend.forEach((l, i) => {
    const x = left + i * 120;
    parts.push(`<rect x="${x}" y="${height - 30}" width="12" height="12" fill="${l.color}"/><text x="${x + 18}" y="${height - 20}">${escapeXml(l.label)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}
