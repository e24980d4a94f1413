/**
 * The untraced side of `bench:runner`: iterates one pipeline of pipelines.ts in a plain `for await`
 * for a warm-up and a window, in a process of its own (as the runner's is), and prints its rate and
 * peak RSS as one JSON line.
 *
 *   node --import tsx bench/runner/untraced.ts EXPORT WARMUP_SECONDS SECONDS
 */
import * as pipelines from './pipelines';

async function main(): Promise<void> {
  const [name, warmup, seconds] = [process.argv[2] ?? '', Number(process.argv[3]), Number(process.argv[4])];
  const ds = (pipelines as Record<string, AsyncIterable<unknown>>)[name];
  if (!ds) throw new Error(`bench/runner/untraced.ts: no pipeline named "${name}" (${Object.keys(pipelines).join(', ')})`);
  const t0 = performance.now() / 1000;
  let from = 0;
  let n = 0;
  for await (const _ of ds) {
    const t = performance.now() / 1000;
    if (from === 0 && t - t0 >= warmup) from = t;
    else if (from > 0) {
      n++;
      if (t - from >= seconds) {
        process.stdout.write(`${JSON.stringify({ rate: n / (t - from), peakRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`);
        break;
      }
    }
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
