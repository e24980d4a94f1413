/**
 * plumber/profile: run the runner on one pipeline (or every exported pipeline of a document), feed
 * the profile to the model, and keep the result per document. The runner executes workspace code,
 * so an untrusted workspace is refused with a sentence saying why.
 */
import { readFileSync } from 'node:fs';
import type { Analysis, ModelOptions, Plan } from '../../shared/analysis';
import type { Profile, RunnerMessage } from '../../shared/profile';
import type { ProfileOutcome, ProfileParams, ProfileResult } from '../../shared/protocol';
import type { Settings } from '../../shared/settings';
import { describeOp } from '../../model/describe';
import type { DocumentStore } from '../state';
import type { PipelineView } from '../views';

/** Options the runner accepts (a subset of `runProfile`'s). */
export interface RunOptions {
  file: string;
  exportName?: string;
  seconds?: number;
  maxElements?: number;
  timeoutSeconds?: number;
  memoryMB?: number;
  nodePath?: string;
  nodeArgs?: string[];
  signal?: AbortSignal;
  onProgress?(m: Extract<RunnerMessage, { type: 'progress' }>): void;
}

export interface ProfileDeps {
  trusted: boolean;
  settings: Settings;
  store: DocumentStore;
  /** The document's pipelines as the graph sees them now. */
  views(uri: string): PipelineView[];
  run(opts: RunOptions): Promise<Profile>;
  analyze(profile: Profile, opts: ModelOptions): Analysis;
  plan(profile: Profile, opts: ModelOptions): Plan;
  progress?(message: string, percentage?: number): void;
  signal?: AbortSignal;
}

export const UNTRUSTED =
  'Plumber does not run workspace code while the workspace is untrusted. Trust the workspace (Manage Workspace Trust) to profile pipelines; lenses and lints keep working without it.';

/** A short description of the knobs a run used, for the report's history ("map(decode) ×2, prefetch 4"). */
export function knobLabel(profile: Profile): string {
  const parts: string[] = [];
  for (const op of profile.ops) {
    const p = op.knobs.resolvedParallelism ?? (typeof op.knobs.parallelism === 'number' ? op.knobs.parallelism : undefined);
    if ((op.kind === 'map' || op.kind === 'filter' || op.kind === 'flatMap' || op.kind === 'interleave') && p !== undefined && p > 1) {
      parts.push(`${describeOp(op)} ×${p}${op.placement === 'worker' ? ' (workers)' : ''}`);
    }
    if (op.kind === 'prefetch') parts.push(`prefetch ${op.knobs.bufferSize ?? ''}`.trim());
    if (op.kind === 'cache') parts.push('cache');
  }
  return parts.length > 0 ? parts.join(', ') : 'defaults';
}

export function modelOptions(settings: Settings): ModelOptions {
  const opts: ModelOptions = {};
  if (settings.model.cores > 0) opts.cores = settings.model.cores;
  if (settings.model.memoryBudgetMB > 0) opts.memoryBudgetBytes = settings.model.memoryBudgetMB * 1024 * 1024;
  return opts;
}

/** Run the runner on the requested pipelines, one after another. Throws `UNTRUSTED` when not trusted. */
export async function profilePipelines(params: ProfileParams, deps: ProfileDeps): Promise<ProfileResult> {
  if (!deps.trusted) throw new Error(UNTRUSTED);
  const doc = deps.store.get(params.uri);
  if (!doc) throw new Error(`Plumber has not seen ${params.uri}: open the file, then profile again.`);
  const views = deps.views(params.uri).filter((v) => params.pipeline === undefined || v.graph.name === params.pipeline);
  const outcomes: ProfileOutcome[] = [];
  if (views.length === 0) {
    const error = params.pipeline ? `There is no pipeline named ${params.pipeline} in this file.` : 'This file has no plumber-data pipelines to profile.';
    return { outcomes: [{ pipeline: params.pipeline ?? '', ok: false, error }] };
  }
  const exported = views.filter((v) => v.graph.exported);
  for (const v of views.filter((x) => !x.graph.exported)) {
    if (params.pipeline !== undefined) outcomes.push({ pipeline: v.graph.name, ok: false, error: 'This chain is not exported: export it (export const train = …) so the runner can load it.' });
  }
  const s = deps.settings;
  for (const [i, v] of exported.entries()) {
    if (deps.signal?.aborted) {
      outcomes.push({ pipeline: v.graph.name, ok: false, error: 'Cancelled.' });
      continue;
    }
    // The runner loads the file from disk: the profile describes the saved text.
    let diskText = doc.text;
    try {
      diskText = readFileSync(doc.file, 'utf8');
    } catch {
      diskText = doc.text;
    }
    const name = v.graph.name;
    deps.progress?.(`${name}: starting`, Math.round((i / exported.length) * 100));
    const profile = await deps.run({
      file: doc.file,
      exportName: name,
      seconds: s.profile.seconds,
      maxElements: s.profile.maxElements,
      timeoutSeconds: s.profile.timeoutSeconds,
      memoryMB: s.profile.memoryMB,
      ...(s.runner.nodePath ? { nodePath: s.runner.nodePath } : {}),
      ...(s.runner.nodeArgs.length > 0 ? { nodeArgs: s.runner.nodeArgs } : {}),
      signal: deps.signal,
      onProgress: (m) => deps.progress?.(`${name}: ${m.phase}, ${m.elements} elements${m.rate ? `, ${Math.round(m.rate)} el/s` : ''}`),
    });
    const at = new Date().toISOString();
    if (profile.error?.kind === 'cancelled' || deps.signal?.aborted) {
      // A cancelled run says nothing about the pipeline: keep the previous profile.
      outcomes.push({ pipeline: name, ok: false, error: 'Cancelled.' });
      continue;
    }
    if (profile.error) {
      deps.store.setProfile(params.uri, name, { profile, text: diskText, at }, '');
      outcomes.push({ pipeline: name, ok: false, error: profile.error.message });
      continue;
    }
    const opts = modelOptions(s);
    const analysis = deps.analyze(profile, opts);
    const plan = deps.plan(profile, opts);
    deps.store.setProfile(params.uri, name, { profile, analysis, plan, text: diskText, at }, knobLabel(profile));
    outcomes.push({ pipeline: name, ok: true, rate: analysis.measuredRate, predictedRate: plan.predictedRate });
  }
  return { outcomes };
}
