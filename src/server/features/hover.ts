/**
 * Hover on an operator: what the source says (knobs, function, randomness) and, once profiled, the
 * measured numbers, the model's bound for it with its reasoning, and the fix the plan proposes.
 */
import type { Hover, Position } from 'vscode-languageserver';
import type { GraphOp } from '../../engine/graph/types';
import { labelOf, type PipelineView } from '../views';
import type { OpProfile } from '../../shared/profile';
import { STALE_WORDS, compact, forOtherMachine, formatSeconds, formatShare, rateWords } from '../../shared/words';
import { coresWhatIf, opRateWords, whatIf, whatIfWords } from './glance';
import { offerTitle, offeredChanges } from './advice';
import { shownAt } from '../../engine/join';
import { codeSpan, escapeMarkdown as esc } from './markdown';
import { opMemoryWords } from '../../shared/memoryWords';

function contains(op: GraphOp, pos: Position): boolean {
  // On a knob written on its own line (a multi-line options object): the hover is about that knob's operator.
  for (const knob of Object.values(op.knobs)) {
    if (knob.state === 'absent') continue;
    const k = knob.span.range;
    if (pos.line === k.start.line && pos.character >= k.start.character && (pos.line < k.end.line || pos.character <= k.end.character)) return true;
  }
  const r = op.own.range;
  if (pos.line < r.start.line || pos.line > r.end.line) return false;
  if (pos.line === r.start.line && pos.character < r.start.character) return false;
  // Only the operator's name and its own line: a hover inside a long inline function is about that code.
  return pos.line === r.start.line;
}

function knobLines(op: GraphOp): string[] {
  const out: string[] = [];
  for (const [k, knob] of Object.entries(op.knobs)) {
    if (knob.state === 'literal') out.push(codeSpan(`${k}: ${knob.text}`));
    else if (knob.state === 'expression') out.push(`${codeSpan(`${k}: ${knob.text}`)} (computed; Plumber will not edit it)`);
  }
  return out;
}

/** The knobs of an operator the what-if varies, with the value it ran with. */
function variedKnobs(prof: OpProfile): Array<{ knob: string; current: number }> {
  const out: Array<{ knob: string; current: number }> = [];
  const k = prof.knobs;
  if (prof.kind === 'map' || prof.kind === 'filter' || prof.kind === 'flatMap' || prof.kind === 'interleave') {
    out.push({ knob: 'parallelism', current: k.resolvedParallelism ?? (typeof k.parallelism === 'number' ? k.parallelism : 1) });
  }
  if (prof.kind === 'interleave' && k.cycleLength !== undefined) out.push({ knob: 'cycleLength', current: k.cycleLength });
  if (prof.kind === 'prefetch' && k.bufferSize !== undefined) out.push({ knob: 'bufferSize', current: k.bufferSize });
  return out;
}

/**
 * "What if" for each knob of the operator: the model's predicted pipeline rate for a few values,
 * from the profile as it ran. Predicted, never measured: the lines say so.
 */
function whatIfLines(v: PipelineView, prof: OpProfile): string[] {
  const rec = v.record;
  if (!rec || v.stale) return [];
  const lines: string[] = [];
  // A plan for a target machine: the knobs answer for its cores, and a line answers for the cores themselves.
  const target = forOtherMachine(rec.plan?.target) ? rec.plan?.target : undefined;
  for (const { knob, current } of variedKnobs(prof)) {
    const rows = whatIf(rec.profile, prof.id, knob, current, target ? { cores: target.cores } : {});
    if (rows && rows.length > 1) lines.push(`- ${whatIfWords(knob, current, rows, v.unit ?? 'el')}`);
  }
  const cores = coresWhatIf(rec.profile, rec.plan, v.unit ?? 'el');
  if (cores) lines.push(`- ${cores}`);
  return lines.length > 0 ? ['', '**What if** (predicted by the model from this profile, not measured):', ...lines] : [];
}

/** The hover for the operator under `pos` in `file`, if any. */
export function hover(views: PipelineView[], file: string, pos: Position): Hover | null {
  for (const v of views) {
    const op = v.graph.ops.find((o) => o.file === file && contains(o, pos));
    if (!op) continue;
    // Every piece of text from the workspace goes through esc() or codeSpan(): see markdown.ts.
    const lines: string[] = [`**${esc(labelOf(v, op))}** · pipeline ${codeSpan(v.graph.name)} · op ${codeSpan(op.id)}`];
    const knobs = knobLines(op);
    if (knobs.length > 0) lines.push(`Knobs: ${knobs.join(', ')}`);
    if (op.fn) {
      const where = op.fn.exportName ? `exported as ${codeSpan(op.fn.exportName)} (can run in worker threads)` : op.fn.form === 'inline' ? 'inline (cannot move to worker threads)' : 'not exported';
      const sync = op.fn.async === undefined ? '' : op.fn.async ? 'async, ' : 'synchronous, ';
      lines.push(`Function: ${op.fn.name ? codeSpan(op.fn.name) : 'anonymous'} — ${sync}${where}`);
    }
    if (op.random) lines.push(`Random: ${esc(op.random.detail)}. Never cache after it.`);
    const rec = v.record;
    const joined = v.byGraphId.get(op.id);
    if (!rec) {
      lines.push('', '_Not profiled yet: run “Plumber: Profile Pipeline” for measured numbers._');
    } else if (rec.profile.error) {
      lines.push('', `_The last profile failed: ${esc(rec.profile.error.message)}_`);
    } else if (joined) {
      const c = joined.prof.counters;
      const an = joined.an;
      // The what-if first: on a knob, it is what the person is asking about (a long hover scrolls).
      lines.push(...whatIfLines(v, joined.prof));
      lines.push('', v.stale ? `**${STALE_WORDS.charAt(0).toUpperCase()}${STALE_WORDS.slice(1)}**: measured before your last edit, so these numbers describe the old code:` : '**Measured**:');
      if (an) {
        lines.push(`- ${opRateWords(an, v.unit ?? 'el')} · ${formatShare(an.cpuShare)} of CPU · ${an.placement} thread${an.placement === 'worker' ? 's' : ''}`);
        lines.push(`- ${formatSeconds(an.cpuPerRootElement)} CPU per pipeline element (visit ratio ${compact(an.visitRatio)})`);
        lines.push(`- Bound (model): ${rateWords(an.bound, v.unit ?? 'el')}${an.isBottleneck ? ' — **the bottleneck**' : ''}`);
        if (an.readerParts) lines.push(`- Reader: ${esc(an.readerParts)}`);
        const memory = opMemoryWords(rec.analysis?.memory, joined.prof.id);
        if (memory) lines.push(`- Memory: ${esc(memory)}`);
      }
      lines.push(`- ${c.calls} calls, ${formatSeconds(c.selfSeconds)} main-thread, ${formatSeconds(c.workerCpuSeconds)} worker CPU, ${formatSeconds(c.waitSeconds)} waited on`);
      const a = rec.analysis;
      if (a && shownAt(rec.profile, a.bottleneck.opId) === joined.prof.id) lines.push('', `**Why:** ${esc(a.bottleneck.reason)}`);
      for (const b of a?.bounds ?? []) if (b.opId === joined.prof.id) lines.push(`- ${b.resource}: ${rateWords(b.rate, v.unit ?? 'el')} — ${esc(b.detail)}`);
      const plan = v.stale ? undefined : rec.plan;
      for (const ch of plan ? offeredChanges(plan) : []) if (ch.opId === joined.prof.id) lines.push('', `**${esc(offerTitle(ch, plan!, rec.profile))}** — ${esc(ch.reason)}`);
      for (const d of plan?.verification?.dropped ?? []) if (d.change.opId === joined.prof.id) lines.push('', `_Not offered: the plan's change here was dropped by verification (${esc(d.why)})._`);
    }
    return { contents: { kind: 'markdown', value: lines.join('\n') }, range: op.name.range };
  }
  return null;
}
