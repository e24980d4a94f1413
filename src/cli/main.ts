/**
 * The `plumber` command: profile, plan and check a pipeline from a terminal or CI, over the same
 * runner and model the editor uses. Exit codes: 0 success, 1 the pipeline failed or is too slow,
 * 2 the command was used wrongly, 3 `check` measured too few elements for a rate, 4 `check
 * --baseline` could not compare the runs (./gate.ts), 128+N a signal.
 */
import * as path from 'node:path';
import type { Profile, ProfileError } from '../shared/profile';
import * as os from 'node:os';
import { killAllRuns, runProfile } from '../runner/spawn';
import { offeredPlan } from '../engine/offer';
import { UsageError, parseArgs } from './args';
import type { FlagSpec, Parsed } from './args';
import { PLAN_FLAGS, RUN_FLAGS, diagnoseFromFlags, runBudgetFlags, terminalRunHooks } from './diagnoseRun';
import { CHECK_FLAGS, checkOptions, failedCheck, finishCheck } from './gate';
import { HELP } from './help';
import { parseOverrides } from './overrides';
import { ProgressReporter } from './progress';
import { modelFoundNothing, renderPlan, renderProfile, renderStops } from './render';
import { noChangeReason } from '../shared/analysis';
import { trainerText } from './trainText';
import { version } from './version';

/**
 * SIGTERM and SIGHUP (a closed terminal, a CI job cancelled, `kill`) end the command like Ctrl-C
 * ends it, whatever the pipeline is doing: the runners' process groups are killed synchronously,
 * since a runner whose pipeline blocks its main thread cannot end itself, and the command exits
 * with the shell's code for the signal (128 + its number).
 */
let signalsHandled = false;
function endOnSignals(): void {
  if (signalsHandled) return;
  signalsHandled = true;
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      killAllRuns();
      process.stderr.write(`\nplumber: stopped by ${signal}.\n`);
      process.exit(128 + os.constants.signals[signal]);
    });
  }
}

const COMMANDS: Record<string, Record<string, FlagSpec>> = {
  profile: RUN_FLAGS,
  plan: PLAN_FLAGS,
  check: { ...RUN_FLAGS, ...CHECK_FLAGS },
};

function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Prints a failed run's error for a person (stderr) or a machine (stdout JSON), and returns the exit code. */
function reportFailure(error: ProfileError, json: boolean, extra: Record<string, unknown>): number {
  if (json) printJson({ ...extra, error });
  else process.stderr.write(`plumber: ${error.message}\n`);
  // Ctrl-C ends with the shell's usual code for an interrupt.
  return error.kind === 'cancelled' ? 130 : 1;
}

async function runCommand(command: string, p: Parsed): Promise<number> {
  // `check --format json` reports a failed run as --json does.
  const json = p.flags.has('json') || p.flags.get('format')?.[0] === 'json';
  if (p.positionals.length === 0) throw new UsageError(`\`plumber ${command}\` needs the pipeline file, e.g. \`plumber ${command} pipeline.ts\`.`);
  if (p.positionals.length > 1) throw new UsageError(`\`plumber ${command}\` takes one file, got ${p.positionals.length}: ${p.positionals.join(' ')}.`);
  const file = p.positionals[0];
  if (command === 'plan') return runPlan(file, p, json);
  const overrides = parseOverrides(p.flags.get('override') ?? []);
  const { seconds, maxElements, warmupSeconds, startSeconds, timeoutSeconds, memoryMB } = runBudgetFlags(p);
  const check = command === 'check' ? checkOptions(file, p) : undefined;

  const reporter = new ProgressReporter(path.basename(file), seconds, process.stderr, p.flags.has('quiet'));
  const controller = new AbortController();
  const onSigint = (): void => controller.abort();
  process.once('SIGINT', onSigint);
  let profile: Profile;
  try {
    profile = await runProfile({
      file,
      exportName: p.flags.get('export')?.[0],
      seconds,
      maxElements,
      warmupSeconds,
      startSeconds,
      overrides,
      timeoutSeconds,
      memoryMB,
      ...(p.flags.has('train') ? { train: true } : {}),
      // A gate measures the rate only: no worker calibration before the window, no fn called again after it.
      ...(check ? { probes: false } : {}),
      ...terminalRunHooks(reporter, controller.signal),
    });
  } finally {
    process.removeListener('SIGINT', onSigint);
    reporter.clear();
  }
  if (profile.error && (check?.format === 'junit' || check?.format === 'github')) return failedCheck(check, profile, (stream, text) => process[stream].write(text));
  if (profile.error) return reportFailure(profile.error, json, command === 'profile' ? { ...profile } : { profile });

  if (check) return finishCheck(check, profile, (stream, text) => process[stream].write(text));
  if (json) printJson(profile);
  else process.stdout.write(`${renderProfile(profile)}\n${trainerText(profile)}`);
  return 0;
}

/** `plumber plan`: the engine's diagnosis (profile, plan in passes, verify), shown as a table and the verified figure. */
async function runPlan(file: string, p: Parsed, json: boolean): Promise<number> {
  const d = await diagnoseFromFlags(file, p);
  const profile = d.first;
  // What the source holds that Plumber could not follow is said first, whatever the run found.
  if (!json && d.stops.length > 0) process.stderr.write(renderStops(file, d.stops));
  const stops = d.stops.length > 0 ? { stops: d.stops } : {};
  if (d.error) return reportFailure(d.error, json, { profile, ...stops });
  if (json) {
    // `noChange`: why the plan is empty, as the text output says it.
    const noChange = modelFoundNothing(d.plan) ? { noChange: noChangeReason(d.analysis) } : {};
    printJson({ profile, analysis: d.analysis, plan: d.plan, ...noChange, passes: d.passes, runs: d.profiles.length, lastProfile: d.last === profile ? undefined : d.last, ...stops });
  } else {
    // A person is shown the changes the editor would offer and `plumber fix` would apply; --json keeps the whole plan.
    process.stdout.write(
      `${renderPlan(profile, d.analysis, offeredPlan(d.plan), file, d.last, { unverified: p.flags.has('no-verify') ? 'no-verify' : undefined })}\n${trainerText(profile, d.plan.verification ? d.plan.trainer : undefined)}`,
    );
  }
  return 0;
}

/** Runs the command line and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    const asked = command === 'help' ? rest[0] : undefined;
    // Own properties only: `plumber help constructor` must not print Object's source.
    if (asked !== undefined && !Object.hasOwn(HELP, asked)) {
      const topics = Object.keys(HELP).filter((t) => t !== 'main');
      process.stderr.write(`plumber: there is no help on "${asked}". Topics: ${topics.join(', ')}.\n`);
      return 2;
    }
    (command === undefined ? process.stderr : process.stdout).write(`${HELP[asked ?? 'main']}\n`);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  endOnSignals();
  // `fix` edits source with the language server's engine (ts-morph): loaded only when asked for.
  if (command === 'fix') return (await import('./fix.js')).runFixCommand(rest);
  if (command === 'lint') return (await import('./lint.js')).runLintCommand(rest);
  const json = rest.includes('--json');
  try {
    const specs = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (!specs) throw new UsageError(`"${command}" is not a plumber command. Commands: ${[...Object.keys(COMMANDS), 'fix', 'lint'].join(', ')}. Run \`plumber --help\` for usage.`);
    const parsed = parseArgs(rest, specs, command);
    if (parsed.flags.has('help')) {
      process.stdout.write(`${HELP[command]}\n`);
      return 0;
    }
    return await runCommand(command, parsed);
  } catch (e) {
    if (e instanceof UsageError) {
      if (json) printJson({ error: { kind: 'usage', message: e.message } });
      else process.stderr.write(`plumber: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

if (require.main === module || process.argv[1]?.endsWith(`${path.sep}plumber.js`) || process.argv[1]?.endsWith(`${path.sep}plumber`)) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`plumber: an internal error stopped the command: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\nPlease report it with the command you ran.\n`);
      process.exitCode = 1;
    },
  );
}
