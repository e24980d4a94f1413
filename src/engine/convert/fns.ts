/**
 * Whether a stage's function means the same thing once plumber-data calls it. Two rules:
 * - a function that reads or writes module state declared with `let`/`var` would, in a worker
 *   thread, see its own copy of that state (each worker loads the module afresh), so it is not
 *   moved to workers;
 * - plumber-data calls `fn(x, ctx)`: a function that reads a second argument the dialect passed
 *   (Node's `{ signal }`) would get something else.
 */
import type { GraphOp } from '../graph/types';
import { paramsOf } from './text';

/** Names declared at the top level of `text` with `let` or `var` (state a worker would not share). */
export function mutableModuleNames(text: string): string[] {
  const out: string[] = [];
  const re = /^(?:export\s+)?(?:let|var)\s+([^=;]+)/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    for (const part of m[1]!.split(',')) {
      const name = /^\s*([A-Za-z_$][\w$]*)/.exec(part)?.[1];
      if (name) out.push(name);
    }
  }
  return out;
}

/** The text of the operator's function: its declaration when the graph found it in this file, else the argument as written. */
export function fnText(op: GraphOp, text: string, argText: string | undefined): string | undefined {
  const at = op.fn?.definedAt;
  if (at && (op.fn?.sameFile || op.fn?.file === op.file)) return text.slice(at.start, at.end);
  return argText;
}

/** Why the fn of `op` cannot run in worker threads faithfully, or undefined when it can. */
export function workerRefusal(op: GraphOp, text: string, argText: string | undefined): string | undefined {
  const body = fnText(op, text, argText);
  if (body === undefined) return undefined;
  for (const name of mutableModuleNames(text)) {
    if (new RegExp(`(?<![\\w$.])${name.replace(/\$/g, '\\$')}(?![\\w$])`).test(body)) {
      return `${op.label} uses the module's mutable \`${name}\`, and each worker thread would hold its own copy of it.`;
    }
  }
  return undefined;
}

/** Why `op`'s fn would read a second argument plumber-data does not pass as the dialect did, or undefined. */
export function secondArgRefusal(op: GraphOp, text: string, argText: string | undefined, dialectArg: string): string | undefined {
  const body = fnText(op, text, argText);
  if (body === undefined) return undefined;
  const params = paramsOf(body.replace(/^export\s+(default\s+)?/, ''));
  if (params && params.length >= 2) return `${op.label} reads a second argument (${dialectArg}), which plumber-data does not pass.`;
  return undefined;
}
