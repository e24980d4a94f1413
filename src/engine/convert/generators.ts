/**
 * Async-generator stages → plumber-data. A stage written as the map or filter pattern — one loop
 * over its one parameter that yields once per element, or yields the element when a test holds —
 * is that operator:
 *   `async function* s(src) { for await (const x of src) yield f(x); }`      → `.map(f)`
 *   `async function* s(src) { for await (const x of src) if (p(x)) yield x; }` → `.filter(p)`
 * (any other expression in place of `f(x)` or `p(x)` becomes an inline fn of `x`), and a loop whose
 * block ends in its one yield is a map of that block (./loops.ts says when it is faithful):
 *   `for await (const x of src) { …; yield e; }` → `.map(async (x) => { …; return e; })`. Any other body
 * (several yields, state kept across elements, work before or after the loop) is not one of them:
 * the conversion stops there and that stage and those around it stay generators. The converted
 * part is handed on as an async generator that starts the dataset on its first `next()`
 * (`lazily`): what the first stage returned, and nothing runs when a worker imports the module.
 */
import type { FnInfo, GraphOp, PipelineGraph, Span } from '../graph/types';
import { linearChain } from './chain';
import { loopMap } from './loops';
import { closingOf, calledName, opArgs } from './text';
import { lazily, stagesUntilRefused, type Reading, type Stage } from './types';

const ID = '[A-Za-z_$][\\w$]*';

/** The declaration of the generator function `name` in `text`: its start, its parameter and its body's text. */
function generatorDeclaration(name: string, text: string): { start: number; param: string; body: string } | undefined {
  const re = new RegExp(`(?:^|[^\\w$.])((?:export\\s+)?async\\s+function\\s*\\*\\s*${name.replace(/\$/g, '\\$')}\\s*(?:<[^(]*>)?\\s*\\()`, 'm');
  const m = re.exec(text);
  if (!m) return undefined;
  const start = m.index + m[0].length - m[1]!.length;
  const open = m.index + m[0].length - 1;
  const close = closingOf(text, open);
  const params = text.slice(open + 1, close).trim();
  const param = new RegExp(`^(${ID})\\s*(?::[^,]*)?$`).exec(params)?.[1];
  const bodyOpen = bodyStart(text, close + 1);
  if (!param || bodyOpen < 0) return undefined;
  return { start, param, body: text.slice(bodyOpen + 1, closingOf(text, bodyOpen)).trim() };
}

/**
 * The offset of the `{` that opens a function's body, reading from just after its parameters'
 * `)`: past a return type annotation, whose own braces (`AsyncGenerator<{ id: number }>`, an object
 * type `{ a: number }`) are not the body. -1 when there is none.
 */
function bodyStart(text: string, from: number): number {
  let i = from;
  while (i < text.length && /\s/.test(text[i]!)) i++;
  if (text[i] !== ':') return text.indexOf('{', from);
  let depth = 0;
  // A `{` at depth 0 opens the body once the type has something in it; before that it opens an object type.
  let typed = false;
  for (i++; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '{' && depth === 0 && typed) return i;
    if ('<([{'.includes(ch)) depth++;
    else if (ch === '>' && text[i - 1] === '=') continue;
    else if ('>)]}'.includes(ch)) {
      depth--;
      if (depth === 0) typed = true;
    } else if (depth === 0 && !/\s/.test(ch)) typed = true;
  }
  return -1;
}

/** Strips one pair of braces around a single statement, and a trailing semicolon. */
function statement(s: string): string {
  let out = s.trim();
  if (out.startsWith('{') && closingOf(out, 0) === out.length - 1) out = out.slice(1, -1).trim();
  return out.replace(/;$/, '').trim();
}

/** The map or filter a generator body is, as `[method, fn text]`, or why it is neither. `indent`: the converted chain's line's. */
function patternOf(param: string, body: string, indent: string): [string, string] | string {
  const loop = new RegExp(`^for\\s+await\\s*\\(\\s*(?:const|let)\\s+(${ID}|\\{[^}]*\\}|\\[[^\\]]*\\])\\s+of\\s+${param.replace(/\$/g, '\\$')}\\s*\\)`).exec(body);
  if (!loop) return `its body is not one \`for await\` loop over ${param} and nothing else`;
  const x = loop[1]!;
  const rest = body.slice(loop[0].length);
  const inner = statement(rest);
  // One statement (a `;` left inside is a second one, or a string this reading does not need to trust).
  if (!inner.includes(';')) {
    const ret = new RegExp(`^yield\\s+(?:await\\s+)?([\\s\\S]+)$`).exec(inner);
    if (ret && !/\byield\b/.test(ret[1]!)) return ['map', fnOf(x, ret[1]!.trim())];
    const cond = /^if\s*\(/.exec(inner);
    if (cond) {
      const close = closingOf(inner, cond[0].length - 1);
      const test = inner.slice(cond[0].length, close).trim();
      const then = statement(inner.slice(close + 1));
      if (new RegExp(`^yield\\s+${x.replace(/\$/g, '\\$')}$`).test(then) && !/\byield\b/.test(test)) return ['filter', fnOf(x, test)];
    }
  }
  // A block of statements ending in its one yield: a map (./loops.ts).
  const open = loop[0].length + (rest.length - rest.trimStart().length);
  if (body[open] !== '{') return 'its loop body is more than one statement without braces';
  const close = closingOf(body, open);
  if (body.slice(close + 1).trim() !== '') return 'it does work after its loop';
  const map = loopMap(body.slice(open + 1, close), x, param, indent);
  return 'why' in map ? map.why : ['map', map.fn];
}

/** `f` when `expr` is `f(x)` (or `await f(x)`), else an inline fn of `x` (async when it awaits; an object literal in parentheses). */
function fnOf(x: string, expr: string): string {
  const call = new RegExp(`^(?:await\\s+)?(${ID})\\s*\\(\\s*${x.replace(/\$/g, '\\$')}\\s*\\)$`).exec(expr);
  if (call) return call[1]!;
  const result = expr.startsWith('{') ? `(${expr})` : expr;
  return `${/(?<![\w$.])await(?![\w$])/.test(expr) ? 'async ' : ''}(${x}) => ${result}`;
}

/** A span of `text` with its LSP range. */
function spanOf(text: string, start: number, end: number): Span {
  const at = (offset: number): { line: number; character: number } => {
    const before = text.slice(0, offset);
    const line = before.split('\n').length - 1;
    return { line, character: offset - (before.lastIndexOf('\n') + 1) };
  };
  return { start, end, range: { start: at(start), end: at(end) } };
}

/** What the graph knows of a fn the conversion names (`f` in `yield f(x)`), from its declaration in the same file. */
function fnInfoOf(name: string, op: GraphOp, text: string): FnInfo {
  const decl = new RegExp(`^(export\\s+)?(async\\s+)?function\\s+${name.replace(/\$/g, '\\$')}\\s*\\(`, 'm').exec(text);
  if (!decl) return { name, form: 'reference' };
  const open = text.indexOf('{', closingOf(text, decl.index + decl[0].length - 1));
  const end = open < 0 ? decl.index + decl[0].length : closingOf(text, open) + 1;
  return {
    definedAt: spanOf(text, decl.index, end),
    name,
    declaredName: name,
    form: 'reference',
    async: decl[2] !== undefined,
    file: op.file,
    sameFile: true,
    ...(decl[1] ? { exportName: name } : { exportInsertAt: decl.index }),
  };
}

/** The indentation of the line `offset` is on. */
function indentAt(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}

function stage(op: GraphOp, upstream: GraphOp, text: string): Stage | string {
  const name = calledName(op, text);
  const args = opArgs(op, text);
  if (args.length !== 1 || args[0]!.start !== upstream.call.start || args[0]!.end !== upstream.call.end) return `${op.label} takes more than the stage before it`;
  const decl = generatorDeclaration(name, text);
  if (!decl) return `${name} is not an async generator declared in this file`;
  const pattern = patternOf(decl.param, decl.body, indentAt(text, op.call.start));
  if (typeof pattern === 'string') return `${name} is not one loop over its input that yields each element once (a map) or when a test holds (a filter): ${pattern}, so it stays a generator`;
  const [method, fn] = pattern;
  const inline = fn.includes('=>');
  return { op, method, args: [fn], options: [], ...(inline ? { fn: { form: 'inline' as const } } : { fn: fnInfoOf(fn, op, text) }) };
}

export function readGenerators(pipeline: PipelineGraph, text: string): Reading {
  const chain = linearChain(pipeline);
  if (!Array.isArray(chain)) return { ok: false, reason: chain.reason };
  const [sourceOp, ...rest] = chain;
  if (!sourceOp) return { ok: false, reason: 'The pipeline has no operators.' };
  const { stages, stoppedAt } = stagesUntilRefused(rest, (op, previous) => stage(op, previous ?? sourceOp, text));
  if (stages.length === 0) return { ok: false, reason: stoppedAt ? `Nothing after the source can be converted: ${stoppedAt.why}.` : 'The chain has no stage to convert.' };
  const source = text.slice(sourceOp.call.start, sourceOp.call.end);
  return { ok: true, reading: { source: `from(${source})`, sourceOp, stages, wrap: (c) => lazily(c), imports: ['from'], ...(stoppedAt ? { stoppedAt } : {}), notes: [] } };
}
