/**
 * Static lints: mistakes visible in the source alone, no profile needed. Each rule has an id
 * (`plumber/<rule>`), a severity (never Error: the code runs, it is just slow or subtly wrong) and
 * points at the other operators involved.
 */
import { READER_RULES, readerLints } from './readers';
import type { GraphOp, Knob, PipelineGraph } from '../graph/types';
import { formatPercent, listWords } from '../../model/describe';

export type LintSeverity = 'warning' | 'information';

export interface LintFinding {
  rule: string;
  severity: LintSeverity;
  message: string;
  /** The operator the diagnostic sits on. */
  op: GraphOp;
  related: Array<{ op: GraphOp; message: string }>;
}

export interface LintEnv {
  /** Cores of this machine (for worker pools). */
  cores: number;
}

/** Every rule id with a one-line summary (for docs and the README table). */
export const RULES: Record<string, string> = {
  'plumber/cache-after-random': 'cache() after a random operator freezes the first epoch’s randomness',
  'plumber/shuffle-after-batch': 'shuffle() after batch() shuffles whole batches, not elements',
  'plumber/parallelism-on-main-thread': 'parallelism > 1 on a synchronous main-thread function has no effect',
  'plumber/workers-above-cores': 'more worker threads than cores',
  'plumber/cache-infinite': 'cache() after an endless repeat() never completes a pass',
  'plumber/no-prefetch-at-end': 'an exported pipeline does not end with prefetch()',
  'plumber/worker-needs-export': "placement: 'worker' with a function a worker cannot import",
  'plumber/take-after-cache': 'take() after cache() stops the pass early, so the cache is never complete',
  'plumber/repeat-before-shuffle': 'shuffle() after repeat() mixes elements across epochs',
  'plumber/noop-buffer': 'shuffle(1) or prefetch(0) does nothing',
  'plumber/shard-late': 'shard() after expensive work or after shuffle(): every worker does all the work, or the shards overlap',
  'plumber/shuffle-buffer-small': 'a shuffle buffer much smaller than the dataset shuffles poorly',
  ...READER_RULES,
};

/**
 * Below this fraction of the dataset a shuffle buffer mixes poorly: each element is drawn from a
 * window of less than a tenth of the data, so it lands near where it was read and an epoch's
 * early batches come mostly from the data's beginning. A policy line, not a measurement: what the
 * finding reports is the fraction itself.
 */
export const SMALL_SHUFFLE_FRACTION = 0.1;

/** Operators whose work a worker repeats for every element when it shards after them. */
const EXPENSIVE_BEFORE_SHARD = new Set(['map', 'flatMap', 'interleave', 'files']);

/** "1 in 4", "3 in 4": the share of elements a shard keeps or drops, in words. */
function shareWords(kept: number, of: number): string {
  return `${kept} in ${of}`;
}

/**
 * Elements one pass of `op`'s output holds, when the source's literals and the knobs after it say
 * so: sources with a literal size, then operators that keep, cut or group elements by literal
 * counts. One pass: a repeat counts its input's pass (a shuffle after it still mixes one epoch's
 * worth of data with its neighbours'). Undefined when any step depends on the data (filter,
 * flatMap, windows, files).
 */
export function staticSize(op: GraphOp, byId: Map<string, GraphOp>, depth = 0): number | undefined {
  if (depth > 200) return undefined;
  if (op.cardinality !== undefined) return op.cardinality;
  const inputs = op.inputs.map((id) => byId.get(id));
  if (inputs.length === 0 || inputs.some((i) => i === undefined)) return undefined;
  const sizes = inputs.map((i) => staticSize(i!, byId, depth + 1));
  if (sizes.some((x) => x === undefined)) return undefined;
  const n = sizes[0]!;
  const count = literal(op, 'count');
  const batch = literal(op, 'batchSize');
  const drop = literal(op, 'dropRemainder') === true;
  switch (op.kind) {
    case 'map':
    case 'prefetch':
    case 'cache':
    case 'shuffle':
    case 'enumerate':
    case 'scan':
    case 'repeat':
      return n;
    case 'take':
      return typeof count === 'number' ? (count < 0 ? n : Math.min(n, count)) : undefined;
    case 'skip':
      return typeof count === 'number' ? Math.max(0, n - Math.max(0, count)) : undefined;
    case 'batch':
    case 'paddedBatch':
      return typeof batch === 'number' && batch > 0 ? (drop ? Math.floor(n / batch) : Math.ceil(n / batch)) : undefined;
    case 'shard': {
      const shards = literal(op, 'numShards');
      const index = literal(op, 'shardIndex');
      return typeof shards === 'number' && shards > 0 && typeof index === 'number' ? Math.max(0, Math.ceil((n - index) / shards)) : undefined;
    }
    case 'concatenate':
      return sizes.reduce((a, b) => a! + b!, 0);
    case 'zip':
      return Math.min(...(sizes as number[]));
    default:
      return undefined;
  }
}

function literal(op: GraphOp, key: string): number | string | boolean | undefined {
  const k = op.knobs[key];
  return k && k.state === 'literal' ? k.value : undefined;
}

/** Operators upstream of `op` (its inputs, transitively), nearest first. */
function upstream(op: GraphOp, byId: Map<string, GraphOp>): GraphOp[] {
  const out: GraphOp[] = [];
  const seen = new Set<string>();
  const queue = [...op.inputs];
  while (queue.length > 0) {
    const id = queue.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const o = byId.get(id);
    if (!o) continue;
    out.push(o);
    queue.push(...o.inputs);
  }
  return out;
}

/** Upstream along the main input only, stopping at (and excluding) the first operator `stop` accepts. */
function mainUpstreamUntil(op: GraphOp, byId: Map<string, GraphOp>, stop: (o: GraphOp) => boolean): GraphOp[] {
  const out: GraphOp[] = [];
  let cur = op.inputs[0] !== undefined ? byId.get(op.inputs[0]) : undefined;
  const seen = new Set<string>();
  while (cur && !seen.has(cur.id)) {
    seen.add(cur.id);
    if (stop(cur)) break;
    out.push(cur);
    cur = cur.inputs[0] !== undefined ? byId.get(cur.inputs[0]) : undefined;
  }
  return out;
}

const FN_KINDS = new Set(['map', 'filter', 'flatMap']);

/** Run every rule on one pipeline. */
export function lintPipeline(p: PipelineGraph, env: LintEnv): LintFinding[] {
  const byId = new Map(p.ops.map((o) => [o.id, o]));
  const out: LintFinding[] = readerLints(p);
  for (const op of p.ops) {
    if (op.kind === 'cache') {
      const random = upstream(op, byId).filter((o) => o.random);
      if (random.length > 0) {
        out.push({
          rule: 'plumber/cache-after-random',
          severity: 'warning',
          // Above all of them (`upstream` lists the nearest first): a cache between a shuffle and
          // a random augmentation still replays the first epoch's order.
          message: `cache() after ${random.length === 1 ? random[0]!.label : listWords(random.map((r) => r.label).reverse())} stores the first epoch's random results and replays them every epoch. Move cache() above ${random.at(-1)!.label}.`,
          op,
          related: random.map((r) => ({ op: r, message: `${r.label} is random: ${r.random!.detail}` })),
        });
      }
      const endless = mainUpstreamUntil(op, byId, () => false).find((o) => o.kind === 'repeat' && (o.knobs['count']?.state ?? 'absent') === 'absent');
      if (endless) {
        out.push({
          rule: 'plumber/cache-infinite',
          severity: 'warning',
          message: 'cache() after repeat() never sees the end of a pass, so it never serves from memory and grows until memory runs out. Put repeat() after cache().',
          op,
          related: [{ op: endless, message: 'repeat() without a count is endless' }],
        });
      }
    }
    if (op.kind === 'shuffle') {
      const batch = mainUpstreamUntil(op, byId, (o) => o.kind === 'unbatch').find((o) => o.kind === 'batch');
      if (batch) {
        out.push({
          rule: 'plumber/shuffle-after-batch',
          severity: 'warning',
          message: `shuffle() after ${batch.label} shuffles whole batches: the same elements share a batch every epoch. Shuffle before batch().`,
          op,
          related: [{ op: batch, message: `${batch.label} groups elements first` }],
        });
      }
      const repeat = mainUpstreamUntil(op, byId, (o) => o.kind === 'batch').find((o) => o.kind === 'repeat');
      if (repeat) {
        out.push({
          rule: 'plumber/repeat-before-shuffle',
          severity: 'information',
          message: 'shuffle() after repeat() mixes elements of neighbouring epochs, so an epoch may see an element twice and miss another. Shuffle before repeat() for clean epochs.',
          op,
          related: [{ op: repeat, message: 'repeat() comes first' }],
        });
      }
      const size = literal(op, 'bufferSize');
      if (typeof size === 'number' && size <= 1) {
        out.push({ rule: 'plumber/noop-buffer', severity: 'information', message: `shuffle(${size}) keeps at most one element, so it does not reorder anything.`, op, related: [] });
      } else if (typeof size === 'number') {
        const input = op.inputs[0] !== undefined ? byId.get(op.inputs[0]) : undefined;
        const n = input ? staticSize(input, byId) : undefined;
        const source = upstream(op, byId).find((o) => o.cardinality !== undefined);
        if (n !== undefined && source) {
          const f = smallShuffle(op, size, n, `counted from ${source.label}`);
          if (f) out.push({ ...f, related: [{ op: source, message: `${source.label} sets the dataset's size` }] });
        }
      }
    }
    if (op.kind === 'shard') lintShard(op, byId, out);
    if (op.kind === 'prefetch' && literal(op, 'bufferSize') === 0) {
      out.push({ rule: 'plumber/noop-buffer', severity: 'information', message: 'prefetch(0) keeps nothing ready ahead of the consumer; it does nothing.', op, related: [] });
    }
    if (op.kind === 'take') {
      const cache = mainUpstreamUntil(op, byId, (o) => o.kind === 'repeat').find((o) => o.kind === 'cache');
      if (cache) {
        out.push({
          rule: 'plumber/take-after-cache',
          severity: 'warning',
          message: 'take() after cache() ends each pass early, so the cache never holds a complete pass and is thrown away every epoch. Put take() before cache().',
          op,
          related: [{ op: cache, message: 'this cache never completes' }],
        });
      }
    }
    if (FN_KINDS.has(op.kind)) lintFunctionOp(op, env, out);
  }
  const root = byId.get(p.rootId);
  // Node streams and async generators have no prefetch() to add (their buffers are highWaterMark, or none).
  if (p.exported && root && root.kind !== 'prefetch' && p.ops.length > 1 && (p.dialect === undefined || p.dialect === 'plumber-data' || p.dialect === 'tfjs-data')) {
    out.push({
      rule: 'plumber/no-prefetch-at-end',
      severity: 'information',
      message: `Pipeline ${p.name} does not end with prefetch(): the consumer and the pipeline take turns instead of overlapping. Add .prefetch(2) or more at the end.`,
      op: root,
      related: [],
    });
  }
  return out;
}

/**
 * The shuffle-buffer finding for a buffer of `buffer` elements over a dataset of `size`, or
 * undefined when the buffer is large enough. `known` says where the size comes from ("counted from
 * range(10000)"). Shared by the
 * static rule and the one that reads the size from a profile (measured.ts).
 */
export function smallShuffle(op: GraphOp, buffer: number, size: number, known: string): LintFinding | undefined {
  if (!(size > 0) || buffer >= SMALL_SHUFFLE_FRACTION * size) return undefined;
  return {
    rule: 'plumber/shuffle-buffer-small',
    severity: 'information',
    message: `shuffle(${buffer}) holds ${formatPercent(buffer / size)} of the ${size.toLocaleString('en-US')} elements it shuffles (${known}): each element is drawn from a window of ${buffer.toLocaleString('en-US')}, so it stays near where it was read and an epoch's first batches come mostly from the start of the data. Shuffle quality suffers (models can lose accuracy to this): raise the buffer toward ${size.toLocaleString('en-US')}, or shuffle the file list before reading.`,
    op,
    related: [],
  };
}

/**
 * shard() after expensive work (each worker does all of it) or after a shuffle (the shards
 * overlap): one finding per shard, naming both when both apply.
 */
function lintShard(op: GraphOp, byId: Map<string, GraphOp>, out: LintFinding[]): void {
  const before = upstream(op, byId);
  const shards = literal(op, 'numShards');
  const n = typeof shards === 'number' && shards > 1 ? shards : undefined;
  const expensive = before.filter((o) => EXPENSIVE_BEFORE_SHARD.has(o.kind));
  const shuffle = before.find((o) => o.kind === 'shuffle');
  const sentences: string[] = [];
  const related: LintFinding['related'] = [];
  if (expensive.length > 0) {
    const first = expensive[expensive.length - 1]!;
    const kept = n !== undefined ? `keeps ${shareWords(1, n)} and throws away the work done on the other ${shareWords(n - 1, n)}` : 'keeps only its own share and throws away the work done on the rest';
    const work = expensive.length > 1 ? 'runs that work on all the elements' : first.kind === 'files' ? `reads every file of ${first.label}` : `runs ${first.label} on all the elements`;
    sentences.push(`${op.label} comes after ${first.label}: every worker ${work}, then ${kept}.`);
    related.push(...expensive.map((o) => ({ op: o, message: `${o.label} runs on every element before the shard` })));
  }
  if (shuffle) {
    const seeded = (shuffle.knobs['seed']?.state ?? 'absent') !== 'absent';
    sentences.push(
      `${sentences.length > 0 ? 'It also' : op.label} comes after ${shuffle.label}: ${seeded ? 'every worker shuffles the whole dataset before sharding, and unless every worker uses the same seed in every epoch' : 'each worker shuffles the whole dataset in its own random order, so'} the shards overlap: some elements reach two workers and others none.`,
    );
    related.push({ op: shuffle, message: `${shuffle.label} reorders the data before it is split` });
  }
  if (sentences.length === 0) return;
  out.push({
    rule: 'plumber/shard-late',
    severity: 'warning',
    message: `${sentences.join(' ')} Shard first, right after the source (or shard the file list), so each worker reads and works on only its own share.`,
    op,
    related,
  });
}

function lintFunctionOp(op: GraphOp, env: LintEnv, out: LintFinding[]): void {
  const parallelism = literal(op, 'parallelism');
  const worker = literal(op, 'placement') === 'worker';
  if (!worker && typeof parallelism === 'number' && parallelism > 1 && op.fn?.async === false) {
    // A dialect spells the knob its own way and has no worker threads: converting to plumber-data adds them.
    const spelt = op.optionNames?.['parallelism'] ?? 'parallelism';
    const remedy = op.dialect && op.dialect !== 'plumber-data' ? 'Make it async, or convert the pipeline to plumber-data to run it in worker threads.' : "Run it in worker threads (placement: 'worker') or make it async.";
    out.push({
      rule: 'plumber/parallelism-on-main-thread',
      severity: 'information',
      message: `${op.label} runs a synchronous function on the main thread, so ${spelt} ${parallelism} has no effect: one call runs at a time. ${remedy}`,
      op,
      related: op.fn.definedAt && op.fn.file ? [{ op: { ...op, file: op.fn.file, name: op.fn.definedAt }, message: `${op.fn.name ?? 'the function'} is synchronous` }] : [],
    });
  }
  if (worker && typeof parallelism === 'number' && parallelism > env.cores) {
    out.push({
      rule: 'plumber/workers-above-cores',
      severity: 'warning',
      message: `${op.label} asks for ${parallelism} worker threads on a machine with ${env.cores} cores: the extra threads only compete for CPU and memory. Use ${env.cores} or fewer.`,
      op,
      related: [],
    });
  }
  if (worker) {
    const fn = op.fn;
    if (fn?.form === 'inline') {
      out.push({
        rule: 'plumber/worker-needs-export',
        severity: 'warning',
        message: `${op.label} runs in worker threads, but its function is written inline; a worker can only import a named export of a module.`,
        op,
        related: [],
      });
    } else if (fn?.form === 'reference' && fn.file && !fn.exportName && (op.knobs['exportName']?.state ?? 'absent') === 'absent') {
      // With an exportName the worker loads that export of the module, whatever the source shows
      // (a bundle's getters, which `plumber fix` writes this way).
      out.push({
        rule: 'plumber/worker-needs-export',
        severity: 'warning',
        message: `${op.label} runs in worker threads, but ${fn.name} is not exported from its module; export it so the worker can import it.`,
        op,
        related: [],
      });
    } else if ((op.knobs['module']?.state ?? 'absent') === 'absent') {
      out.push({
        rule: 'plumber/worker-needs-export',
        severity: 'warning',
        message: `${op.label} runs in worker threads but names no module: add module (the file that exports ${fn?.name ?? 'the function'}, e.g. __filename or import.meta.url).`,
        op,
        related: [],
      });
    } else if (isRelativeModule(op.knobs['module'])) {
      const written = (op.knobs['module'] as { value: string }).value;
      out.push({
        rule: 'plumber/worker-needs-export',
        severity: 'warning',
        message: `${op.label} runs in worker threads from module '${written}', a relative path that worker threads cannot resolve (building the pipeline fails): use require.resolve('${written}') in CommonJS, or new URL('${written}', import.meta.url).href in an ES module.`,
        op,
        related: [],
      });
    }
  }
}

/** A `module` written as a string literal that is neither absolute nor a URL: plumber-data rejects it. */
function isRelativeModule(k: Knob | undefined): boolean {
  if (k?.state !== 'literal' || typeof k.value !== 'string') return false;
  return !/^(\/|[A-Za-z]:[\\/]|\\\\|file:)/.test(k.value);
}

/** Lint every pipeline of a file, once per operator and rule (helpers shared by pipelines report once). */
export function lintPipelines(pipelines: PipelineGraph[], env: LintEnv): LintFinding[] {
  const seen = new Set<string>();
  const out: LintFinding[] = [];
  for (const p of pipelines) {
    for (const f of lintPipeline(p, env)) {
      const key = `${f.rule}@${f.op.file}:${f.op.name.start}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(f);
    }
  }
  return out;
}
