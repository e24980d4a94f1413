/**
 * Code lenses: on each profiled operator "1.2k el/s · 61% CPU · bottleneck: …", and on each
 * pipeline's head its rate and bound, "Profile", and "Apply all Plumber fixes (est. 1.8×,
 * verified 1.7× ± 0.1)" — or, when verification measured nothing faster, "no reliable gain on this
 * machine right now" and no fix. Lenses are cheap to list (ranges and data only) and filled in on
 * resolve.
 */
import { timeShort } from '../../shared/timeWords';
import type { Resource } from '../../shared/analysis';
import type { CodeLens, Command } from 'vscode-languageserver';
import type { Settings } from '../../shared/settings';
import { labelOf, type PipelineView } from '../views';
import { Commands } from '../../shared/commands';
import { STALE_WORDS, compact, formatShare, rateWords } from '../../shared/words';
import { applyAllTitle, offeredChanges, planFigure, verdictOf } from './advice';
import { opRateWords } from './glance';
import { trainerLenses } from './trainerLens';
import { shownAt } from '../../engine/join';

/** What an unresolved lens stands for; carried in `CodeLens.data`. */
export interface LensData {
  uri: string;
  pipeline: string;
  /** `verdict`: the plan offers no fix because verification found none faster (or failed). */
  target: 'summary' | 'profile' | 'fixAll' | 'verdict' | 'op';
  opId?: string;
}

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
      if (v.record) out.push({ range, data: data('summary') }, ...trainerLenses(v));
      // A stale summary already says "profile again" and profiles on a click.
      if (v.graph.exported && !(v.stale && v.record && !v.record.profile.error)) out.push({ range, data: data('profile') });
      const plan = v.record && !v.record.profile.error ? v.record.plan : undefined;
      if (plan && !v.stale) {
        const verdict = verdictOf(plan);
        if (offeredChanges(plan).length > 0) out.push({ range, data: data('fixAll') });
        else if (verdict === 'no-gain' || verdict === 'error') out.push({ range, data: data('verdict') });
      }
    }
    // Heat bars (drawn by the client) take the operator lenses' place, so the code does not move.
    if (settings.operators && !settings.heatBars && v.record && !v.record.profile.error) {
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

/**
 * The words on one operator's lens (also used by inlay hints): its rate and bound in the
 * pipeline's unit, its CPU share and whether it is the bottleneck — or only "stale — profile
 * again" when the document changed since the profile, so old numbers are not read as current.
 */
export function opSummary(v: PipelineView, opId: string, withReason: boolean): string | undefined {
  const joined = v.byGraphId.get(opId);
  if (!joined) return undefined;
  if (v.stale) return STALE_WORDS;
  const parts: string[] = [];
  // A stage on a cluster says so first: "cluster: 4 workers · 180 el/s".
  const workers = joined.prof.placement === 'remote' ? joined.prof.counters.remoteWorkers : undefined;
  if (workers !== undefined && workers > 0) parts.push(`cluster: ${workers} worker${workers === 1 ? '' : 's'}`);
  const an = joined.an;
  if (an) {
    parts.push(opRateWords(an, v.unit ?? 'el'), `${formatShare(an.cpuShare)} CPU`);
  } else {
    const c = joined.prof.counters;
    const seconds = v.record?.profile.run.seconds ?? 0;
    if (seconds > 0) parts.push(rateWords(c.produced / seconds));
  }
  const bottleneck = v.record?.analysis?.bottleneck;
  if ((v.record && bottleneck && shownAt(v.record.profile, bottleneck.opId) === joined.prof.id) || an?.isBottleneck) {
    // The lens names the binding resource in a few words; the full sentence is in the hover and
    // the diagnostic, where it has room (a lens line is cut at the editor's width).
    parts.push(withReason && bottleneck ? `bottleneck: ${bottleneck.waiting ? 'waiting, one element at a time' : RESOURCE_WORDS[bottleneck.resource]}` : 'bottleneck');
  }
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
        command = { title: `Pipeline: profile failed — ${msg.length > 80 ? `${msg.slice(0, 79)}…` : msg}`, command: Commands.showReport, arguments: args };
      } else if (v.stale) {
        // The old numbers are hidden, not shown beside the word: a glance would read them as current.
        command = { title: `Pipeline: ${STALE_WORDS}`, command: Commands.profilePipeline, arguments: args };
      } else {
        const time = rec.analysis.time ? ` · ${timeShort(rec.analysis.time)}` : '';
        command = { title: `Pipeline ${rateWords(rec.analysis.measuredRate, v.unit ?? 'el')} · bound ${compact(rec.analysis.bound)}${time}`, command: Commands.showReport, arguments: args };
      }
      break;
    }
    case 'profile':
      command = { title: v.record ? 'Profile again' : 'Profile', command: Commands.profilePipeline, arguments: args };
      break;
    case 'fixAll': {
      const plan = v.record?.plan;
      command = { title: plan ? applyAllTitle(plan) : 'Apply all Plumber fixes', command: Commands.applyAllFixes, arguments: args };
      break;
    }
    case 'verdict': {
      const figure = (v.record?.plan && planFigure(v.record.plan)) || 'no fix offered';
      command = { title: figure.length > 90 ? `${figure.slice(0, 89)}…` : figure, command: Commands.showReport, arguments: args };
      break;
    }
    case 'op': {
      const summary = (data.opId && opSummary(v, data.opId, true)) || 'not measured';
      // A lens that shares its line — with the pipeline's head, or with another measured operator
      // (`tag(fetch(read()))`, several stages on one line) — names its operator, so its numbers are
      // not read as another's.
      const joined = data.opId ? v.byGraphId.get(data.opId) : undefined;
      const op = data.opId ? v.graph.ops.find((o) => o.id === data.opId) : undefined;
      const line = lens.range.start.line;
      const shared = line === v.graph.head.range.start.line || v.graph.ops.some((o) => o !== op && o.file === op?.file && o.name.range.start.line === line && v.byGraphId.has(o.id));
      command = { title: shared && joined && op ? `${labelOf(v, op)}: ${summary}` : summary, command: v.stale ? Commands.profilePipeline : Commands.showReport, arguments: args };
      break;
    }
  }
  return { ...lens, command };
}
