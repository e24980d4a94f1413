/**
 * Node's `pipeline(src, …stages, callback)` and `compose(src, …stages)` → plumber-data, from their
 * last stages back: the run of Transform stages that ends the call (./transforms.ts says which are
 * faithful) becomes `flatMap`s on `from(() => <the call without them>)`, so the file read, the
 * decompression and the other stages stay Node streams and keep their callback. Consumers keep
 * what they iterated: a `Readable` in object mode over what the last Transform pushed. A function
 * whose return type names the last Transform's class is declared to return that `Readable`.
 */
import type { PlannedEdit } from '../fixes/edits';
import type { GraphOp, PipelineGraph } from '../graph/types';
import { linearChain } from './chain';
import { argsAt, closingOf, type ArgText } from './text';
import { transformFn, type TransformFn } from './transforms';
import { lazily, type Reading, type Stage } from './types';

/** A callback that does nothing (`() => {}`, `(err) => {}`), after any comments. */
const EMPTY_CALLBACK = /^(?:\s|\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)*(?:\(\s*(?:[A-Za-z_$][\w$]*\s*(?::[^)]*)?)?\)|[A-Za-z_$][\w$]*)\s*=>\s*\{\s*\}$/;

/** The `pipeline(`/`compose(` call whose arguments are the chain's operators, if it is one. */
function enclosingCall(chain: readonly GraphOp[], text: string): { start: number; open: number; end: number; name: string; args: ArgText[] } | undefined {
  const first = chain[0]!;
  const last = chain[chain.length - 1]!;
  const re = /(?:[A-Za-z_$][\w$]*\s*\.\s*)*(pipeline|compose)\s*\(/g;
  let found: ReturnType<typeof enclosingCall>;
  for (let m = re.exec(text); m && m.index < first.call.start; m = re.exec(text)) {
    const open = m.index + m[0].length - 1;
    const close = closingOf(text, open);
    if (close < last.call.end) continue;
    found = { start: m.index, open, end: close + 1, name: m[1]!, args: argsAt(text, open) };
  }
  return found;
}

/** The index of the argument that holds `op`'s call. */
function argIndex(args: readonly ArgText[], op: GraphOp): number {
  return args.findIndex((a) => a.start <= op.call.start && op.call.end <= a.end);
}

/** The import of `Readable` the wrap needs, when the file does not have it. */
function readableImport(file: string, text: string): PlannedEdit | undefined {
  if (/\bimport\s*\{[^}]*\bReadable\b[^}]*\}\s*from\s*['"](?:node:)?stream['"]/.test(text) || /\{[^}]*\bReadable\b[^}]*\}\s*=\s*require\(\s*['"](?:node:)?stream['"]\s*\)/.test(text)) return undefined;
  const named = /\bimport\s*\{(\s*)[^}]*\}\s*from\s*['"](?:node:)?stream['"]/.exec(text);
  if (named) {
    const at = named.index + named[0].indexOf('{') + 1;
    return { file, start: at, end: at, newText: `${named[1] || ' '}Readable,` };
  }
  const required = /\{(\s*)[^}]*\}\s*=\s*require\(\s*['"](?:node:)?stream['"]\s*\)/.exec(text);
  if (required) {
    const at = required.index + 1;
    return { file, start: at, end: at, newText: `${required[1] || ' '}Readable,` };
  }
  return { file, start: 0, end: 0, newText: /^\s*(import|export)\s/m.test(text) ? "import { Readable } from 'node:stream';\n" : "const { Readable } = require('node:stream');\n" };
}

/** The edit declaring `Readable` as the return type of the function that returns the call, when it named the last Transform's class. */
function returnTypeEdit(file: string, text: string, callStart: number, lastArg: string): PlannedEdit | undefined {
  const cls = /^new\s+([A-Za-z_$][\w$]*)\s*\(/.exec(lastArg)?.[1];
  if (!cls || !/\breturn\s*$/.test(text.slice(0, callStart))) return undefined;
  const before = text.slice(0, callStart).replace(/\breturn\s*$/, '');
  const header = new RegExp(`\\)\\s*:\\s*(${cls})\\s*(?:=>\\s*)?\\{\\s*$`).exec(before);
  if (!header) return undefined;
  const at = header.index + header[0].indexOf(cls, header[0].indexOf(':'));
  return { file, start: at, end: at + cls.length, newText: 'Readable' };
}

/** The reading of a chain that is a `pipeline()`/`compose()` call's arguments, or undefined when it is not one. */
export function readPipelineCall(pipeline: PipelineGraph, text: string): Reading | undefined {
  const chain = linearChain(pipeline);
  if (!Array.isArray(chain) || chain.length < 2) return undefined;
  const call = enclosingCall(chain, text);
  if (!call) return undefined;
  const indices = chain.map((op) => argIndex(call.args, op));
  if (indices.some((i, k) => i < 0 || (k > 0 && i <= indices[k - 1]!))) return { ok: false, reason: `The stages of ${call.name}() could not be matched to its arguments.` };
  // The run of Transform stages that ends the call, from the last back to the first that cannot be one.
  const fns: Array<{ op: GraphOp; fn: TransformFn }> = [];
  let why: string | undefined;
  for (let k = chain.length - 1; k >= 1; k--) {
    const op = chain[k]!;
    const fn = transformFn(
      op,
      call.args[indices[k]!]!.text,
      text,
      pipeline.file,
      fns.map((f) => f.fn.name),
    );
    if (typeof fn === 'string') {
      why = fn;
      break;
    }
    fns.unshift({ op, fn });
  }
  if (fns.length === 0) return { ok: false, reason: `The last stage of ${call.name}() cannot be converted: ${why ?? 'it is not a Transform'}.` };
  const keptCount = chain.length - fns.length;
  const sourceOp = chain[keptCount - 1]!;
  const lastKept = call.args[indices[keptCount - 1]!]!;
  const firstConverted = indices[keptCount]!;
  const lastConverted = indices[chain.length - 1]!;
  const trailing = call.args.slice(lastConverted + 1);
  let source: string;
  if (keptCount >= 2 || call.name === 'compose') {
    // The call as written without the converted stages, their separator and a comment that ends their line: its other arguments, its callback, its layout.
    const after = call.args[lastConverted]!.end;
    const comma = /^\s*,[ \t]*(?:\/\/[^\n]*)?(?:\n[ \t]*)?/.exec(text.slice(after, call.end));
    source = comma ? text.slice(call.start, call.args[firstConverted]!.start) + text.slice(after + comma[0].length, call.end) : text.slice(call.start, lastKept.end) + text.slice(after, call.end);
    // Node's types say pipeline() returns a WritableStream when its last stage is a generator function; it returns that stage's readable stream.
    if (call.name === 'pipeline' && /\.(c|m)?tsx?$/.test(pipeline.file)) source += ' as unknown as AsyncIterable<unknown>';
  } else if (trailing.every((a) => EMPTY_CALLBACK.test(a.text))) {
    // pipeline() takes two streams at least: its source alone is the source, and a callback that does nothing is not missed.
    source = lastKept.text;
  } else {
    return { ok: false, reason: `Without its Transform stages ${call.name}() would be left with its source alone, which it does not take, and its callback would no longer be called.` };
  }
  if (firstConverted !== indices[keptCount - 1]! + 1) return { ok: false, reason: `An argument of ${call.name}() between its stages could not be read.` };
  const stages: Stage[] = fns.map(({ op, fn }) => ({
    op,
    method: 'flatMap',
    args: [fn.name],
    options: [],
    fn: { form: 'reference', name: fn.name, declaredName: fn.name, exportName: fn.name, file: pipeline.file, sameFile: true },
  }));
  const extraEdits: PlannedEdit[] = [];
  const imported = readableImport(pipeline.file, text);
  if (imported) extraEdits.push(imported);
  const returned = returnTypeEdit(pipeline.file, text, call.start, call.args[lastConverted]!.text);
  if (returned) extraEdits.push(returned);
  extraEdits.push({
    file: pipeline.file,
    start: text.length,
    end: text.length,
    newText: fns
      .map((f) => f.fn.declaration)
      .join('')
      .replace(/^\n+/, text.endsWith('\n') ? '\n' : '\n\n'),
  });
  const notes = [
    `The Transform stages run as plumber-data flatMaps of the fns added at the end of the file (what each pushes for a chunk); ${call.name}() keeps the stages before them${trailing.length > 0 ? ' and its callback' : ''}.`,
    ...(returned ? ['The function now declares that it returns a Readable, which yields what the Transform pushed.'] : []),
  ];
  return {
    ok: true,
    reading: {
      source: `from(() => ${source})`,
      sourceOp,
      stages,
      wrap: (c, selfImported) => `Readable.from(${selfImported ? lazily(c) : c})`,
      imports: ['from'],
      notes,
      span: { start: call.start, end: call.end },
      extraEdits,
    },
  };
}
