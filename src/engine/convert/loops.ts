/**
 * The map a generator's loop body is, when it is one: `for await (const x of src) { …statements…;
 * yield expr; }` yields exactly once per element, so it is `.map(async (x) => { …statements…;
 * return expr; })` (`async` when the body awaits). Faithful only when nothing in the body ties one
 * element to another or to the loop, so each rule below refuses with the reason it is not:
 * - one `yield`, the block's last statement, at the block's own level (not under a condition or an
 *   inner loop), not `yield*`;
 * - no `break`, `continue` or `return` anywhere in the body (this reading cannot tell one that
 *   leaves the loop from one in an inner function, so it refuses both);
 * - the loop's input is not read inside the body (the map has no input to pull from);
 * - nothing declared outside the body is assigned, nor changed by a mutating method call (state
 *   across elements, which a map running several calls at once would interleave).
 * The body's text is kept as written, re-indented; `yield` becomes `return`, which has the same
 * grammar (no line break after it), so the expression means what it meant.
 */
import { skipLiteral } from './text';

const ID = '[A-Za-z_$][\\w$]*';
const MUTATORS = 'push|pop|shift|unshift|splice|sort|reverse|fill|copyWithin|set|add|delete|clear';

/** `text` with the insides of strings, templates and comments blanked (offsets and line breaks kept). */
export function codeOnly(text: string): string {
  let out = '';
  for (let i = 0; i < text.length;) {
    const past = skipLiteral(text, i);
    if (past === i) {
      out += text[i];
      i++;
      continue;
    }
    out += text.slice(i, past).replace(/[^\n]/g, ' ');
    i = past;
  }
  return out;
}

/** The bracket depth of each offset of `code` (already `codeOnly`), relative to its start. */
function depths(code: string): number[] {
  const out: number[] = [];
  let depth = 0;
  for (const c of code) {
    if (c === ')' || c === ']' || c === '}') depth--;
    out.push(depth);
    if (c === '(' || c === '[' || c === '{') depth++;
  }
  return out;
}

/** Names a block declares (`const`, `let`, `var`, destructured too, and functions), and the loop variable's. */
function declaredIn(code: string, loopVar: string): Set<string> {
  const out = new Set<string>(loopVar.match(new RegExp(ID, 'g')) ?? []);
  const re = new RegExp(`(?<![\\w$.])(?:const|let|var|function\\*?|class)\\s*(${ID}|\\{[^=]*?\\}|\\[[^=]*?\\])`, 'g');
  for (let m = re.exec(code); m; m = re.exec(code)) for (const name of m[1]!.match(new RegExp(ID, 'g')) ?? []) out.add(name);
  return out;
}

/** The first name declared outside the block that the block assigns or mutates, or undefined. */
function outerWrite(code: string, declared: Set<string>): string | undefined {
  const target = `(${ID})(?:\\s*(?:\\??\\.\\s*${ID}|\\[[^\\]]*\\]))*`;
  const patterns = [
    new RegExp(`(?<![\\w$.])${target}\\s*(?:\\*\\*|<<|>>>?|&&|\\|\\||\\?\\?|[-+*/%&|^])?=(?![=>])`, 'g'),
    new RegExp(`(?<![\\w$.])${target}\\s*(?:\\+\\+|--)`, 'g'),
    new RegExp(`(?:\\+\\+|--)\\s*${target}`, 'g'),
    new RegExp(`(?<![\\w$.])${target}\\s*\\.\\s*(?:${MUTATORS})\\s*\\(`, 'g'),
  ];
  for (const re of patterns) {
    for (let m = re.exec(code); m; m = re.exec(code)) {
      // A type annotation (`const y: T = …`) is not a write of `T`.
      if (/:\s*$/.test(code.slice(0, m.index))) continue;
      if (!declared.has(m[1]!)) return m[1]!;
    }
  }
  return undefined;
}

/** Whether the line break at `at` in `code` ends a statement (the next line does not continue the expression). */
function endsStatement(code: string, at: number): boolean {
  const before = code.slice(0, at).trimEnd();
  const after = code.slice(at).trimStart();
  if (before === '' || after === '') return false;
  if (/[-+*/%&|^!~?:,=<>.]$/.test(before)) return false;
  return !/^(?:[-+*/%&|^?:,=<>.]|as\b|satisfies\b|instanceof\b|in\b)/.test(after);
}

/** Whether `code` (before a statement) ends in a control header whose body the statement is (`if (…)`, `else`, `for (…)`). */
function controlled(code: string): boolean {
  if (/(?<![\w$.])(?:else|do)$/.test(code)) return true;
  if (!code.endsWith(')')) return false;
  let depth = 0;
  for (let i = code.length - 1; i >= 0; i--) {
    if (code[i] === ')') depth++;
    else if (code[i] === '(' && --depth === 0) return /(?<![\w$.])(?:if|for|while|with)\s*(?:await\s*)?$/.test(code.slice(0, i));
  }
  return false;
}

/** `lines` dedented by their common indentation and indented by `indent`. */
function reindent(lines: string[], indent: string): string[] {
  const common = Math.min(...lines.filter((l) => l.trim() !== '').map((l) => l.length - l.trimStart().length));
  return lines.map((l) => (l.trim() === '' ? '' : indent + l.slice(common)));
}

/**
 * The map fn a loop body is, or why it is not one. `block` is the text between the loop's braces,
 * `loopVar` the loop's variable as written (a name or a destructuring pattern), `input` the name of
 * the generator's parameter, `indent` the indentation of the line the converted chain starts on.
 */
export function loopMap(block: string, loopVar: string, input: string, indent: string): { fn: string } | { why: string } {
  const code = codeOnly(block);
  const yields = [...block.matchAll(/(?<![\w$.])yield(?![\w$])/g)];
  if (yields.length === 0) return { why: 'its loop yields nothing' };
  if (yields.length > 1) return { why: 'its loop yields more than once per element' };
  const at = yields[0]!.index;
  if (/^yield\s*\*/.test(code.slice(at))) return { why: 'its loop delegates with yield*' };
  const depth = depths(code);
  if (depth[at] !== 0) return { why: 'its one yield is under a condition or an inner loop, not once per element' };
  const before = code.slice(0, at).trimEnd();
  if (controlled(before)) return { why: 'its one yield is under a condition or an inner loop, not once per element' };
  if (before !== '' && !/[;}]$/.test(before) && !(/\n\s*$/.test(code.slice(0, at)) && endsStatement(code, before.length))) return { why: 'its yield is part of a larger expression' };
  const jump = /(?<![\w$.])(break|continue|return)(?![\w$])/.exec(code);
  if (jump) return { why: `its loop has a \`${jump[1]}\`, which would end or skip the loop` };
  // The yield statement runs to the end of the block: no `;` at its level but a last one, and no line break that ends it.
  const stmtEnd = code.trimEnd().replace(/;$/, '').length;
  for (let i = at; i < stmtEnd; i++) {
    if (depth[i] !== 0) continue;
    if (code[i] === ';' || (code[i] === '\n' && endsStatement(code.slice(0, stmtEnd), i))) return { why: 'its yield is not its last statement' };
  }
  if (new RegExp(`(?<![\\w$.])${input.replace(/\$/g, '\\$')}(?![\\w$])`).test(code)) return { why: `its loop reads its input \`${input}\` itself` };
  const written = outerWrite(code, declaredIn(code, loopVar));
  if (written) return { why: `its loop changes \`${written}\`, declared outside it, so one element's result depends on those before it` };
  const body = `${block.slice(0, at)}return${block.slice(at + 'yield'.length, stmtEnd)};`;
  const lines = body
    .replace(/^\s*\n/, '')
    .trimEnd()
    .split('\n');
  const isAsync = /(?<![\w$.])await(?![\w$])/.test(block);
  return { fn: `${isAsync ? 'async ' : ''}(${loopVar}) => {\n${reindent(lines, `${indent}  `).join('\n')}\n${indent}}` };
}
