/**
 * One operator call, read in detail: its knobs (literal, absent, or an expression a fix must not
 * touch), where new options can be written, its label and its spans.
 */
import { CallExpression, NewExpression, Node, SourceFile, SyntaxKind } from 'ts-morph';
import type { Knob, OptionsSite, Span } from './types';
import type { OpKind } from '../../shared/profile';

/** The span of a node (or of [start, end) offsets) in its file. */
export function spanOf(file: SourceFile, start: number, end: number): Span {
  // The compiler's line map is computed once per parse; ts-morph's own lookup rescans the text.
  const sf = file.compilerNode;
  const s = sf.getLineAndCharacterOfPosition(start);
  const e = sf.getLineAndCharacterOfPosition(end);
  return { start, end, range: { start: { line: s.line, character: s.character }, end: { line: e.line, character: e.character } } };
}

/** 1-based line and column of an offset (the runner's convention). */
export function lineColumn(file: SourceFile, pos: number): { line: number; column: number } {
  const lc = file.compilerNode.getLineAndCharacterOfPosition(pos);
  return { line: lc.line + 1, column: lc.character + 1 };
}

export function nodeSpan(node: Node): Span {
  return spanOf(node.getSourceFile(), node.getStart(), node.getEnd());
}

/** Read a knob's value expression. */
export function readKnob(expr: Node | undefined): Knob {
  if (!expr) return { state: 'absent' };
  const span = nodeSpan(expr);
  const text = expr.getText();
  if (Node.isNumericLiteral(expr)) return { state: 'literal', value: expr.getLiteralValue(), text, span };
  if (Node.isPrefixUnaryExpression(expr) && text.startsWith('-')) {
    const operand = expr.getOperand();
    if (Node.isNumericLiteral(operand)) return { state: 'literal', value: -operand.getLiteralValue(), text, span };
  }
  if (Node.isStringLiteral(expr) || Node.isNoSubstitutionTemplateLiteral(expr)) return { state: 'literal', value: expr.getLiteralValue(), text, span };
  if (Node.isTrueLiteral(expr) || Node.isFalseLiteral(expr)) return { state: 'literal', value: expr.getLiteralValue(), text, span };
  if (Node.isIdentifier(expr) && text === 'Infinity') return { state: 'literal', value: Infinity, text, span };
  return { state: 'expression', text, span };
}

/** Options each operator kind accepts, by the argument position of its options object. */
const OPTION_ARG: Partial<Record<OpKind, { index: number; keys: string[] }>> = {
  map: { index: 1, keys: ['parallelism', 'placement', 'module', 'exportName', 'deterministic', 'random', 'seed', 'keepPosition', 'fuse'] },
  filter: { index: 1, keys: ['parallelism', 'placement', 'module', 'exportName', 'deterministic', 'random', 'seed', 'keepPosition', 'fuse'] },
  flatMap: { index: 1, keys: ['parallelism', 'placement', 'module', 'exportName', 'deterministic', 'random', 'seed', 'keepPosition'] },
  interleave: { index: 1, keys: ['cycleLength', 'blockLength', 'parallelism', 'deterministic'] },
  batch: { index: 1, keys: ['dropRemainder'] },
  shuffle: { index: 1, keys: ['seed', 'reshuffleEachIteration', 'keepPosition'] },
  files: { index: 1, keys: ['parallelism', 'read', 'cwd'] },
  lines: { index: 1, keys: ['encoding', 'cwd', 'compression'] },
  // The readers: src/data/options.ts `OPTION_KEYS` (csv, jsonLines, tfrecord, webdataset, table).
  csv: { index: 1, keys: ['parallelism', 'placement', 'compression', 'cwd', 'http', 'header', 'delimiter', 'schema'] },
  jsonLines: { index: 1, keys: ['parallelism', 'placement', 'compression', 'cwd', 'http', 'skipEmpty'] },
  tfrecord: { index: 1, keys: ['parallelism', 'placement', 'compression', 'cwd', 'http', 'decode', 'verify'] },
  webdataset: { index: 1, keys: ['parallelism', 'placement', 'compression', 'cwd', 'http', 'shuffleShards'] },
  parquet: { index: 1, keys: ['parallelism', 'placement', 'compression', 'cwd', 'http', 'columns', 'as'] },
  arrow: { index: 1, keys: ['parallelism', 'placement', 'compression', 'cwd', 'http', 'columns', 'as'] },
  window: { index: 1, keys: ['shift', 'stride', 'dropRemainder'] },
  paddedBatch: { index: 1, keys: ['paddedShapes', 'paddingValues', 'dropRemainder'] },
  bucketBySequenceLength: { index: 3, keys: ['paddedShapes', 'paddingValues', 'padToBucketBoundary', 'noPadding', 'dropRemainder'] },
  groupByWindow: { index: 2, keys: ['windowSize'] },
  rebatch: { index: 1, keys: ['dropRemainder'] },
  sampleFromDatasets: { index: 1, keys: ['weights', 'seed', 'stopOnEmptyDataset'] },
  chooseFromDatasets: { index: 2, keys: ['stopOnEmptyDataset'] },
  ignoreErrors: { index: 0, keys: ['logWarning'] },
};

/**
 * Positional knobs: the argument index that holds each. Names follow the tracer's knobs
 * (src/data/tracing.ts `OpKnobs`) where it has one: window's size is `batchSize` there too.
 */
const POSITIONAL: Partial<Record<OpKind, Array<{ index: number; key: string }>>> = {
  batch: [{ index: 0, key: 'batchSize' }],
  shuffle: [{ index: 0, key: 'bufferSize' }],
  prefetch: [{ index: 0, key: 'bufferSize' }],
  cache: [{ index: 0, key: 'path' }],
  repeat: [{ index: 0, key: 'count' }],
  take: [{ index: 0, key: 'count' }],
  skip: [{ index: 0, key: 'count' }],
  shard: [
    { index: 0, key: 'numShards' },
    { index: 1, key: 'shardIndex' },
  ],
  enumerate: [{ index: 0, key: 'start' }],
  window: [{ index: 0, key: 'batchSize' }],
  paddedBatch: [{ index: 0, key: 'batchSize' }],
  bucketBySequenceLength: [
    { index: 1, key: 'bucketBoundaries' },
    { index: 2, key: 'bucketBatchSizes' },
  ],
  rebatch: [{ index: 0, key: 'batchSize' }],
  // A reader's path, glob, URL or list (a literal string lets a lint tell one file from shards).
  csv: [{ index: 0, key: 'path' }],
  jsonLines: [{ index: 0, key: 'path' }],
  tfrecord: [{ index: 0, key: 'path' }],
  webdataset: [{ index: 0, key: 'path' }],
  parquet: [{ index: 0, key: 'path' }],
  arrow: [{ index: 0, key: 'path' }],
};

/** The argument that holds the user function, for operators that take one. */
export const FN_ARG: Partial<Record<OpKind, number>> = {
  map: 0,
  filter: 0,
  flatMap: 0,
  interleave: 0,
  scan: 1,
  groupByWindow: 0,
  bucketBySequenceLength: 0,
};

export interface OperatorDetail {
  knobs: Record<string, Knob>;
  options?: OptionsSite;
  label: string;
  /** Elements one pass produces, when the source says so in literals (see `GraphOp.cardinality`). */
  cardinality?: number;
  /** The option names the operator accepts (see `GraphOp.optionKeys`). */
  optionKeys?: string[];
}

/** The indentation of the line that holds `pos`. */
function lineIndentAt(text: string, pos: number): string {
  const lineStart = text.lastIndexOf('\n', pos - 1) + 1;
  const m = /^[ \t]*/.exec(text.slice(lineStart, pos));
  return m ? m[0] : '';
}

export function readOptions(call: CallExpression | NewExpression, index: number, keys: string[], knobs: Record<string, Knob>): OptionsSite {
  const args = call.getArguments();
  const arg = args[index];
  const file = call.getSourceFile();
  if (!arg) {
    for (const k of keys) knobs[k] = { state: 'absent' };
    const prev = args[args.length - 1];
    // Options go right after the last written argument; with missing positional arguments before
    // them there is nothing safe to write (a fix would have to invent the fn).
    if (args.length !== index) return { state: 'expression', text: '', span: nodeSpan(call) };
    const insertAt = prev ? prev.getEnd() : call.getEnd() - 1;
    return { state: 'absent', insertAt, needsComma: prev !== undefined };
  }
  if (!Node.isObjectLiteralExpression(arg)) {
    for (const k of keys) knobs[k] = { state: 'expression', text: arg.getText(), span: nodeSpan(arg) };
    return { state: 'expression', text: arg.getText(), span: nodeSpan(arg) };
  }
  const props = arg.getProperties();
  const spread = props.find((p) => Node.isSpreadAssignment(p));
  for (const k of keys) knobs[k] = spread ? { state: 'expression', text: spread.getText(), span: nodeSpan(spread) } : { state: 'absent' };
  for (const p of props) {
    if (Node.isPropertyAssignment(p)) {
      const name = p.getName().replace(/^['"]|['"]$/g, '');
      if (keys.includes(name)) knobs[name] = readKnob(p.getInitializer());
    } else if (Node.isShorthandPropertyAssignment(p)) {
      const name = p.getName();
      if (keys.includes(name)) knobs[name] = { state: 'expression', text: name, span: nodeSpan(p) };
    }
  }
  const text = file.getFullText();
  const closeBrace = arg.getEnd() - 1;
  const multiline = text.slice(arg.getStart(), arg.getEnd()).includes('\n');
  const firstProp = props[0];
  const lastProp = props[props.length - 1];
  const indent = multiline && firstProp ? lineIndentAt(text, firstProp.getStart()) : '';
  const site: OptionsSite = { state: 'object', span: nodeSpan(arg), closeBrace, trailingComma: false, multiline, indent };
  if (lastProp) {
    site.lastPropertyEnd = lastProp.getEnd();
    site.trailingComma = lastProp.getNextSiblingIfKind(SyntaxKind.CommaToken) !== undefined || /^\s*,/.test(text.slice(lastProp.getEnd(), closeBrace));
  }
  return site;
}

/** Short text of an argument for a label: identifiers and literals as written, anything else elided. */
export function shortArg(node: Node | undefined): string {
  if (!node) return '';
  if (Node.isIdentifier(node) || Node.isNumericLiteral(node) || Node.isPropertyAccessExpression(node)) {
    const t = node.getText();
    return t.length <= 24 ? t : `${t.slice(0, 23)}…`;
  }
  if (Node.isStringLiteral(node) || Node.isNoSubstitutionTemplateLiteral(node)) {
    const t = node.getText();
    return t.length <= 24 ? t : `${t.slice(0, 22)}…${t[0]}`;
  }
  if (Node.isArrowFunction(node) || Node.isFunctionExpression(node)) {
    const name = Node.isFunctionExpression(node) ? node.getName() : undefined;
    return name ?? '…';
  }
  return '…';
}

/** Knobs, options site and label of one operator call. */
export function readOperator(call: CallExpression, kind: OpKind): OperatorDetail {
  const knobs: Record<string, Knob> = {};
  const args = call.getArguments();
  for (const pos of POSITIONAL[kind] ?? []) knobs[pos.key] = readKnob(args[pos.index]);
  const opt = OPTION_ARG[kind];
  const options = opt ? readOptions(call, opt.index, opt.keys, knobs) : undefined;
  const label = `${kind}(${labelArgs(kind, args)})`;
  const cardinality = staticCardinality(kind, args);
  const detail: OperatorDetail = { knobs, options, label };
  if (opt) detail.optionKeys = [...opt.keys];
  if (cardinality !== undefined) detail.cardinality = cardinality;
  return detail;
}

/** What a label shows of the arguments: the first, or both of shard's numbers (`shard(4, 0)`). */
function labelArgs(kind: OpKind, args: Node[]): string {
  if (kind === 'shard' && args.length >= 2) return `${shortArg(args[0])}, ${shortArg(args[1])}`;
  if (kind === 'sampleFromDatasets' || kind === 'chooseFromDatasets') {
    const first = args[0];
    return first && Node.isArrayLiteralExpression(first) ? `[${first.getElements().length} datasets]` : shortArg(first);
  }
  return shortArg(args[0]);
}

/** A literal number argument, or undefined. */
function numberArg(node: Node | undefined): number | undefined {
  const k = readKnob(node);
  return k.state === 'literal' && typeof k.value === 'number' ? k.value : undefined;
}

/**
 * Elements one pass of a source produces, when its arguments say so in literals: `range(n)`,
 * `range(start, end, step)` (as plumber-data counts them), `from([...])` with an array literal
 * without spreads.
 */
function staticCardinality(kind: OpKind, args: Node[]): number | undefined {
  if (kind === 'range') {
    const a = numberArg(args[0]);
    if (a === undefined) return undefined;
    if (args.length === 1) return Number.isFinite(a) ? Math.max(0, Math.ceil(a)) : undefined;
    const end = numberArg(args[1]);
    const step = args.length >= 3 ? numberArg(args[2]) : 1;
    if (end === undefined || step === undefined || step === 0 || !Number.isFinite(end)) return undefined;
    return Math.max(0, Math.ceil((end - a) / step));
  }
  if (kind === 'from') {
    const arg = args[0];
    if (arg && Node.isArrayLiteralExpression(arg) && !arg.getElements().some((e) => Node.isSpreadElement(e))) return arg.getElements().length;
  }
  return undefined;
}

/** The indentation before a method's `.` when the `.` starts its line (multi-line chains). */
export function chainLineIndent(file: SourceFile, dotPos: number): string | undefined {
  const text = file.getFullText();
  const lineStart = text.lastIndexOf('\n', dotPos - 1) + 1;
  const before = text.slice(lineStart, dotPos);
  return /^[ \t]*$/.test(before) ? before : undefined;
}
