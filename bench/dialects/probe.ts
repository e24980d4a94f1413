/**
 * One untraced run of a dialect pipeline, in a process of its own (as the runner's is): pulls the
 * export's elements in a plain loop for a warm-up and a measured window, passes repeating as
 * needed, and prints `{"rate":…,"elements":…,"seconds":…,"firstPass":…}`: elements per second in
 * the window, and the first pass measured as the runner measures a run whose source ends during
 * its warm-up (from its first element to its end; absent when the first pass outlasts the run).
 *
 *   node --import tsx bench/dialects/probe.ts FILE EXPORT WARMUP_SECONDS SECONDS
 */
import { exportedPipeline, onePass, release } from './consume';

interface Rate {
  rate: number;
  elements: number;
  seconds: number;
}

async function main(): Promise<void> {
  const [file, exportName, warmup, seconds] = [process.argv[2] ?? '', process.argv[3] ?? '', Number(process.argv[4]), Number(process.argv[5])];
  // Nothing but the pipeline's own imports is loaded, as in the runner's child (tfjs, and its
  // choice of backend, only when the example imports it).
  const pipeline = await exportedPipeline(file, exportName);
  const t0 = performance.now() / 1000;
  let from = 0;
  let n = 0;
  let firstAt = 0;
  let firstPass: Rate | undefined;
  for (let pass = 0; ; pass++) {
    let inPass = 0;
    for await (const x of onePass(pipeline)) {
      release(x);
      const t = performance.now() / 1000;
      if (inPass++ === 0 && pass === 0) firstAt = t;
      if (from === 0) {
        if (t - t0 >= warmup) from = t;
        continue;
      }
      n++;
      if (t - from >= seconds) {
        process.stdout.write(`${JSON.stringify({ rate: n / (t - from), elements: n, seconds: t - from, ...(firstPass ? { firstPass } : {}) })}\n`);
        return;
      }
    }
    if (inPass === 0) break;
    if (pass === 0 && inPass >= 3) {
      const t = performance.now() / 1000;
      firstPass = { rate: (inPass - 1) / (t - firstAt), elements: inPass - 1, seconds: t - firstAt };
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
