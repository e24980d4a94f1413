/**
 * A Node `Transform` stage of a `pipeline()`/`compose()` call as a plumber-data `flatMap`: what the
 * Transform pushes for one chunk, in order, is what the flatMap's fn returns for it. Its fn is a
 * function the rewrite adds to the pipeline's file (worker threads import it from there): each
 * thread makes the Transform once, with the very expression the source wrote, and runs its
 * `_transform` on each chunk. Faithful only when the Transform
 * - is made by `new C()` of a class written in the project (this file or one it imports by a
 *   relative path) that extends `Transform`, with no arguments, or by `new Transform({ … })`;
 * - takes and hands on objects as they are (`objectMode: true`, or both of its sides in object
 *   mode): otherwise Node hands it bytes and joins what it pushes into byte chunks;
 * - keeps nothing from one chunk to the next (no write to `this.x` nor a call that changes it
 *   outside the constructor, no module `let`/`var`): each worker thread holds its own Transform,
 *   so a chunk would see the state of another thread's chunks, in no fixed order;
 * - emits nothing when its input ends (no `flush`/`final`): no plumber-data operator does;
 * - finishes each chunk before `_transform` returns (not `async`, no `await`): the fn reads what
 *   it pushed right then;
 * - never ends its output early (`push(null)`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GraphOp } from '../graph/types';
import { mutableModuleNames } from './fns';
import { closingOf } from './text';

const ID = '[A-Za-z_$][\\w$]*';

/** A Transform stage the rewrite can run as a flatMap: the fn's name and the declaration it adds to the file. */
export interface TransformFn {
  name: string;
  declaration: string;
}

/** Where a class the file names is declared: its file's text (this file's, or the module it imports it from). */
function classSource(name: string, text: string, file: string): { text: string; file: string; declared: string } | string {
  if (new RegExp(`\\bclass\\s+${name}\\b`).test(text)) return { text, file, declared: name };
  const imported = new RegExp(`import\\s*(?:type\\s+)?\\{([^}]*)\\}\\s*from\\s*(['"])([^'"]+)\\2`, 'g');
  for (let m = imported.exec(text); m; m = imported.exec(text)) {
    for (const part of m[1]!.split(',')) {
      const names = new RegExp(`^\\s*(${ID})(?:\\s+as\\s+(${ID}))?\\s*$`).exec(part);
      if (!names || (names[2] ?? names[1]) !== name) continue;
      const spec = m[3]!;
      if (!spec.startsWith('.')) return `${name} comes from the package ${spec}, whose source the conversion does not read`;
      const base = path.resolve(path.dirname(file), spec);
      const stem = base.replace(/\.(c|m)?js$/, '');
      const found = [base, `${stem}.ts`, `${stem}.mts`, `${stem}.cts`, `${stem}.tsx`, `${stem}.js`, `${stem}.mjs`, `${stem}.cjs`, path.join(base, 'index.ts'), path.join(base, 'index.js')].find(
        (f) => fs.existsSync(f) && fs.statSync(f).isFile(),
      );
      if (!found) return `the module ${spec} that ${name} comes from could not be found`;
      return { text: fs.readFileSync(found, 'utf8'), file: found, declared: names[1]! };
    }
  }
  return `${name} is not a class this file declares or imports by a relative path`;
}

/** The body of `class name extends …` in `text` (between its braces), and what it extends. */
function classBody(name: string, text: string): { base: string; body: string } | undefined {
  const m = new RegExp(`\\bclass\\s+${name}\\s*(?:<[^{]*?>)?\\s*extends\\s+([\\w$.]+)[^{]*\\{`).exec(text);
  if (!m) return undefined;
  const open = m.index + m[0].length - 1;
  return { base: m[1]!, body: text.slice(open + 1, closingOf(text, open)) };
}

/** The constructor's text in a class body (state it sets up there is made once per thread, like the rest of the Transform). */
function withoutConstructor(body: string): string {
  const m = /\bconstructor\s*\(/.exec(body);
  if (!m) return body;
  const close = closingOf(body, m.index + m[0].length - 1);
  const open = body.indexOf('{', close);
  if (open < 0) return body;
  return body.slice(0, m.index) + body.slice(closingOf(body, open) + 1);
}

const MUTATORS = 'push|pop|shift|unshift|splice|set|add|delete|clear|fill|sort|reverse|copyWithin';

/** Why the Transform's code (its class body, or its options object) does not meet the rules above, or undefined. */
function codeRefusal(what: string, code: string, moduleText: string): string | undefined {
  if (!/\bobjectMode\s*:\s*true\b/.test(code) && !(/\breadableObjectMode\s*:\s*true\b/.test(code) && /\bwritableObjectMode\s*:\s*true\b/.test(code))) {
    return `${what} is not in object mode: Node hands it bytes and joins what it pushes into byte chunks, which plumber-data's elements are not`;
  }
  if (/\b_?(flush|final)\s*[(:]/.test(code)) return `${what} has a flush, which can emit after its input ends, and no plumber-data operator does`;
  if (/\basync\s+_?transform\b|\btransform\s*:\s*async\b|\bawait\b/.test(code)) return `${what} finishes its chunks asynchronously, and the converted fn reads what it pushed when \`_transform\` returns`;
  if (/\bpush\s*\(\s*null\s*\)/.test(code)) return `${what} ends its output early (\`push(null)\`), which a flatMap cannot`;
  const perChunk = withoutConstructor(code);
  const state = new RegExp(
    `(?:\\bthis\\.(${ID})(?:\\s*\\[[^\\]]*\\])?\\s*(?:[-+*/%&|^]|\\?\\?|<<|>>>?|\\*\\*)?=(?!=)|(?:\\+\\+|--)\\s*this\\.(${ID})|\\bthis\\.(${ID})\\s*(?:\\+\\+|--)|\\bthis\\.(${ID})\\.(?:${MUTATORS})\\s*\\()`,
  ).exec(perChunk);
  if (state) {
    const field = state[1] ?? state[2] ?? state[3] ?? state[4];
    return `${what} keeps state from one chunk to the next (\`this.${field}\`): in worker threads each thread would hold its own, and a chunk would see another thread's chunks in no fixed order`;
  }
  for (const name of mutableModuleNames(moduleText)) {
    if (new RegExp(`(?<![\\w$.])${name.replace(/\$/g, '\\$')}(?![\\w$])`).test(code)) return `${what} uses its module's mutable \`${name}\`, and each worker thread would hold its own copy of it`;
  }
  return undefined;
}

const KEYWORDS = new Set(
  'async await break case catch class const continue debugger default delete do else export extends false finally for function if import in instanceof let new null of return super switch this throw true try typeof undefined var void while with yield as type interface keyof readonly unknown any never number string boolean object symbol bigint'.split(
    ' ',
  ),
);

/** Names bound at the top level of a module's text: imports and unindented declarations. */
function topLevelNames(text: string): Set<string> {
  const out = new Set<string>();
  const decl = new RegExp(`^(?:export\\s+)?(?:default\\s+)?(?:declare\\s+)?(?:async\\s+)?(?:function\\s*\\*?|class|const|let|var|enum)\\s+(${ID})`, 'gm');
  for (let m = decl.exec(text); m; m = decl.exec(text)) out.add(m[1]!);
  const imports = /^import\s+(?:type\s+)?([^'";]*?)\s+from\s/gm;
  for (let m = imports.exec(text); m; m = imports.exec(text)) for (const name of m[1]!.match(new RegExp(`${ID}(?=\\s*(?:[,}]|$))`, 'g')) ?? []) out.add(name);
  return out;
}

/**
 * A name the options object of `new Transform({ … })` reads from the function it is written in (a
 * parameter, a local): moved to the module's top level for worker threads, it would not be there.
 * Property names, its own parameters and locals, the module's top-level names and globals are fine.
 */
function localName(options: string, moduleText: string): string | undefined {
  // Its functions' parameters (`function f(a, b) {`, a method `m(a, b) {`, `(a, b) =>`, `a =>`) and its locals.
  const own = new Set<string>();
  const lists = new RegExp(`\\(([^()]*)\\)\\s*(?::[^{=]*)?(?:\\{|=>)|(${ID})\\s*=>`, 'g');
  for (const m of options.matchAll(lists)) {
    if (m[2]) own.add(m[2]);
    for (const p of (m[1] ?? '').split(',')) {
      const name = new RegExp(`^\\s*(?:\\.\\.\\.)?(${ID})`).exec(p)?.[1];
      if (name) own.add(name);
    }
  }
  for (const m of options.matchAll(new RegExp(`\\b(?:const|let|var|function)\\s+(${ID})`, 'g'))) own.add(m[1]!);
  const top = topLevelNames(moduleText);
  const scanned = options.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\/|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"/g, ' ');
  for (const m of scanned.matchAll(new RegExp(`(?<![\\w$.])(${ID})(?![\\w$])(?!\\s*:(?!:))`, 'g'))) {
    const name = m[1]!;
    if (KEYWORDS.has(name) || own.has(name) || top.has(name) || name in globalThis) continue;
    // A method's own name (`transform(chunk, …) {`) and a type after `:` are not read values.
    const after = scanned.slice(m.index! + name.length);
    const before = scanned.slice(0, m.index!);
    if (/^\s*\(/.test(after) && /[{,]\s*$/.test(before)) continue;
    if (/:\s*$/.test(before)) continue;
    return name;
  }
  return undefined;
}

/** A name for the added fn that the file does not use yet. */
function freshName(base: string, text: string): string {
  for (let i = 0; ; i++) {
    const name = i === 0 ? base : `${base}${i + 1}`;
    if (!new RegExp(`(?<![\\w$])${name}(?![\\w$])`).test(text)) return name;
  }
}

/** The added fn's declaration: typed in a TypeScript file, plain in a JavaScript one. */
function declaration(name: string, made: string, label: string, typed: boolean): string {
  const t = (s: string): string => (typed ? s : '');
  return `

/**
 * What \`${made}\` pushes for one chunk, in order: plumber-data's fn for ${label}, added by
 * Plumber's conversion. Each thread that runs it makes the Transform once and runs its
 * \`_transform\` on each chunk.
 */
const ${name}Stream${t(": { current?: import('node:stream').Transform }")} = {};
export function ${name}(chunk${t(': unknown')})${t(': unknown[]')} {
  const transform = (${name}Stream.current ??= ${made});
  const out${t(': unknown[]')} = [];
  let failed${t(': Error | null | undefined')};
  let called = false;
  const push = transform.push;
  transform.push = (x${t(': unknown')}) => {
    if (x !== null && x !== undefined) out.push(x);
    return true;
  };
  try {
    transform._transform(chunk, 'utf8', (error${t('?: Error | null')}, x${t('?: unknown')}) => {
      called = true;
      failed = error;
      if (x !== null && x !== undefined) out.push(x);
    });
  } finally {
    transform.push = push;
  }
  if (failed) throw failed;
  if (!called) throw new Error('${label.replace(/'/g, "\\'")} did not finish a chunk before _transform returned; it cannot run as a plumber-data fn.');
  return out;
}
`;
}

/** The flatMap fn for the Transform stage `op` (its argument text `arg`), or why it cannot be one. */
export function transformFn(op: GraphOp, arg: string, text: string, file: string, taken: string[]): TransformFn | string {
  const typed = /\.(c|m)?tsx?$/.test(file);
  const label = op.label.replace(/^pipeline: |^compose: /, '');
  const objectForm = new RegExp(`^new\\s+(?:${ID}\\s*\\.\\s*)?Transform\\s*\\(\\s*\\{`).exec(arg);
  if (objectForm) {
    const open = objectForm[0].length - 1;
    if (closingOf(arg, open) < 0 || !/^\s*\)$/.test(arg.slice(closingOf(arg, open) + 1))) return `${label} is made with more than its options`;
    const why = codeRefusal(label, arg.slice(open), text);
    if (why) return why;
    const local = localName(arg.slice(open), text);
    if (local) return `${label} reads \`${local}\` from the function it is made in, which the worker threads' copy of it, made at the module's top level, would not see`;
    const name = freshName(`transformLine${op.name.range.start.line + 1}`, [text, ...taken].join('\n'));
    return { name, declaration: declaration(name, arg, `the Transform on line ${op.name.range.start.line + 1}`, typed) };
  }
  const made = new RegExp(`^new\\s+(${ID})\\s*\\(([\\s\\S]*)\\)$`).exec(arg);
  if (!made) return `${label} is not \`new C()\` of a Transform class nor \`new Transform({ … })\``;
  const className = made[1]!;
  if (made[2]!.trim() !== '') return `${label} is made with arguments, which a worker thread making its own would not have`;
  const source = classSource(className, text, file);
  if (typeof source === 'string') return source;
  const cls = classBody(source.declared, source.text);
  if (!cls) return `${className} is not declared as a class that extends another`;
  if (!/(^|\.)Transform$/.test(cls.base)) return `${className} extends ${cls.base}, not Transform: only a Transform's per-chunk work is a flatMap`;
  const why = codeRefusal(className, cls.body, source.text);
  if (why) return why;
  const name = freshName(`${className[0]!.toLowerCase()}${className.slice(1)}Chunk`, [text, ...taken].join('\n'));
  return { name, declaration: declaration(name, `new ${className}()`, className, typed) };
}
