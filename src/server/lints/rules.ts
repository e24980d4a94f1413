/**
 * Static lints: mistakes visible in the source alone, no profile needed. Each rule has an id
 * (`plumber/<rule>`), a severity (never Error: the code runs, it is just slow or subtly wrong) and
 * points at the other operators involved.
 */
import type { GraphOp, PipelineGraph } from '../../engine/graph/types';

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
};

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
  const out: LintFinding[] = [];
  for (const op of p.ops) {
    if (op.kind === 'cache') {
      const random = upstream(op, byId).filter((o) => o.random);
      if (random.length > 0) {
        out.push({
          rule: 'plumber/cache-after-random',
          severity: 'warning',
          message: `cache() after ${random[0]!.label} stores the first epoch's random results and replays them every epoch. Move cache() above the random operator.`,
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
      }
    }
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
  if (p.exported && root && root.kind !== 'prefetch' && p.ops.length > 1) {
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

function lintFunctionOp(op: GraphOp, env: LintEnv, out: LintFinding[]): void {
  const parallelism = literal(op, 'parallelism');
  const worker = literal(op, 'placement') === 'worker';
  if (!worker && typeof parallelism === 'number' && parallelism > 1 && op.fn?.async === false) {
    out.push({
      rule: 'plumber/parallelism-on-main-thread',
      severity: 'information',
      message: `${op.label} runs a synchronous function on the main thread, so parallelism ${parallelism} has no effect: one call runs at a time. Run it in worker threads (placement: 'worker') or make it async.`,
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
      out.push({ rule: 'plumber/worker-needs-export', severity: 'warning', message: `${op.label} runs in worker threads, but its function is written inline; a worker can only import a named export of a module.`, op, related: [] });
    } else if (fn?.form === 'reference' && fn.file && !fn.exportName) {
      out.push({ rule: 'plumber/worker-needs-export', severity: 'warning', message: `${op.label} runs in worker threads, but ${fn.name} is not exported from its module; export it so the worker can import it.`, op, related: [] });
    } else if ((op.knobs['module']?.state ?? 'absent') === 'absent') {
      out.push({ rule: 'plumber/worker-needs-export', severity: 'warning', message: `${op.label} runs in worker threads but names no module: add module (the file that exports ${fn?.name ?? 'the function'}, e.g. __filename or import.meta.url).`, op, related: [] });
    }
  }
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
