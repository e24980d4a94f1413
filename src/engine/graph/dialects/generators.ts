/**
 * Async-generator chains: `async function*` stages, each consuming an async iterable parameter
 * with `for await`, composed by calls (`batch(decode(read(files)))`). A stage's op id is the callee
 * name of its call in the composition; a stage that consumes nothing is a source. Its own library
 * has no knob: every lever is what converting to plumber-data adds.
 */
import { CallExpression, ForOfStatement, FunctionDeclaration, FunctionExpression, Node, SyntaxKind } from 'ts-morph';
import { functionOf, symbolOf, unwrap } from '../ast';
import { unalias } from '../library';
import type { DialectRaw } from './common';
import type { DialectWalker, Recogniser } from './walker';

type GeneratorFn = FunctionDeclaration | FunctionExpression;

/** The async generator function an expression is or names (inline, a declaration, a `const` holding one), in the user's code. */
export function asyncGeneratorOf(expr: Node | undefined): GeneratorFn | undefined {
  if (!expr) return undefined;
  const e = unwrap(expr);
  let fn: Node | undefined;
  if (Node.isFunctionExpression(e)) fn = e;
  else if (Node.isIdentifier(e)) fn = functionOf(unalias(symbolOf(e))?.getDeclarations()[0]);
  if (!fn || !(Node.isFunctionDeclaration(fn) || Node.isFunctionExpression(fn))) return undefined;
  if (!fn.isAsync() || !fn.isGenerator()) return undefined;
  const sf = fn.getSourceFile();
  return sf.isInNodeModules() || sf.isDeclarationFile() ? undefined : fn;
}

/** The function a node is written in (declarations, expressions, arrows and methods). */
function enclosingFunction(node: Node): Node | undefined {
  return node.getFirstAncestor((a) => Node.isFunctionDeclaration(a) || Node.isFunctionExpression(a) || Node.isArrowFunction(a) || Node.isMethodDeclaration(a));
}

/** The generator's own `for await` loops (not those of functions inside it). */
function ownLoops(fn: GeneratorFn): ForOfStatement[] {
  return fn.getDescendantsOfKind(SyntaxKind.ForOfStatement).filter((loop) => loop.isAwaited() && enclosingFunction(loop) === fn);
}

/**
 * The index of the parameter the generator consumes: iterated by one of its `for await` loops,
 * directly (`of source`) or through a stage it composes (`of parse(source)`); -1 for none.
 */
export function consumedParameter(fn: GeneratorFn): number {
  const names = fn.getParameters().map((p) => p.getName());
  for (const loop of ownLoops(fn)) {
    const iterated = unwrap(loop.getExpression());
    const used = Node.isIdentifier(iterated) ? [iterated] : iterated.getDescendantsOfKind(SyntaxKind.Identifier);
    for (const id of used) {
      const i = names.indexOf(id.getText());
      if (i >= 0) return i;
    }
  }
  return -1;
}

/** Generator stages the stage's own body composes (`for await (const x of parse(src))`): nested in it. */
export function nestedStages(fn: GeneratorFn, w: DialectWalker): DialectRaw[] {
  const out: DialectRaw[] = [];
  for (const loop of ownLoops(fn)) {
    const iterated = unwrap(loop.getExpression());
    if (!Node.isCallExpression(iterated)) continue;
    const inner = w.resolve(iterated);
    if (inner) out.push(inner);
  }
  return out;
}

function stage(node: Node, w: DialectWalker): DialectRaw | undefined {
  if (!Node.isCallExpression(node)) return undefined;
  const call: CallExpression = node;
  const callee = call.getExpression();
  const fn = asyncGeneratorOf(callee);
  if (!fn || !(Node.isIdentifier(callee) || Node.isPropertyAccessExpression(callee))) return undefined;
  const idNode = Node.isPropertyAccessExpression(callee) ? callee.getNameNode() : callee;
  const consumed = consumedParameter(fn);
  const input = consumed >= 0 ? w.resolve(call.getArguments()[consumed]) : undefined;
  const name = idNode.getText();
  const raw: DialectRaw = {
    dialect: 'async-generator',
    // A stage may yield any number of elements per input: flatMap; a generator consuming nothing is a source.
    kind: consumed >= 0 ? 'flatMap' : 'from',
    idNode,
    node: call,
    method: false,
    inputs: input ? [input] : [],
    partial: consumed >= 0 && input === undefined,
    detail: { label: `${name}(…)`, knobs: {}, levers: [], fnArg: callee },
  };
  const nested = nestedStages(fn, w);
  if (nested.length > 0) raw.nested = nested;
  return raw;
}

export const generators: Recogniser = {
  dialect: 'async-generator',
  stage: (node, w) => stage(node, w),
  // A generator object has no operator methods; `next`/`return` consume it.
  method: () => undefined,
  consumers: new Set(['next', 'return', 'throw']),
};
