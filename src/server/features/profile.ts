/**
 * plumber/profile: diagnose one pipeline (or every exported pipeline of a document) with the
 * engine's routine — profile, plan in passes, verify the plan against the pipeline as written —
 * and keep the result per document. The CLI runs the same routine, so the editor and
 * `plumber plan` give the same plan for the same options. The runner executes workspace code, so
 * an untrusted workspace is refused with a sentence saying why.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { ModelOptions } from '../../shared/analysis';
import type { Profile } from '../../shared/profile';
import type { ProfileOutcome, ProfileParams, ProfileResult } from '../../shared/protocol';
import type { Settings } from '../../shared/settings';
import { describeOp } from '../../model/describe';
import type { RunProfileOptions } from '../../runner/spawn';
import type { DiagnoseInput, DiagnoseStep, Diagnosis } from '../../engine/diagnose';
import { diagnoseFile, type RunSettings } from '../../engine/diagnose';
import type { GraphSource } from '../../engine/locate';
import type { DocumentStore } from '../state';
import type { PipelineView } from '../views';

export interface ProfileDeps {
  trusted: boolean;
  settings: Settings;
  store: DocumentStore;
  /** The document's pipelines as the graph sees them now. */
  views(uri: string): PipelineView[];
  /** Where the source is read for its static randomness: the documents as the editor holds them. */
  graphs?: GraphSource;
  /** Runs the runner once. */
  run(opts: RunProfileOptions): Promise<Profile>;
  /** The engine's profile → plan → verify routine (src/engine/diagnose.ts), the one the CLI uses. */
  diagnose(input: DiagnoseInput): Promise<Diagnosis>;
  progress?(message: string, percentage?: number): void;
  signal?: AbortSignal;
}

export const UNTRUSTED = 'Plumber does not run workspace code while the workspace is untrusted. Trust the workspace (Manage Workspace Trust) to profile pipelines; lenses and lints keep working without it.';

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

/** Model options from the settings (`model.cores` 0: the cores the run measured free). */
export function modelOptions(settings: Settings): ModelOptions {
  const opts: ModelOptions = {};
  if (settings.model.cores > 0) opts.cores = settings.model.cores;
  if (settings.model.memoryBudgetMB > 0) opts.memoryBudgetBytes = settings.model.memoryBudgetMB * 1024 * 1024;
  if (settings.model.maxInFlight > 0) opts.maxConcurrency = settings.model.maxInFlight;
  if (settings.model.cacheDir.trim() !== '') opts.cacheDir = settings.model.cacheDir.trim();
  return opts;
}

/** What the settings say about each run (the engine's run policy decides the rest by purpose). */
export function runSettings(settings: Settings): RunSettings {
  const { seconds, maxElements, startSeconds, timeoutSeconds, memoryMB } = settings.profile;
  return { seconds, maxElements, startSeconds, timeoutSeconds, memoryMB, nodePath: settings.runner.nodePath, nodeArgs: settings.runner.nodeArgs };
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
  // A file that builds pipelines and exports none may iterate one itself: a training script. The
  // runner watches its loop and reports the dataset the loop pulled, as `plumber plan train.ts`
  // does, so such a file is diagnosed once, as a whole, and the result kept on the chain it pulled.
  const all = deps.views(params.uri);
  const training = all.every((x) => !x.graph.exported);
  const exported = training ? views.slice(0, 1) : views.filter((v) => v.graph.exported);
  for (const v of views.filter((x) => !x.graph.exported)) {
    if (params.pipeline !== undefined && !training) outcomes.push({ pipeline: v.graph.name, ok: false, error: 'This chain is not exported: export it (export const train = …) so the runner can load it.' });
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
    let name = v.graph.name;
    // Progress names a training run by its loop: which chain it pulls is known only once it ran.
    const label = training ? `the training loop of ${basename(doc.file)}` : name;
    const share = (run: number, total: number): number => Math.round(((i + Math.min(run, total) / total) / exported.length) * 100);
    const expected = expectedRuns(s);
    let step: DiagnoseStep = { phase: 'profile', message: 'profiling as written', run: 1 };
    const stepText = (): string => `${label}: ${stepWords(step)} (run ${step.run} of ${Math.max(expected, step.run)})`;
    const diagnosis = await diagnoseFile({
      file: doc.file,
      ...(training ? {} : { exportName: name }),
      runs: runSettings(s),
      spawn: (request) => deps.run({ ...request, onProgress: (m) => deps.progress?.(`${stepText()}: ${m.phase}, ${m.elements} elements${m.rate ? `, ${Math.round(m.rate)} el/s` : ''}`) }),
      diagnose: deps.diagnose,
      options: modelOptions(s),
      ...(deps.graphs ? { graphs: deps.graphs } : {}),
      passes: s.plan.passes,
      budgetSeconds: s.plan.budgetSeconds,
      verify: s.plan.verify,
      signal: deps.signal,
      onStep: (next) => {
        step = next;
        deps.progress?.(`${stepText()}…`, share(next.run - 1, Math.max(expected, next.run)));
      },
    });
    const at = new Date().toISOString();
    const { first: profile, analysis, plan } = diagnosis;
    // A training run names the dataset its loop pulled by its root operator's id.
    if (training) name = all.find((x) => x.graph.rootId === profile.pipeline.rootId)?.graph.name ?? name;
    if (profile.error?.kind === 'cancelled' || deps.signal?.aborted) {
      // A cancelled diagnosis says nothing reliable about the pipeline: keep the previous profile.
      outcomes.push({ pipeline: name, ok: false, error: 'Cancelled.' });
      continue;
    }
    if (diagnosis.error || profile.error) {
      deps.store.setProfile(params.uri, name, { profile, text: diskText, at }, '');
      outcomes.push({ pipeline: name, ok: false, error: (diagnosis.error ?? profile.error)!.message });
      continue;
    }
    // The record keeps the run as written (its numbers are what the lenses show per operator),
    // its analysis, and the final plan with what verification kept.
    deps.store.setProfile(params.uri, name, { profile, analysis, plan, text: diskText, at }, knobLabel(profile));
    outcomes.push({ pipeline: name, ok: true, rate: analysis.measuredRate, predictedRate: plan.predictedRate });
  }
  return { outcomes };
}

/**
 * Runs a diagnosis is likely to take, for "run 3 of 4": the profile passes, plus verification's
 * two as-written/plan pairs less what the passes already ran (the first pass is the first run as
 * written; with two or more passes the last ran the plan). Verification may stop early (nothing to
 * verify, a first pair that settled) or try more configurations within its time budget; the count
 * then follows the runs.
 */
export function expectedRuns(settings: Settings): number {
  const { passes, verify } = settings.plan;
  return passes + (verify ? (passes >= 2 ? 2 : 3) : 0);
}

/** What a diagnosis step is doing, in the words the progress notification shows. */
export function stepWords(step: DiagnoseStep): string {
  switch (step.phase) {
    case 'profile':
      return 'profiling as written';
    case 'replan':
      return 're-profiling with the plan applied';
    case 'verify':
      return 'verifying the plan';
  }
}
