/** What `plumber profile` and `plumber plan` print for people. */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { noChangeReason, type Analysis, type Plan } from '../shared/analysis';
import type { OpProfile, Profile } from '../shared/profile';
import { changeTitle, describeOp } from '../model';
import { rootRateOf, rootUnit } from '../shared/units';
import { callLabel, callTextAt } from '../shared/labels';
import { timeLines } from '../shared/timeWords';
import { forOtherMachine, formatCount, formatElapsed, formatSpeedup, speedupOver, targetWords } from '../shared/words';
import { commandName, thisInvocation } from './help';
import { memoryLines } from './memoryLines';
import { overridesToFlags } from './overrides';
import { fmtPerElement, fmtRate, fmtRateIn, fmtShare, renderTable } from './table';

/** The pipeline's measured root rate. */
export function rootRate(profile: Profile): number {
  return profile.run.seconds > 0 ? profile.run.elements / profile.run.seconds : 0;
}

/** Operators from the source towards the root (the order a person reads the chain in). */
function inChainOrder(profile: Profile): OpProfile[] {
  const byId = new Map(profile.ops.map((o) => [o.id, o]));
  const seen = new Set<string>();
  const out: OpProfile[] = [];
  const visit = (id: string): void => {
    if (seen.has(id)) return;
    seen.add(id);
    const op = byId.get(id);
    if (!op) return;
    for (const input of op.inputs) visit(input);
    out.push(op);
  };
  visit(profile.pipeline.rootId);
  for (const op of profile.ops) visit(op.id);
  return out;
}

/**
 * Each operator's label as its source writes it (`range(0, 1_000_000)`), read from its call site;
 * the model's label (`range`) when the file or the call cannot be read.
 */
export function sourceLabels(profile: Profile, read: (file: string) => string | undefined = readSource): Map<string, string> {
  const out = new Map<string, string>();
  const texts = new Map<string, string | undefined>();
  for (const op of profile.ops) {
    if (!op.site) continue;
    if (!texts.has(op.site.file)) texts.set(op.site.file, read(op.site.file));
    const text = texts.get(op.site.file);
    if (text === undefined) continue;
    const lines = text.split('\n', op.site.line);
    if (lines.length < op.site.line) continue;
    const offset = lines.slice(0, op.site.line - 1).reduce((n, l) => n + l.length + 1, 0) + op.site.column - 1;
    const call = callTextAt(text, offset);
    const label = call && callLabel(call);
    if (label) out.set(op.id, label);
  }
  return out;
}

function readSource(file: string): string | undefined {
  try {
    return readFileSync(file.startsWith('file:') ? new URL(file) : file, 'utf8');
  } catch {
    return undefined;
  }
}

function runLine(profile: Profile): string {
  const r = profile.run;
  const how = r.converged ? 'converged' : r.endReason === 'exhausted' ? 'source exhausted' : 'budget reached';
  const name = `${path.basename(profile.pipeline.file)} › ${profile.pipeline.exportName}`;
  const over = Object.keys(r.overrides).length > 0 ? ` with ${Object.keys(r.overrides).length} override(s)` : '';
  return `${name}: ${fmtRate(rootRate(profile))} (${formatCount(r.elements)} elements in ${formatElapsed(r.seconds, 2)} after ${formatElapsed(r.warmupSeconds)} warm-up, ${how}${over})`;
}

/** The profile as a table: what each operator did in the measured window. */
export function renderProfile(profile: Profile): string {
  const rows = inChainOrder(profile).map((op) => {
    const c = op.counters;
    const per = c.produced > 0 ? 1 / c.produced : 0;
    return [
      describeOp(op),
      op.id,
      fmtRate(c.produced / Math.max(profile.run.seconds, 1e-9)),
      fmtPerElement(c.selfSeconds * per),
      fmtPerElement(c.workerCpuSeconds * per),
      c.asyncCalls > 0 ? fmtPerElement(c.asyncLatencySeconds / c.asyncCalls) : '-',
      op.placement,
    ];
  });
  const table = renderTable(['operator', 'id', 'rate', 'main/elem', 'worker/elem', 'latency', 'runs on'], rows);
  const m = profile.machine;
  const machine = `${m.cores} cores, Node ${m.nodeVersion}, main thread CPU ${formatElapsed(profile.run.mainThreadCpuSeconds, 2)}, process CPU ${formatElapsed(profile.run.processCpuSeconds, 2)}`;
  return `${runLine(profile)}\n\n${table}\n\n${machine}`;
}

/** Why a plan carries no verification, for the line that would show the verified figure. */
export type Unverified = 'no-verify' | 'saved-profile';

/**
 * The plan's figure in one line: "est. 1.8×, verified 1.7× ± 0.1", "No reliable gain on this
 * machine right now: …", or the estimate with why it was not verified.
 */
export function verdictLine(plan: Plan, unverified?: Unverified): string {
  const est = `est. ${speedupOver(plan.predictedRate, plan.currentRate) ?? '–'}`;
  const v = plan.verification;
  const why = `(${unverified === 'saved-profile' ? 'saved profile' : unverified === 'no-verify' ? '--no-verify' : 'nothing to verify'})`;
  // A plan for other cores: "est. 7.3× predicted for 8 cores — verified here on 2 cores: 1.8× ± 0.3", or "— not verifiable here (this machine has 2)".
  const t = plan.target;
  if (forOtherMachine(t) && (!t.verifiable || !v || v.verdict === 'gain')) {
    const words = targetWords(t, v?.verdict === 'gain' ? formatSpeedup(v.speedup, v.speedupHalfWidth) : undefined)!;
    // Verification dropped every change (and the estimate with them): what it measured here, starved, follows the label.
    if (!t.verifiable && v && v.verdict !== 'gain') return `${words.charAt(0).toUpperCase()}${words.slice(1)}; measured here: ${v.summary}`;
    const label = `${est} ${words}`;
    return t.verifiable && !v ? `${label} ${why}` : label;
  }
  if (!v) return `${est}, not verified ${why}`;
  if (v.verdict === 'gain') return `${est}, ${v.summary}`;
  if (v.verdict === 'no-gain') return `No reliable gain on this machine right now: ${v.summary.replace(/^no reliable gain on this machine right now: /, '')}`;
  return `${v.summary.charAt(0).toUpperCase()}${v.summary.slice(1)}`;
}

/** The changes verification dropped, one line each with why ("measured 0.8× alone"). */
export function droppedLines(plan: Plan, profile: Profile, last: Profile = profile): string[] {
  const dropped = plan.verification?.dropped ?? [];
  if (dropped.length === 0) return [];
  const title = (c: Plan['changes'][number]): string => changeTitle(c, last.ops.some((o) => o.id === c.opId) ? last : profile);
  return dropped.map((d) => `  • ${title(d.change)} — ${d.why}`);
}

/** The model found no change worth proposing (not: verification dropped what it found, which its verdict explains). */
export function modelFoundNothing(plan: Plan): boolean {
  return plan.changes.length === 0 && plan.verification?.verdict !== 'no-gain' && plan.verification?.verdict !== 'error';
}

/** The plan as a table plus the bottleneck, the prediction, the verified figure and the command that tries it. */
export function renderPlan(profile: Profile, analysis: Analysis, plan: Plan, file: string, last: Profile = profile, o: { unverified?: Unverified; command?: string } = {}): string {
  const byOp = new Map(analysis.ops.map((a) => [a.opId, a]));
  const changesByOp = new Map<string, string[]>();
  // Titles come from the last pass's profile: it also holds the operators a plan inserted.
  const title = (c: Plan['changes'][number]): string => changeTitle(c, last.ops.some((o) => o.id === c.opId) ? last : profile);
  for (const c of plan.changes) changesByOp.set(c.opId, [...(changesByOp.get(c.opId) ?? []), title(c)]);
  // Every rate in the pipeline's unit (root elements per second), the op's own count beside it,
  // and the rows ranked by the bound: the first row is what holds the pipeline back, the next
  // is what would hold it back after that.
  const unit = rootUnit(profile);
  const labels = sourceLabels(profile);
  const ranked = inChainOrder(profile)
    .map((op, index) => ({ op, index, a: byOp.get(op.id) }))
    .sort((x, y) => (x.a?.bound ?? Infinity) - (y.a?.bound ?? Infinity) || x.index - y.index);
  const rows = ranked.map(({ op, a }) => [
    labels.get(op.id) ?? describeOp(op),
    op.id,
    fmtRate(a?.measuredRate),
    fmtRateIn(a ? rootRateOf(a) : undefined, unit),
    fmtRateIn(a?.bound, unit),
    fmtShare(a?.cpuShare),
    a?.isBottleneck ? '◀ bottleneck' : '',
    (changesByOp.get(op.id) ?? []).join('; '),
  ]);
  const table = renderTable(['operator', 'id', 'own rate', `= ${unit}/s`, 'bound', 'CPU', '', 'recommended change'], rows);
  const speedup = speedupOver(plan.predictedRate, plan.currentRate);
  const gain = speedup ? ` (${speedup})` : '';
  const lines = [runLine(profile), '', table, ''];
  if (analysis.coresNote) lines.push(`Cores: ${analysis.coresNote}`);
  lines.push(`Bottleneck: ${analysis.bottleneck.reason}`, `Measured ${fmtRateIn(analysis.measuredRate, unit)}; the model's bound with the current knobs is ${fmtRateIn(analysis.bound, unit)}.`);
  if (analysis.unexplained) lines.push(`Unexplained: ${analysis.unexplained}`);
  lines.push(...memoryLines(analysis, plan));
  if (modelFoundNothing(plan)) {
    lines.push(`No change is predicted to help: ${noChangeReason(analysis)}${analysis.unexplained ? ' (above)' : ''}.`);
  } else if (plan.changes.length === 0) {
    lines.push(verdictLine(plan, o.unverified));
  } else {
    lines.push(`Predicted after the plan: ${fmtRateIn(plan.predictedRate, unit)}${gain}. What would limit it then: ${plan.predictedBottleneck.reason}`);
    lines.push(`Plan: ${verdictLine(plan, o.unverified)}.`);
    lines.push('', 'Changes:');
    for (const c of plan.changes) lines.push(`  • ${title(c)} — ${c.reason}`);
  }
  lines.push(...timeLines(analysis.time, plan));
  const dropped = droppedLines(plan, profile, last);
  if (dropped.length > 0) lines.push('', 'Dropped after verification:', ...dropped);
  for (const note of plan.notes ?? []) lines.push(`Note: ${note}`);
  // A reorder is an edit of the source, which no override makes (and its other knobs are the reshaped pipeline's).
  if (plan.changes.length > 0 && !plan.changes.some((c) => c.kind === 'reorder')) {
    const flags = overridesToFlags(plan.overrides, profile);
    // As the person would type it here: `npx plumber` from a project that installed it locally.
    const command = o.command ?? commandName(thisInvocation());
    if (flags.length > 0) lines.push('', 'Try the plan without editing the file:', `  ${command} profile ${file} ${flags.join(' ')}`);
  }
  return lines.join('\n');
}

/** The chains of `file` Plumber saw but did not follow, one line each with where and why: "streams.ts:7: …". */
export function renderStops(file: string, stops: ReadonlyArray<{ range: { start: { line: number } }; message: string }>): string {
  const name = path.basename(file);
  return `${stops.map((s) => `plumber: ${name}:${s.range.start.line + 1}: ${s.message}`).join('\n')}\n`;
}
