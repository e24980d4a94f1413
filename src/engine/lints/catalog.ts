/**
 * Every rule a person can see, in one table: the static rules (rules.ts), the measured ones
 * (measured.ts) and the places the graph stopped following a chain. Each has its one-line summary
 * and a help text (why it matters and what to do), for `plumber lint --format sarif` and the help.
 * A rule added to RULES or MEASURED_RULES without a help text here still gets one: its summary.
 */
import { MEASURED_RULES } from './measured';
import { RULES } from './rules';

/** A chain the graph saw and could not follow: said as Information, never silence. */
export const NOT_FOLLOWED = 'plumber/not-followed';

/** The sentence every help text ends with: how to silence the rule where it is deliberate. */
export const SUPPRESS_HINT = 'Where it is deliberate, silence it with `// plumber-disable-next-line RULE` above the line (or `// plumber-disable-line RULE` on it, `// plumber-disable RULE` for the file).';

const HELP: Record<string, string> = {
  'plumber/cache-after-random':
    'A cache after a random operator (a shuffle, a map using Math.random, crypto or ctx.rng, or one declared random: true) stores the first epoch’s random results and replays them every epoch, so later epochs see no new randomness. Move cache() above the first random operator.',
  'plumber/shuffle-after-batch': 'A shuffle after batch() (with no unbatch() between) reorders whole batches: the same elements share a batch every epoch. Shuffle before batch().',
  'plumber/parallelism-on-main-thread':
    'A synchronous function on the main thread runs one call at a time whatever its parallelism, so the setting does nothing. Run it in worker threads (placement: "worker" with module) or make it async.',
  'plumber/workers-above-cores': 'More worker threads than the machine has cores only compete for CPU and memory. Use at most the number of cores.',
  'plumber/cache-infinite': 'A cache after an endless repeat() never sees the end of a pass, so it never serves from memory and grows until memory runs out. Put repeat() after cache().',
  'plumber/no-prefetch-at-end': 'An exported pipeline that does not end with prefetch() makes its consumer and the pipeline take turns instead of overlapping. Add .prefetch(2) or more at the end.',
  'plumber/worker-needs-export':
    'A worker thread can only import a named export of a module, by an absolute path or a URL: an inline function, a function that is not exported, a missing module or a relative module path fails. Export the function and set module (__filename, require.resolve(...), import.meta.url).',
  'plumber/take-after-cache': 'take() after cache() ends each pass early, so the cache never holds a complete pass and is thrown away every epoch. Put take() before cache().',
  'plumber/repeat-before-shuffle': 'A shuffle after repeat() mixes neighbouring epochs: an epoch may see an element twice and miss another. Shuffle before repeat() for clean epochs.',
  'plumber/noop-buffer': 'shuffle(1) and prefetch(0) do nothing. Use a real buffer size, or remove the call.',
  'plumber/shard-late':
    'shard() after expensive work makes every worker do all of it and keep one share; after a shuffle the shards overlap unless every worker uses the same seed. Shard first, right after the source (or shard the file list).',
  'plumber/shuffle-buffer-small':
    'A shuffle buffer under a tenth of the dataset (as the source states it, or as a profiled run counted it) leaves elements near where they were read, and models can lose accuracy to it. Raise the buffer toward the dataset’s size, or shuffle the file list before reading.',
  'plumber/shuffle-fill-dominates':
    'A shuffle hands on its first element only once its buffer is full, so with expensive work (a decode, a tokenizer) above it every epoch’s first batch waits for the buffer to fill at that work’s rate, as the model predicts from a profiled run. Move the shuffle before the expensive work (shuffle file names or indices, then decode), or shrink the buffer.',
  'plumber/padding-waste':
    'A large share of the positions of padded batches (paddedBatch, bucketBySequenceLength) is padding, as measured in a profiled run: the model computes on it. Use bucketBySequenceLength with boundaries around the measured lengths.',
  'plumber/reader-one-shard':
    'A gzip or brotli stream decompresses front to back, and a reader splits its work by shards only, so one large or compressed file read by one reader runs on one thread whatever its parallelism or placement. Split it into shards (several files a glob matches) and read them with parallelism (and placement: "worker" where parsing binds).',
  'plumber/parse-on-main-thread':
    'A CSV or JSON Lines reader that decompresses and parses on the main thread holds the pipeline back, as the profiled run measured. placement: "worker" moves decompression and parsing to worker threads (one per shard read at once), with parallelism shards at once.',
  'plumber/memory-past-heap-limit':
    "The pipeline's peak memory, projected from its profiled run with every buffer and cache full (a shuffle buffer, a prefetch, calls in flight, a cache), is past V8's heap limit: the process would run out of memory once they fill, often long after a short run. Shrink the part the warning names (a smaller shuffle buffer, a cache on disk), or raise the heap limit (--max-old-space-size).",
  [NOT_FOLLOWED]: 'Plumber saw a dataset chain it could not follow (the message says why), so it neither lints nor profiles that part. Write the chain so its operators are visible in the source, or ignore the note.',
};

export interface RuleInfo {
  id: string;
  summary: string;
  help: string;
  /** Needs a profile (`plumber lint --profile`, or the editor's last run). */
  measured: boolean;
}

/** Every rule, static ones first, each once (a rule both static and measured is listed as static). */
export function allRules(): RuleInfo[] {
  const out = new Map<string, RuleInfo>();
  const add = (id: string, summary: string, measured: boolean): void => {
    if (!out.has(id)) out.set(id, { id, summary, help: HELP[id] ?? `${summary}.`, measured });
  };
  for (const [id, summary] of Object.entries(RULES)) add(id, summary, false);
  for (const [id, summary] of Object.entries(MEASURED_RULES)) add(id, summary, true);
  add(NOT_FOLLOWED, 'a dataset chain Plumber could not follow', false);
  return [...out.values()];
}
