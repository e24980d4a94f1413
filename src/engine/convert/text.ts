/**
 * Reading a call's argument list from its text, for the rewrite: the graph gives each operator's
 * spans (its name, its own call, its options), and the rewrite needs each argument as written. The
 * scanner knows strings, template literals, comments and brackets, which is all an argument list
 * needs to be split at its top-level commas; it never evaluates or reformats what it reads.
 */
import type { GraphOp } from '../graph/types';

/** One argument as written: its text (trimmed) and offsets into the file's text. */
export interface ArgText {
  text: string;
  start: number;
  end: number;
}

/** The offset just past the string, template or comment that starts at `i`, or `i` when none does. */
export function skipLiteral(text: string, i: number): number {
  const c = text[i];
  if (c === '/' && text[i + 1] === '/') {
    const nl = text.indexOf('\n', i);
    return nl < 0 ? text.length : nl;
  }
  if (c === '/' && text[i + 1] === '*') {
    const close = text.indexOf('*/', i + 2);
    return close < 0 ? text.length : close + 2;
  }
  if (c === "'" || c === '"' || c === '`') {
    let j = i + 1;
    while (j < text.length && text[j] !== c) {
      if (text[j] === '\\') j++;
      else if (c === '`' && text[j] === '$' && text[j + 1] === '{') j = closingOf(text, j + 1);
      j++;
    }
    return j + 1;
  }
  return i;
}

/** The offset of the bracket that closes the one at `open` (`(`, `[`, `{`). */
export function closingOf(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const past = skipLiteral(text, i);
    if (past !== i) {
      i = past - 1;
      continue;
    }
    const c = text[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return text.length;
}

/** The top-level arguments between the parentheses at `open` and its closing one. */
export function argsAt(text: string, open: number): ArgText[] {
  const close = closingOf(text, open);
  const out: ArgText[] = [];
  let depth = 0;
  let start = open + 1;
  const push = (end: number): void => {
    const raw = text.slice(start, end);
    const lead = raw.length - raw.trimStart().length;
    const trimmed = raw.trim();
    if (trimmed !== '') out.push({ text: trimmed, start: start + lead, end: start + lead + trimmed.length });
  };
  for (let i = open + 1; i < close; i++) {
    const past = skipLiteral(text, i);
    if (past !== i) {
      i = past - 1;
      continue;
    }
    const c = text[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      push(i);
      start = i + 1;
    }
  }
  push(close);
  return out;
}

/** The arguments of an operator's own call (`map(f, { … })`): after its name and any type arguments. */
export function opArgs(op: GraphOp, text: string): ArgText[] {
  const open = text.indexOf('(', op.name.end);
  if (open < 0 || open >= op.own.end) return [];
  return argsAt(text, open);
}

/** The name the operator is called by in the source (`mapAsync`, `generator`, `from`). */
export function calledName(op: GraphOp, text: string): string {
  return text.slice(op.name.start, op.name.end);
}

/**
 * The parameters of a function written as `text` (an arrow function or a function expression or
 * declaration), or undefined when the text is not one the scanner can read.
 */
export function paramsOf(fnText: string): ArgText[] | undefined {
  const arrowBare = /^(?:async\s+)?([A-Za-z_$][\w$]*)\s*=>/.exec(fnText);
  if (arrowBare) return [{ text: arrowBare[1]!, start: 0, end: 0 }];
  const open = fnText.indexOf('(');
  if (open < 0) return undefined;
  const head = fnText.slice(0, open);
  if (!/^(?:async\s*)?(?:function\s*\*?\s*[A-Za-z_$]*[\w$]*\s*)?(?:<[^(]*>\s*)?$/.test(head.trim())) return undefined;
  return argsAt(fnText, open);
}
