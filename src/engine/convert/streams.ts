/**
 * Node stream operators → plumber-data. `Readable.from(src).map(fn, { concurrency })…` becomes
 * `Readable.from(from(src).map(fn, { parallelism })…)`: consumers keep a `Readable` in object
 * mode, which yields what the dataset yields. Rules:
 * - `Readable.from(src)` with one argument that is not a string literal (a string is one chunk to
 *   Node but a run of characters to `from`);
 * - `map`, `filter`, `flatMap` keep their fn and order (Node keeps input order under
 *   `concurrency`, as plumber-data does); `concurrency` is `parallelism`; `highWaterMark` is a
 *   buffer size consumers do not see; a `signal` cancels in a way plumber-data does not, so it
 *   stops the conversion, as does a fn that reads Node's second argument (`{ signal }`);
 * - `take(n)` is `take(n)`, `drop(n)` is `skip(n)`;
 * - any other operator stops the conversion there: it and what follows stay Node operators on
 *   the converted `Readable`;
 * - when worker threads import the pipeline's own module, the dataset goes to `Readable.from`
 *   inside a lazy async generator (see `lazily`).
 * A chain that is a `pipeline(…)`/`compose(…)` call's arguments is read by ./pipelineCall.ts.
 */
import type { GraphOp, PipelineGraph } from '../graph/types';
import { linearChain } from './chain';
import { secondArgRefusal } from './fns';
import { readPipelineCall } from './pipelineCall';
import { argsAt, calledName, opArgs } from './text';
import { lazily, stagesUntilRefused, type Reading, type Stage } from './types';

const FN_OPS: Record<string, string> = { map: 'map', filter: 'filter', flatMap: 'flatMap' };
const COUNT_OPS: Record<string, string> = { take: 'take', drop: 'skip' };

/** Node's options of a map/filter/flatMap, in plumber-data's names, or why they are not converted. */
function nodeOptions(op: GraphOp, optionsText: string | undefined): Stage['options'] | string {
  if (optionsText === undefined) return [];
  if (!optionsText.startsWith('{')) return `the options of ${op.label} are the expression \`${optionsText}\``;
  const out: Stage['options'] = [];
  for (const prop of argsAt(optionsText, 0)) {
    const m = /^([A-Za-z_$][\w$]*)\s*(?::\s*([\s\S]+))?$/.exec(prop.text);
    if (!m) return `${op.label} has the option \`${prop.text}\`, which is not read`;
    const [, key, value = key] = m;
    if (key === 'concurrency') out.push(['parallelism', value!]);
    else if (key !== 'highWaterMark') return `${op.label} has the option \`${key}\`, which plumber-data does not take`;
  }
  return out;
}

function stage(op: GraphOp, text: string): Stage | string {
  const name = calledName(op, text);
  const args = opArgs(op, text).map((a) => a.text);
  const fnMethod = FN_OPS[name];
  if (fnMethod) {
    const refusal = secondArgRefusal(op, text, args[0], "Node's `{ signal }`");
    if (refusal) return refusal.replace(/\.$/, '');
    const options = nodeOptions(op, args[1]);
    if (typeof options === 'string') return options;
    return { op, method: fnMethod, args: args.slice(0, 1), options };
  }
  const countMethod = COUNT_OPS[name];
  if (countMethod && args.length === 1) return { op, method: countMethod, args, options: [] };
  if ((name === 'pipe' || name === 'compose') && args.some((a) => /\bflush\s*[(:]/.test(a))) {
    return `${op.label} is a Transform whose flush can emit after its input ends, which no plumber-data operator does, so it and what follows stay Node streams`;
  }
  return `plumber-data has no faithful counterpart of the stream's ${name}, so it and what follows stay Node operators`;
}

export function readStreams(pipeline: PipelineGraph, text: string): Reading {
  const call = readPipelineCall(pipeline, text);
  if (call) return call;
  const chain = linearChain(pipeline);
  if (!Array.isArray(chain)) return { ok: false, reason: chain.reason };
  const [sourceOp, ...rest] = chain;
  if (!sourceOp) return { ok: false, reason: 'The pipeline has no operators.' };
  const callee = text.slice(sourceOp.call.start, sourceOp.name.end);
  if (!/(^|\.)Readable\s*\.\s*from$/.test(callee)) {
    return { ok: false, reason: `${sourceOp.label} is not \`Readable.from(…)\`: only operator chains on Readable.from are converted.` };
  }
  const args = opArgs(sourceOp, text);
  if (args.length !== 1) return { ok: false, reason: `${sourceOp.label} has options (object mode, buffer size) the conversion would not keep.` };
  if (/^['"`]/.test(args[0]!.text)) return { ok: false, reason: `${sourceOp.label} reads a string, which Node yields as one chunk and plumber-data as characters.` };
  const { stages, stoppedAt } = stagesUntilRefused(rest, (op) => stage(op, text));
  if (stages.length === 0 && stoppedAt) return { ok: false, reason: `Nothing after the source can be converted: ${stoppedAt.why}.` };
  const readable = callee.replace(/\s*\.\s*from$/, '');
  return {
    ok: true,
    reading: { source: `from(${args[0]!.text})`, sourceOp, stages, wrap: (c, selfImported) => `${readable}.from(${selfImported ? lazily(c) : c})`, imports: ['from'], ...(stoppedAt ? { stoppedAt } : {}), notes: [] },
  };
}
