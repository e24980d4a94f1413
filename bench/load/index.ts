/**
 * Reproducible contention for the benchmarks (`--load N`): N background threads that each burn one
 * core for the whole run, in a child process of their own (burner.mjs), so the pipelines measured
 * compete with the same other work every time instead of whatever else the machine happens to do.
 *
 * The burner ends when the benchmark ends, fails, or gets SIGINT/SIGTERM: `underLoad` stops it in
 * a `finally`, its signal handlers kill it (and abort the runs in flight, which kills their runner
 * children), an `exit` hook kills it if anything else ends the process, and the burner itself exits
 * when its IPC channel to the benchmark closes (the benchmark was killed with SIGKILL).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';

const BURNER = join(__dirname, 'burner.mjs');

/** The value of `--load` (one count, or several separated by commas): the loads to run under, in order. */
export function parseLoads(value: string | undefined): number[] {
  if (value === undefined) return [0];
  const loads = value.split(',').filter(Boolean).map(Number);
  if (loads.length === 0 || loads.some((n) => !Number.isInteger(n) || n < 0)) {
    throw new Error(`--load takes a number of background threads (0, 1, 2, …) or several separated by commas; got "${value}".`);
  }
  return loads;
}

/** The machine's 1-, 5- and 15-minute load averages, as printed at the start and end of a run. */
export function loadAverageText(): string {
  return loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
}

/** Starts the burner with `threads` threads; resolves once every thread is spinning. */
function startBurner(threads: number): Promise<ChildProcess> {
  const child = fork(BURNER, [String(threads)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
  return new Promise((resolve, reject) => {
    const failed = (why: string): void => {
      child.kill('SIGKILL');
      reject(new Error(`the background load did not start: ${why}`));
    };
    child.once('message', () => resolve(child));
    child.once('error', (e) => failed(e.message));
    child.once('exit', (code, signal) => failed(`the burner exited (${signal ?? `code ${code}`}) before its threads ran`));
  });
}

/** Ends the burner and waits until it is gone. */
async function stopBurner(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
  await gone;
  clearTimeout(timer);
}

/**
 * Runs `body` with `threads` background threads burning CPU (none for 0), printing the load
 * average at the start and the end through `log`. `body` gets a signal that aborts on SIGINT or
 * SIGTERM: pass it to every run so that its runner child is killed with the benchmark.
 */
export async function underLoad<T>(threads: number, log: (line: string) => void, body: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  log(`load ${threads}: ${threads > 0 ? `starting ${threads} background CPU-burning thread(s); ` : ''}load average at start ${loadAverageText()}`);
  const burner = threads > 0 ? await startBurner(threads) : undefined;
  if (burner) log(`load ${threads}: ${threads} thread(s) burning in process ${burner.pid}`);
  const killBurner = (): void => {
    burner?.kill('SIGKILL');
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    // The abort kills every runner child in flight (synchronously, by process group); then the
    // burner goes, and the benchmark ends as the signal asked.
    controller.abort();
    killBurner();
    log(`load ${threads}: stopped by ${signal}; load average ${loadAverageText()}`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('exit', killBurner);
  try {
    return await body(controller.signal);
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('exit', killBurner);
    if (burner) await stopBurner(burner);
    log(`load ${threads}: load average at end ${loadAverageText()}`);
  }
}
