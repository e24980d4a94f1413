/**
 * From a source file (and what it imports) to its pipelines: follows chains through `const`/`let`
 * reassignments, helper functions, imports from other files and `export default`, and reads every
 * operator with the exact spans the editor features need.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CallExpression, Node, SourceFile, SyntaxKind } from 'ts-morph';
import { readFunction } from './functions';
import { Values, functionOf, returnedExpression, symbolOf, throughHelper, unwrap } from './ast';
import { exportedRoots, throughAdapters, type Root } from './roots';
import { extractDialects } from './dialects';
import { LIBRARY, METHOD_OPERATORS, MULTI_INPUT_SOURCES, SOURCE_FUNCTIONS, hasDatasetType, sourceFunctionName, specifierFile, specifierOf, unalias } from './library';
import { FN_ARG, chainLineIndent, lineColumn, nodeSpan, readOperator, spanOf } from './operators';
import type { FileGraph, GraphOp, PipelineGraph } from './types';
import { opIdOfSite } from '../../shared/opId';
import type { OpKind } from '../../shared/profile';

/** An operator call found while walking a chain, before ids are assigned. */
interface RawOp {
  call: CallExpression;
  kind: OpKind;
  nameNode: Node;
  inputs: RawOp[];
  /** An upstream could not be followed (a parameter of type Dataset, an untyped value). */
  partial: boolean;
  /** Chains built inside this operator's fn (an interleave's or flatMap's per-element datasets). */
  nested?: RawOp[];
}

/** Operators whose fn returns a dataset the library pulls from, nested in the operator. */
const NESTING = new Set<string>(['interleave', 'flatMap']);

/** Walks chains. One instance per extraction, so memo tables never outlive a version of the source. */
class ChainWalker {
  private readonly memo = new Map<Node, RawOp | null>();
  private readonly active = new Set<Node>();
  readonly values = new Values();
  /** Parameters of the helpers being followed, bound to the call's arguments. */
  private readonly bindings = new Map<Node, Node>();

  resolve(expr: Node | undefined, depth = 0): RawOp | undefined {
    if (!expr || depth > 60) return undefined;
    const e = unwrap(expr);
    if (Node.isCallExpression(e)) return this.resolveCall(e, depth);
    if (Node.isIdentifier(e)) return this.resolveIdentifier(e, depth);
    if (Node.isAwaitExpression(e)) return this.resolve(e.getExpression(), depth + 1);
    return undefined;
  }

  private resolveCall(call: CallExpression, depth: number): RawOp | undefined {
    // Inside a helper the same call can mean different chains per call site: no memo there.
    const memo = this.bindings.size === 0;
    const known = memo ? this.memo.get(call) : undefined;
    if (known !== undefined) return known ?? undefined;
    if (this.active.has(call)) return undefined;
    this.active.add(call);
    let result: RawOp | undefined;
    try {
      result = this.readCall(call, depth);
    } finally {
      this.active.delete(call);
    }
    if (memo) this.memo.set(call, result ?? null);
    return result;
  }

  private readCall(call: CallExpression, depth: number): RawOp | undefined {
    const callee = call.getExpression();
    const sideInputs = (kind: string): RawOp[] => (MULTI_INPUT_SOURCES.has(kind) ? this.datasetArguments(call, kind, depth) : []);
    if (Node.isPropertyAccessExpression(callee)) {
      const name = callee.getName();
      if (SOURCE_FUNCTIONS.has(name)) {
        const src = sourceFunctionName(callee);
        if (src) return { call, kind: src as OpKind, nameNode: callee.getNameNode(), inputs: sideInputs(src), partial: false };
      }
      if (!METHOD_OPERATORS.has(name)) return undefined;
      const receiver = callee.getExpression();
      const up = this.resolve(receiver, depth + 1);
      let raw: RawOp | undefined;
      if (up) raw = { call, kind: name as OpKind, nameNode: callee.getNameNode(), inputs: [up, ...sideInputs(name)], partial: false };
      else if (hasDatasetType(receiver)) raw = { call, kind: name as OpKind, nameNode: callee.getNameNode(), inputs: sideInputs(name), partial: true };
      if (raw && NESTING.has(name)) {
        const nested = this.nestedChain(call.getArguments()[0], depth);
        if (nested) raw.nested = [nested];
      }
      return raw;
    }
    if (Node.isIdentifier(callee)) {
      const src = sourceFunctionName(callee);
      if (src) return { call, kind: src as OpKind, nameNode: callee, inputs: sideInputs(src), partial: false };
      return this.resolveHelper(callee, call, depth);
    }
    return undefined;
  }

  /**
   * The datasets a multi-input operator pulls from, in order: zip/concatenate take them as
   * arguments; sampleFromDatasets and chooseFromDatasets take an array of them (written inline or
   * held by a const), chooseFromDatasets its choice dataset last.
   */
  private datasetArguments(call: CallExpression, kind: string, depth: number): RawOp[] {
    const args = call.getArguments();
    let exprs: Node[];
    if (kind === 'sampleFromDatasets' || kind === 'chooseFromDatasets') {
      exprs = [...this.arrayElements(args[0]), ...(kind === 'chooseFromDatasets' && args[1] ? [args[1]] : [])];
    } else {
      exprs = args;
    }
    return exprs.map((a) => this.resolve(a, depth + 1)).filter((x): x is RawOp => x !== undefined);
  }

  /** The elements of an array literal, directly or through a variable that holds one; none otherwise. */
  private arrayElements(expr: Node | undefined): Node[] {
    let e = expr ? unwrap(expr) : undefined;
    for (let guard = 0; e && Node.isIdentifier(e) && guard < 5; guard++) {
      const decl = unalias(symbolOf(e))?.getDeclarations()[0] ?? this.syntacticDeclaration(e);
      if (!decl || !Node.isVariableDeclaration(decl)) return [];
      const value = this.values.valueAt(decl, decl.getSourceFile() === e.getSourceFile() ? e.getStart() : Number.MAX_SAFE_INTEGER);
      e = value ? unwrap(value) : undefined;
    }
    return e && Node.isArrayLiteralExpression(e) ? e.getElements().filter((el) => !Node.isSpreadElement(el)) : [];
  }

  /**
   * The chain an operator's fn builds per element (`(s) => lines(s).map(parse)`, or a named
   * function that returns one): its operators run nested in the operator, at their own call sites.
   * The fn's parameters are unknown here, so they stay unbound.
   */
  private nestedChain(arg: Node | undefined, depth: number): RawOp | undefined {
    if (!arg) return undefined;
    const a = unwrap(arg);
    const fn = Node.isIdentifier(a) ? functionOf(unalias(symbolOf(a))?.getDeclarations()[0]) : functionOf(a);
    if (!fn || this.active.has(fn)) return undefined;
    this.active.add(fn);
    try {
      return this.resolve(returnedExpression(fn), depth + 1);
    } finally {
      this.active.delete(fn);
    }
  }

  /** A call of a user helper that returns a dataset: follow it to its return statement. */
  private resolveHelper(callee: Node, call: CallExpression, depth: number): RawOp | undefined {
    const target = unalias(symbolOf(callee));
    const fn = functionOf(target?.getDeclarations()[0]);
    return fn ? throughHelper(fn, call, this.active, this.bindings, (returned) => this.resolve(returned, depth + 1)) : undefined;
  }

  private resolveIdentifier(id: Node, depth: number): RawOp | undefined {
    const symbol = unalias(symbolOf(id));
    const decl = symbol?.getDeclarations()[0] ?? this.syntacticDeclaration(id);
    if (!decl) return undefined;
    if (Node.isVariableDeclaration(decl)) {
      const sameFile = decl.getSourceFile() === id.getSourceFile();
      const value = this.values.valueAt(decl, sameFile ? id.getStart() : Number.MAX_SAFE_INTEGER);
      return value ? this.resolve(value, depth + 1) : undefined;
    }
    if (Node.isExportAssignment(decl)) return this.resolve(decl.getExpression(), depth + 1);
    if (Node.isParameterDeclaration(decl)) {
      const arg = this.bindings.get(decl);
      if (!arg) return undefined;
      // The argument belongs to the caller's scope: resolve it without this parameter bound.
      this.bindings.delete(decl);
      try {
        return this.resolve(arg, depth + 1);
      } finally {
        this.bindings.set(decl, arg);
      }
    }
    return undefined;
  }

  /** Without a symbol (a broken file), look for a top-level declaration of the same name. */
  private syntacticDeclaration(id: Node): Node | undefined {
    return id.getSourceFile().getVariableDeclaration(id.getText());
  }
}

/** `${line}:${column}` (1-based, of the method name), prefixed by the POSIX path relative to the pipeline file's directory for other files. */
/** The op id (src/shared/opId.ts) of an operator at `line:column` of `opFile`. */
export function opId(pipelineFile: string, opFile: string, line: number, column: number): string {
  return opIdOfSite({ file: opFile, line, column }, pipelineFile);
}

function materialise(root: RawOp, pipelineFile: string): { ops: GraphOp[]; partial: boolean } {
  const ops: GraphOp[] = [];
  const ids = new Map<RawOp, string>();
  let partial = false;
  const idOf = (raw: RawOp): string => {
    const lc = lineColumn(raw.call.getSourceFile(), raw.nameNode.getStart());
    return opId(pipelineFile, raw.call.getSourceFile().getFilePath(), lc.line, lc.column);
  };
  const visit = (raw: RawOp, guard: Set<RawOp>, parent?: string): void => {
    if (ids.has(raw) || guard.has(raw)) return;
    guard.add(raw);
    for (const input of raw.inputs) visit(input, guard, parent);
    const id = idOf(raw);
    // A nested chain's upstream is part of the nested chain: its operators share the parent.
    for (const inner of raw.nested ?? []) visit(inner, guard, id);
    if (parent === undefined) partial ||= raw.partial;
    const sf = raw.call.getSourceFile();
    const file = sf.getFilePath();
    const nameStart = raw.nameNode.getStart();
    ids.set(raw, id);
    const detail = readOperator(raw.call, raw.kind);
    const fnArg = FN_ARG[raw.kind];
    const reading = fnArg !== undefined ? readFunction(raw.call.getArguments()[fnArg], file, detail.knobs['random']) : undefined;
    const isMethod = Node.isPropertyAccessExpression(raw.call.getExpression()) && !SOURCE_FUNCTIONS.has(raw.kind);
    const text = sf.getFullText();
    const dot = isMethod ? text.lastIndexOf('.', nameStart) : -1;
    const op: GraphOp = {
      id,
      kind: raw.kind,
      file,
      name: nodeSpan(raw.nameNode),
      call: nodeSpan(raw.call),
      own: spanOf(sf, nameStart, raw.call.getEnd()),
      label: reading?.fn.name && raw.kind !== 'interleave' ? `${raw.kind}(${reading.fn.name})` : detail.label,
      knobs: detail.knobs,
      inputs: raw.inputs.map((i) => ids.get(i)).filter((x): x is string => x !== undefined),
      index: ops.length,
    };
    const indent = dot >= 0 ? chainLineIndent(sf, dot) : undefined;
    if (indent !== undefined) op.lineIndent = indent;
    if (parent !== undefined) op.parent = parent;
    if (detail.options) op.options = detail.options;
    if (detail.cardinality !== undefined) op.cardinality = detail.cardinality;
    if (detail.optionKeys) op.optionKeys = detail.optionKeys;
    if (reading) op.fn = reading.fn;
    if (raw.kind === 'shuffle') op.random = { reason: 'shuffle', detail: 'shuffle reorders elements randomly', span: op.name };
    else if (raw.kind === 'sampleFromDatasets') op.random = { reason: 'sample', detail: 'sampleFromDatasets draws the input of each element at random', span: op.name };
    else if (reading?.random) op.random = reading.random;
    ops.push(op);
  };
  visit(root, new Set());
  return { ops, partial };
}

const moduleTypeCache = new Map<string, 'esm' | 'cjs'>();

/** Whether the file runs as an ES module (`import.meta` works) or CommonJS (`__filename` works). */
export function moduleKindOf(file: string, text: string): 'esm' | 'cjs' {
  if (/\.m[tj]s$/.test(file)) return 'esm';
  if (/\.c[tj]s$/.test(file)) return 'cjs';
  if (/\bimport\.meta\b/.test(text)) return 'esm';
  let dir = path.dirname(file);
  for (let i = 0; i < 40; i++) {
    const cached = moduleTypeCache.get(dir);
    if (cached) return cached;
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg)) {
      let kind: 'esm' | 'cjs' = 'cjs';
      try {
        kind = (JSON.parse(readFileSync(pkg, 'utf8')) as { type?: unknown }).type === 'module' ? 'esm' : 'cjs';
      } catch {
        kind = 'cjs';
      }
      moduleTypeCache.set(dir, kind);
      return kind;
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return 'cjs';
}

/** True when `call` is an operator call whose result is not itself the receiver of another operator. */
function isChainTop(call: CallExpression): boolean {
  const parent = call.getParent();
  if (!parent || !Node.isPropertyAccessExpression(parent)) return true;
  const grand = parent.getParent();
  return !(grand && Node.isCallExpression(grand) && grand.getExpression() === parent && METHOD_OPERATORS.has(parent.getName()));
}

function calleeName(call: CallExpression): string | undefined {
  const callee = call.getExpression();
  if (Node.isIdentifier(callee)) return callee.getText();
  if (Node.isPropertyAccessExpression(callee)) return callee.getName();
  return undefined;
}

/** Extract every pipeline of a source file. */
export function extractFile(sf: SourceFile): FileGraph {
  const file = sf.getFilePath();
  const walker = new ChainWalker();
  const pipelines: PipelineGraph[] = [];
  const covered = new Set<string>();
  const build = (root: Root, top: RawOp): void => {
    const { ops, partial } = materialise(top, file);
    const last = ops[ops.length - 1];
    if (!last) return;
    for (const op of ops) if (op.file === file) covered.add(`${op.call.start}`);
    const pipeline: PipelineGraph = { name: root.name, exported: root.exported, factory: root.factory, file, head: nodeSpan(root.head), ops, rootId: last.id, partial };
    pipelines.push(pipeline);
  };
  const others: Root[] = [];
  for (const root of exportedRoots(sf, walker.values)) {
    const top = walker.resolve(root.expr) ?? walker.resolve(throughAdapters(root.expr));
    if (top) build(root, top);
    else others.push(root);
  }
  // Unexported chains (a local pipeline consumed in the same file, a helper with parameters).
  const candidates = sf.getDescendantsOfKind(SyntaxKind.CallExpression).filter((c) => {
    const n = calleeName(c);
    return n !== undefined && (METHOD_OPERATORS.has(n) || SOURCE_FUNCTIONS.has(n) || c.getExpression().getKind() === SyntaxKind.Identifier) && isChainTop(c);
  });
  for (const call of candidates) {
    if (covered.has(`${call.getStart()}`)) continue;
    const top = walker.resolve(call);
    if (!top || top.call !== call) continue;
    const holder = call.getFirstAncestorByKind(SyntaxKind.VariableDeclaration);
    const line = lineColumn(sf, call.getStart()).line;
    const name = `local:${holder ? holder.getName() : 'chain'}@${line}`;
    build({ name, exported: false, factory: false, head: holder ? holder.getNameNode() : call, expr: call }, top);
  }
  // A node inside a plumber-data chain (an async generator handed to `from()`) is that chain's.
  const taken = (node: Node): boolean => covered.has(`${node.getStart()}`) || node.getAncestors().some((a) => Node.isCallExpression(a) && covered.has(`${a.getStart()}`));
  const dialects = extractDialects(sf, walker.values, others, taken);
  pipelines.push(...dialects.pipelines);
  const typed = sf.getImportDeclarations().some((d) => specifierOf(d) === LIBRARY && specifierFile(d) !== undefined);
  const graph: FileGraph = { file, moduleKind: moduleKindOf(file, sf.getFullText()), pipelines, typed };
  if (dialects.stops.length > 0) graph.stops = dialects.stops;
  return graph;
}
