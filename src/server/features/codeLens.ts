/**
 * Code lenses: on each profiled operator "1.2k el/s · 61% CPU · bottleneck: …", and on each
 * pipeline's head its rate and bound, "Profile", and "Apply all Plumber fixes (est. 1.8×,
 * verified 1.7× ± 0.1)" — or, when verification measured nothing faster, "no reliable gain on this
 * machine right now" and no fix. Lenses are cheap to list (ranges and data only) and filled in on
 * resolve.
 */
import type { Resource } from '../../shared/analysis';
import type { CodeLens, Command } from 'vscode-languageserver';
import type { Settings } from '../../shared/settings';
import type { PipelineView } from '../views';
import { describeOp } from '../../model/describe';
import { compact, percent, rateText } from './format';
import { applyAllTitle, offeredChanges, planFigure, verdictOf } from './advice';

/** What an unresolved lens stands for; carried in `CodeLens.data`. */
export interface LensData {
  uri: string;
  pipeline: string;
  /** `verdict`: the plan offers no fix because verification found none faster (or failed). */
  target: 'summary' | 'profile' | 'fixAll' | 'verdict' | 'op';
  opId?: string;
}

/** Client command ids the lenses invoke (registered by the extension). */
export const COMMANDS = {
  profile: 'plumber.profilePipeline',
  fixAll: 'plumber.applyAllFixes',
  report: 'plumber.showReport',
} as const;

/** List the lenses of a document (unresolved: ranges and data). */
export function codeLenses(views: PipelineView[], file: string, settings: Settings['codeLens']): CodeLens[] {
  if (!settings.enabled) return [];
  const out: CodeLens[] = [];
  const seenOps = new Set<number>();
  for (const v of views) {
    const name = v.graph.name;
    const data = (target: LensData['target'], opId?: string): LensData => ({ uri: v.uri, pipeline: name, target, ...(opId ? { opId } : {}) });
    if (settings.pipelines) {
      const range = v.graph.head.range;
      if (v.record) out.push({ range, data: data('summary') });
      if (v.graph.exported) out.push({ range, data: data('profile') });
      const plan = v.record && !v.record.profile.error ? v.record.plan : undefined;
      if (plan && !v.stale) {
        const verdict = verdictOf(plan);
        if (offeredChanges(plan).length > 0) out.push({ range, data: data('fixAll') });
        else if (verdict === 'no-gain' || verdict === 'error') out.push({ range, data: data('verdict') });
      }
    }
    if (settings.operators && v.record && !v.record.profile.error) {
      for (const op of v.graph.ops) {
        if (op.file !== file || seenOps.has(op.name.start) || !v.byGraphId.has(op.id)) continue;
        seenOps.add(op.name.start);
        out.push({ range: op.name.range, data: data('op', op.id) });
      }
    }
  }
  return out;
}

/** What holds the pipeline back, in the few words a lens has room for. */
const RESOURCE_WORDS: Record<Resource, string> = {
  'main-thread': 'main thread',
  cpu: 'all cores busy',
  'sequential-op': 'one call at a time',
  'parallel-op': 'worker threads',
  latency: 'waiting, too few calls in flight',
  disk: 'disk bandwidth',
  libuv: 'libuv thread pool',
  source: 'source',
};

/** The words on one operator's lens (also used by inlay hints). */
export function opSummary(v: PipelineView, opId: string, withReason: boolean): string | undefined {
  const joined = v.byGraphId.get(opId);
  if (!joined) return undefined;
  const parts: string[] = [];
  const an = joined.an;
  if (an) {
    parts.push(rateText(an.measuredRate), `${percent(an.cpuShare)} CPU`);
  } else {
    const c = joined.prof.counters;
    const seconds = v.record?.profile.run.seconds ?? 0;
    if (seconds > 0) parts.push(rateText(c.produced / seconds));
  }
  const bottleneck = v.record?.analysis?.bottleneck;
  if (bottleneck?.opId === joined.prof.id || an?.isBottleneck) {
    // The lens names the binding resource in a few words; the full sentence is in the hover and
    // the diagnostic, where it has room (a lens line is cut at the editor's width).
    parts.push(withReason && bottleneck ? `bottleneck: ${RESOURCE_WORDS[bottleneck.resource]}` : 'bottleneck');
  }
  if (v.stale) parts.push('stale');
  return parts.length > 0 ? parts.join(' · ') : undefined;
}

/** Fill in a lens's command. Returns the lens unchanged (without command) when its pipeline is gone. */
export function resolveCodeLens(lens: CodeLens, views: PipelineView[]): CodeLens {
  const data = lens.data as LensData | undefined;
  const v = data ? views.find((x) => x.graph.name === data.pipeline) : undefined;
  if (!data || !v) return { ...lens, command: { title: 'Plumber: reopen the file to refresh', command: '' } };
  const args = [data.uri, data.pipeline];
  let command: Command;
  switch (data.target) {
    case 'summary': {
      const rec = v.record;
      if (!rec || rec.profile.error || !rec.analysis) {
        const msg = rec?.profile.error?.message ?? 'no analysis';
        command = { title: `Pipeline: profile failed — ${msg.length > 80 ? `${msg.slice(0, 79)}…` : msg}`, command: COMMANDS.report, arguments: args };
      } else {
        const stale = v.stale ? ' · stale' : '';
        command = { title: `Pipeline ${rateText(rec.analysis.measuredRate)} · bound ${compact(rec.analysis.bound)}${stale}`, command: COMMANDS.report, arguments: args };
      }
      break;
    }
    case 'profile':
      command = { title: v.record ? 'Profile again' : 'Profile', command: COMMANDS.profile, arguments: args };
      break;
    case 'fixAll': {
      const plan = v.record?.plan;
      command = { title: plan ? applyAllTitle(plan) : 'Apply all Plumber fixes', command: COMMANDS.fixAll, arguments: args };
      break;
    }
    case 'verdict': {
      const figure = (v.record?.plan && planFigure(v.record.plan)) || 'no fix offered';
      command = { title: figure.length > 90 ? `${figure.slice(0, 89)}…` : figure, command: COMMANDS.report, arguments: args };
      break;
    }
    case 'op': {
      const summary = (data.opId && opSummary(v, data.opId, true)) || 'not measured';
      // A source written on the pipeline's head line shares that line's lenses: name it, so its
      // numbers are not read as the pipeline's.
      const joined = data.opId ? v.byGraphId.get(data.opId) : undefined;
      const onHead = lens.range.start.line === v.graph.head.range.start.line;
      command = { title: onHead && joined ? `${describeOp(joined.prof)}: ${summary}` : summary, command: COMMANDS.report, arguments: args };
      break;
    }
  }
  return { ...lens, command };
}
