/**
 * What `plumber plan` and `plumber fix` share: the same flags, read the same way, and one call of
 * the engine's front door (src/engine/diagnoseFile.ts: profile → plan in passes → verify) with
 * runs in child processes and progress per step on stderr.
 */
import * as path from 'node:path';
import type { ModelOptions } from '../shared/analysis';
import type { Overrides } from '../shared/profile';
import { runProfile, type RunProfileOptions } from '../runner/spawn';
import { DEFAULT_BUDGET_SECONDS } from '../engine/diagnose';
import { diagnoseFile, type FileDiagnosis } from '../engine/diagnose';
import type { GraphSource } from '../engine/locate';
import { KNOB_RANGES } from '../shared/knobs';
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
  'cache-dir': { value: true },
  passes: { value: true },
  budget: { value: true },
  'no-verify': { value: false },
};

/** The model options the flags ask for (without the static randomness, which comes from the source). */
export function modelOptionsOf(p: Parsed): ModelOptions {
  const options: ModelOptions = {};
  const cores = numberFlag(p, 'cores', { min: 1, integer: true });
  if (cores !== undefined) options.cores = cores;
  const budgetMB = megabytesFlag(p, 'memory-budget', { min: 0 });
  if (budgetMB !== undefined) options.memoryBudgetBytes = budgetMB * 2 ** 20;
  // A plan gives an operator at most this many calls in flight: no more than an override may set.
  const maxInFlight = numberFlag(p, 'max-in-flight', { min: 1, max: KNOB_RANGES.parallelism.max, integer: true });
  if (maxInFlight !== undefined) options.maxConcurrency = maxInFlight;
  const targetRate = numberFlag(p, 'target-rate', { min: 0, exclusiveMin: true });
  if (targetRate !== undefined) options.targetRate = targetRate;
  const cacheDir = p.flags.get('cache-dir')?.at(-1)?.trim();
  if (cacheDir) options.cacheDir = cacheDir;
  return options;
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

/** How a run reports on a terminal: progress and waits on the reporter, the pipeline's own output and the run's warnings on stderr. */
export function terminalRunHooks(reporter: ProgressReporter, signal: AbortSignal): Pick<RunProfileOptions, 'signal' | 'onProgress' | 'onWaiting' | 'onOutput' | 'onWarning'> {
  return {
    signal,
    onProgress: (m) => reporter.update(m),
    onWaiting: (pid) => reporter.waiting(pid),
    onWarning: (text) => {
      reporter.clear();
      process.stderr.write(`plumber: ${text}\n`);
    },
    onOutput: (_stream, text) => {
      // The pipeline's own output goes to stderr so that --json keeps stdout parseable.
      reporter.clear();
      process.stderr.write(text);
    },
  };
}

/**
 * Runs the engine's front door on the pipeline the parsed command names, with every flag `plan`
 * and `fix` share. `graphs`: where the source was read already (`plumber fix` reads it to edit it).
 */
export async function diagnoseFromFlags(file: string, p: Parsed, extra: { graphs?: GraphSource } = {}): Promise<FileDiagnosis> {
  const userOverrides: Overrides = parseOverrides(p.flags.get('override') ?? []);
  const budgets = runBudgetFlags(p);
  const passes = numberFlag(p, 'passes', { min: 1, integer: true }) ?? 2;
  const options = modelOptionsOf(p);
  const budgetSeconds = numberFlag(p, 'budget', { min: 0 }) ?? DEFAULT_BUDGET_SECONDS;
  const exportName = p.flags.get('export')?.[0];
  const reporter = new ProgressReporter(path.basename(file), budgets.seconds, process.stderr, p.flags.has('quiet'));
  const controller = new AbortController();
  const onSigint = (): void => controller.abort();
  process.once('SIGINT', onSigint);
  try {
    return await diagnoseFile({
      file,
      ...(exportName !== undefined ? { exportName } : {}),
      runs: { ...budgets, ...(p.flags.has('train') ? { train: true } : {}) },
      spawn: (request) => {
        reporter.budget(request.seconds);
        return runProfile({ ...request, ...terminalRunHooks(reporter, controller.signal) });
      },
      userOverrides,
      options,
      ...(extra.graphs ? { graphs: extra.graphs } : {}),
      passes,
      budgetSeconds,
      verify: !p.flags.has('no-verify'),
      signal: controller.signal,
      onStep: (step) => reporter.step(`run ${step.run}: ${step.message}`),
    });
  } finally {
    process.removeListener('SIGINT', onSigint);
    reporter.clear();
  }
}
