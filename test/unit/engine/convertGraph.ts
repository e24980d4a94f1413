/**
 * A small reading of one exported dialect chain with ts-morph, for the conversion's tests until the
 * graph's dialect extractors land: the chain of method calls on the export's initializer, each op
 * with the spans, id, fn info and line indentation the graph gives (see src/engine/graph/types.ts).
 */
import * as assert from 'node:assert/strict';
import { Node, Project, SyntaxKind, type CallExpression, type SourceFile } from 'ts-morph';
import type { PlanChange } from '../../../src/shared/analysis';
import type { ConvertChange } from '../../../src/engine/convert';
import type { Dialect, FnInfo, GraphOp, OpKind, PipelineGraph, Span } from '../../../src/engine/graph/types';

const KIND: Record<string, OpKind> = { array: 'from', generator: 'from', from: 'from', mapAsync: 'map', drop: 'skip' };

function span(sf: SourceFile, start: number, end: number): Span {
  const s = sf.getLineAndColumnAtPos(start);
  const e = sf.getLineAndColumnAtPos(end);
  return { start, end, range: { start: { line: s.line - 1, character: s.column - 1 }, end: { line: e.line - 1, character: e.column - 1 } } };
}

function fnInfo(sf: SourceFile, file: string, call: CallExpression): FnInfo | undefined {
  const arg = call.getArguments()[0];
  if (!arg) return undefined;
  if (Node.isArrowFunction(arg) || Node.isFunctionExpression(arg)) return { form: 'inline', async: arg.isAsync(), definedAt: span(sf, arg.getStart(), arg.getEnd()), file, sameFile: true };
  if (!Node.isIdentifier(arg)) return undefined;
  const decl = sf.getFunction(arg.getText());
  if (!decl) return { form: 'reference', name: arg.getText() };
  const exported = decl.isExported();
  return {
    form: 'reference',
    name: arg.getText(),
    declaredName: decl.getName(),
    async: decl.isAsync(),
    file,
    sameFile: true,
    definedAt: span(sf, decl.getStart(), decl.getEnd()),
    ...(exported ? { exportName: decl.getName() } : { exportInsertAt: decl.getStart() }),
  };
}

/** The graph of the chain exported as `name` from `text` (written to `file`), as the dialect's extractor would give it. */
export function readChain(file: string, text: string, name: string, dialect: Dialect): PipelineGraph {
  const sf = new Project({ useInMemoryFileSystem: true }).createSourceFile(file, text);
  const decl = sf.getVariableDeclarationOrThrow(name);
  const calls: CallExpression[] = [];
  let node: Node | undefined = decl.getInitializerOrThrow();
  while (node && Node.isCallExpression(node)) {
    calls.unshift(node);
    const callee: Node = node.getExpression();
    // Generator stages nest (`b(a(src()))`): the upstream is the first argument.
    if (dialect === 'async-generator') node = node.getArguments()[0];
    else node = Node.isPropertyAccessExpression(callee) ? callee.getExpression() : undefined;
    // The source is the innermost call whose receiver is not a call (`tf.data.array(…)`, `Readable.from(…)`).
    if (node && !Node.isCallExpression(node)) break;
  }
  const ops: GraphOp[] = calls.map((call, index) => {
    const callee = call.getExpression();
    const nameNode = Node.isIdentifier(callee) ? callee : callee.asKindOrThrow(SyntaxKind.PropertyAccessExpression).getNameNode();
    const method = nameNode.getText();
    const pos = sf.getLineAndColumnAtPos(nameNode.getStart());
    const lineStart = text.lastIndexOf('\n', nameNode.getStart() - 1) + 1;
    const before = text.slice(lineStart, nameNode.getStart() - 1);
    return {
      id: `${pos.line}:${pos.column}`,
      kind: dialect === 'async-generator' ? (index === 0 ? 'from' : 'flatMap') : (KIND[method] ?? (method as OpKind)),
      file,
      name: span(sf, nameNode.getStart(), nameNode.getEnd()),
      call: span(sf, call.getStart(), call.getEnd()),
      own: span(sf, nameNode.getStart(), call.getEnd()),
      ...(index > 0 && dialect !== 'async-generator' && /^\s*$/.test(before) ? { lineIndent: before } : {}),
      label: `${method}(${call.getArguments()[0]?.getText().slice(0, 12) ?? ''})`,
      ...(index > 0 && fnInfo(sf, file, call) ? { fn: fnInfo(sf, file, call)! } : {}),
      knobs: {},
      inputs: [],
      index,
      dialect,
    };
  });
  ops.forEach((op, i) => (op.inputs = i > 0 ? [ops[i - 1]!.id] : []));
  const head = decl.getNameNode();
  return { name, exported: true, factory: false, file, head: span(sf, head.getStart(), head.getEnd()), ops, rootId: ops[ops.length - 1]!.id, partial: false, dialect };
}

export const TFJS = `import '@tensorflow/tfjs-backend-cpu';
import * as tfc from '@tensorflow/tfjs-core';
import * as tfd from '@tensorflow/tfjs-data';

const tf = { ...tfc, data: tfd };

// A digit's features: a fixed amount of integer work per element.
export function decode(x: number): number {
  let h = x;
  for (let i = 0; i < 2000; i++) h = (h * 31 + i) % 1000003;
  return h;
}

export const digits = tf.data
  .array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
  .map(decode)
  .filter((x) => x % 2 === 0)
  .prefetch(2)
  .batch(2);
`;

export const STREAMS = `import { Readable } from 'node:stream';

export async function lookup(id: number): Promise<{ id: number; name: string }> {
  await new Promise((resolve) => setImmediate(resolve));
  return { id, name: \`item-\${id}\` };
}

export const items = Readable.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).map(lookup, { concurrency: 1 }).filter((x) => x.id % 3 !== 0).take(5);
`;

/** The convert change over every operator of `p`, with `then`. */
export function convertOf(p: PipelineGraph, from: Dialect, then: PlanChange[]): ConvertChange {
  return { kind: 'convert', opId: p.rootId, from, opIds: p.ops.map((o) => o.id), then, reason: 'r' };
}

/** The op of `p` whose label starts with `label`. */
export function opOf(p: PipelineGraph, label: string): string {
  const op = p.ops.find((o) => o.label.startsWith(label));
  assert.ok(op, `no op ${label} in ${p.ops.map((o) => o.label).join(', ')}`);
  return op.id;
}

export const GENERATORS = `export async function* readRows(n: number): AsyncGenerator<number> {
  for (let i = 0; i < n; i++) yield i;
}

// A row's score: a fixed amount of integer work per element.
export function score(x: number): number {
  let h = x;
  for (let i = 0; i < 2000; i++) h = (h * 31 + i) % 1000003;
  return h;
}

async function* scored(src: AsyncIterable<number>): AsyncGenerator<number> {
  for await (const x of src) yield score(x);
}

async function* evens(src: AsyncIterable<number>): AsyncGenerator<number> {
  for await (const x of src) {
    if (x % 2 === 0) yield x;
  }
}

async function* pairs(src: AsyncIterable<number>): AsyncGenerator<[number, number]> {
  let prev: number | undefined;
  for await (const x of src) {
    if (prev !== undefined) yield [prev, x];
    prev = x;
  }
}

export const rows = pairs(evens(scored(readRows(40))));
`;

/**
 * Async-generator stages whose loops do more than one statement per element: `fetchAll` awaits
 * (for a time that varies by element, so calls run at once finish out of order) and yields once.
 */
export const AWAITING = `async function* read(n: number) { for (let i = 0; i < n; i++) yield i; }
async function* fetchAll(src: AsyncIterable<number>) {
  for await (const id of src) {
    await new Promise((r) => setTimeout(r, (id * 7) % 5));
    yield { id };
  }
}
async function* tag(src: AsyncIterable<{ id: number }>) { for await (const r of src) yield { ...r, tag: \`r\${r.id}\` }; }
export const records = tag(fetchAll(read(40)));
`;
