/**
 * Operator labels. From the source text, shared by the editor (from the graph's spans) and the CLI
 * (from the profile's call sites): the call as written from its name to its closing parenthesis,
 * comments and line breaks dropped, long arguments shortened to their shape. From a profile's
 * operator alone (`describeOp`), for the sentences of the model, the engine and the runner.
 */
import { parseOpId } from './opId';
import { isPlainInner, type OpProfile } from './profile';

/** Longest argument shown as written; a longer one is shortened to its shape. */
const MAX_ARG = 24;
/** Longest label; a longer one keeps its first arguments and ends with `…`. */
const MAX_LABEL = 48;

/** Top-level arguments of a call's argument text (commas inside brackets, strings and templates do not split). */
function splitArgs(inner: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    const ch = inner[i]!;
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = '';
      continue;
    }
    if (ch === '"' || ch === "'" || ch === '`') quote = ch;
    else if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') depth--;
    else if (ch === ',' && depth === 0) {
      out.push(inner.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = inner.slice(start).trim();
  if (last) out.push(last);
  return out;
}

/** One argument as a person recognises it: as written when short, else its shape (`(x) => …`, `{ parallelism: 4, … }`, `[…]`). */
function shortArg(arg: string): string {
  const a = arg
    .replace(/\s+/g, ' ')
    .replace(/\/\*.*?\*\//g, '')
    .trim();
  if (a.length <= MAX_ARG) return a;
  const arrow = /^(async\s+)?(\([^)]*\)|[A-Za-z_$][\w$]*)\s*=>/.exec(a);
  if (arrow) return `${arrow[0]} …`;
  const fn = /^(async\s+)?function\s*([A-Za-z_$][\w$]*)?/.exec(a);
  if (fn) return fn[2] ? `function ${fn[2]}` : 'function …';
  if (a.startsWith('{')) {
    const first = splitArgs(a.slice(1, a.lastIndexOf('}')))[0] ?? '';
    return first && first.length <= MAX_ARG - 6 ? `{ ${first}, … }` : '{ … }';
  }
  if (a.startsWith('[')) return '[…]';
  return `${a.slice(0, MAX_ARG - 1)}…`;
}

/**
 * The label of a call's text from its name to its closing parenthesis (`range(0, 1_000_000)`,
 * `map((record) => …, { parallelism: 4, … })`); undefined when the text is not such a call.
 */
export function callLabel(ownText: string): string | undefined {
  const own = ownText.replace(/\/\/[^\n]*\n/g, ' ');
  const open = own.indexOf('(');
  if (open < 0 || !own.trimEnd().endsWith(')')) return undefined;
  const name = own.slice(0, open).trim();
  const inner = own.slice(open + 1, own.trimEnd().length - 1);
  const args = splitArgs(inner).map(shortArg);
  let label = `${name}(${args.join(', ')})`;
  if (label.length > MAX_LABEL) {
    const kept: string[] = [];
    for (const a of args) {
      if (`${name}(${[...kept, a].join(', ')}, …)`.length > MAX_LABEL) break;
      kept.push(a);
    }
    label = `${name}(${[...kept, '…'].join(', ')})`;
  }
  return label;
}

/**
 * The text of the call whose name starts at `offset` (`map` of `.map(f, { … })`), up to its
 * matching closing parenthesis; undefined when no call starts there. Strings, template literals
 * and comments do not count their brackets.
 */
export function callTextAt(text: string, offset: number): string | undefined {
  const name = /^[A-Za-z_$][\w$]*\s*\(/.exec(text.slice(offset, offset + 200));
  if (!name) return undefined;
  let depth = 0;
  for (let i = offset + name[0].length - 1; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'" || ch === '`') {
      for (i++; i < text.length && text[i] !== ch; i++) if (text[i] === '\\') i++;
    } else if (ch === '/' && text[i + 1] === '/') {
      i = text.indexOf('\n', i);
      if (i < 0) return undefined;
    } else if (ch === '/' && text[i + 1] === '*') {
      i = text.indexOf('*/', i + 2);
      if (i < 0) return undefined;
      i++;
    } else if (ch === '(') depth++;
    else if (ch === ')' && --depth === 0) return text.slice(offset, i + 1);
  }
  return undefined;
}

/**
 * A short label for an operator as a user wrote it: `map(decode)`, `batch(32)`, `prefetch(4)`,
 * `files`. An inline fn has no name, and two `map(fn)` in one sentence would not say which is
 * which: its label says where it is written (`map(fn) on line 13`, `map(fn) at lib/x.ts:3`).
 */
export function describeOp(op: OpProfile): string {
  const k = op.knobs;
  switch (op.kind) {
    case 'map':
    case 'filter':
    case 'flatMap':
      return op.fnName ? `${op.kind}(${op.fnName})` : `${op.kind}(fn)${writtenAt(op.id)}`;
    case 'interleave':
      return op.fnName ? `interleave(${op.fnName})` : `interleave${writtenAt(op.id)}`;
    case 'batch':
    case 'paddedBatch':
    case 'rebatch':
    case 'window':
      return k.batchSize !== undefined ? `${op.kind}(${k.batchSize})` : op.kind;
    case 'shard':
      return k.numShards !== undefined ? `shard(${k.numShards}, ${k.shardIndex ?? 0})` : 'shard';
    case 'scan':
    case 'groupByWindow':
    case 'bucketBySequenceLength':
      return op.fnName ? `${op.kind}(${op.fnName})` : `${op.kind}${writtenAt(op.id)}`;
    case 'prefetch':
    case 'shuffle':
      return k.bufferSize !== undefined ? `${op.kind}(${k.bufferSize})` : op.kind;
    case 'repeat':
      return k.count === undefined || k.count < 0 ? 'repeat()' : `repeat(${k.count})`;
    case 'take':
    case 'skip':
      return k.count !== undefined ? `${op.kind}(${k.count})` : op.kind;
    case 'cache':
      return k.cachePath ? `cache(${JSON.stringify(k.cachePath)})` : 'cache()';
    case 'from':
      // The plain iterables an interleave's fn returns (plumber-data counts them on a `from` it makes).
      return isPlainInner(op) ? `inner iterable of interleave${writtenAt(op.parentId!)}` : 'from';
    default:
      return op.kind;
  }
}

/** " on line 13" (" at lib/x.ts:3" in another file) for an operator's id; empty when the id names no place. */
function writtenAt(id: string): string {
  const site = parseOpId(id);
  if (!site) return '';
  return site.rel === undefined ? ` on line ${site.line}` : ` at ${site.rel}:${site.line}`;
}
