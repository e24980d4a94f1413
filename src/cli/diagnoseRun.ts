/**
 * What `plumber plan` and `plumber fix` share: the same flags, read the same way, and one call of
 * the engine's `diagnose` (profile → plan in passes → verify) with runs in child processes,
 * progress per step on stderr, and the static randomness of the pipeline's source.
 */
import * as path from 'node:path';
import type { ModelOptions } from '../shared/analysis';
import type { Overrides, Profile } from '../shared/profile';
import { runProfile, type RunProfileOptions } from '../runner/spawn';
import { DEFAULT_BUDGET_SECONDS, VERIFY_RUN_SECONDS, diagnose, probesFor, type Diagnosis, type RunBudget, type RunPurpose } from '../engine/diagnose';
import { megabytesFlag, numberFlag, timeFlags, type FlagSpec, type Parsed } from './args';
import { parseOverrides } from './overrides';
import { ProgressReporter } from './progress';

/** Flags every command that runs the pipeline takes. */
export const RUN_FLAGS: Record<string, FlagSpec> = {
  export: { value: true },
  seconds: { value: true },
  'max-elements': { value: true },
  warmup: { value: true },
  start: { value: true },
  override: { value: true, repeat: true },
  timeout: { value: true },
  memory: { value: true },
  json: { value: false },
  quiet: { value: false },
  help: { value: false },
  train: { value: false },
};

/** Flags of the commands that plan (`plan`, `fix`): the model's options, the passes and verification. */
export const PLAN_FLAGS: Record<string, FlagSpec> = {
  ...RUN_FLAGS,
  cores: { value: true },
  'memory-budget': { value: true },
  'max-in-flight': { value: true },
  'target-rate': { value: true },
  passes: { value: true },
  budget: { value: true },
  'no-verify': { value: false },
};

/** Seconds each verification run measures, at most (defined with diagnose: the server caps its runs the same). */
export { VERIFY_RUN_SECONDS };

/** The model options the flags ask for (without the static randomness, which comes from the source). */
export function modelOptionsOf(p: Parsed): ModelOptions {
  const options: ModelOptions = {};
  const cores = numberFlag(p, 'cores', { min: 1, integer: true });
  if (cores !== undefined) options.cores = cores;
  const budgetMB = megabytesFlag(p, 'memory-budget', { min: 0 });
  if (budgetMB !== undefined) options.memoryBudgetBytes = budgetMB * 2 ** 20;
  const maxInFlight = numberFlag(p, 'max-in-flight', { min: 1, integer: true });
  if (maxInFlight !== undefined) options.maxConcurrency = maxInFlight;
  const targetRate = numberFlag(p, 'target-rate', { min: 0, exclusiveMin: true });
  if (targetRate !== undefined) options.targetRate = targetRate;
  return options;
}

/**
 * The ids of the operators the pipeline's source shows are random (Math.random, crypto, ctx.rng, a
 * fn that calls them), over every chain of the file and the files it imports. Loads ts-morph only
 * here. A file the graph cannot read yields none: the runner's own randomness checks still apply.
 */
export async function sourceRandomOps(file: string): Promise<string[]> {
  try {
    const { GraphWorkspace } = await import('../engine/graph/workspace.js');
    const { locateOps } = await import('../engine/locate.js');
    const { staticRandomOps } = await import('../engine/randomness.js');
    const ws = new GraphWorkspace();
    return staticRandomOps(locateOps(path.resolve(file), ws));
  } catch {
    return [];
  }
}

/** The run budgets every command takes from its flags (`--seconds`, `--max-elements`, `--warmup`, `--start`, `--timeout`, `--memory`). */
export function runBudgetFlags(p: Parsed): { seconds: number; maxElements?: number; warmupSeconds?: number; startSeconds?: number; timeoutSeconds?: number; memoryMB?: number } {
  const times = timeFlags(p);
  return {
    seconds: times.seconds ?? 3,
    maxElements: numberFlag(p, 'max-elements', { min: 1, integer: true }),
    warmupSeconds: times.warmupSeconds,
    startSeconds: times.startSeconds,
    timeoutSeconds: times.timeoutSeconds,
    memoryMB: megabytesFlag(p, 'memory', { min: 16, integer: true }),
  };
}

/** How a run reports on a terminal: progress and waits on the reporter, the pipeline's own output on stderr. */
export function terminalRunHooks(reporter: ProgressReporter, signal: AbortSignal): Pick<RunProfileOptions, 'signal' | 'onProgress' | 'onWaiting' | 'onOutput'> {
  return {
    signal,
    onProgress: (m) => reporter.update(m),
    onWaiting: (pid) => reporter.waiting(pid),
    onOutput: (_stream, text) => {
      // The pipeline's own output goes to stderr so that --json keeps stdout parseable.
      reporter.clear();
      process.stderr.write(text);
    },
  };
}

export interface CliDiagnosis extends Diagnosis {
  /** Profile runs before verification (the passes taken). */
  passes: number;
}

/** Runs `diagnose` on the pipeline the parsed command names, with every flag `plan` and `fix` share. */
export async function diagnoseFromFlags(file: string, p: Parsed, extra: { randomOps?: string[] } = {}): Promise<CliDiagnosis> {
  const userOverrides: Overrides = parseOverrides(p.flags.get('override') ?? []);
  const { seconds, maxElements, warmupSeconds, startSeconds, timeoutSeconds, memoryMB } = runBudgetFlags(p);
  const passes = numberFlag(p, 'passes', { min: 1, integer: true }) ?? 2;
  const options: ModelOptions = { ...modelOptionsOf(p) };
  // The budget is the whole wait, reading the source included.
  const began = performance.now();
  const budgetSeconds = numberFlag(p, 'budget', { min: 0 }) ?? DEFAULT_BUDGET_SECONDS;
  const randomOps = extra.randomOps ?? (await sourceRandomOps(file));
  if (randomOps.length > 0) options.randomOps = randomOps;

  const reporter = new ProgressReporter(path.basename(file), seconds, process.stderr, p.flags.has('quiet'));
  const controller = new AbortController();
  const onSigint = (): void => controller.abort();
  process.once('SIGINT', onSigint);
  // Later runs name the export the first run found, so they run the same pipeline.
  let exportName = p.flags.get('export')?.[0];
  let taken = 0;
  const run = async (overrides: Overrides, purpose: RunPurpose, budget?: RunBudget): Promise<Profile> => {
    const verifying = purpose === 'verify';
    if (!verifying) taken++;
    const runSeconds = verifying ? budget?.seconds ?? VERIFY_RUN_SECONDS : Math.min(seconds, budget?.seconds ?? seconds);
    reporter.budget(runSeconds);
    const profile = await runProfile({
      file,
      exportName,
      seconds: runSeconds,
      // Only the first profile calibrates worker tasks and prices moves; later runs inherit them.
      ...(probesFor(purpose) ? {} : { probes: false }),
      maxElements,
      warmupSeconds,
      startSeconds,
      ...(budget?.warmupElements ? { warmupMinElements: budget.warmupElements } : {}),
      overrides,
      timeoutSeconds,
      memoryMB,
      ...(p.flags.has('train') ? { train: true } : {}),
      ...terminalRunHooks(reporter, controller.signal),
    });
    if (!profile.error) exportName ??= profile.pipeline.exportName;
    return profile;
  };
  try {
    const d = await diagnose({
      run,
      userOverrides,
      options,
      passes,
      budgetSeconds: Math.max(0, budgetSeconds - (performance.now() - began) / 1000),
      verify: !p.flags.has('no-verify'),
      signal: controller.signal,
      onStep: (step) => reporter.step(`run ${step.run}: ${step.message}`),
    });
    return { ...d, passes: taken };
  } finally {
    process.removeListener('SIGINT', onSigint);
    reporter.clear();
  }
}
