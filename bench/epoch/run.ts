/**
 * One measured run for bench:epoch, in a fresh process: the pipeline built with the given runner
 * overrides (installed as the runner installs them, keyed by call site), timed from the start of
 * its iteration (the module already loaded, as the runner's first element is timed) to its first
 * root element, then cut into epochs of `EPOCH` root elements: with a repeat in the pipeline one
 * iteration holds every epoch; without one the dataset is iterated `PASSES` times, one epoch each.
 * Before the clock starts it waits for the process to go quiet (`settle`). Prints
 * `{"firstBatchSeconds":…,"epochSeconds":[…],"elements":…}`.
 *
 *   node --import tsx bench/epoch/run.ts FILE EXPORT OVERRIDES_JSON EPOCH PASSES ITERATE_AGAIN
 */
import { pathToFileURL } from 'node:url';
import { OVERRIDES_KEY, type KnobOverride } from '../../src/data/tracing';
import { siteKeyOfOpId } from '../../src/runner/overrides';

async function main(): Promise<void> {
  const [file, exportName, overridesJson, epochArg, passesArg, againArg] = process.argv.slice(2);
  const overrides = JSON.parse(overridesJson ?? '{}') as Record<string, KnobOverride>;
  const map = new Map<string, KnobOverride>();
  for (const [id, o] of Object.entries(overrides)) {
    const key = siteKeyOfOpId(id, file!);
    if (key !== undefined) map.set(key, o);
  }
  (globalThis as Record<symbol, unknown>)[OVERRIDES_KEY] = map;
  const ns = (await import(pathToFileURL(file!).href)) as Record<string, unknown>;
  const exported = ns[exportName!];
  const ds = (typeof exported === 'function' ? (exported as () => unknown)() : exported) as AsyncIterable<unknown>;
  const epoch = Number(epochArg);
  const passes = Number(passesArg);
  const iterations = againArg === '1' ? passes : 1;
  const epochs: number[] = [];
  let first: number | undefined;
  let elements = 0;
  await settle();
  const t0 = performance.now();
  let mark = t0;
  for (let it = 0; it < iterations; it++) {
    for await (const x of ds) {
      if (x === undefined) continue;
      elements++;
      const t = performance.now();
      first ??= (t - t0) / 1000;
      if (elements % epoch === 0) {
        epochs.push((t - mark) / 1000);
        mark = t;
      }
    }
  }
  process.stdout.write(`${JSON.stringify({ firstBatchSeconds: first ?? NaN, epochSeconds: epochs.slice(0, passes), elements })}\n`);
}

/** A stretch of this long, and the most CPU all threads may use in it, for the process to count as quiet. */
const QUIET_MS = 10;
const QUIET_CPU_MS = 1;
/** The longest wait for quiet. */
const SETTLE_LIMIT_MS = 2000;

/**
 * Waits until this process is quiet before the clock starts. Loading modules leaves work on other
 * threads for tens of milliseconds (V8 compiling what loaded, the TypeScript loader's thread), and
 * on two cores it slows the first batch by as much: the process's start, not the pipeline's, and
 * not in the runner's first element, timed after its probes, long after its modules loaded.
 */
async function settle(): Promise<void> {
  const end = performance.now() + SETTLE_LIMIT_MS;
  while (performance.now() < end) {
    const before = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    const used = process.cpuUsage(before);
    if ((used.user + used.system) / 1000 < QUIET_CPU_MS) return;
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
