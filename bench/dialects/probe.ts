/**
 * One untraced run of a dialect pipeline, in a process of its own (as the runner's is): pulls the
 * export's elements in a plain loop for a warm-up and a measured window, passes repeating as
 * needed, and prints `{"rate":…,"elements":…,"seconds":…}` (elements per second in the window).
 *
 *   node --import tsx bench/dialects/probe.ts FILE EXPORT WARMUP_SECONDS SECONDS
 */
import { endless, exportedPipeline, release } from './consume';

async function main(): Promise<void> {
  const [file, exportName, warmup, seconds] = [process.argv[2] ?? '', process.argv[3] ?? '', Number(process.argv[4]), Number(process.argv[5])];
  // Nothing but the pipeline's own imports is loaded, as in the runner's child (tfjs, and its
  // choice of backend, only when the example imports it).
  const pipeline = await exportedPipeline(file, exportName);
  const t0 = performance.now() / 1000;
  let from = 0;
  let n = 0;
  for await (const x of endless(pipeline)) {
    release(x);
    const t = performance.now() / 1000;
    if (from === 0) {
      if (t - t0 >= warmup) from = t;
      continue;
    }
    n++;
    if (t - from >= seconds) {
      process.stdout.write(`${JSON.stringify({ rate: n / (t - from), elements: n, seconds: t - from })}\n`);
      return;
    }
  }
  throw new Error(`${file}: ${exportName} ended after ${n} elements before the measured window was over`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
