/**
 * The one front door to `diagnose` that every surface calls — the language server, `plumber plan`
 * and `plumber fix`, the benchmarks — with a file, an export (or a training script) and options.
 * It owns what feeds the engine, so the same pipeline with the same options gets the same runs
 * and the same plan everywhere:
 * - the run policy: what each run asks the runner for, by purpose (`runRequestFor`);
 * - the static randomness: every chain of the file and of the files it imports (`sourceRandomOps`),
 *   since any of them can feed the pipeline that runs;
 * - the budget: the whole wait, reading the source included.
 * Starting a run is injectable (a surface adds its progress hooks; tests script the runs).
 */
import * as path from 'node:path';
import type { ModelOptions, Plan, PlanChange, PlanTarget } from '../../shared/analysis';
import type { ArgSites } from '../../shared/opId';
import type { Overrides, Profile } from '../../shared/profile';
import { failedProfile } from '../../runner/emptyProfile';
import { runProfile, type RunProfileOptions } from '../../runner/spawn';
import { ConvertedFiles, type ConvertSource } from '../convert/sibling';
import { sourceFields } from '../reshape/facts';
import { ReshapedFiles, profileBack } from '../reshape/sibling';
import { flowUnoffered } from '../reshape/flow-check';
import { sourceOrderPins } from '../orderPins';
import { planTarget } from '../../model';
import { probesFor } from '../passes';
import { staticRandomOps } from '../randomness';
import { locateOps, type GraphSource } from '../locate';
import type { GraphStop } from '../graph/types';
import { DEFAULT_BUDGET_SECONDS, VERIFY_RUN_SECONDS } from './budget';
import type { DiagnoseInput, Diagnosis, RunBudget, RunPurpose } from './input';
import { keptMemory } from './memory';
import { diagnose } from './routine';

/**
 * The seconds the sample check of a move for the first batch gets: the equivalence check's own
 * (src/runner/equivalence.ts) plus twice the first run's wait for its first element, which each of
 * the two samples (as written, then reshaped) may pay once.
 */
const SAMPLE_SECONDS = 20;
const SAMPLE_FILL_FACTOR = 2;

/** What a surface sets about its runs: the fields of the runner's request that do not vary by purpose, plus the pass window. */
export type RunSettings = Pick<RunProfileOptions, 'maxElements' | 'warmupSeconds' | 'startSeconds' | 'timeoutSeconds' | 'memoryMB' | 'nodePath' | 'nodeArgs' | 'train'> & {
  /** Seconds a profile pass measures; a later pass measures less when the budget asks it to. */
  seconds: number;
  /**
   * Every run measures `seconds` with the probes, whatever its purpose and the budget ask: for a
   * smoke run, which checks that each step runs, not its figures.
   */
  sameEveryRun?: boolean;
};

/** The part of the runner's request the run policy decides: every run names its window. */
export type RunPolicyRequest = Pick<RunProfileOptions, 'probes' | 'warmupMinElements' | 'maxElements' | 'warmupSeconds' | 'startSeconds' | 'timeoutSeconds' | 'memoryMB' | 'nodePath' | 'nodeArgs' | 'train'> & {
  seconds: number;
};

/** One run's request to the runner, as the front door hands it to `spawn`. */
export type FrontDoorRunRequest = RunProfileOptions & RunPolicyRequest;

/**
 * What a run of `purpose` asks the runner for. A profile pass measures the settings' window, or
 * less when the budget asks (a later pass covering what the run as written reached); a
 * verification run measures the budget's window, VERIFY_RUN_SECONDS when it names none, and only
 * compares rates. Only the first pass runs the probes that feed the model: later passes inherit
 * what it measured. A run warms up on the elements the budget asks for, when it asks.
 */
export function runRequestFor(settings: RunSettings, purpose: RunPurpose, budget?: RunBudget): RunPolicyRequest {
  const fixed: Omit<RunPolicyRequest, 'seconds'> = {
    ...(settings.maxElements !== undefined ? { maxElements: settings.maxElements } : {}),
    ...(settings.warmupSeconds !== undefined ? { warmupSeconds: settings.warmupSeconds } : {}),
    ...(settings.startSeconds !== undefined ? { startSeconds: settings.startSeconds } : {}),
    ...(settings.timeoutSeconds !== undefined ? { timeoutSeconds: settings.timeoutSeconds } : {}),
    ...(settings.memoryMB !== undefined ? { memoryMB: settings.memoryMB } : {}),
    ...(settings.nodePath ? { nodePath: settings.nodePath } : {}),
    ...(settings.nodeArgs && settings.nodeArgs.length > 0 ? { nodeArgs: settings.nodeArgs } : {}),
    ...(settings.train ? { train: true } : {}),
  };
  if (settings.sameEveryRun) return { ...fixed, seconds: settings.seconds };
  return {
    ...fixed,
    seconds: purpose === 'verify' ? (budget?.seconds ?? VERIFY_RUN_SECONDS) : Math.min(settings.seconds, budget?.seconds ?? settings.seconds),
    ...(probesFor(purpose) ? {} : { probes: false }),
    ...(budget?.warmupElements ? { warmupMinElements: budget.warmupElements } : {}),
  };
}

/**
 * The ids of the operators the source shows are random (Math.random, crypto, ctx.rng, a fn that
 * calls them), over every chain of `file` and of the files it imports: any of them can feed the
 * pipeline that runs, exported or not. `graphs` is where the source is read (the editor's open
 * documents); without it, a workspace reads the disk (ts-morph is loaded only then). A source the
 * graph cannot read yields none: the runner's own randomness checks still apply.
 */
export async function sourceRandomOps(file: string, graphs?: GraphSource): Promise<string[]> {
  const source = graphs ?? (await diskGraphs());
  if (source === undefined) return [];
  try {
    return staticRandomOps(locateOps(path.resolve(file), source));
  } catch {
    return [];
  }
}

/** A workspace that reads the disk (ts-morph is loaded only then); undefined when it cannot be loaded. */
async function diskGraphs(): Promise<GraphSource | undefined> {
  try {
    return new (await import('../graph/workspace.js')).GraphWorkspace();
  } catch {
    return undefined;
  }
}

/**
 * Node streams: where the engine saw the arguments of the `pipeline(…)`/`compose(…)` calls of
 * `file`'s chains, which the runner cannot read from a stack (see `RunProfileOptions.argSites`).
 */
export function sourceArgSites(file: string, graphs: GraphSource | undefined): ArgSites[] {
  try {
    return graphs === undefined ? [] : graphs.graphOf(path.resolve(file)).pipelines.flatMap((p) => p.argSites ?? []);
  } catch {
    return [];
  }
}

/** Where the engine saw a chain in `file` it could not follow, and why (the graph's stops); none when the source cannot be read. */
export function sourceStops(file: string, graphs: GraphSource | undefined): GraphStop[] {
  try {
    return graphs === undefined ? [] : (graphs.graphOf(path.resolve(file)).stops ?? []);
  } catch {
    return [];
  }
}

/**
 * What a surface brings: the pipeline, its run settings, and the routine's own options (user
 * overrides, model options, passes, verification, budget, cancellation, progress, clock) as
 * `diagnose` takes them (reading the source counts against `budgetSeconds`); the runs themselves
 * are the front door's to make.
 */
export interface DiagnoseFileInput extends Omit<DiagnoseInput, 'run'> {
  /** The pipeline module, or a training script. */
  file: string;
  /**
   * The pipeline to diagnose; undefined: the one the module exports, or the loop of a training
   * script. Later runs name the export the first run found, so every run runs the same pipeline.
   */
  exportName?: string;
  /** What the surface sets about its runs (see `runRequestFor`). */
  runs: RunSettings;
  /** Where the source is read for its randomness (see `sourceRandomOps`); model options get the static randomness added here. */
  graphs?: GraphSource;
  /** Starts one run (default `runProfile`; the request carries `signal`): a surface adds its progress hooks here, a test scripts the run. */
  spawn?(request: FrontDoorRunRequest): Promise<Profile>;
  /** Where a conversion reads the pipeline's source and graph (default: the disk, as the runner reads it); a test brings its own. */
  convertSource?: ConvertSource;
  /** The engine's routine (default `diagnose`): a test may script it. */
  diagnose?(input: DiagnoseInput): Promise<Diagnosis>;
}

export interface FileDiagnosis extends Diagnosis {
  /** Profile runs before verification (the passes taken). */
  passes: number;
  /** Of the wait, the seconds spent reading the source for its randomness, before any run. */
  sourceSeconds: number;
  /** Chains of the file the engine saw but could not follow, with why: a surface says them, so nothing is skipped in silence. */
  stops: GraphStop[];
}

/** Diagnoses the pipeline `input` names: its static randomness, then `diagnose` with runs the run policy asks for. */
export async function diagnoseFile(input: DiagnoseFileInput): Promise<FileDiagnosis> {
  const clock = input.clock ?? ((): number => performance.now() / 1000);
  const began = clock();
  const graphs = input.graphs ?? (await diskGraphs());
  const randomOps = await sourceRandomOps(input.file, graphs);
  const argSites = sourceArgSites(input.file, graphs);
  const stops = sourceStops(input.file, graphs);
  const sourceSeconds = clock() - began;
  const fields = input.options?.reshape === false ? {} : sourceFields(input.file, graphs);
  const orderPinned = sourceOrderPins(input.file, graphs);
  const options: ModelOptions = {
    ...input.options,
    ...(randomOps.length > 0 ? { randomOps } : {}),
    ...(Object.keys(fields).length > 0 ? { fields } : {}),
    ...(orderPinned.length > 0 ? { orderPinned } : {}),
  };
  const spawn = input.spawn ?? runProfile;
  let exportName = input.exportName;
  let passes = 0;
  const run = async (overrides: Overrides, purpose: RunPurpose, budget?: RunBudget): Promise<Profile> => {
    if (purpose !== 'verify') passes++;
    const request: FrontDoorRunRequest = {
      file: input.file,
      ...(exportName !== undefined ? { exportName } : {}),
      overrides,
      ...(argSites.length > 0 ? { argSites } : {}),
      ...runRequestFor(input.runs, purpose, budget),
      ...(input.signal ? { signal: input.signal } : {}),
    };
    const profile = budget?.convert ? await spawnConverted(request, budget.convert) : budget?.reorder ? await spawnReshaped(request, budget.reorder) : await spawn(request);
    // A training script's profile names no export: its runs go on running the script.
    if (!profile.error && profile.pipeline.exportName) exportName ??= profile.pipeline.exportName;
    return profile;
  };
  // A conversion runs its converted file, written beside the pipeline's for the run (../convert/sibling.ts).
  const conversions = new ConvertedFiles(input.file, input.convertSource);
  const spawnConverted = async (request: FrontDoorRunRequest, change: NonNullable<RunBudget['convert']>): Promise<Profile> => {
    // The argument sites name the original file's positions: the converted file has its own.
    const { argSites: _sites, ...rest } = request;
    const out = await conversions.run(change, (converted) => spawn({ ...rest, file: converted }));
    if (!('reason' in out)) return out;
    return failedProfile(input.file, exportName, request.overrides ?? {}, { kind: 'override', message: `The pipeline could not be converted to plumber-data: ${out.reason}` });
  };
  // A reshape runs its reshaped file, written beside the pipeline's for the run (../reshape/sibling.ts).
  const reshapes = new ReshapedFiles(input.file, input.convertSource);
  const spawnReshaped = async (request: FrontDoorRunRequest, change: NonNullable<RunBudget['reorder']>): Promise<Profile> => {
    const { argSites: _sites, ...rest } = request;
    const out = await reshapes.run(change, request.overrides ?? {}, async (reshaped, overrides, ids) => profileBack(await spawn({ ...rest, file: reshaped, overrides }), input.file, ids));
    if (!('reason' in out)) return out;
    return failedProfile(input.file, exportName, request.overrides ?? {}, { kind: 'override', message: `The pipeline could not be reshaped: ${out.reason}` });
  };
  // A conversion the source does not allow is known before any run: not offered, never verified;
  // nor a reshape that cannot be written or changes the output on a sample.
  const unoffered = async (change: PlanChange, first?: Profile, plan?: Plan): Promise<string | undefined> => {
    // A move for the first batch samples a pipeline whose first element waits for its buffer to fill: its time covers that wait.
    const waits = change.kind === 'reorder' && change.firstBatchSeconds !== undefined ? first?.run.firstElementSeconds : undefined;
    const seconds = waits !== undefined ? { seconds: SAMPLE_SECONDS + SAMPLE_FILL_FACTOR * waits } : {};
    if (change.kind === 'reorder') return reshapes.unoffered(change, exportName, { ...seconds, ...(input.signal ? { signal: input.signal } : {}), ...(input.runs.nodePath ? { nodePath: input.runs.nodePath } : {}) });
    if (change.kind === 'fuse' || change.kind === 'deterministic')
      return flowUnoffered(change, input.file, exportName, { ...(input.signal ? { signal: input.signal } : {}), ...(input.runs.nodePath ? { nodePath: input.runs.nodePath } : {}) }, plan?.overrides);
    if (change.kind !== 'convert') return undefined;
    try {
      const out = await conversions.outcome(change);
      return out.ok ? undefined : out.reason;
    } catch {
      // A source the rewrite cannot read now is left to the run, which says what failed.
      return undefined;
    }
  };
  const d = await (input.diagnose ?? diagnose)({
    run,
    unoffered,
    ...(input.userOverrides ? { userOverrides: input.userOverrides } : {}),
    options,
    ...(input.passes !== undefined ? { passes: input.passes } : {}),
    ...(input.verify !== undefined ? { verify: input.verify } : {}),
    budgetSeconds: Math.max(0, (input.budgetSeconds ?? DEFAULT_BUDGET_SECONDS) - sourceSeconds),
    ...(input.verifyBudgetSeconds !== undefined ? { verifyBudgetSeconds: input.verifyBudgetSeconds } : {}),
    ...(input.signal ? { signal: input.signal } : {}),
    ...(input.onStep ? { onStep: input.onStep } : {}),
    ...(input.clock ? { clock: input.clock } : {}),
  });
  // A plan for other cores than here says so wherever it is shown (src/shared/words.ts `targetWords`).
  const target = d.error ? undefined : targetOf(d, options);
  // Its projected peak memory, for the changes verification kept (./memory.ts).
  const memory = d.error ? {} : keptMemory(d, options);
  return { ...d, plan: { ...d.plan, ...(target ? { target } : {}), ...memory }, passes, sourceSeconds, stops };
}

/** The plan's target machine (`planTarget`); none for a diagnosis whose profile the model cannot read. */
function targetOf(d: Diagnosis, options: ModelOptions): PlanTarget | undefined {
  try {
    return planTarget(d.first, d.plan, options);
  } catch {
    return undefined;
  }
}
