/**
 * The report webview's script (bundled by esbuild.mjs into dist/media/report.js as a browser IIFE).
 * It draws what the host posts: the operator graph with the critical path and the bottleneck, rate
 * bars against the bound and the prediction, and the before/after history. Everything is built
 * with DOM calls and textContent, never innerHTML, so profile data cannot inject markup.
 */
import type { ReportResult } from '../../src/shared/protocol';
import type { ToWebview } from '../../src/client/report/messages';
import { formatRate, formatRateIn } from '../../src/client/views/format';
import { timeLines } from '../../src/shared/timeWords';
import { formatBytes, formatElapsed, formatSpeedup } from '../../src/shared/words';
import { peakMemoryWords } from '../../src/shared/memoryWords';

declare function acquireVsCodeApi(): { postMessage(message: unknown): void; setState(s: unknown): void; getState(): unknown };

const vscode = acquireVsCodeApi();
const root = document.getElementById('root')!;
const SVG = 'http://www.w3.org/2000/svg';

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

function svg(tag: string, attrs: Record<string, string | number> = {}, text?: string): SVGElement {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** What the shown pipeline counts (`el`, `batches`): pipeline rates and bounds are in it, as on the lenses. */
let unit = 'el';
/** Pipeline rates and bounds in the same words as the lenses, the tree and the status bar. */
const rate = (r: number | undefined): string => formatRateIn(r, unit);

interface GraphNode {
  id: string;
  label: string;
  inputs: string[];
  rate?: number;
}

/** The operators with their edges: from the profile when there is one, else the chain order. */
function graphOf(report: ReportResult): GraphNode[] {
  const labels = new Map(report.pipeline.ops.map((o) => [o.id, o]));
  if (report.profile) {
    return report.profile.ops.map((o) => ({
      id: o.id,
      label: labels.get(o.id)?.label ?? (o.fnName ? `${o.kind}(${o.fnName})` : o.kind),
      inputs: o.inputs,
      rate: labels.get(o.id)?.rate ?? report.analysis?.ops.find((a) => a.opId === o.id)?.measuredRate,
    }));
  }
  const chain = [...report.pipeline.ops].sort((a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character);
  return chain.map((o, i) => ({ id: o.id, label: o.label, inputs: i > 0 ? [chain[i - 1].id] : [], rate: o.rate }));
}

function drawGraph(report: ReportResult): SVGElement {
  const nodes = graphOf(report);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const layer = new Map<string, number>();
  const depth = (id: string, seen = new Set<string>()): number => {
    if (layer.has(id)) return layer.get(id)!;
    if (seen.has(id)) return 0;
    seen.add(id);
    const n = byId.get(id);
    const d = n && n.inputs.length ? 1 + Math.max(...n.inputs.filter((i) => byId.has(i)).map((i) => depth(i, seen)), -1) : 0;
    layer.set(id, d);
    return d;
  };
  nodes.forEach((n) => depth(n.id));
  const columns: GraphNode[][] = [];
  for (const n of nodes) (columns[layer.get(n.id)!] ??= []).push(n);
  // Top to bottom, source first: a report panel beside the editor is narrow and tall.
  const W = 190,
    H = 44,
    GX = 16,
    GY = 26;
  const pos = new Map<string, { x: number; y: number }>();
  columns.forEach((layerOps, li) => layerOps.forEach((n, i) => pos.set(n.id, { x: 10 + i * (W + GX), y: 10 + li * (H + GY) })));
  const width = 20 + Math.max(1, ...columns.map((c) => c.length)) * (W + GX) - GX;
  const height = 20 + columns.length * (H + GY) - GY;
  const critical = new Set(report.criticalPath);
  const bottleneck = report.analysis?.bottleneck.opId ?? report.pipeline.ops.find((o) => o.severity === 'bottleneck')?.id;
  const g = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'Operator graph' });
  for (const n of nodes) {
    for (const input of n.inputs) {
      const a = pos.get(input),
        b = pos.get(n.id);
      if (!a || !b) continue;
      const onPath = critical.has(input) && critical.has(n.id);
      g.append(svg('path', { class: `edge${onPath ? ' critical' : ''}`, d: `M${a.x + W / 2},${a.y + H} C${a.x + W / 2},${a.y + H + GY / 2} ${b.x + W / 2},${b.y - GY / 2} ${b.x + W / 2},${b.y}` }));
    }
  }
  for (const n of nodes) {
    const p = pos.get(n.id)!;
    const cls = ['node', critical.has(n.id) ? 'critical' : '', n.id === bottleneck ? 'bottleneck' : ''].filter(Boolean).join(' ');
    const group = svg('g', { class: cls, transform: `translate(${p.x},${p.y})`, tabindex: 0 });
    group.append(svg('rect', { width: W, height: H, rx: 4 }));
    group.append(svg('text', { x: 8, y: 18 }, n.label.length > 26 ? `${n.label.slice(0, 25)}…` : n.label));
    group.append(svg('text', { x: 8, y: 36, class: 'sub' }, `${formatRate(n.rate)}${n.id === bottleneck ? ' · bottleneck' : ''}`));
    group.append(svg('title', {}, `${n.label} (${n.id})`));
    group.addEventListener('click', () => vscode.postMessage({ type: 'reveal', opId: n.id }));
    g.append(group);
  }
  return g;
}

function drawBars(report: ReportResult): HTMLElement {
  const a = report.analysis;
  const ops = a?.ops ?? [];
  const labels = new Map(report.pipeline.ops.map((o) => [o.id, o.label]));
  const predicted = report.plan?.predictedRate;
  // Rates span orders of magnitude (a batch allows 10× what the map does), so the axis is logarithmic.
  const finite = (v: number) => Number.isFinite(v) && v > 0;
  const values = [...ops.flatMap((o) => [o.measuredRate / Math.max(o.visitRatio, 1e-9), o.bound]), predicted ?? 0, a?.measuredRate ?? 0].filter(finite);
  const lo = Math.log10(Math.max(1e-3, Math.min(...values) / 2));
  const hi = Math.log10(Math.max(...values) * 2);
  const pct = (v: number) => `${Math.max(0, Math.min(100, ((Math.log10(Math.max(v, 1e-9)) - lo) / Math.max(hi - lo, 1e-9)) * 100)).toFixed(1)}%`;
  const grid = el('div', { class: 'bars' });
  for (const o of ops) {
    const rootRate = o.measuredRate / Math.max(o.visitRatio, 1e-9);
    const bar = el('div', { class: `bar${o.isBottleneck ? ' bottleneck' : ''}` });
    const m = el('div', { class: 'measured' });
    m.style.width = pct(rootRate);
    bar.append(m);
    if (Number.isFinite(o.bound)) {
      const b = el('div', { class: 'bound', title: `bound ${rate(o.bound)}` });
      b.style.left = pct(o.bound);
      bar.append(b);
    }
    if (predicted !== undefined) {
      const p = el('div', { class: 'predicted', title: `predicted ${rate(predicted)}` });
      p.style.left = pct(predicted);
      bar.append(p);
    }
    grid.append(el('span', {}, labels.get(o.opId) ?? o.opId), bar, el('span', { class: 'muted' }, `${rate(rootRate)} / ${Number.isFinite(o.bound) ? rate(o.bound) : '∞'}`));
  }
  const legend = el(
    'div',
    { class: 'legend' },
    el('span', {}, el('i', { class: 'm' }), `measured (pipeline ${unit}/s)`),
    el('span', {}, el('i', { class: 'b' }), 'bound (model)'),
    el('span', {}, el('i', { class: 'p' }), 'predicted with fixes'),
    el('span', {}, 'log scale'),
  );
  return el('div', {}, legend, grid);
}

function drawHistory(report: ReportResult): HTMLElement {
  if (report.history.length === 0) return el('p', { class: 'muted' }, 'No earlier profiles yet: apply a fix and profile again to compare.');
  const max = Math.max(...report.history.map((h) => Math.max(h.rate, h.predictedRate ?? 0)));
  const table = el('table', { class: 'history' }, el('tr', {}, el('th', {}, 'When'), el('th', {}, 'Knobs'), el('th', {}, 'Measured'), el('th', {}, 'Bound'), el('th', {}, 'Predicted')));
  const first = report.history[0].rate;
  for (const h of report.history) {
    const bar = el('span', { class: 'hbar' });
    bar.style.width = `${Math.round((h.rate / max) * 120)}px`;
    const speedup = first > 0 ? ` (${formatSpeedup(h.rate / first)})` : '';
    table.append(el('tr', {}, el('td', {}, new Date(h.at).toLocaleTimeString()), el('td', {}, h.label), el('td', {}, bar, `${rate(h.rate)}${speedup}`), el('td', {}, rate(h.bound)), el('td', {}, rate(h.predictedRate))));
  }
  return table;
}

/**
 * The plan's verification: the verdict in the lens's words, the cores note, every configuration
 * measured (as written against what was kept, with the spread), what was dropped and why, and
 * the plan's notes.
 */
function drawAdvice(report: ReportResult): HTMLElement {
  const a = report.advice!;
  const box = el('div', { class: `advice ${a.verdict}` });
  box.append(el('p', { class: 'headline' }, a.verdict === 'unverified' ? `Fixes: ${a.headline} — the model's estimate; no run measured it.` : `Fixes: ${a.headline}`));
  if (a.coresNote) box.append(el('p', { class: 'muted' }, `Cores: ${a.coresNote}`));
  if (a.summary && a.summary !== a.headline) box.append(el('p', {}, a.summary));
  if (a.tried.length > 0) {
    const table = el('table', { class: 'tried' }, el('tr', {}, el('th', {}, 'Configuration'), el('th', {}, 'Measured'), el('th', {}, 'Speed-up'), el('th', {}, 'Predicted'), el('th', {}, '')));
    for (const t of a.tried) {
      table.append(el('tr', t.kept ? { class: 'kept' } : {}, el('td', {}, t.label), el('td', {}, t.measured), el('td', {}, t.speedup ?? '1×'), el('td', {}, t.predicted ?? '–'), el('td', {}, t.kept ? 'kept' : '')));
    }
    box.append(table);
    if (a.seconds !== undefined) box.append(el('p', { class: 'muted' }, `Verification runs took ${formatElapsed(a.seconds)}. Rates are mean ± half the 95% interval over the runs' windows.`));
  }
  if (a.dropped.length > 0) {
    const list = el('ul', {});
    for (const d of a.dropped) list.append(el('li', {}, `${d.title}: ${d.why}`));
    box.append(el('p', {}, 'Dropped by verification (never offered):'), list);
  }
  if (a.notes.length > 0) {
    const list = el('ul', { class: 'notes' });
    for (const n of a.notes) list.append(el('li', {}, n));
    box.append(el('p', {}, 'Notes:'), list);
  }
  return box;
}

/**
 * A training run's verdict (the server's words, `PipelineSummary.trainer`): the glance line the lens
 * shows, the model's sentence, the rate the plan targets and what the plan does for the trainer.
 */
function drawTrainer(report: ReportResult): HTMLElement | undefined {
  const t = report.pipeline.trainer;
  if (!t) return undefined;
  return el('div', { class: 'trainer' }, el('p', { class: 'headline' }, `Training loop: ${t.headline}`), el('p', {}, t.verdict), el('p', {}, t.target), el('p', {}, t.plan));
}

function render(report: ReportResult): void {
  const p = report.pipeline;
  unit = p.unit ?? 'el';
  const metric = (value: string, label: string) => el('div', { class: 'metric' }, el('span', { class: 'value' }, value), el('span', { class: 'label' }, label));
  const parts: Node[] = [el('h1', {}, `Pipeline ${p.name}`)];
  if (p.error) parts.push(el('p', { class: 'error' }, `The last profile failed: ${p.error}`));
  if (p.stale) parts.push(el('p', { class: 'muted' }, 'The file changed since this profile: numbers are from the earlier version. Profile again before applying fixes.'));
  parts.push(el('div', { class: 'summary' }, metric(rate(p.rate), 'measured'), metric(rate(p.bound), 'bound (model)'), metric(rate(p.predictedRate), 'predicted with every fix')));
  // For a training run the loop's verdict comes first: whether the trainer waits is the question.
  const trainer = drawTrainer(report);
  if (trainer) parts.push(trainer);
  if (report.analysis) parts.push(el('div', { class: 'reason' }, `Bottleneck (${report.analysis.bottleneck.resource}): ${report.analysis.bottleneck.reason}`));
  const memory = memoryLine(report);
  if (memory) parts.push(memory);
  // The first batch and the epochs, predicted: with the plan when it changes something.
  if (report.analysis) for (const line of timeLines(report.analysis.time, report.plan ?? { changes: [] })) parts.push(el('p', { class: 'time' }, line));
  if (report.advice) parts.push(drawAdvice(report));
  const profileBtn = el('button', {}, 'Profile again');
  profileBtn.addEventListener('click', () => vscode.postMessage({ type: 'profile' }));
  const fixBtn = el('button', { class: 'secondary' }, 'Apply all Plumber fixes');
  fixBtn.addEventListener('click', () => vscode.postMessage({ type: 'applyAllFixes' }));
  const offersFixes = report.advice ? report.advice.verdict === 'gain' || report.advice.verdict === 'unverified' : Boolean(report.plan?.changes.length);
  parts.push(el('p', {}, profileBtn, ...(offersFixes && !p.stale ? [fixBtn] : [])));
  // Before/after first: after a fix, the question is whether it helped.
  parts.push(el('h2', {}, 'History'), drawHistory(report));
  parts.push(
    el('h2', {}, 'Operator graph'),
    el('p', { class: 'muted' }, 'The critical path is outlined in orange, the bottleneck in red. Click an operator to go to its line.'),
    el('div', { class: 'graph' }, drawGraph(report) as unknown as Node),
  );
  if (report.analysis) parts.push(el('h2', {}, 'Rates against the bound'), drawBars(report));
  if (report.plan?.changes.length && offersFixes) {
    const list = el('ul', {});
    for (const c of report.plan.changes) list.append(el('li', {}, `${c.kind} at ${labelOf(report, c.opId)}: ${c.reason}`));
    parts.push(el('h2', {}, 'Plan'), list);
  }
  root.replaceChildren(...parts);
}

/** Peak memory, projected: as written, and with the plan when it changes anything. */
function memoryLine(report: ReportResult): HTMLElement | undefined {
  const asWritten = report.analysis?.memory;
  if (!asWritten) return undefined;
  const planned = report.plan?.changes.length ? report.plan.memory : undefined;
  return el('p', { class: 'memory' }, `Memory: ${peakMemoryWords(asWritten)}${planned ? `; with the plan ${peakMemoryWords(planned)}` : ''}; budget ${formatBytes(asWritten.budgetBytes)}`);
}

function labelOf(report: ReportResult, opId: string): string {
  return report.pipeline.ops.find((o) => o.id === opId)?.label ?? opId;
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const m = event.data;
  if (m.type === 'report') {
    vscode.setState(m.report);
    render(m.report);
  } else if (m.type === 'error') {
    root.replaceChildren(el('p', { class: 'error' }, m.message));
  }
});

const saved = vscode.getState() as ReportResult | undefined;
if (saved) render(saved);
vscode.postMessage({ type: 'ready' });
