/**
 * Writes a dialect's reading out as plumber-data, with the plan's `then` changes (keyed by the
 * dialect operators' ids) written as the converted calls' knobs: calls in flight, worker threads
 * with the module a worker imports the fn from, prefetch buffers, caches.
 */
import type { PlanChange } from '../../shared/analysis';
import { exportedInSource, moduleExpression, quoted, type PlannedEdit } from '../fixes/edits';
import type { GraphOp } from '../graph/types';
import { workerRefusal } from './fns';
import type { ConvertInput, DialectReading, Stage } from './types';

/** Options, calls after and edits elsewhere that the `then` changes add to one converted operator. */
export interface Additions {
  options: Array<[string, string]>;
  after: string[];
}

function setOption(options: Array<[string, string]>, key: string, value: string): void {
  const at = options.findIndex(([k]) => k === key);
  if (at >= 0) options[at] = [key, value];
  else options.push([key, value]);
}

/** The worker placement of `op`'s fn as options, or why it cannot move. */
function workerOptions(op: GraphOp, change: Extract<PlanChange, { kind: 'placement' }>, input: ConvertInput, argText: string | undefined, exports: PlannedEdit[]): Array<[string, string]> | string {
  const refusal = workerRefusal(op, input.text, argText);
  if (refusal) return refusal;
  const fn = op.fn;
  const runtime = exportedInSource(fn) ? undefined : input.runtimeModuleOf?.(op.id);
  const moduleExpr = moduleExpression(op, input.moduleKind, runtime);
  if (typeof moduleExpr !== 'string') return moduleExpr.reason;
  const out: Array<[string, string]> = [
    ['parallelism', String(change.parallelism)],
    ['placement', `'worker'`],
    ['module', moduleExpr],
  ];
  if (runtime && fn?.declaredName !== runtime.exportName) out.push(['exportName', quoted(runtime.exportName)]);
  if (!runtime && fn && !fn.exportName && fn.exportInsertAt !== undefined && fn.file) exports.push({ file: fn.file, start: fn.exportInsertAt, end: fn.exportInsertAt, newText: 'export ' });
  if (fn?.exportName && fn.declaredName && fn.exportName !== fn.declaredName) out.push(['exportName', quoted(fn.exportName)]);
  return out;
}

/** What the `then` changes add to each converted operator (by id), or why one cannot be written. */
export function additionsOf(reading: DialectReading, input: ConvertInput, exports: PlannedEdit[], notes: string[]): Map<string, Additions> | string {
  const ops = new Map<string, Stage | undefined>([[reading.sourceOp.id, undefined], ...reading.stages.map((s) => [s.op.id, s] as [string, Stage])]);
  const out = new Map<string, Additions>();
  for (const change of input.change.then) {
    if (!ops.has(change.opId)) {
      notes.push(`The plan's ${change.kind} change on ${change.opId} is on an operator that stays as written, so it is not applied.`);
      continue;
    }
    const stage = ops.get(change.opId);
    let a = out.get(change.opId);
    if (!a) out.set(change.opId, (a = { options: [], after: [] }));
    const fnStage = stage && (stage.method === 'map' || stage.method === 'filter' || stage.method === 'flatMap');
    // A reader source: shards at once, and decompression and parsing in worker threads (its fns are plumber-data's own).
    const readerSource = !stage && reading.sourceWith !== undefined;
    switch (change.kind) {
      case 'parallelism':
        if (readerSource) {
          setOption(a.options, 'parallelism', String(change.to));
          break;
        }
        if (!fnStage) return `${change.opId} takes no parallelism.`;
        setOption(a.options, 'parallelism', String(change.to));
        break;
      case 'placement': {
        if (change.to === 'main') break;
        if (readerSource) {
          setOption(a.options, 'parallelism', String(change.parallelism));
          setOption(a.options, 'placement', `'worker'`);
          break;
        }
        if (!fnStage) return `${change.opId} has no fn to move to worker threads.`;
        const w = workerOptions(stage.fn ? { ...stage.op, fn: stage.fn } : stage.op, change, input, stage.fn ? undefined : stage.args[0], exports);
        if (typeof w === 'string') return w;
        for (const [k, v] of w) setOption(a.options, k, v);
        break;
      }
      case 'prefetch':
        if (stage?.method === 'prefetch') stage.args = [String(change.size)];
        else a.after.push(`.prefetch(${change.size})`);
        break;
      case 'cache':
        a.after.push('.cache()');
        break;
      case 'cycleLength':
      case 'convert':
        return `A ${change.kind} change cannot be part of a conversion.`;
    }
  }
  return out;
}

/** One converted call: `.method(args, { options })`. */
function callText(stage: Stage, extra: Additions | undefined): string {
  const options: Array<[string, string]> = [...stage.options];
  for (const [k, v] of extra?.options ?? []) setOption(options, k, v);
  const args = [...stage.args];
  if (options.length > 0) args.push(`{ ${options.map(([k, v]) => (k === v ? k : `${k}: ${v}`)).join(', ')} }`);
  return `.${stage.method}(${args.join(', ')})${(extra?.after ?? []).join('')}`;
}

/** The converted chain's text, each call on its own line where the original operator started one. */
export function chainText(reading: DialectReading, additions: Map<string, Additions>): string {
  const own = additions.get(reading.sourceOp.id);
  let out = `${reading.sourceWith ? reading.sourceWith(own?.options ?? []) : reading.source}${(own?.after ?? []).join('')}`;
  for (const stage of reading.stages) {
    const indent = stage.op.lineIndent;
    out += `${indent !== undefined ? `\n${indent}` : ''}${callText(stage, additions.get(stage.op.id))}`;
  }
  return out;
}
